/**
 * A deterministic simulated cluster with a virtual clock (docs/design.md §1 `src/sim`).
 *
 * Built from a ClusterSnapshot, it plays the parts of the bootc-operator controller and
 * daemons (bootc-operator.ts), the MCO (mco.ts) and the kubelets closely enough for the
 * applier's decisions to matter, with faults from a seed (faults.ts). The controllers see
 * the cluster through the narrow SimWorld (world.ts), which SimCluster implements.
 *
 * No real timers: time advances only when every actor waits on the simulator (waits.ts),
 * one event at a time (clock.ts). A wait is evaluated again only when an object it read
 * changed (reads.ts); the objects and their live view are in store.ts, pool membership and
 * availability in membership.ts. Each apply process talks to it through a SimDriver
 * (driver.ts); bootcplan's cordons and pauses are written by cordons.ts, its lock Lease by
 * lease.ts.
 */
import { createHash } from 'node:crypto';
import fjp from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { type BootcNodeObject, type MachineConfigObject, type MachineConfigPoolObject, type NodeObject, type ViewOf } from '../cluster/kinds.ts';
import { snapshotObjects } from '../cluster/snapshot.ts';
import { viewNode } from '../domain/nodes.ts';
import { parseMaxUnavailable, resolveMaxUnavailable } from '../domain/budget.ts';
import { DEFAULT_DURATIONS } from '../domain/timing.ts';
import type { PhaseDurations } from '../plan/types.ts';
import { messageOf } from '../base/errors.ts';
import { isPlainObject } from '../base/schema.ts';
import {
  type ObjectRef,
  type NodeProgress,
  type WaitOptions,
  type PoolKind,
  type DesiredImageState,
  PreconditionFailedError,
  NotFoundError,
  AlreadyExistsError,
  isoOf,
} from '../apply/ports/driver.ts';
import { VirtualClock, type SimEvent } from './clock.ts';
import { ReadWatchers } from './reads.ts';
import { ObjectStore } from './store.ts';
import { Waits, type Waiter } from './waits.ts';
import { PoolMembership, poolNameOfKey } from './membership.ts';
import { Faults, type FaultOptions } from './faults.ts';
import { jitteredDurations, type JitterOptions } from './jitter.ts';
import { BootcOperator } from './bootc-operator.ts';
import { Mco } from './mco.ts';
import { SimProgress } from './progress-store.ts';
import { SimDriver } from './driver.ts';
import type { CordonRecord, SimClusterPort, SimSession } from './session-port.ts';
import { SimRollouts } from './rollouts.ts';
import { SimLock } from './lease.ts';
import { setPoolPausedField, setUnschedulable } from './cordons.ts';
import { setCondition, type SimWorld, type NodeRuntime, type RebootKind } from './world.ts';

export { SimDriver } from './driver.ts';
export { KilledError } from './session-port.ts';
export type { FaultOptions } from './faults.ts';

import { INSTALLED_BOOTC_OPERATOR, type BootcOperatorAbilities } from '../domain/bootc-daemon.ts';

const { applyPatch } = fjp;

export interface SimOptions {
  durations?: PhaseDurations;
  faults?: FaultOptions;
  /** Whether a freshly staged image can be soft-rebooted into (default: false). */
  softRebootCapable?: (node: string) => boolean;
  /** What the simulated bootc-operator can do (default: the installed one, which never soft-reboots). */
  bootcOperator?: BootcOperatorAbilities;
  /** Virtual start time (ISO), default 2026-09-14T08:00:00Z. */
  start?: string;
  /** Per-node duration jitter (jitter.ts); none by default. */
  jitter?: JitterOptions | null;
  /** How long the MCO render takes after a MachineConfig write, seconds (default 0). */
  renderSeconds?: number;
}

interface RebootRecord {
  t: number;
  node: string;
  kind: RebootKind;
  failed: boolean;
}
interface WriteRecord {
  t: number;
  session: string;
  op: string;
  target: string;
}

const isReady = (n: NodeObject) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export class SimCluster implements SimWorld, SimClusterPort {
  readonly durations: PhaseDurations;
  readonly source: string;
  readonly start: number;
  readonly reboots: RebootRecord[] = [];
  readonly cordons: CordonRecord[] = [];
  readonly writes: WriteRecord[] = [];
  /** Rollout objects and Events (src/sim/rollouts.ts). */
  readonly rollouts = new SimRollouts();
  /** Most nodes of each pool out of service at any instant (pre-existing ones included). */
  readonly peakUnavailable: Map<string, number>;
  /** The progress records and what was written to them. */
  readonly progress: SimProgress;
  /** The lock Lease (src/sim/lease.ts). */
  readonly lock: SimLock;

  private readonly clock: VirtualClock;
  private readonly watchers = new ReadWatchers<Waiter>();
  private readonly store: ObjectStore;
  private readonly waits: Waits;
  private readonly pools = new PoolMembership();
  private readonly faults: Faults;
  private readonly bootc: BootcOperator;
  private readonly mco: Mco;
  private runtimes = new Map<string, NodeRuntime>();
  private readonly jitter: JitterOptions | null;
  private sessions = 0;

  constructor(snapshot: ClusterSnapshot, opts: SimOptions = {}) {
    this.durations = opts.durations ?? DEFAULT_DURATIONS;
    this.jitter = opts.jitter ?? null;
    this.source = `sim:${snapshot.source}`;
    this.start = Date.parse(opts.start ?? '2026-09-14T08:00:00Z') / 1000;
    this.clock = new VirtualClock(this.start);
    this.store = new ObjectStore(this.source, this.watchers, snapshot.server);
    this.progress = new SimProgress(this.store);
    this.waits = new Waits(this.clock, this.store.tracker, this.watchers, this.store);
    this.peakUnavailable = this.pools.peakUnavailable;
    this.faults = new Faults(opts.faults);
    this.lock = new SimLock(this, this.store, this.clock, () => this.faults.random());
    this.bootc = new BootcOperator(this, opts.softRebootCapable ?? (() => false), opts.bootcOperator ?? INSTALLED_BOOTC_OPERATOR);
    this.mco = new Mco(this, opts.renderSeconds ?? 0);
    for (const o of structuredClone(snapshotObjects(snapshot))) this.store.put(o);
    for (const n of this.store.nodes.values()) this.addRuntime(n);
    this.recomputeMembership();
    this.bootc.start();
    this.mco.start();
    this.faults.startFlaps(this);
  }

  // ------------------------------------------------------------------ the world of the actors

  get now(): number {
    return this.clock.now;
  }
  get nodes(): ReadonlyMap<string, NodeObject> {
    return this.store.nodes;
  }
  get bootcNodes(): ReadonlyMap<string, BootcNodeObject> {
    return this.store.bootcNodes;
  }
  get machineConfigs(): ReadonlyMap<string, MachineConfigObject> {
    return this.store.machineConfigs;
  }
  machineConfigPools(): readonly MachineConfigPoolObject[] {
    return this.store.view().machineConfigPools;
  }

  at(t: number, fn: () => void): SimEvent {
    return this.clock.at(t, fn);
  }
  after(dt: number, fn: () => void): SimEvent {
    return this.clock.after(dt, fn);
  }

  get<K extends string>(kind: K, name: string, namespace?: string | null): ViewOf<K> | undefined {
    return this.store.get(kind, name, namespace);
  }
  put(o: KObject) {
    this.store.put(o);
  }
  changed(o: KObject | undefined) {
    this.store.changed(o);
  }

  runtime(node: string): NodeRuntime | undefined {
    return this.runtimes.get(node);
  }
  durationsOf(node: string): PhaseDurations {
    return jitteredDurations(this.durations, this.jitter, node);
  }
  private addRuntime(n: NodeObject) {
    this.runtimes.set(n.metadata.name, { initiallyNotReady: !isReady(n), down: false, flapping: false, stageToken: 0, mcoToken: 0 });
  }

  /** Recomputes one node's availability (after any change to it) and the pool's peak. */
  touch(node: string) {
    const n = this.store.nodes.get(node);
    if (!n) return;
    const unavailable = viewNode(n, this.store.index).unavailable !== null;
    this.changed(n);
    this.changed(this.store.bootcNodes.get(node));
    this.pools.setUnavailable(node, unavailable);
  }

  refreshReady(node: string) {
    const n = this.store.nodes.get(node);
    const rt = this.runtimes.get(node);
    if (!n || !rt) return;
    const ready = !rt.initiallyNotReady && !rt.down && !rt.flapping;
    if (ready !== isReady(n)) {
      setCondition(
        n,
        ready
          ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastTransitionTime: isoOf(this.now) }
          : {
              type: 'Ready',
              status: 'Unknown',
              reason: 'NodeStatusUnknown',
              message: 'Kubelet stopped posting node status.',
              lastTransitionTime: isoOf(this.now),
            },
      );
    }
    this.touch(node);
  }

  recordReboot(node: string, kind: RebootKind, failed: boolean) {
    this.reboots.push({ t: this.now - this.start, node, kind, failed });
  }
  rebootFails(): boolean {
    return this.faults.rebootFails();
  }

  membersOf(poolKey: string): readonly string[] {
    return this.pools.membersOf(poolKey);
  }
  pooledNodes(): string[] {
    return this.pools.pooledNodes();
  }
  isUnavailable(node: string): boolean {
    return this.pools.isUnavailable(node);
  }
  countUnavailable(poolKey: string): number {
    return this.pools.countUnavailable(poolKey);
  }

  /** The resolved budget written to the pool (MCO arithmetic), or null. */
  budgetOf(poolKey: string): number | null {
    const [backend, name] = [poolKey.slice(0, poolKey.indexOf('/')), poolNameOfKey(poolKey)];
    const raw =
      backend === 'bootc' ? this.get('BootcNodePool', name)?.spec?.rollout?.maxUnavailable : this.get('MachineConfigPool', name)?.spec?.maxUnavailable;
    const parsed = parseMaxUnavailable(raw ?? 1);
    if (!parsed.ok) return null;
    return resolveMaxUnavailable(parsed.value, this.pools.membersOf(poolKey).length).resolved;
  }
  poolKeyOf(node: string): string | null {
    return this.pools.poolKeyOf(node);
  }
  poolNameOf(node: string): string | null {
    const k = this.pools.poolKeyOf(node);
    return k ? poolNameOfKey(k) : null;
  }

  private recomputeMembership() {
    const { nodes, index } = this.store;
    this.pools.recompute(this.view(), nodes.keys(), (n) => {
      const node = nodes.get(n);
      return !!node && viewNode(node, index).unavailable !== null;
    });
  }

  // ------------------------------------------------------------------ state, time, waits

  /**
   * The current state as a snapshot of the live objects (not cloned): read-only for the
   * caller. The same object is returned until objects are added or removed, so callers
   * may cache indexes keyed by it; the objects in it change in place.
   */
  view(): ClusterSnapshot {
    return this.store.view();
  }

  /** A self-contained copy of the current state. */
  snapshotCopy(): ClusterSnapshot {
    return this.store.snapshotCopy();
  }

  /** Test hook: change the cluster behind the applier's back (objects are live). */
  mutate(
    fn: (objects: {
      nodes: Map<string, NodeObject>;
      bootcNodes: Map<string, BootcNodeObject>;
      get: (kind: string, name: string, ns?: string) => KObject | undefined;
      add: (o: KObject) => void;
      remove: (kind: string, name: string, ns?: string) => void;
    }) => void,
  ) {
    fn({
      nodes: this.store.nodes,
      bootcNodes: this.store.bootcNodes,
      get: (k, n, ns) => this.get(k, n, ns),
      add: (o) => {
        this.store.put(structuredClone(o));
        const n = this.store.nodes.get(o.metadata.name);
        if (o.kind === 'Node' && n) this.addRuntime(n);
      },
      remove: (k, n, ns) => this.store.remove(k, n, ns),
    });
    this.store.structureChanged(); // anything may have changed in place: every waiter is evaluated again
    this.recomputeMembership();
  }

  /** Runs every event up to now + seconds at once (time passing while no apply runs). */
  advance(seconds: number) {
    this.clock.runUntil(this.now + seconds);
    this.waits.check();
  }

  sleep(seconds: number, signal: AbortSignal | undefined, session: SimSession | null): Promise<void> {
    return this.waits.sleep(seconds, signal, session);
  }
  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions, session: SimSession | null): Promise<T | null> {
    return this.waits.waitFor(predicate, opts, session);
  }
  /** Rejects every pending wait of a session (the process died). */
  killSession(s: SimSession) {
    this.waits.killSession(s);
  }
  /** Test hook: the waits and sleeps of a session still pending (a finished apply leaves none). */
  openWaits(s: SimSession): number {
    return this.waits.openFor(s);
  }
  /** Test hook: `work` takes no virtual time, however many turns of the event loop it takes. */
  hold<T>(work: () => Promise<T>): Promise<T> {
    return this.waits.hold(work);
  }

  // ------------------------------------------------------------------ writes

  maybeConflict(session: SimSession, what: string) {
    this.faults.maybeConflict(what);
    void session;
  }

  record(session: Pick<SimSession, 'name'>, op: string, target: string) {
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
      const failed = err instanceof fjp.JsonPatchError ? err : null;
      const op: unknown = failed?.operation;
      const path = isPlainObject(op) && typeof op.path === 'string' ? op.path : undefined;
      throw new PreconditionFailedError(
        `${ref.kind}/${ref.name}: ${failed?.name === 'TEST_OPERATION_FAILED' ? 'test failed' : messageOf(err).split('\n')[0]} at ${path ?? '?'}`,
        path ?? '',
      );
    }
    copy.metadata.generation = (copy.metadata.generation ?? 1) + 1;
    copy.metadata.resourceVersion = String(this.clock.nextSeq());
    this.store.putWritten(copy);
    this.afterWrite(before, copy);
    return copy;
  }

  createObject(obj: KObject): KObject {
    if (this.get(obj.kind, obj.metadata.name, obj.metadata.namespace)) throw new AlreadyExistsError(`${obj.kind} ${obj.metadata.name} already exists`);
    const o = structuredClone(obj);
    o.metadata.uid ??= createHash('sha1').update(`${o.kind}/${o.metadata.name}`).digest('hex').slice(0, 32);
    o.metadata.resourceVersion = String(this.clock.nextSeq());
    o.metadata.generation = 1;
    o.metadata.creationTimestamp = isoOf(this.now);
    this.store.putWritten(o);
    this.afterWrite(null, o);
    return o;
  }

  /** Removes an object (SimDriver.delete checked its precondition); the MCO reacts. */
  deleteObject(obj: KObject) {
    this.store.remove(obj.kind, obj.metadata.name, obj.metadata.namespace);
    this.mco.onDelete(obj);
  }

  /** Controllers reacting to a write. */
  private afterWrite(before: KObject | null, after: KObject) {
    this.bootc.onWrite(before, after);
    this.mco.onWrite(before, after);
  }

  setDesiredImageState(session: SimSession, node: string, state: DesiredImageState) {
    const bn = this.store.bootcNodes.get(node);
    if (!bn) throw new NotFoundError(`BootcNode ${node} not found`);
    this.record(session, 'desiredImageState', `${node}=${state}`);
    (bn.spec ??= {}).desiredImageState = state;
    this.changed(bn);
    if (state === 'Booted') this.bootc.daemonBoot(bn);
  }

  // ------------------------------------------------------------------ nodes, pools, progress

  /**
   * Someone else's cordon or uncordon (an administrator's `kubectl cordon`): spec.unschedulable
   * only, no mark (tests and fault scenarios).
   */
  adminCordon(node: string, value: boolean) {
    const n = this.store.nodes.get(node);
    if (!n) throw new NotFoundError(`Node ${node} not found`);
    setUnschedulable(this, { name: 'administrator' }, n, value, undefined);
  }

  /** bootcplan's pause or unpause of a pool (src/sim/cordons.ts); the MCO resumes an unpaused pool. */
  setPoolPaused(session: SimSession, kind: PoolKind, name: string, paused: boolean, by: string) {
    if (setPoolPausedField(this, session, kind, name, paused, by)) this.mco.onUnpause(name);
  }

  /** One node's progress entry alone (the annotation, no other field). */
  writeNodeProgress(session: SimSession, node: string, p: NodeProgress) {
    const n = this.store.nodes.get(node);
    if (!n) throw new NotFoundError(`Node ${node} not found`);
    this.record(session, 'node-progress', node);
    this.progress.annotate(n, p);
    this.touch(node);
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
