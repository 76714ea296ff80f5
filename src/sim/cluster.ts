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
import { viewNode, digestOf, type NodeIndex } from '../domain/nodes.ts';
import { computeMembership } from '../domain/pools.ts';
import { parseMaxUnavailable, resolveMaxUnavailable } from '../domain/budget.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE, MCO_REASON, MCO_ROLE_LABEL, ZONE_LABEL } from '../domain/labels.ts';
import { DEFAULT_DURATIONS } from '../domain/timing.ts';
import type { PhaseDurations } from '../plan/types.ts';
import { LockHeldError } from '../base/errors.ts';
import {
  type ObjectRef, type LockRecord, type ProgressRecord, type WaitOptions,
  type PoolKind, type DesiredImageState,
  ConflictError, PreconditionFailedError, NotFoundError, AlreadyExistsError, LockLostError, isoOf,
} from '../apply/driver.ts';
import { mulberry32, type Rng } from './rng.ts';
import { VirtualClock, type SimEvent } from './clock.ts';
import { ReadWatchers } from './reads.ts';
import { ObjectStore } from './store.ts';
import { Waits, type Waiter } from './waits.ts';
import { ProgressJson } from './progress-json.ts';
import { SimDriver } from './driver.ts';

export { SimDriver, KilledError } from './driver.ts';

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

export class SimCluster {
  readonly durations: PhaseDurations;
  readonly source: string;
  readonly start: number;
  readonly reboots: RebootRecord[] = [];
  readonly cordons: CordonRecord[] = [];
  readonly writes: WriteRecord[] = [];
  /** Most nodes of each pool out of service at any instant (pre-existing ones included). */
  readonly peakUnavailable = new Map<string, number>();

  private readonly clock: VirtualClock;
  private readonly watchers = new ReadWatchers<Waiter>();
  private readonly store: ObjectStore;
  private readonly waits: Waits;
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
    this.clock = new VirtualClock(this.start);
    this.store = new ObjectStore(this.source, this.watchers);
    this.waits = new Waits(this.clock, this.store.tracker, this.watchers, this.store);
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
    for (const o of structuredClone(all)) this.store.put(o);
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

  get now(): number { return this.clock.now; }
  private get nodes() { return this.store.nodes; }
  private get bootcNodes() { return this.store.bootcNodes; }
  private get machineConfigs() { return this.store.machineConfigs; }
  private put(o: KObject) { this.store.put(o); }
  private remove(kind: string, name: string, namespace?: string | null) { this.store.remove(kind, name, namespace); }
  /** Every in-place change of a live object ends here: the waiters that read it are evaluated again. */
  private changed(o: KObject | undefined) { this.store.changed(o); }
  get(kind: string, name: string, namespace?: string | null): KObject | undefined {
    return this.store.get(kind, name, namespace);
  }
  private index(): NodeIndex {
    return this.store.index;
  }

  /**
   * The current state as a snapshot of the live objects (not cloned): read-only for the
   * caller. The same object is returned until objects are added or removed, so callers
   * may cache indexes keyed by it; the objects in it change in place.
   */
  view(): ClusterSnapshot { return this.store.view(); }

  /** A self-contained copy of the current state. */
  snapshotCopy(): ClusterSnapshot { return this.store.snapshotCopy(); }

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
    this.store.structureChanged(); // anything may have changed in place: every waiter is evaluated again
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

  // ------------------------------------------------------------------ time, waits

  at(t: number, fn: () => void): SimEvent { return this.clock.at(t, fn); }
  after(dt: number, fn: () => void): SimEvent { return this.clock.after(dt, fn); }

  /** Runs every event up to now + seconds at once (time passing while no apply runs). */
  advance(seconds: number) {
    this.clock.runUntil(this.now + seconds);
    this.waits.check();
  }

  sleep(seconds: number, signal: AbortSignal | undefined, session: SimDriver | null): Promise<void> {
    return this.waits.sleep(seconds, signal, session);
  }
  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions, session: SimDriver | null): Promise<T | null> {
    return this.waits.waitFor(predicate, opts, session);
  }
  /** Rejects every pending wait of a session (the process died). */
  killSession(s: SimDriver) { this.waits.killSession(s); }


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
    copy.metadata.resourceVersion = String(this.clock.nextSeq());
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
