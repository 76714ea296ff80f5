/**
 * A Clock (apply/ports/driver.ts) on the simulator's VirtualClock for code that only sleeps and
 * does work that takes no virtual time: the fleet runner in `fleet rehearse`, whose clusters
 * each run their own simulation. Time moves only when every task sleeps and no work is held
 * (`hold`: a cluster's own rehearsal, which itself turns over the event loop many times);
 * then the earliest sleep ends (checked with setImmediate, after all pending promise
 * callbacks), one at a time, sleeps of the same instant in the order they began.
 */
import { AbortedError, type Clock } from '../apply/ports/driver.ts';
import { VirtualClock } from './clock.ts';

export class SleepClock implements Clock {
  private readonly clock: VirtualClock;
  private pending = 0;
  private busy = 0;
  private scheduled = false;

  constructor(start = 0) {
    this.clock = new VirtualClock(start);
  }

  now(): number {
    return this.clock.now;
  }

  sleep(seconds: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    return new Promise<void>((resolve, reject) => {
      let open = true;
      const close = () => {
        if (!open) return false;
        open = false;
        this.pending--;
        signal?.removeEventListener('abort', onAbort);
        this.kick();
        return true;
      };
      const onAbort = () => {
        event.cancelled = true;
        if (close()) reject(new AbortedError());
      };
      const event = this.clock.after(Math.max(0, Number.isFinite(seconds) ? seconds : 0), () => {
        if (close()) resolve();
      });
      signal?.addEventListener('abort', onAbort);
      this.pending++;
      this.kick();
    });
  }

  /** Runs `work` while the clock stands still (it takes no virtual time, however long it takes). */
  async hold<T>(work: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      return await work();
    } finally {
      this.busy--;
      this.kick();
    }
  }

  private kick() {
    if (this.scheduled || this.pending === 0 || this.busy > 0) return;
    this.scheduled = true;
    setImmediate(() => this.step());
  }

  private step() {
    this.scheduled = false;
    if (this.pending === 0 || this.busy > 0) return;
    this.clock.runNext();
    this.kick();
  }
}
