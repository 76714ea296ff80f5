/**
 * The waits of the apply sessions (`waitFor`, `sleep`) on the loop that moves the virtual
 * clock (ClockPump, clock.ts): time advances only when every actor waits on the simulator, one
 * event at a time, after the waits that what changed lets go have settled.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { type WaitOptions, AbortedError, DriverError } from '../apply/ports/driver.ts';
import { ClockPump, type VirtualClock, type SimEvent } from './clock.ts';
import type { ReadTracker, ReadWatchers, Reads, Watcher } from './reads.ts';
import { KilledError, type SimSession } from './session-port.ts';

export interface Waiter extends Watcher {
  session: SimSession | null;
  /** The wait's predicate on the state: the call that resolves the wait when it holds, else null. */
  test: (s: ClusterSnapshot) => (() => void) | null;
  reject: (e: unknown) => void;
  timeout: SimEvent | null;
  lastVersion: number;
  cleanup: () => void;
}

/** What the waits read: the live view, and a version bumped on every change. */
interface WaitedState {
  view(): ClusterSnapshot;
  readonly version: number;
}

export class Waits {
  private waiters = new Set<Waiter>();
  private waiterIds = 0;
  private readonly pump = new ClockPump(() => this.turn());

  constructor(
    private readonly clock: VirtualClock,
    private readonly tracker: ReadTracker,
    private readonly watchers: ReadWatchers<Waiter>,
    private readonly state: WaitedState,
  ) {}

  sleep(seconds: number, signal: AbortSignal | undefined, session: SimSession | null): Promise<void> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    // Nothing to read: only the timeout (or the signal) ends it.
    return new Promise<void>((resolve, reject) => {
      this.enqueueWaiter({ session, test: () => null, reject, lastVersion: Infinity }, signal, seconds, () => resolve(), null);
    });
  }

  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions, session: SimSession | null): Promise<T | null> {
    if (opts.signal?.aborted) return Promise.reject(new AbortedError());
    const { reads, outer } = this.tracker.begin();
    let first: T | null | undefined | false;
    try {
      first = predicate(this.state.view());
    } finally {
      this.tracker.end(outer);
    }
    if (first !== undefined && first !== null && first !== false) return Promise.resolve(first);
    return new Promise<T | null>((resolve, reject) => {
      const test = (s: ClusterSnapshot) => {
        const v = predicate(s);
        return v !== undefined && v !== null && v !== false ? () => resolve(v) : null;
      };
      this.enqueueWaiter({ session, test, reject, lastVersion: this.state.version }, opts.signal, opts.timeoutSeconds, () => resolve(null), reads);
    });
  }

  /** The waits and sleeps of a session still pending (each holds a timer and a watch). */
  openFor(s: SimSession): number {
    let n = 0;
    for (const w of this.waiters) if (w.session === s) n++;
    return n;
  }

  /**
   * Runs `work` while the clock stands still: work that leaves the promise callbacks for the
   * event loop (a test's driver that answers like an API server) takes no virtual time.
   */
  hold<T>(work: () => Promise<T>): Promise<T> {
    return this.pump.hold(work);
  }

  /** Rejects every pending wait of a session (the process died). */
  killSession(s: SimSession) {
    for (const w of [...this.waiters])
      if (w.session === s) {
        w.cleanup();
        w.reject(new KilledError());
      }
  }

  /**
   * Evaluates the waiters whose view of the state is out of date: those that read an object
   * that changed since their last evaluation (all of them when objects came or went), in
   * the order they started waiting. True when one resolved.
   */
  check(): boolean {
    const list = this.watchers.takeDirty(this.waiters);
    if (!list.length) return false;
    let any = false;
    const snap = this.state.view();
    for (const w of list) {
      if (w.lastVersion === this.state.version) continue;
      w.lastVersion = this.state.version;
      let settle: (() => void) | null;
      const { reads, outer } = this.tracker.begin();
      try {
        settle = w.test(snap);
      } catch (err) {
        this.tracker.end(outer);
        w.cleanup();
        w.reject(err);
        any = true;
        continue;
      }
      this.tracker.end(outer);
      if (settle) {
        w.cleanup();
        settle();
        any = true;
      } else if (this.waiters.has(w)) this.watchers.watch(w, reads);
    }
    return any;
  }

  /**
   * Registers a pending wait: it ends when its predicate holds (checked when what it read
   * changes), when `seconds` pass (`onTimeout`), or when `signal` aborts.
   */
  private enqueueWaiter(
    base: Pick<Waiter, 'session' | 'test' | 'reject' | 'lastVersion'>,
    signal: AbortSignal | undefined,
    seconds: number,
    onTimeout: () => void,
    reads: Reads | null,
  ): void {
    const w: Waiter = {
      id: this.waiterIds++,
      ...base,
      timeout: null,
      deps: null,
      cleanup: () => {
        if (!this.waiters.delete(w)) return;
        this.watchers.forget(w);
        this.pump.waitEnded();
        if (w.timeout) w.timeout.cancelled = true;
        signal?.removeEventListener('abort', onAbort);
      },
    };
    const onAbort = () => {
      w.cleanup();
      base.reject(new AbortedError());
    };
    signal?.addEventListener('abort', onAbort);
    w.timeout = this.clock.after(Math.max(0, seconds), () => {
      w.cleanup();
      onTimeout();
    });
    this.waiters.add(w);
    if (reads) this.watchers.watch(w, reads);
    this.pump.waitBegan();
  }

  /** One turn of the clock (ClockPump): settle the waits what changed lets go, else run the next event. */
  private turn(): void {
    if (this.check()) return;
    if (!this.clock.runNext()) {
      const err = new DriverError('simulated cluster: every actor waits and nothing is scheduled (deadlock)');
      for (const w of [...this.waiters]) {
        w.cleanup();
        w.reject(err);
      }
    }
  }
}
