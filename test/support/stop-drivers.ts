/**
 * ClusterDriver wrappers for the stopping suites (docs/apply.md "Stopping"): they make the
 * simulated cluster behave the way the real API server does where stopping depends on it.
 *
 * - `withLatency`: every call yields to the event loop before and after (setImmediate), as a
 *   request to the API server does (the virtual clock stands still meanwhile). Without it every simulated call completes on promise callbacks alone,
 *   and a loop that spins on promise callbacks still lets the apply's clean-up run; with it,
 *   such a loop starves the clean-up as it starves the real one (and timers, and signals).
 * - `holdingStaging`: the staging gates' waits ("nodes of pool P staged") never end on their
 *   own, only when their signal aborts: with nodes that take forever to stage, the apply stays
 *   at its staging gate (and the staging observer waits) as long as the test needs, however
 *   far the virtual clock runs meanwhile (the staging limit never strikes).
 * - `hangingAfter`: once `signal` aborted, every write hangs (an API server that stopped
 *   answering): the clean-up of a stop cannot finish, and only a second signal ends the process.
 * - `stoppingAt`: counts every awaited call (driver method, clock sleep) and runs `at` once
 *   the k-th starts: a stop at any await point.
 */
import type { ClusterDriver, Clock } from '../../src/apply/ports/driver.ts';
import { AbortedError } from '../../src/apply/ports/driver.ts';

const READ_ONLY = new Set(['snapshot', 'waitFor', 'readLock', 'readProgress', 'readRollout', 'drain']);

/** A driver whose methods (and clock.sleep) go through `around(name, call)`. */
function wrapped(d: ClusterDriver, around: (name: string, call: () => Promise<unknown>, args: unknown[]) => Promise<unknown>): ClusterDriver {
  const clock: Clock = { now: () => d.clock.now(), sleep: (s, signal) => around('sleep', () => d.clock.sleep(s, signal), [s, signal]) as Promise<void> };
  return new Proxy(d, {
    get(target, prop) {
      if (prop === 'clock') return clock;
      const v = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => around(String(prop), () => v.apply(target, args), args);
    },
  });
}

const turn = () => new Promise<void>((r) => setImmediate(r));

/**
 * `hold` (SimCluster.hold) keeps the virtual clock still across the turns: the simulator moves
 * time only when every actor waits on it, and a call on its way is no wait.
 */
export function withLatency(d: ClusterDriver, hold: (work: () => Promise<void>) => Promise<void>): ClusterDriver {
  return wrapped(d, async (_name, call) => {
    await hold(turn);
    const v = await call();
    await hold(turn);
    return v;
  });
}

/** A promise that ends only with AbortedError, when `signal` aborts. */
function untilAborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    signal?.addEventListener('abort', () => reject(new AbortedError()), { once: true });
  });
}

export function holdingStaging(d: ClusterDriver): ClusterDriver {
  return wrapped(d, (name, call, args) => {
    const opts = args[1] as { description?: string; signal?: AbortSignal } | undefined;
    if (name === 'waitFor' && / staged$/.test(opts?.description ?? '')) return untilAborted(opts?.signal);
    return call();
  });
}

export function hangingAfter(d: ClusterDriver, signal: AbortSignal): ClusterDriver {
  return wrapped(d, (name, call) => (signal.aborted && !READ_ONLY.has(name) && name !== 'sleep' ? new Promise<never>(() => {}) : call()));
}

/** Calls `at()` when the k-th awaited call starts (k >= 1); `count()` tells how many started. */
export function stoppingAt(d: ClusterDriver, k: number, at: () => void): { driver: ClusterDriver; count: () => number } {
  let n = 0;
  const driver = wrapped(d, (_name, call) => {
    if (++n === k) at();
    return call();
  });
  return { driver, count: () => n };
}
