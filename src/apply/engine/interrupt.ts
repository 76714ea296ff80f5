/**
 * Stopping an apply (docs/design.md §7 "Stopping"; docs/apply.md "Stopping"): a stop request (SIGTERM
 * from a Job being killed or its pod evicted, SIGINT, the fleet runner's batch timeout: the
 * AbortSignal of ApplyOptions.signal) or a lost lock, and leaving the cluster safe when an apply
 * ends early for any reason.
 *
 * Where it stops (the safe points): every wait of the applier (staging, budget, reboots, the
 * MCO, soak, a drain) ends at once, and every disruptive step checks first (Lease.assertHeld),
 * so the apply stops before its next cordon, drain, reboot request, unpause or change. Writes
 * already sent are not cut: a node's write-ahead progress entry is saved with its cordon (its
 * reboot request is recorded by the BootcNode itself), so a node in flight always has its
 * entry, and a rerun finishes it. A drain in progress stops evicting (the node stays cordoned,
 * its entry says so; a rerun drains again).
 *
 * No loop may wait again after its wait ended with AbortedError: a wait rejected by a stop is
 * rejected again at once, without yielding to the event loop, so such a loop spins on promise
 * callbacks and starves every timer, socket and signal handler of the process (the safe stop
 * below never runs and a second signal is never seen). A loop that cancels a wait of its own
 * (a race it has won) swallows only that cancel, through cancelledByCaller; every other
 * AbortedError ends the loop (test/apply/engine/stopping.test.ts checks both, and that no other code
 * catches AbortedError).
 *
 * Then `stopSafely`: every MCO pool bootcplan unpaused (PoolProgress.mcoUnpaused, saved before
 * the unpause) is paused again, where the apply stopped is recorded (PoolProgress.interrupted),
 * the record saved; the caller releases the lock.
 */
import { setMaxListeners } from 'node:events';
import type { ClusterDriver } from '../ports/driver.ts';
import { AbortedError, isoOf } from '../ports/driver.ts';
import type { RunContext } from './context.ts';
import { retry } from './retry.ts';
import { messageOf } from '../../base/errors.ts';

/** The AbortedError of a wait the whole apply's stop ended (not a cancel of the caller's own). */
export class StopRequestedError extends AbortedError {
  constructor() {
    super('stop requested');
  }
}

/**
 * True for the AbortedError of a wait the caller cancelled itself through `own` (a race it
 * has won), which it may swallow; false for anything else, a stop of the apply included,
 * which must end the caller's loop.
 */
export function cancelledByCaller(err: unknown, own: AbortSignal): boolean {
  return err instanceof AbortedError && !(err instanceof StopRequestedError) && own.aborted;
}

/** Runs `run` with a signal that aborts when `stop` or `given` does; a stop rejects with StopRequestedError. */
function withStop<T>(stop: AbortSignal, given: AbortSignal | undefined, run: (s: AbortSignal) => Promise<T>): Promise<T> {
  if (stop.aborted) return Promise.reject(new StopRequestedError());
  if (given?.aborted) return Promise.reject(new AbortedError());
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  stop.addEventListener('abort', onAbort);
  given?.addEventListener('abort', onAbort);
  return run(ac.signal)
    .catch((err: unknown) => {
      throw err instanceof AbortedError && stop.aborted ? new StopRequestedError() : err;
    })
    .finally(() => {
      stop.removeEventListener('abort', onAbort);
      given?.removeEventListener('abort', onAbort);
    });
}

/**
 * The driver as the applier sees it while `stop` may be asked: waits and sleeps end with
 * StopRequestedError when it is, and so does a drain in progress (the driver is asked to stop
 * evicting; the promise ends at once even if a driver does not). Writes are passed through
 * unchanged.
 */
export function interruptible(d: ClusterDriver, stop: AbortSignal): ClusterDriver {
  setMaxListeners(0, stop);
  const clock = { now: () => d.clock.now(), sleep: (s: number, sig?: AbortSignal) => withStop(stop, sig, (x) => d.clock.sleep(s, x)) };
  const waitFor: ClusterDriver['waitFor'] = (pred, opts) => withStop(stop, opts.signal, (x) => d.waitFor(pred, { ...opts, signal: x }));
  const drain: ClusterDriver['drain'] = (node, opts) =>
    withStop(
      stop,
      opts.signal,
      (x) =>
        new Promise<void>((resolve, reject) => {
          x.addEventListener('abort', () => reject(new AbortedError()), { once: true });
          d.drain(node, { ...opts, signal: x }).then(resolve, reject);
        }),
    );
  return new Proxy(d, {
    get(target, prop): unknown {
      if (prop === 'clock') return clock;
      if (prop === 'waitFor') return waitFor;
      if (prop === 'drain') return drain;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * Why an apply was asked to stop (its AbortSignal's reason): a signal the CLI caught, or the
 * fleet runner's batch timeout (src/fleet/runner.ts). Recorded in the cluster's own
 * progress (PoolProgress.interrupted.reason); any other reason counts as SIGTERM.
 */
const STOP_REASONS = ['SIGINT', 'SIGTERM', 'batch-timeout'] as const;
type StopReason = (typeof STOP_REASONS)[number];

export function stopReasonOf(signal: AbortSignal): StopReason {
  return STOP_REASONS.find((r) => r === signal.reason) ?? 'SIGTERM';
}

/** Where the apply is: the pool and wave of the last wave-start (for the interrupted record). */
export interface Position {
  pool: string | null;
  wave: number | null;
}

/**
 * After an apply stopped early with the lock still held: pauses again every MCO pool it had
 * unpaused, records where it stopped (`reason` given: a stop request), saves the record. Best
 * effort: a failure is reported in the returned list and the rest still runs.
 */
export async function stopSafely(ctx: RunContext, driver: ClusterDriver, where: Position, reason: StopReason | null): Promise<string[]> {
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
      problems.push(`MachineConfigPool ${name} could not be paused again: ${messageOf(err)}`);
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
    problems.push(`the progress record could not be saved: ${messageOf(err)}`);
  }
  return problems;
}
