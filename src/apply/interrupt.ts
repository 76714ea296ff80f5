/**
 * Stopping an apply that was asked to stop (SIGTERM from a Job being killed, SIGINT; the CLI
 * turns the signal into an AbortSignal, ApplyOptions.signal), and leaving the cluster safe when
 * an apply ends early for any reason.
 *
 * Where it stops (the safe points): every wait of the applier (staging, budget, reboots, the
 * MCO, soak) ends at once, and every disruptive step checks first (Lease.assertHeld), so the
 * apply stops before its next cordon, drain, reboot request, unpause or change. Writes already
 * sent are not cut: a node's write-ahead progress entry is saved with its cordon (its reboot
 * request is recorded by the BootcNode itself), so a node in flight always has its entry, and a
 * rerun finishes it. A drain in
 * progress is left (the node stays cordoned, its entry says so; a rerun drains again).
 *
 * Then `stopSafely`: every MCO pool bootcplan unpaused (PoolProgress.mcoUnpaused, saved before
 * the unpause) is paused again, where the apply stopped is recorded (PoolProgress.interrupted),
 * the record saved; the caller releases the lock.
 */
import { setMaxListeners } from 'node:events';
import type { ClusterDriver } from './driver.ts';
import { AbortedError, isoOf } from './driver.ts';
import type { ApplyContext } from './context.ts';
import { retry } from './changes.ts';

/** Runs `run` with a signal that aborts when `stop` or `given` does. */
function withStop<T>(stop: AbortSignal, given: AbortSignal | undefined, run: (s: AbortSignal) => Promise<T>): Promise<T> {
  if (stop.aborted || given?.aborted) return Promise.reject(new AbortedError(stop.aborted ? 'stop requested' : 'aborted'));
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  stop.addEventListener('abort', onAbort);
  given?.addEventListener('abort', onAbort);
  return run(ac.signal).finally(() => {
    stop.removeEventListener('abort', onAbort);
    given?.removeEventListener('abort', onAbort);
  });
}

/**
 * The driver as the applier sees it while `stop` may be asked: waits and sleeps end with
 * AbortedError when it is, and so does a drain in progress (the drain itself is left to end on
 * its own or with the process). Writes are passed through unchanged.
 */
export function interruptible(d: ClusterDriver, stop: AbortSignal): ClusterDriver {
  setMaxListeners(0, stop);
  const clock = { now: () => d.clock.now(), sleep: (s: number, sig?: AbortSignal) => withStop(stop, sig, (x) => d.clock.sleep(s, x)) };
  return new Proxy(d, {
    get(target, prop) {
      if (prop === 'clock') return clock;
      if (prop === 'waitFor') return ((pred, opts) => withStop(stop, opts.signal, (x) => target.waitFor(pred, { ...opts, signal: x }))) as ClusterDriver['waitFor'];
      if (prop === 'drain') {
        return ((node, opts) => withStop(stop, undefined, (x) => new Promise<void>((resolve, reject) => {
          x.addEventListener('abort', () => reject(new AbortedError('stop requested')), { once: true });
          target.drain(node, opts).then(resolve, reject);
        }))) as ClusterDriver['drain'];
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * Why an apply was asked to stop (its AbortSignal's reason): a signal the CLI caught, or the
 * fleet runner's batch timeout (src/apply/fleet-runner.ts). Recorded in the cluster's own
 * progress (PoolProgress.interrupted.reason); any other reason counts as SIGTERM.
 */
export const STOP_REASONS = ['SIGINT', 'SIGTERM', 'batch-timeout'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export function stopReasonOf(signal: AbortSignal): StopReason {
  return (STOP_REASONS as readonly unknown[]).includes(signal.reason) ? signal.reason as StopReason : 'SIGTERM';
}

/** Where the apply is: the pool and wave of the last wave-start (for the interrupted record). */
export interface Position { pool: string | null; wave: number | null }

/**
 * After an apply stopped early with the lock still held: pauses again every MCO pool it had
 * unpaused, records where it stopped (`reason` given: a stop request), saves the record. Best
 * effort: a failure is reported in the returned list and the rest still runs.
 */
export async function stopSafely(ctx: ApplyContext, driver: ClusterDriver, where: Position, reason: StopReason | null): Promise<string[]> {
  const problems: string[] = [];
  const book = ctx.book;
  if (!book.record) return problems; // stopped before the record was read
  let changed = false;
  for (const [name, pp] of Object.entries(book.record.pools)) {
    if (!pp.mcoUnpaused) continue;
    try {
      await retry(() => driver.setPoolPaused('MachineConfigPool', name, true, ctx.plan.id));
      delete pp.mcoUnpaused;
      changed = true;
    } catch (err) {
      problems.push(`MachineConfigPool ${name} could not be paused again: ${(err as Error).message}`);
    }
  }
  if (reason && where.pool) {
    book.pool(where.pool).interrupted = { at: isoOf(driver.clock.now()), wave: where.wave, reason };
    changed = true;
  }
  if (!changed) return problems;
  try {
    await book.save();
  } catch (err) {
    problems.push(`the progress record could not be saved: ${(err as Error).message}`);
  }
  return problems;
}
