/**
 * Read tracking: a pending wait is evaluated again only when an object its predicate read at
 * its last evaluation changed (every wait when objects came or went), rather than after
 * every change of any object: the waits of a wave would otherwise cost the square of the
 * wave (docs/performance.md: what made the 10k-node rehearsal fast).
 */
import type { KObject } from '../cluster/types.ts';

/**
 * The objects a predicate read during one evaluation: the objects it looked up by name
 * (through the live index), whole kinds (it went through a list, or read more objects than
 * are worth listing), or everything (the fingerprint).
 */
export interface Reads {
  objs: KObject[];
  kinds: Set<string> | null;
  all: boolean;
}
const READS_LISTED = 64;

function sameObjects(a: KObject[], b: KObject[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
function sameKinds(a: Set<string> | null, b: Set<string> | null): boolean {
  if (!a || !b) return !a === !b;
  if (a.size !== b.size) return false;
  for (const k of a) if (!b.has(k)) return false;
  return true;
}

/** Records what the predicate being evaluated reads. */
export class ReadTracker {
  active: Reads | null = null;
  begin(): { reads: Reads; outer: Reads | null } {
    const reads: Reads = { objs: [], kinds: null, all: false };
    const outer = this.active;
    this.active = reads;
    return { reads, outer };
  }
  end(outer: Reads | null) {
    this.active = outer;
  }
  /** A read of `o` by the predicate being evaluated (none: not a read to track). */
  read(o: KObject) {
    const a = this.active;
    if (!a) return;
    if (a.objs.length < READS_LISTED) a.objs.push(o);
    else if (!a.kinds?.has(o.kind)) (a.kinds ??= new Set()).add(o.kind);
  }
  readKind(kind: string) {
    if (this.active) (this.active.kinds ??= new Set()).add(kind);
  }
  readAll() {
    if (this.active) this.active.all = true;
  }
}

/** Objects of one kind by name; reads are reported to the tracker while a predicate runs. */
export class TrackedMap<T extends KObject = KObject> extends Map<string, T> {
  constructor(
    private readonly kind: string,
    private readonly tracker: ReadTracker,
  ) {
    super();
  }
  override get(name: string): T | undefined {
    const o = super.get(name);
    if (o !== undefined && this.tracker.active) this.tracker.read(o);
    return o;
  }
  override has(name: string): boolean {
    const o = super.get(name);
    if (o !== undefined && this.tracker.active) this.tracker.read(o);
    return o !== undefined;
  }
  override values() {
    this.tracker.readKind(this.kind);
    return super.values();
  }
  override entries() {
    this.tracker.readKind(this.kind);
    return super.entries();
  }
  override [Symbol.iterator]() {
    this.tracker.readKind(this.kind);
    return super[Symbol.iterator]();
  }
  override forEach(fn: (v: T, k: string, m: Map<string, T>) => void, thisArg?: unknown) {
    this.tracker.readKind(this.kind);
    super.forEach(fn, thisArg);
  }
}

/** A reader of the state that is told when what it read changed: a pending wait. */
export interface Watcher {
  /** Registration order: watchers are evaluated in it. */
  readonly id: number;
  /** What it read at its last evaluation. */
  deps: Reads | null;
}

/**
 * Which watchers read which objects at their last evaluation, and the watchers to evaluate
 * again because something they read changed (all of them after objects came or went).
 */
export class ReadWatchers<W extends Watcher> {
  private objWatchers = new Map<KObject, Set<W>>();
  private kindWatchers = new Map<string, Set<W>>();
  private allWatchers = new Set<W>();
  private dirty = new Set<W>();
  private allDirty = false;

  /** An object changed in place: the watchers that read it are evaluated again. */
  changed(o: KObject) {
    const ws = this.objWatchers.get(o);
    if (ws) for (const w of ws) this.dirty.add(w);
    const ks = this.kindWatchers.get(o.kind);
    if (ks) for (const w of ks) this.dirty.add(w);
    for (const w of this.allWatchers) this.dirty.add(w);
  }

  /** Objects came or went (or anything may have changed): every watcher is evaluated again. */
  changedAll() {
    this.allDirty = true;
  }

  /**
   * The watchers of `pending` to evaluate again, in the order they started watching (empty
   * when none); the marks are cleared.
   */
  takeDirty(pending: Set<W>): W[] {
    if (!pending.size || (!this.allDirty && !this.dirty.size)) {
      this.dirty.clear();
      this.allDirty = false;
      return [];
    }
    let list: W[];
    if (this.allDirty) list = [...pending];
    else {
      list = [];
      for (const w of this.dirty) if (pending.has(w)) list.push(w);
      list.sort((a, b) => a.id - b.id);
    }
    this.dirty.clear();
    this.allDirty = false;
    return list;
  }

  /** Records what a pending watcher read at its last evaluation. */
  watch(w: W, reads: Reads) {
    const old = w.deps;
    if (old && old.all === reads.all && sameObjects(old.objs, reads.objs) && sameKinds(old.kinds, reads.kinds)) return;
    this.unwatch(w);
    w.deps = reads;
    for (const o of reads.objs) {
      let ws = this.objWatchers.get(o);
      if (!ws) this.objWatchers.set(o, (ws = new Set()));
      ws.add(w);
    }
    if (reads.kinds) {
      for (const k of reads.kinds) {
        let ws = this.kindWatchers.get(k);
        if (!ws) this.kindWatchers.set(k, (ws = new Set()));
        ws.add(w);
      }
    }
    if (reads.all) this.allWatchers.add(w);
  }

  /** A watcher that is gone: no longer marked or told. */
  forget(w: W) {
    this.dirty.delete(w);
    this.unwatch(w);
  }

  private unwatch(w: W) {
    const d = w.deps;
    if (!d) return;
    w.deps = null;
    for (const o of d.objs) {
      const ws = this.objWatchers.get(o);
      if (ws && ws.delete(w) && !ws.size) this.objWatchers.delete(o);
    }
    if (d.kinds) {
      for (const k of d.kinds) {
        const ws = this.kindWatchers.get(k);
        if (ws && ws.delete(w) && !ws.size) this.kindWatchers.delete(k);
      }
    }
    this.allWatchers.delete(w);
  }
}
