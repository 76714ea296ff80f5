/**
 * A binary min-heap under a `less` order: the simulator's event queue (src/sim/clock.ts, on
 * time then scheduling order) and the slot estimate's node finish times (src/domain/timing.ts).
 */
export class MinHeap<T> {
  private readonly a: T[] = [];

  constructor(private readonly less: (x: T, y: T) => boolean) {}

  get size(): number {
    return this.a.length;
  }

  push(x: T): void {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.less(a[i], a[up])) break;
      [a[up], a[i]] = [a[i], a[up]];
      i = up;
    }
  }

  peek(): T | undefined {
    return this.a[0];
  }

  pop(): T | undefined {
    const a = this.a;
    if (!a.length) return undefined;
    const top = a[0];
    const last = a.pop();
    if (last !== undefined && a.length) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l], a[m])) m = l;
        if (r < a.length && this.less(a[r], a[m])) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
}
