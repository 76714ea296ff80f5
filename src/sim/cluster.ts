/**
 * A deterministic simulated cluster with a virtual clock (DESIGN §1 `src/sim`).
 *
 * Built from a ClusterSnapshot, it plays the parts of the bootc-operator controller and
 * daemons, the MCO and the kubelets closely enough for the applier's decisions to matter:
 *
 * - bootc (bootc-dev/bootc-operator): when a BootcNodePool's `spec.image.ref` changes the
 *   controller sets every owned BootcNode's `desiredImage` and resets `desiredImageState`
 *   to Staged; each daemon stages in parallel (Idle=False/Staging, then Staged with
 *   `status.staged`). Staging is not limited by `paused`. `desiredImageState: Booted` makes
 *   the daemon reboot (Idle=False/Rebooting, Node NotReady), come back with the staged image
 *   booted (Idle=True) and the Node Ready after `ready` seconds. Soft reboot when the
 *   pool's rebootPolicy is AllowSoftReboot and the staged entry is softRebootCapable.
 * - MCO: a MachineConfig with the pool's role label and `osImageURL` renders a new config
 *   (last osImageURL by name wins). While the pool is not paused the node controller hands
 *   the new config to up to maxUnavailable (minus unavailable) nodes, in zone order then
 *   oldest first; each MCD cordons, drains, pulls the image, reboots and uncordons.
 * - Faults from a seed: a reboot that fails (node Degraded), a node that goes NotReady on
 *   its own and comes back, a write that hits a transient conflict.
 *
 * No real timers: time advances only when every actor waits on the simulator (checked
 * with setImmediate, which runs after all pending promise callbacks), one event at a time.
 */
import { createHash } from 'node:crypto';
import fjp from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import type { ClusterSnapshot, KObject, Condition } from '../cluster/types.ts';
import { BOOTCPLAN_NAMESPACE, LOCK_NAME, PROGRESS_NAME } from '../cluster/types.ts';
import { emptySnapshot, fingerprintOf } from '../cluster/snapshot.ts';
import { viewNode, digestOf, SNAPSHOT_INDEX, type NodeIndex } from '../domain/nodes.ts';
import { computeMembership } from '../domain/pools.ts';
import { parseMaxUnavailable, resolveMaxUnavailable } from '../domain/budget.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE, MCO_REASON, MCO_ROLE_LABEL, ZONE_LABEL } from '../domain/labels.ts';
import { DEFAULT_DURATIONS } from '../domain/timing.ts';
import type { PhaseDurations } from '../plan/types.ts';
import { LockHeldError } from '../base/errors.ts';
import {
  type Clock, type ClusterDriver, type ObjectRef, type LockRecord, type ProgressRecord, type WaitOptions, type DrainOptions,
  type PoolKind, type DesiredImageState,
  ConflictError, PreconditionFailedError, NotFoundError, AlreadyExistsError, DrainTimeoutError, LockLostError, AbortedError, DriverError, isoOf,
} from '../apply/driver.ts';
import { mulberry32, type Rng } from './rng.ts';

const { applyPatch } = fjp;

export interface FaultOptions {
  seed?: number;
  /** Probability that a reboot fails (the node comes back Degraded on the old image). */
  rebootFailRate?: number;
  /** Nodes going NotReady on their own, per hour, over the whole cluster. */
  flapsPerHour?: number;
  /** How long a flap lasts, seconds [min, max]. */
  flapSeconds?: [number, number];
  /** Probability that a write hits a transient conflict (HTTP 409). */
  conflictRate?: number;
}

export interface SimOptions {
  durations?: PhaseDurations;
  faults?: FaultOptions;
  /** Whether a freshly staged image can be soft-rebooted into (default: false). */
  softRebootCapable?: (node: string) => boolean;
  /** Virtual start time (ISO), default 2026-09-14T08:00:00Z. */
  start?: string;
  /** How long the MCO render takes after a MachineConfig write, seconds (default 0). */
  renderSeconds?: number;
}

export interface RebootRecord { t: number; node: string; kind: 'soft' | 'hard'; failed: boolean }
export interface CordonRecord { t: number; node: string; pool: string | null; session: string; unavailableAfter: number; budget: number | null; wasUnavailable: boolean }
export interface WriteRecord { t: number; session: string; op: string; target: string }

export class KilledError extends Error {
  constructor() {
    super('the apply process was killed');
    this.name = 'KilledError';
  }
}

interface SimEvent { t: number; seq: number; fn: () => void; cancelled?: boolean }

interface Waiter {
  /** Registration order: waiters are evaluated in it. */
  id: number;
  session: SimDriver | null;
  predicate: (s: ClusterSnapshot) => unknown;
  resolve: (v: any) => void;
  reject: (e: unknown) => void;
  timeout: SimEvent | null;
  lastVersion: number;
  /** What the predicate read at its last evaluation. */
  deps: Reads | null;
  cleanup: () => void;
}

/**
 * The objects a predicate read during one evaluation: the objects it looked up by name
 * (through the live index), whole kinds (it went through a list, or read more objects than
 * are worth listing), or everything (the fingerprint).
 */
interface Reads { objs: KObject[]; kinds: Set<string> | null; all: boolean }
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
class ReadTracker {
  active: Reads | null = null;
  begin(): { reads: Reads; outer: Reads | null } {
    const reads: Reads = { objs: [], kinds: null, all: false };
    const outer = this.active;
    this.active = reads;
    return { reads, outer };
  }
  end(outer: Reads | null) { this.active = outer; }
  read(o: KObject) {
    const a = this.active!;
    if (a.objs.length < READS_LISTED) a.objs.push(o);
    else if (!a.kinds?.has(o.kind)) (a.kinds ??= new Set()).add(o.kind);
  }
  readKind(kind: string) { if (this.active) (this.active.kinds ??= new Set()).add(kind); }
  readAll() { if (this.active) this.active.all = true; }
}

/** Objects of one kind by name; reads are reported to the tracker while a predicate runs. */
class TrackedMap extends Map<string, KObject> {
  constructor(private readonly kind: string, private readonly tracker: ReadTracker) { super(); }
  override get(name: string): KObject | undefined {
    const o = super.get(name);
    if (o !== undefined && this.tracker.active) this.tracker.read(o);
    return o;
  }
  override has(name: string): boolean {
    const o = super.get(name);
    if (o !== undefined && this.tracker.active) this.tracker.read(o);
    return o !== undefined;
  }
  override values() { this.tracker.readKind(this.kind); return super.values(); }
  override entries() { this.tracker.readKind(this.kind); return super.entries(); }
  override [Symbol.iterator]() { this.tracker.readKind(this.kind); return super[Symbol.iterator](); }
  override forEach(fn: (v: KObject, k: string, m: Map<string, KObject>) => void, thisArg?: unknown) { this.tracker.readKind(this.kind); super.forEach(fn, thisArg); }
}

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

const keyOf = (kind: string, name: string, namespace?: string | null) => `${kind}/${namespace ?? ''}/${name}`;
const LIST_OF: Record<string, keyof ClusterSnapshot> = {
  Node: 'nodes', MachineConfigPool: 'machineConfigPools', MachineConfig: 'machineConfigs', BootcNodePool: 'bootcNodePools',
  BootcNode: 'bootcNodes', MachineSet: 'machineSets',
};
const SINGLETON_OF: Record<string, keyof ClusterSnapshot> = {
  MachineConfiguration: 'machineConfiguration', ControlPlaneMachineSet: 'controlPlaneMachineSet', FeatureGate: 'featureGate',
  Infrastructure: 'infrastructure', ClusterVersion: 'clusterVersion',
};

function setCondition(obj: KObject, c: Condition) {
  obj.status ??= {};
  const list: Condition[] = (obj.status.conditions ??= []);
  const i = list.findIndex((x) => x.type === c.type);
  if (i >= 0) {
    const old = list[i];
    const changed = old.status !== c.status;
    list[i] = { ...old, ...c, lastTransitionTime: changed ? c.lastTransitionTime : old.lastTransitionTime ?? c.lastTransitionTime };
  } else list.push(c);
}

/**
 * The JSON of successive progress records, kept node entry by node entry: the record has an
 * entry per node in flight (a whole wave) and is written at every step of every node, so
 * serializing all of it on every write grows with the square of the wave. An entry is
 * serialized again only when it changed since the last write.
 */
class ProgressJson {
  private entries = new Map<string, { ref: unknown; flat: boolean; keys: string[]; vals: unknown[]; part: string; gen: number }>();
  private gen = 0;
  private static readonly MARK = '\u0000bootcplan-nodes\u0000';

  /** Returns JSON.stringify(p) as of now, computed when called (cheap to take, O(entries)). */
  capture(p: ProgressRecord): () => string {
    const nodes = (p.nodes ?? {}) as Record<string, unknown>;
    const parts: string[] = [];
    const gen = ++this.gen;
    for (const name in nodes) {
      if (!Object.prototype.hasOwnProperty.call(nodes, name)) continue;
      const e = nodes[name];
      if (e === undefined || typeof e === 'function' || typeof e === 'symbol') continue; // JSON leaves it out
      let c = this.entries.get(name);
      if (!c || !ProgressJson.same(c, e)) this.entries.set(name, (c = ProgressJson.entry(name, e, gen)));
      c.gen = gen;
      parts.push(c.part);
    }
    if (this.entries.size > parts.length) for (const [k, c] of this.entries) if (c.gen !== gen) this.entries.delete(k);
    const head = JSON.stringify(p, function (this: unknown, k, v) { return this === p && k === 'nodes' ? ProgressJson.MARK : v; });
    return () => {
      const mark = JSON.stringify(ProgressJson.MARK);
      const at = head.indexOf(mark);
      return at < 0 ? head : `${head.slice(0, at)}{${parts.join(',')}}${head.slice(at + mark.length)}`;
    };
  }

  private static entry(name: string, e: unknown, gen: number) {
    const keys: string[] = [];
    const vals: unknown[] = [];
    if (e !== null && typeof e === 'object' && !Array.isArray(e)) for (const k in e) { keys.push(k); vals.push((e as Record<string, unknown>)[k]); }
    const flat = vals.every((v) => v === null || typeof v !== 'object');
    return { ref: e, flat, keys, vals, part: `${JSON.stringify(name)}:${JSON.stringify(e)}`, gen };
  }

  /**
   * The same frozen object of primitive fields (the applier replaces entries rather than
   * changing them), or the same keys in the same order with the same primitive values
   * (nested objects: never the same).
   */
  private static same(c: { ref: unknown; flat: boolean; keys: string[]; vals: unknown[] }, e: unknown): boolean {
    if (e === c.ref && c.flat && Object.isFrozen(e)) return true;
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return false;
    let i = 0;
    for (const k in e) {
      const v = (e as Record<string, unknown>)[k];
      if (i >= c.keys.length || c.keys[i] !== k || c.vals[i] !== v || (v !== null && typeof v === 'object')) return false;
      i++;
    }
    return i === c.keys.length;
  }
}

export class SimCluster {
  readonly durations: PhaseDurations;
  readonly source: string;
  now: number;
  readonly start: number;
  readonly reboots: RebootRecord[] = [];
  readonly cordons: CordonRecord[] = [];
  readonly writes: WriteRecord[] = [];
  /** Most nodes of each pool out of service at any instant (pre-existing ones included). */
  readonly peakUnavailable = new Map<string, number>();

  private objects = new Map<string, KObject>();
  private tracker = new ReadTracker();
  private nodes = new TrackedMap('Node', this.tracker);
  private bootcNodes = new TrackedMap('BootcNode', this.tracker);
  private machineConfigs = new TrackedMap('MachineConfig', this.tracker);
  private readonly liveIndex: NodeIndex = { nodes: this.nodes, bootcNodes: this.bootcNodes, machineConfigs: this.machineConfigs };
  private queue = new EventQueue();
  private seq = 0;
  private waiters = new Set<Waiter>();
  private waiterIds = 0;
  private pending = 0;
  private scheduled = false;
  /** Bumped on every change; `structure` when objects come or go. */
  private version = 0;
  private structure = 0;
  private viewCache: { structure: number; snap: ClusterSnapshot } | null = null;
  /**
   * Which waiters read which objects at their last evaluation, and the waiters to evaluate
   * again because something they read changed (all of them after objects came or went).
   */
  private objWatchers = new Map<KObject, Set<Waiter>>();
  private kindWatchers = new Map<string, Set<Waiter>>();
  private allWatchers = new Set<Waiter>();
  private dirty = new Set<Waiter>();
  private allDirty = false;
  private rng: Rng;
  private faults: Required<Omit<FaultOptions, 'seed'>>;
  private softCapable: (node: string) => boolean;
  private renderSeconds: number;
  /** node -> pool, and per-pool members */
  private poolOf = new Map<string, string>();
  private members = new Map<string, string[]>();
  /** node -> every pool key whose members include it (an MCP and a bootc pool may both). */
  private memberOf = new Map<string, string[]>();
  private unavailable = new Map<string, boolean>();
  private runtime = new Map<string, { initiallyNotReady: boolean; down: boolean; flapping: boolean; stageToken: number; mcoToken: number; stagingImage?: string | null }>();
  private lockCounter = 0;
  private sessions = 0;
  private progressJson = new ProgressJson();

  constructor(snapshot: ClusterSnapshot, opts: SimOptions = {}) {
    this.durations = opts.durations ?? DEFAULT_DURATIONS;
    this.source = `sim:${snapshot.source}`;
    this.start = Date.parse(opts.start ?? '2026-09-14T08:00:00Z') / 1000;
    this.now = this.start;
    const f = opts.faults ?? {};
    this.rng = mulberry32(f.seed ?? 1);
    this.faults = {
      rebootFailRate: f.rebootFailRate ?? 0, flapsPerHour: f.flapsPerHour ?? 0,
      flapSeconds: f.flapSeconds ?? [60, 300], conflictRate: f.conflictRate ?? 0,
    };
    this.softCapable = opts.softRebootCapable ?? (() => false);
    this.renderSeconds = opts.renderSeconds ?? 0;
    const all: KObject[] = [];
    for (const v of Object.values(snapshot)) {
      if (Array.isArray(v)) all.push(...(v as KObject[]));
      else if (v && typeof v === 'object') all.push(v as KObject);
    }
    for (const o of structuredClone(all)) this.put(o);
    for (const n of this.nodes.values()) {
      this.runtime.set(n.metadata.name, { initiallyNotReady: !this.isReadyCond(n), down: false, flapping: false, stageToken: 0, mcoToken: 0 });
    }
    this.recomputeMembership();
    // Daemons whose BootcNode already asks for an image they have not staged start pulling it.
    for (const bn of this.bootcNodes.values()) {
      const d = digestOf(bn.spec?.desiredImage);
      if (d && bn.status?.booted?.imageDigest !== d && bn.status?.staged?.imageDigest !== d) this.daemonReconcile(bn.metadata.name);
    }
    if (this.faults.flapsPerHour > 0) this.scheduleFlap();
  }

  // ------------------------------------------------------------------ object store

  private put(o: KObject) {
    const k = keyOf(o.kind, o.metadata.name, o.metadata.namespace);
    this.objects.set(k, o);
    if (o.kind === 'Node') this.nodes.set(o.metadata.name, o);
    else if (o.kind === 'BootcNode') this.bootcNodes.set(o.metadata.name, o);
    else if (o.kind === 'MachineConfig') this.machineConfigs.set(o.metadata.name, o);
    this.structureChanged();
  }
  private remove(kind: string, name: string, namespace?: string | null) {
    this.objects.delete(keyOf(kind, name, namespace));
    if (kind === 'Node') this.nodes.delete(name);
    else if (kind === 'BootcNode') this.bootcNodes.delete(name);
    else if (kind === 'MachineConfig') this.machineConfigs.delete(name);
    this.structureChanged();
  }
  private structureChanged() {
    this.version++;
    this.structure++;
    this.allDirty = true;
  }
  /** Every in-place change of a live object ends here: the waiters that read it are evaluated again. */
  private changed(o: KObject | undefined) {
    this.version++;
    if (!o) return;
    const ws = this.objWatchers.get(o);
    if (ws) for (const w of ws) this.dirty.add(w);
    const ks = this.kindWatchers.get(o.kind);
    if (ks) for (const w of ks) this.dirty.add(w);
    for (const w of this.allWatchers) this.dirty.add(w);
  }
  get(kind: string, name: string, namespace?: string | null): KObject | undefined {
    return this.objects.get(keyOf(kind, name, namespace));
  }
  private index(): NodeIndex {
    return this.liveIndex;
  }

  /**
   * The current state as a snapshot of the live objects (not cloned): read-only for the
   * caller. The same object is returned until objects are added or removed, so callers
   * may cache indexes keyed by it; the objects in it change in place.
   */
  view(): ClusterSnapshot {
    if (this.viewCache && this.viewCache.structure === this.structure) return this.viewCache.snap;
    const snap = this.buildSnapshot([...this.objects.values()], false);
    this.viewCache = { structure: this.structure, snap };
    return snap;
  }

  /**
   * Makes the live view report what is read of it: a list is a read of every object of its
   * kind, a singleton a read of that object, the fingerprint a read of everything; nodes,
   * BootcNodes and MachineConfigs looked up by name (through the index the view carries,
   * see indexSnapshot) are reads of those objects only.
   */
  private trackReads(snap: ClusterSnapshot) {
    const t = this.tracker;
    const define = (key: string, get: () => unknown) => Object.defineProperty(snap, key, {
      enumerable: true, configurable: true, get,
      set: (v) => Object.defineProperty(snap, key, { value: v, writable: true, enumerable: true, configurable: true }),
    });
    for (const [kind, list] of Object.entries(LIST_OF)) {
      const arr = snap[list];
      define(list, () => { t.readKind(kind); return arr; });
    }
    for (const key of [...Object.values(SINGLETON_OF), 'bootImagesConfigMap', 'progress', 'lock'] as (keyof ClusterSnapshot)[]) {
      const o = snap[key] as KObject | null;
      define(key, () => { if (o && t.active) t.read(o); return o; });
    }
    const fingerprint = Object.getOwnPropertyDescriptor(snap, 'fingerprint')!.get!;
    define('fingerprint', () => { t.readAll(); return fingerprint(); });
    Object.defineProperty(snap, SNAPSHOT_INDEX, { value: this.liveIndex, enumerable: false });
  }

  private buildSnapshot(objs: KObject[], frozen = true): ClusterSnapshot {
    const snap = emptySnapshot(this.source);
    for (const o of objs) {
      const list = LIST_OF[o.kind];
      if (list) (snap[list] as KObject[]).push(o);
      else if (SINGLETON_OF[o.kind]) (snap as any)[SINGLETON_OF[o.kind]] = o;
      else if (o.kind === 'ConfigMap' && o.metadata.name === 'coreos-bootimages') snap.bootImagesConfigMap = o;
      else if (o.kind === 'ConfigMap' && o.metadata.name === PROGRESS_NAME) snap.progress = o;
      else if (o.kind === 'Lease' && o.metadata.name === LOCK_NAME) snap.lock = o;
    }
    for (const list of Object.values(LIST_OF)) (snap[list] as KObject[]).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
    // Computed on first use (a frozen copy) or on every use (the live view).
    let fp: string | null = null;
    Object.defineProperty(snap, 'fingerprint', { enumerable: true, configurable: true, get: () => (frozen ? (fp ??= fingerprintOf(snap)) : fingerprintOf(snap)) });
    if (!frozen) this.trackReads(snap);
    return snap;
  }

  /** A self-contained copy of the current state. */
  snapshotCopy(): ClusterSnapshot {
    return this.buildSnapshot(structuredClone([...this.objects.values()]));
  }

  /** Test hook: change the cluster behind the applier's back (objects are live). */
  mutate(fn: (objects: { nodes: Map<string, KObject>; bootcNodes: Map<string, KObject>; get: (kind: string, name: string, ns?: string) => KObject | undefined; add: (o: KObject) => void; remove: (kind: string, name: string, ns?: string) => void }) => void) {
    fn({
      nodes: this.nodes, bootcNodes: this.bootcNodes, get: (k, n, ns) => this.get(k, n, ns),
      add: (o) => {
        this.put(structuredClone(o));
        if (o.kind === 'Node') this.runtime.set(o.metadata.name, { initiallyNotReady: !this.isReadyCond(o), down: false, flapping: false, stageToken: 0, mcoToken: 0 });
      },
      remove: (k, n, ns) => this.remove(k, n, ns),
    });
    this.structureChanged(); // anything may have changed in place: every waiter is evaluated again
    this.recomputeMembership();
  }

  // ------------------------------------------------------------------ membership, availability

  private recomputeMembership() {
    const m = computeMembership(this.view());
    this.poolOf.clear();
    this.members.clear();
    for (const [pool, list] of m.mco) { this.members.set(`mco/${pool}`, list); for (const n of list) this.poolOf.set(n, `mco/${pool}`); }
    // bootc membership wins over the MCO pool the node is also in (worker)
    for (const [pool, list] of m.bootc) { this.members.set(`bootc/${pool}`, list); for (const n of list) this.poolOf.set(n, `bootc/${pool}`); }
    this.memberOf.clear();
    for (const [key, list] of this.members) {
      for (const n of list) {
        const keys = this.memberOf.get(n);
        if (!keys) this.memberOf.set(n, [key]);
        else if (!keys.includes(key)) keys.push(key);
      }
    }
    for (const n of this.nodes.keys()) this.unavailable.set(n, viewNode(this.nodes.get(n)!, this.index()).unavailable !== null);
    this.recount();
    for (const key of this.members.keys()) this.updatePeak(key);
  }

  private poolKeyToName(k: string) { return k.slice(k.indexOf('/') + 1); }

  /** Recomputes one node's availability (after any change to it) and the pool's peak. */
  private touch(node: string, peak = true) {
    const n = this.nodes.get(node);
    if (!n) return;
    const was = this.unavailable.get(node) === true;
    const now = viewNode(n, this.index()).unavailable !== null;
    this.unavailable.set(node, now);
    this.changed(n);
    this.changed(this.bootcNodes.get(node));
    if (was !== now) {
      for (const key of this.memberOf.get(node) ?? []) this.counts.set(key, (this.counts.get(key) ?? 0) + (now ? 1 : -1));
      const pool = this.poolOf.get(node);
      if (peak && pool) this.updatePeak(pool);
    }
  }
  private counts = new Map<string, number>();
  private countUnavailable(poolKey: string): number {
    return this.counts.get(poolKey) ?? 0;
  }
  private recount() {
    this.counts.clear();
    for (const [key, list] of this.members) {
      let c = 0;
      for (const n of list) if (this.unavailable.get(n)) c++;
      this.counts.set(key, c);
    }
  }
  private updatePeak(poolKey: string) {
    const name = this.poolKeyToName(poolKey);
    const c = this.countUnavailable(poolKey);
    // A bootc pool and the MCP of the same name describe the same nodes; report under the name.
    if (c > (this.peakUnavailable.get(name) ?? -1)) this.peakUnavailable.set(name, c);
  }
  /** The resolved budget written to the pool (MCO arithmetic), or null. */
  budgetOf(poolKey: string): number | null {
    const [backend, name] = [poolKey.slice(0, poolKey.indexOf('/')), this.poolKeyToName(poolKey)];
    const raw = backend === 'bootc' ? this.get('BootcNodePool', name)?.spec?.rollout?.maxUnavailable : this.get('MachineConfigPool', name)?.spec?.maxUnavailable;
    const parsed = parseMaxUnavailable(raw ?? 1);
    if (!parsed.ok) return null;
    return resolveMaxUnavailable(parsed.value, (this.members.get(poolKey) ?? []).length).resolved;
  }
  poolNameOf(node: string): string | null {
    const k = this.poolOf.get(node);
    return k ? this.poolKeyToName(k) : null;
  }

  private isReadyCond(n: KObject) {
    return (n.status?.conditions ?? []).some((c: Condition) => c.type === 'Ready' && c.status === 'True');
  }
  private refreshReady(node: string) {
    const n = this.nodes.get(node);
    const rt = this.runtime.get(node);
    if (!n || !rt) return;
    const ready = !rt.initiallyNotReady && !rt.down && !rt.flapping;
    if (ready !== this.isReadyCond(n)) {
      setCondition(n, ready
        ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastTransitionTime: isoOf(this.now) }
        : { type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: isoOf(this.now) });
    }
    this.touch(node);
  }

  // ------------------------------------------------------------------ scheduler

  at(t: number, fn: () => void): SimEvent {
    const e: SimEvent = { t: Math.max(t, this.now), seq: this.seq++, fn };
    this.queue.push(e);
    return e;
  }
  after(dt: number, fn: () => void): SimEvent {
    return this.at(this.now + dt, fn);
  }

  private kick() {
    if (this.scheduled || this.pending === 0) return;
    this.scheduled = true;
    setImmediate(() => this.step());
  }

  private step() {
    this.scheduled = false;
    if (this.pending === 0) return;
    if (this.checkWaiters()) {
      this.kick();
      return;
    }
    const e = this.nextEvent();
    if (!e) {
      const err = new DriverError('simulated cluster: every actor waits and nothing is scheduled (deadlock)');
      for (const w of [...this.waiters]) { w.cleanup(); w.reject(err); }
      return;
    }
    this.now = Math.max(this.now, e.t);
    e.fn();
    this.kick();
  }

  private nextEvent(): SimEvent | undefined {
    for (;;) {
      const e = this.queue.pop();
      if (!e || !e.cancelled) return e;
    }
  }

  /** Runs every event up to now + seconds at once (time passing while no apply runs). */
  advance(seconds: number) {
    const until = this.now + seconds;
    for (;;) {
      const top = this.queue.peek();
      if (!top || top.t > until) break;
      this.queue.pop();
      if (top.cancelled) continue;
      this.now = Math.max(this.now, top.t);
      top.fn();
    }
    this.now = until;
    this.checkWaiters();
  }

  /**
   * Evaluates the waiters whose view of the state is out of date: those that read an object
   * that changed since their last evaluation (all of them when objects came or went), in
   * the order they started waiting. True when one resolved.
   */
  private checkWaiters(): boolean {
    let any = false;
    if (!this.waiters.size || (!this.allDirty && !this.dirty.size)) {
      this.dirty.clear();
      this.allDirty = false;
      return false;
    }
    let list: Waiter[];
    if (this.allDirty) list = [...this.waiters];
    else {
      list = [];
      for (const w of this.dirty) if (this.waiters.has(w)) list.push(w);
      list.sort((a, b) => a.id - b.id);
    }
    this.dirty.clear();
    this.allDirty = false;
    const snap = this.view();
    for (const w of list) {
      if (w.lastVersion === this.version) continue;
      w.lastVersion = this.version;
      let v: unknown;
      const { reads, outer } = this.tracker.begin();
      try {
        v = w.predicate(snap);
      } catch (err) {
        this.tracker.end(outer);
        w.cleanup();
        w.reject(err);
        any = true;
        continue;
      }
      this.tracker.end(outer);
      if (v !== undefined && v !== null && v !== false) {
        w.cleanup();
        w.resolve(v);
        any = true;
      } else if (this.waiters.has(w)) this.watch(w, reads);
    }
    return any;
  }

  /** Records what a pending waiter read at its last evaluation. */
  private watch(w: Waiter, reads: Reads) {
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
  private unwatch(w: Waiter) {
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

  sleep(seconds: number, signal: AbortSignal | undefined, session: SimDriver | null): Promise<void> {
    if (signal?.aborted) return Promise.reject(new AbortedError());
    // Nothing to read: only the timeout (or the signal) ends it.
    return new Promise<void>((resolve, reject) => {
      this.enqueueWaiter({ session, predicate: () => false, resolve, reject, lastVersion: Infinity }, signal, seconds, () => resolve(), null);
    });
  }

  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions, session: SimDriver | null): Promise<T | null> {
    if (opts.signal?.aborted) return Promise.reject(new AbortedError());
    const { reads, outer } = this.tracker.begin();
    let first: T | null | undefined | false;
    try {
      first = predicate(this.view());
    } finally {
      this.tracker.end(outer);
    }
    if (first !== undefined && first !== null && first !== false) return Promise.resolve(first as T);
    return new Promise<T | null>((resolve, reject) => {
      this.enqueueWaiter({ session, predicate, resolve, reject, lastVersion: this.version }, opts.signal, opts.timeoutSeconds, () => resolve(null), reads);
    });
  }

  /**
   * Registers a pending wait: it ends when its predicate holds (checked when what it read
   * changes), when `seconds` pass (`onTimeout`), or when `signal` aborts.
   */
  private enqueueWaiter(
    base: Pick<Waiter, 'session' | 'predicate' | 'resolve' | 'reject' | 'lastVersion'>,
    signal: AbortSignal | undefined, seconds: number, onTimeout: () => void, reads: Reads | null,
  ): void {
    const w: Waiter = {
      id: this.waiterIds++, ...base, timeout: null, deps: null,
      cleanup: () => {
        if (!this.waiters.delete(w)) return;
        this.dirty.delete(w);
        this.unwatch(w);
        this.pending--;
        if (w.timeout) w.timeout.cancelled = true;
        signal?.removeEventListener('abort', onAbort);
      },
    };
    const onAbort = () => { w.cleanup(); base.reject(new AbortedError()); };
    signal?.addEventListener('abort', onAbort);
    w.timeout = this.after(Math.max(0, seconds), () => { w.cleanup(); onTimeout(); });
    this.waiters.add(w);
    if (reads) this.watch(w, reads);
    this.pending++;
    this.kick();
  }

  /** Rejects every pending wait of a session (the process died). */
  killSession(s: SimDriver) {
    for (const w of [...this.waiters]) if (w.session === s) { w.cleanup(); w.reject(new KilledError()); }
  }

  // ------------------------------------------------------------------ faults

  private scheduleFlap() {
    const meanGap = 3600 / this.faults.flapsPerHour;
    const gap = -Math.log(1 - this.rng()) * meanGap;
    this.after(gap, () => {
      const names = [...this.poolOf.keys()];
      if (names.length) {
        const node = names[Math.floor(this.rng() * names.length)];
        const rt = this.runtime.get(node);
        const [lo, hi] = this.faults.flapSeconds;
        const dur = lo + this.rng() * (hi - lo);
        if (rt && !rt.flapping) {
          rt.flapping = true;
          this.refreshReady(node);
          this.after(dur, () => { rt.flapping = false; this.refreshReady(node); });
        }
      }
      this.scheduleFlap();
    });
  }

  maybeConflict(session: SimDriver, what: string) {
    if (this.faults.conflictRate > 0 && this.rng() < this.faults.conflictRate) {
      throw new ConflictError(`Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again`);
    }
    void session;
  }

  // ------------------------------------------------------------------ writes

  record(session: SimDriver, op: string, target: string) {
    this.writes.push({ t: this.now - this.start, session: session.name, op, target });
  }

  patchObject(ref: ObjectRef, ops: Operation[]): KObject {
    const obj = this.get(ref.kind, ref.name, ref.namespace);
    if (!obj) throw new NotFoundError(`${ref.kind} ${ref.name} not found`);
    const before = structuredClone(obj);
    const copy = structuredClone(obj);
    try {
      applyPatch(copy, ops, false, true);
    } catch (err) {
      const e = err as { name?: string; operation?: Operation; message: string };
      throw new PreconditionFailedError(`${ref.kind}/${ref.name}: ${e.name === 'TEST_OPERATION_FAILED' ? 'test failed' : e.message.split('\n')[0]} at ${e.operation?.path ?? '?'}`, e.operation?.path ?? '');
    }
    copy.metadata.generation = (copy.metadata.generation ?? 1) + 1;
    copy.metadata.resourceVersion = String(this.seq++);
    this.put(copy);
    this.afterWrite(before, copy);
    return copy;
  }

  createObject(obj: KObject): KObject {
    if (this.get(obj.kind, obj.metadata.name, obj.metadata.namespace)) throw new AlreadyExistsError(`${obj.kind} ${obj.metadata.name} already exists`);
    const o = structuredClone(obj);
    o.metadata.uid ??= createHash('sha1').update(`${o.kind}/${o.metadata.name}`).digest('hex').slice(0, 32);
    o.metadata.generation = 1;
    o.metadata.creationTimestamp = isoOf(this.now);
    this.put(o);
    this.afterWrite(null, o);
    return o;
  }

  /** Controllers reacting to a write. */
  private afterWrite(before: KObject | null, after: KObject) {
    switch (after.kind) {
      case 'BootcNodePool': {
        if (before?.spec?.image?.ref !== after.spec?.image?.ref) this.bootcControllerSetTarget(after);
        break;
      }
      case 'MachineConfig': {
        const role = after.metadata.labels?.[MCO_ROLE_LABEL];
        if (role && before?.spec?.osImageURL !== after.spec?.osImageURL) this.after(this.renderSeconds, () => this.mcoRender(role));
        break;
      }
      case 'MachineConfigPool': {
        if (before && before.spec?.paused && !after.spec?.paused) this.after(0, () => this.mcoSync(after.metadata.name));
        break;
      }
      case 'MachineConfiguration': {
        // The operator copies the spec into status after a short while (pkg/operator/sync.go).
        this.after(5, () => {
          const mc = this.get('MachineConfiguration', after.metadata.name);
          if (!mc) return;
          mc.status ??= {};
          if (mc.spec?.bootImageSkewEnforcement) mc.status.bootImageSkewEnforcementStatus = structuredClone(mc.spec.bootImageSkewEnforcement);
          if (mc.spec?.managedBootImages) mc.status.managedBootImagesStatus = structuredClone(mc.spec.managedBootImages);
          this.changed(mc);
        });
        break;
      }
    }
  }

  // ------------------------------------------------------------------ bootc

  private bootcControllerSetTarget(pool: KObject) {
    const ref: string = pool.spec?.image?.ref;
    if (!ref) return;
    // A tag is resolved from the registry by the controller; the simulator makes up a digest.
    const digest = digestOf(ref) ?? `sha256:${createHash('sha256').update(ref).digest('hex')}`;
    const desired = digestOf(ref) ? ref : `${ref.replace(/:[^/:]+$/, '')}@${digest}`;
    for (const bn of this.bootcNodes.values()) {
      const owner = bn.metadata.ownerReferences?.find((r) => r.kind === 'BootcNodePool');
      if (owner?.name !== pool.metadata.name) continue;
      if (bn.spec.desiredImage !== desired) {
        bn.spec.desiredImage = desired;
        bn.spec.desiredImageState = 'Staged';
        this.changed(bn);
      }
      this.daemonReconcile(bn.metadata.name);
    }
  }

  private daemonReconcile(node: string) {
    const bn = this.bootcNodes.get(node);
    const rt = this.runtime.get(node);
    if (!bn || !rt) return;
    const digest = digestOf(bn.spec?.desiredImage);
    const degraded = (bn.status?.conditions ?? []).some((c: Condition) => c.type === 'Degraded' && c.status === 'True');
    if (!digest || degraded) return;
    const now = isoOf(this.now);
    if (bn.status?.booted?.imageDigest === digest) {
      setCondition(bn, { type: 'Idle', status: 'True', reason: 'Idle', message: '', lastTransitionTime: now });
      this.touch(node);
      return;
    }
    if (bn.status?.staged?.imageDigest === digest) {
      setCondition(bn, { type: 'Idle', status: 'False', reason: 'Staged', message: `staged ${digest}`, lastTransitionTime: now });
      this.touch(node);
      return;
    }
    const image = bn.spec.desiredImage;
    if (rt.stagingImage === image) return; // already pulling it
    setCondition(bn, { type: 'Idle', status: 'False', reason: 'Staging', message: `staging ${bn.spec.desiredImage}`, lastTransitionTime: now });
    this.touch(node);
    const token = ++rt.stageToken;
    rt.stagingImage = image;
    this.after(this.durations.stage, () => {
      if (rt.stageToken !== token) return;
      rt.stagingImage = null;
      if (bn.spec.desiredImage !== image) return;
      bn.status.staged = {
        image, imageDigest: digest, version: 'sim', timestamp: isoOf(this.now), architecture: 'amd64',
        softRebootCapable: this.softCapable(node), incompatible: false,
      };
      setCondition(bn, { type: 'Idle', status: 'False', reason: 'Staged', message: `staged ${digest}`, lastTransitionTime: isoOf(this.now) });
      this.touch(node);
    });
  }

  setDesiredImageState(session: SimDriver, node: string, state: DesiredImageState) {
    const bn = this.bootcNodes.get(node);
    if (!bn) throw new NotFoundError(`BootcNode ${node} not found`);
    this.record(session, 'desiredImageState', `${node}=${state}`);
    bn.spec.desiredImageState = state;
    this.changed(bn);
    if (state !== 'Booted') return;
    const rt = this.runtime.get(node)!;
    const digest = digestOf(bn.spec.desiredImage);
    const conds: Condition[] = bn.status?.conditions ?? [];
    const idle = conds.find((c) => c.type === 'Idle');
    const degraded = conds.some((c) => c.type === 'Degraded' && c.status === 'True');
    // The daemon reboots only into a staged image that matches, once (bootc-operator daemon).
    if (degraded || idle?.reason === 'Rebooting' || bn.status?.booted?.imageDigest === digest || bn.status?.staged?.imageDigest !== digest) return;
    const pool = this.get('BootcNodePool', bn.metadata.ownerReferences?.find((r) => r.kind === 'BootcNodePool')?.name ?? '');
    const soft = pool?.spec?.disruption?.rebootPolicy === 'AllowSoftReboot' && bn.status.staged.softRebootCapable === true;
    const failed = this.faults.rebootFailRate > 0 && this.rng() < this.faults.rebootFailRate;
    this.reboots.push({ t: this.now - this.start, node, kind: soft ? 'soft' : 'hard', failed });
    setCondition(bn, { type: 'Idle', status: 'False', reason: 'Rebooting', message: soft ? 'soft-rebooting' : 'rebooting', lastTransitionTime: isoOf(this.now) });
    rt.down = true;
    this.refreshReady(node);
    const rebootSeconds = soft ? this.durations.softReboot : this.durations.reboot;
    this.after(rebootSeconds, () => {
      const at = isoOf(this.now);
      if (failed) {
        setCondition(bn, { type: 'Degraded', status: 'True', reason: 'Error', message: 'bootc switch --apply: the new deployment failed to boot; rolled back to the previous deployment', lastTransitionTime: at });
      } else {
        bn.status.rollback = bn.status.booted;
        bn.status.booted = bn.status.staged;
        delete bn.status.staged;
      }
      setCondition(bn, { type: 'Idle', status: 'True', reason: 'Idle', message: '', lastTransitionTime: at });
      this.touch(node);
    });
    this.after(rebootSeconds + this.durations.ready, () => { rt.down = false; this.refreshReady(node); });
  }

  // ------------------------------------------------------------------ MCO

  private mcoRender(pool: string) {
    const mcp = this.get('MachineConfigPool', pool);
    if (!mcp) return;
    const current = this.machineConfigs.get(mcp.spec?.configuration?.name ?? '');
    const sources = [...this.machineConfigs.values()]
      .filter((m) => m.metadata.labels?.[MCO_ROLE_LABEL] === pool && m.spec?.osImageURL)
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    const osImageURL = sources.length ? sources[sources.length - 1].spec.osImageURL : current?.spec?.osImageURL;
    if (!osImageURL || current?.spec?.osImageURL === osImageURL) return;
    const name = `rendered-${pool}-${createHash('md5').update(`${pool}/${osImageURL}`).digest('hex')}`;
    if (!this.machineConfigs.has(name)) {
      this.put({
        apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig',
        metadata: { name, ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: pool, controller: true }], annotations: { 'machineconfiguration.openshift.io/os-image-url-overridden': 'true' } },
        spec: { ...(current?.spec ? structuredClone(current.spec) : {}), osImageURL },
      });
    }
    mcp.spec.configuration = { name };
    mcp.status ??= {};
    mcp.status.configuration = { name };
    this.changed(mcp);
    this.mcoSync(pool);
  }

  /** The node controller: hand the target config to as many nodes as the budget allows. */
  mcoSync(pool: string) {
    const mcp = this.get('MachineConfigPool', pool);
    if (!mcp || mcp.spec?.paused) return;
    const target: string | undefined = mcp.spec?.configuration?.name;
    const key = `mco/${pool}`;
    const members = this.members.get(key) ?? [];
    if (!target) return;
    const budget = this.budgetOf(key) ?? 1;
    const free = budget - this.countUnavailable(key);
    if (free <= 0) return;
    const candidates = members
      .map((n) => this.nodes.get(n)!)
      .filter((n) => n && (n.metadata.annotations?.[MCO_DESIRED_CONFIG] ?? '') !== target && !this.unavailable.get(n.metadata.name))
      // MCO (pkg/controller/node/node_controller.go sortNodeList): alphabetically by zone,
      // oldest first inside a zone; nodes without a zone label last, oldest first.
      .sort((a, b) => {
        const za = a.metadata.labels?.[ZONE_LABEL], zb = b.metadata.labels?.[ZONE_LABEL];
        if ((za === undefined) !== (zb === undefined)) return za === undefined ? 1 : -1;
        if (za !== zb) return za! < zb! ? -1 : 1;
        const ca = a.metadata.creationTimestamp ?? '', cb = b.metadata.creationTimestamp ?? '';
        if (ca !== cb) return ca < cb ? -1 : 1;
        return a.metadata.name < b.metadata.name ? -1 : 1;
      })
      .slice(0, free);
    for (const n of candidates) this.mcdUpdate(n.metadata.name, target, pool);
  }

  private mcdUpdate(node: string, target: string, pool: string) {
    const n = this.nodes.get(node)!;
    const rt = this.runtime.get(node)!;
    const token = ++rt.mcoToken;
    const ann = (n.metadata.annotations ??= {});
    ann[MCO_DESIRED_CONFIG] = target;
    ann[MCO_STATE] = 'Working';
    n.spec ??= {};
    n.spec.unschedulable = true;
    this.touch(node);
    const d = this.durations;
    const failed = this.faults.rebootFailRate > 0 && this.rng() < this.faults.rebootFailRate;
    this.after(d.drain, () => {
      if (rt.mcoToken !== token) return;
      ann['machineconfiguration.openshift.io/lastAppliedDrain'] = `drain-${target}`;
      this.changed(n);
    });
    this.after(d.drain + d.stage, () => {
      if (rt.mcoToken !== token) return;
      ann[MCO_STATE] = 'Rebooting';
      this.reboots.push({ t: this.now - this.start, node, kind: 'hard', failed });
      rt.down = true;
      this.refreshReady(node);
    });
    this.after(d.drain + d.stage + d.reboot, () => {
      if (rt.mcoToken !== token) return;
      if (failed) {
        ann[MCO_STATE] = 'Degraded';
        ann[MCO_REASON] = `failed to boot into ${target}: rolled back to ${ann[MCO_CURRENT_CONFIG]}`;
      } else {
        ann[MCO_CURRENT_CONFIG] = target;
        ann[MCO_STATE] = 'Done';
      }
      this.touch(node);
    });
    this.after(d.drain + d.stage + d.reboot + d.ready, () => {
      if (rt.mcoToken !== token) return;
      rt.down = false;
      if (!failed) n.spec.unschedulable = false;
      this.refreshReady(node);
      this.mcoSync(pool);
    });
  }

  // ------------------------------------------------------------------ nodes, pools, lock, progress

  cordon(session: SimDriver, node: string, value: boolean) {
    const n = this.nodes.get(node);
    if (!n) throw new NotFoundError(`Node ${node} not found`);
    this.record(session, value ? 'cordon' : 'uncordon', node);
    const wasUnavailable = this.unavailable.get(node) === true;
    n.spec ??= {};
    if (value) n.spec.unschedulable = true;
    else delete n.spec.unschedulable;
    this.touch(node);
    if (value) {
      const key = this.poolOf.get(node) ?? null;
      this.cordons.push({
        t: this.now - this.start, node, pool: key ? this.poolKeyToName(key) : null, session: session.name,
        unavailableAfter: key ? this.countUnavailable(key) : 0, budget: key ? this.budgetOf(key) : null, wasUnavailable,
      });
    }
  }

  setPoolPaused(session: SimDriver, kind: PoolKind, name: string, paused: boolean) {
    const p = this.get(kind, name);
    if (!p) throw new NotFoundError(`${kind} ${name} not found`);
    this.record(session, paused ? 'pause' : 'unpause', `${kind}/${name}`);
    p.spec ??= {};
    if (kind === 'MachineConfigPool') {
      const was = p.spec.paused === true;
      p.spec.paused = paused;
      this.changed(p);
      if (was && !paused) this.after(0, () => this.mcoSync(name));
    } else {
      p.spec.rollout ??= {};
      p.spec.rollout.paused = paused;
      this.changed(p);
    }
  }

  leaseOf(): LockRecord | null {
    const l = this.get('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    if (!l) return null;
    return {
      lockId: l.metadata.annotations?.['bootcplan.dev/lock-id'] ?? '', holder: l.spec.holderIdentity, planId: l.metadata.annotations?.['bootcplan.dev/plan-id'] ?? '',
      since: l.spec.acquireTime, renewedAt: l.spec.renewTime, ttlSeconds: l.spec.leaseDurationSeconds,
    };
  }

  acquireLock(session: SimDriver, req: { holder: string; planId: string; ttlSeconds: number }): LockRecord {
    const cur = this.leaseOf();
    if (cur && Date.parse(cur.renewedAt) / 1000 + cur.ttlSeconds > this.now) throw new LockHeldError(cur.holder, cur.since, cur.lockId, cur.planId);
    const lockId = createHash('sha256').update(`${this.source}/${this.lockCounter++}/${this.rng()}`).digest('hex').slice(0, 12);
    if (cur) this.remove('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    this.put({
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: { name: LOCK_NAME, namespace: BOOTCPLAN_NAMESPACE, annotations: { 'bootcplan.dev/lock-id': lockId, 'bootcplan.dev/plan-id': req.planId } },
      spec: { holderIdentity: req.holder, leaseDurationSeconds: req.ttlSeconds, acquireTime: isoOf(this.now), renewTime: isoOf(this.now) },
    });
    this.record(session, 'lock', lockId);
    return this.leaseOf()!;
  }
  renewLock(lockId: string): LockRecord {
    const l = this.get('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    if (!l || l.metadata.annotations?.['bootcplan.dev/lock-id'] !== lockId) throw new LockLostError(`lock ${lockId} is no longer held`);
    l.spec.renewTime = isoOf(this.now);
    this.changed(l);
    return this.leaseOf()!;
  }
  releaseLock(session: SimDriver, lockId: string): boolean {
    const cur = this.leaseOf();
    if (!cur || cur.lockId !== lockId) return false;
    this.remove('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    this.record(session, 'unlock', lockId);
    return true;
  }
  readProgress(): ProgressRecord | null {
    const cm = this.get('ConfigMap', PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
    return cm?.data?.['progress.json'] ? JSON.parse(cm.data['progress.json']) : null;
  }
  writeProgress(p: ProgressRecord) {
    // `progress.json` is JSON.stringify(p) as of now, put together when first read.
    const json = this.progressJson.capture(p);
    const data: Record<string, string> = { 'plan-id': p.planId };
    let text: string | null = null;
    Object.defineProperty(data, 'progress.json', {
      enumerable: true, configurable: true,
      get: () => (text ??= json()),
      set: (v: string) => { text = v; },
    });
    const cm = this.get('ConfigMap', PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
    if (cm) {
      cm.data = data;
      this.changed(cm);
    } else {
      this.put({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE }, data });
    }
  }

  /** A driver session (one apply process). */
  driver(name = `apply-${++this.sessions}`): SimDriver {
    return new SimDriver(this, name);
  }

  /** Reboots per node. */
  rebootCounts(): Map<string, number> {
    const m = new Map<string, number>();
    for (const r of this.reboots) m.set(r.node, (m.get(r.node) ?? 0) + 1);
    return m;
  }
}

/** The ClusterDriver of one apply process against the simulated cluster. */
export class SimDriver implements ClusterDriver {
  readonly clock: Clock;
  private killed = false;
  constructor(readonly sim: SimCluster, readonly name: string) {
    this.clock = {
      now: () => sim.now,
      sleep: (s, signal) => this.guard(() => sim.sleep(s, signal, this)),
    };
  }
  /** Simulates `kill -9` of the apply process: every pending and later call fails. */
  kill() {
    this.killed = true;
    this.sim.killSession(this);
  }
  get isKilled() { return this.killed; }

  private async guard<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.killed) throw new KilledError();
    const v = await fn();
    if (this.killed) throw new KilledError();
    return v;
  }
  private write<T>(what: string, fn: () => T): Promise<T> {
    return this.guard(() => {
      this.sim.maybeConflict(this, what);
      return fn();
    });
  }

  snapshot() { return this.guard(() => this.sim.snapshotCopy()); }
  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions) {
    return this.guard(() => this.sim.waitFor(predicate, opts, this));
  }
  patch(ref: ObjectRef, ops: Operation[]) {
    return this.write(`${ref.kind}/${ref.name}`, () => {
      this.sim.record(this, 'patch', `${ref.kind}/${ref.name}`);
      return this.sim.patchObject(ref, ops);
    });
  }
  create(obj: KObject) {
    return this.write(`${obj.kind}/${obj.metadata.name}`, () => {
      this.sim.record(this, 'create', `${obj.kind}/${obj.metadata.name}`);
      return this.sim.createObject(obj);
    });
  }
  cordon(node: string) { return this.write(`nodes/${node}`, () => this.sim.cordon(this, node, true)); }
  uncordon(node: string) { return this.write(`nodes/${node}`, () => this.sim.cordon(this, node, false)); }
  drain(node: string, opts: DrainOptions) {
    return this.guard(async () => {
      const n = this.sim.get('Node', node);
      if (!n) throw new NotFoundError(`Node ${node} not found`);
      if (n.spec?.unschedulable !== true) throw new DriverError(`drain ${node}: the node is not cordoned`);
      this.sim.record(this, 'drain', node);
      const d = this.sim.durations.drain;
      if (opts.timeoutSeconds !== null && opts.timeoutSeconds > 0 && d > opts.timeoutSeconds) {
        await this.sim.sleep(opts.timeoutSeconds, undefined, this);
        throw new DrainTimeoutError(`drain ${node}: pods still running after ${opts.timeoutSeconds}s (a PodDisruptionBudget may block eviction)`);
      }
      await this.sim.sleep(d, undefined, this);
    });
  }
  setDesiredImageState(node: string, state: DesiredImageState) {
    return this.write(`bootcnodes/${node}`, () => this.sim.setDesiredImageState(this, node, state));
  }
  setPoolPaused(kind: PoolKind, name: string, paused: boolean) {
    return this.write(`${kind}/${name}`, () => this.sim.setPoolPaused(this, kind, name, paused));
  }
  acquireLock(req: { holder: string; planId: string; ttlSeconds: number }) { return this.guard(() => this.sim.acquireLock(this, req)); }
  renewLock(lockId: string) { return this.guard(() => this.sim.renewLock(lockId)); }
  releaseLock(lockId: string) { return this.guard(() => this.sim.releaseLock(this, lockId)); }
  readLock() { return this.guard(() => this.sim.leaseOf()); }
  readProgress() { return this.guard(() => this.sim.readProgress()); }
  writeProgress(p: ProgressRecord) {
    return this.guard(() => {
      this.sim.record(this, 'progress', p.planId);
      this.sim.writeProgress(p);
    });
  }
}

