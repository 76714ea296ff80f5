/**
 * The virtual clock of the simulated cluster (docs/design.md §1 `src/sim`): timed events run one at
 * a time, in time order and, at the same instant, in the order they were scheduled. Time
 * moves only when an event runs; there are no real timers.
 */

import { MinHeap } from '../base/heap.ts';

export interface SimEvent {
  t: number;
  seq: number;
  fn: () => void;
  cancelled?: boolean;
}

const less = (x: SimEvent, y: SimEvent) => x.t < y.t || (x.t === y.t && x.seq < y.seq);

export class VirtualClock {
  /** Seconds since the epoch, virtual. */
  now: number;
  private queue = new MinHeap<SimEvent>(less);
  /** Orders the events of one instant; the simulated resourceVersion counts on it too. */
  private seq = 0;

  constructor(start: number) {
    this.now = start;
  }

  at(t: number, fn: () => void): SimEvent {
    const e: SimEvent = { t: Math.max(t, this.now), seq: this.seq++, fn };
    this.queue.push(e);
    return e;
  }
  after(dt: number, fn: () => void): SimEvent {
    return this.at(this.now + dt, fn);
  }

  /** The next number of the sequence events are ordered by. */
  nextSeq(): number {
    return this.seq++;
  }

  /** Runs the next event that was not cancelled, at its time; false when none is left. */
  runNext(): boolean {
    for (;;) {
      const e = this.queue.pop();
      if (!e) return false;
      if (e.cancelled) continue;
      this.now = Math.max(this.now, e.t);
      e.fn();
      return true;
    }
  }

  /** Runs every event up to `until` at once, then sets the clock to `until`. */
  runUntil(until: number) {
    for (;;) {
      const top = this.queue.peek();
      if (!top || top.t > until) break;
      this.queue.pop();
      if (top.cancelled) continue;
      this.now = Math.max(this.now, top.t);
      top.fn();
    }
    this.now = until;
  }
}

/**
 * The loop that moves a VirtualClock: time advances only when every task waits (`pending`
 * waits, none of them in work held by `hold`), checked with setImmediate, which runs after all
 * pending promise callbacks; then `turn` moves it by one event (or first settles what the last
 * one changed) and the loop looks again. The simulated cluster's waits (waits.ts) and the
 * fleet rehearsal's sleeps (sleep-clock.ts) both run on it.
 */
export class ClockPump {
  private pending = 0;
  /** Work in flight that the clock waits for (hold). */
  private busy = 0;
  private scheduled = false;

  constructor(private readonly turn: () => void) {}

  /** A wait began: the clock may move once every task waits. */
  waitBegan(): void {
    this.pending++;
    this.kick();
  }

  /** A wait ended (the caller kicks when what it did may let time move). */
  waitEnded(): void {
    this.pending--;
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

  kick(): void {
    if (this.scheduled || this.pending === 0 || this.busy > 0) return;
    this.scheduled = true;
    setImmediate(() => this.step());
  }

  private step(): void {
    this.scheduled = false;
    if (this.pending === 0 || this.busy > 0) return;
    this.turn();
    this.kick();
  }
}
