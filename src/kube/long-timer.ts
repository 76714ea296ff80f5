/**
 * Timers for waits of any length. Node's setTimeout takes a signed 32-bit delay: anything
 * over 2^31-1 ms (about 24.8 days) is replaced by 1 ms with a TimeoutOverflowWarning
 * (Node docs, timers: "When delay is larger than 2147483647 or less than 1, the delay will
 * be set to 1"). A soak, a drain retry or a request timeout that long would end at once,
 * so every wait in src/kube goes through setLongTimeout, which waits in chunks.
 */
import { AbortedError } from '../apply/ports/driver.ts';

/** The longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The timer functions used (the real ones, or a fake in tests). */
export interface TimerApi {
  setTimeout(fn: () => void, ms: number): NodeJS.Timeout;
  clearTimeout(handle: NodeJS.Timeout): void;
}

const realTimers: TimerApi = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h),
};

export interface LongTimer {
  clear(): void;
  /** Does not keep the process alive (as Timeout.unref). */
  unref(): LongTimer;
}

/**
 * Calls `fn` once after `ms` milliseconds, in chunks of at most MAX_TIMER_MS. NaN and
 * negative delays are 0 (a deadline already passed); Infinity never fires.
 */
export function setLongTimeout(fn: () => void, ms: number, timers: TimerApi = realTimers): LongTimer {
  let left = Number.isNaN(ms) || ms < 0 ? 0 : ms;
  let handle: NodeJS.Timeout | null = null;
  let unref = false;
  const arm = () => {
    const chunk = Math.min(left, MAX_TIMER_MS);
    left -= chunk;
    handle = timers.setTimeout(() => {
      handle = null;
      if (left > 0) arm();
      else fn();
    }, chunk);
    if (unref) handle?.unref?.();
  };
  arm();
  const timer: LongTimer = {
    clear: () => {
      if (handle) timers.clearTimeout(handle);
      handle = null;
    },
    unref: () => {
      unref = true;
      handle?.unref?.();
      return timer;
    },
  };
  return timer;
}

/** Resolves after `seconds`; rejects with AbortedError when `signal` aborts first. */
export function sleepFor(seconds: number, signal?: AbortSignal, timers: TimerApi = realTimers): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    const onAbort = () => {
      t.clear();
      reject(new AbortedError());
    };
    const t = setLongTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      seconds * 1000,
      timers,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
