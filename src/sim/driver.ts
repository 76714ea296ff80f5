/**
 * The ClusterDriver of one apply process against the simulated cluster (docs/design.md §1 `src/sim`):
 * every call goes through the cluster, writes may hit an injected conflict, and `kill()`
 * plays `kill -9` of the process.
 */
import type { Operation } from 'fast-json-patch';
import type { ClusterSnapshot, KObject, RecordDocument } from '../cluster/types.ts';
import {
  type Clock,
  type ClusterDriver,
  type ObjectRef,
  type NodeProgress,
  type ProgressRecord,
  type WaitOptions,
  type DrainOptions,
  type PoolKind,
  type DesiredImageState,
  NotFoundError,
  DrainTimeoutError,
  DriverError,
  PreconditionFailedError,
} from '../apply/ports/driver.ts';
import { KilledError, type SimClusterPort, type SimSession } from './session-port.ts';
import { cordonNode, uncordonNode } from './cordons.ts';
import { LeaseObserver, type LockSighting } from '../domain/lease-expiry.ts';
import type { ClusterEventRecord, RolloutStatus } from '../apply/ports/rollout-object.ts';

/** The ClusterDriver of one apply process against the simulated cluster. */
export class SimDriver implements ClusterDriver, SimSession {
  readonly clock: Clock;
  private killed = false;
  /** This process's memory of the lock Lease (expiry by observed time: src/domain/lease-expiry.ts). */
  readonly leaseObserver = new LeaseObserver();
  /**
   * Test hook: when set, a lock renewal of this process fails with it (a network partition
   * between this apply and the API server), before reaching the cluster.
   */
  renewFault: (() => Error | null) | null = null;
  constructor(
    readonly sim: SimClusterPort,
    readonly name: string,
  ) {
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
  get isKilled() {
    return this.killed;
  }

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

  snapshot() {
    return this.guard(() => this.sim.snapshotCopy());
  }
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
  delete(ref: ObjectRef, opts: { resourceVersion: string | null }) {
    return this.write(`${ref.kind}/${ref.name}`, () => {
      // DeleteOptions preconditions, as the API server checks them.
      const obj = this.sim.get(ref.kind, ref.name, ref.namespace);
      if (!obj) throw new NotFoundError(`${ref.kind} ${ref.name} not found`);
      if (opts.resourceVersion !== null && obj.metadata.resourceVersion !== opts.resourceVersion)
        throw new PreconditionFailedError(`${ref.kind}/${ref.name}: changed since it was read`, '/metadata/resourceVersion');
      this.sim.record(this, 'delete', `${ref.kind}/${ref.name}`);
      this.sim.deleteObject(obj);
    });
  }
  cordon(node: string, by: string, progress?: NodeProgress) {
    return this.write(`nodes/${node}`, () => cordonNode(this.sim, this, node, by, progress));
  }
  uncordon(node: string, by: string, progress?: NodeProgress) {
    return this.write(`nodes/${node}`, () => uncordonNode(this.sim, this, node, by, progress));
  }
  drain(node: string, opts: DrainOptions) {
    return this.guard(async () => {
      const n = this.sim.get('Node', node);
      if (!n) throw new NotFoundError(`Node ${node} not found`);
      if (n.spec?.unschedulable !== true) throw new DriverError(`drain ${node}: the node is not cordoned`);
      this.sim.record(this, 'drain', node);
      const d = this.sim.durationsOf(node).drain;
      if (opts.timeoutSeconds !== null && opts.timeoutSeconds > 0 && d > opts.timeoutSeconds) {
        await this.sim.sleep(opts.timeoutSeconds, opts.signal, this);
        throw new DrainTimeoutError(`drain ${node}: pods still running after ${opts.timeoutSeconds}s (a PodDisruptionBudget may block eviction)`);
      }
      await this.sim.sleep(d, opts.signal, this);
    });
  }
  setDesiredImageState(node: string, state: DesiredImageState) {
    return this.write(`bootcnodes/${node}`, () => this.sim.setDesiredImageState(this, node, state));
  }
  setPoolPaused(kind: PoolKind, name: string, paused: boolean, by: string) {
    return this.write(`${kind}/${name}`, () => this.sim.setPoolPaused(this, kind, name, paused, by));
  }
  acquireLock(req: { holder: string; planId: string; ttlSeconds: number }) {
    return this.guard(() => this.sim.lock.acquire(this, req));
  }
  readRollout(name: string) {
    return this.guard(() => this.sim.rollouts.read(name));
  }
  writeRolloutStatus(name: string, status: RolloutStatus) {
    return this.guard(() => {
      this.sim.record(this, 'status', `Rollout/${name}`);
      this.sim.rollouts.writeStatus(name, status);
    });
  }
  writeRolloutLockObserved(name: string, seen: LockSighting | null) {
    return this.guard(() => {
      this.sim.record(this, 'status', `Rollout/${name}`);
      this.sim.rollouts.writeStatus(name, { lockObserved: seen });
    });
  }
  recordEvent(e: ClusterEventRecord, uid: string | null) {
    return this.guard(() => {
      this.sim.record(this, 'event', `${e.regarding.kind}/${e.regarding.name}`);
      this.sim.rollouts.record(this.sim.now, e, uid);
    });
  }
  renewLock(lockId: string) {
    return this.guard(() => {
      const fault = this.renewFault?.();
      if (fault) throw fault;
      return this.sim.lock.renew(this, lockId);
    });
  }
  releaseLock(lockId: string) {
    return this.guard(() => this.sim.lock.release(this, lockId));
  }
  readLock() {
    return this.guard(() => this.sim.lock.readAs(this));
  }
  readProgress() {
    return this.guard(() => this.sim.progress.read(this.sim.nodes.values()));
  }
  writeProgress(p: ProgressRecord, version: string | null) {
    return this.guard(() => {
      this.sim.record(this, 'progress', p.planId);
      return this.sim.progress.write(p, version);
    });
  }
  writeNodeProgress(node: string, p: NodeProgress) {
    return this.write(`nodes/${node}`, () => this.sim.writeNodeProgress(this, node, p));
  }

  /**
   * This process's store of bootcplan's record documents (the fleet record), as
   * src/kube/record-documents.ts keeps them; not part of ClusterDriver. Killed with the process.
   */
  readonly records = {
    read: <T>(doc: RecordDocument<T>): Promise<T | null> => this.guard(() => this.sim.progress.readDocument(doc)),
    write: <T>(doc: RecordDocument<T>, value: T): Promise<void> =>
      this.guard(() => {
        this.sim.record(this, 'record', doc.name);
        this.sim.progress.writeDocument(doc, value);
      }),
  };
}
