/**
 * The virtual clock of the simulated cluster (DESIGN §1 `src/sim`): timed events run one at
 * a time, in time order and, at the same instant, in the order they were scheduled. Time
 * moves only when an event runs; there are no real timers.
 */

export interface SimEvent { t: number; seq: number; fn: () => void; cancelled?: boolean }

/** Min-heap on (t, seq). */
class EventQueue {
  private a: SimEvent[] = [];
  get size() { return this.a.length; }
  push(e: SimEvent) {
    const a = this.a;
    a.push(e);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (less(a[p], a[i])) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  peek(): SimEvent | undefined { return this.a[0]; }
  pop(): SimEvent | undefined {
    const a = this.a;
    if (!a.length) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < a.length && less(a[l], a[m])) m = l;
        if (r < a.length && less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
}
const less = (x: SimEvent, y: SimEvent) => x.t < y.t || (x.t === y.t && x.seq < y.seq);

export class VirtualClock {
  /** Seconds since the epoch, virtual. */
  now: number;
  private queue = new EventQueue();
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
