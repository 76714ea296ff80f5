/**
 * A Clock (apply/ports/driver.ts) on the simulator's VirtualClock for code that only sleeps and
 * does work that takes no virtual time: the fleet runner in `fleet rehearse`, whose clusters
 * each run their own simulation. Time moves only when every task sleeps and no work is held
 * (`hold`: a cluster's own rehearsal, which itself turns over the event loop many times);
 * then the earliest sleep ends (the loop of ClockPump, clock.ts), one at a time, sleeps of the
 * same instant in the order they began.
 */
import { AbortedError, type Clock } from '../apply/ports/driver.ts';
import { ClockPump, VirtualClock } from './clock.ts';

export class SleepClock implements Clock {
  private readonly clock: VirtualClock;
  private readonly pump: ClockPump;

  constructor(start = 0) {
    this.clock = new VirtualClock(start);
    this.pump = new ClockPump(() => this.clock.runNext());
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
        this.pump.waitEnded();
        signal?.removeEventListener('abort', onAbort);
        this.pump.kick();
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
      this.pump.waitBegan();
    });
  }

  /** Runs `work` while the clock stands still (it takes no virtual time, however long it takes). */
  hold<T>(work: () => Promise<T>): Promise<T> {
    return this.pump.hold(work);
  }
}
