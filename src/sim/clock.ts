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
