/**
 * The ClusterDriver on a real Kubernetes API (contract: src/apply/ports/driver.ts), composed of
 * one part per job:
 *
 * - snapshot() and waitFor(): a watch cache (src/kube/watch-cache.ts: list once, then watch
 *   each kind from the list's resourceVersion, resume and reconnect, relist on 410 Gone);
 *   snapshot() is a copy of it, and waitFor's predicate runs on every change, plus every 2 s
 *   without any request (src/kube/wait.ts). No read during an apply is a request of its own.
 * - Writes: JSON patch with the plan's `test` ops, merge patches for small idempotent
 *   switches, pool pause (src/kube/object-writes.ts).
 * - cordon, uncordon (each with the node's progress entry), drain through the Eviction API
 *   (src/kube/node-ops.ts).
 * - Lock: Lease `openshift-bootcplan/bootcplan-lock` (src/kube/lease-lock.ts).
 * - Progress: the run record in ConfigMap `openshift-bootcplan/bootcplan-progress`
 *   (src/kube/progress-configmap.ts), the nodes' entries in their annotations.
 * - Rollout status and Events (src/kube/rollout-object.ts).
 */
import type { Operation } from 'fast-json-patch';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import {
  type Clock,
  type ClusterDriver,
  type CordonResult,
  type UncordonResult,
  type ObjectRef,
  type LockRecord,
  type ProgressRecord,
  type ProgressState,
  type NodeProgress,
  type WaitOptions,
  type DrainOptions,
  type PoolKind,
  type DesiredImageState,
  type RolloutObject,
} from '../apply/ports/driver.ts';
import type { ClusterEventRecord, RolloutStatus } from '../apply/ports/rollout-object.ts';
import type { LockSighting } from '../domain/lease-expiry.ts';
import { RolloutObjects } from './rollout-object.ts';
import type { KubeClient } from './rest.ts';
import { snapshotFromObjects } from '../cluster/snapshot.ts';
import { serverHost } from '../cluster/identity.ts';
import { WatchCache } from './watch-cache.ts';
import { readLiveWorkloadsOf } from './read.ts';
import { waitOnCache } from './wait.ts';
import { ObjectWriter } from './object-writes.ts';
import { NodeOps } from './node-ops.ts';
import { LeaseLock } from './lease-lock.ts';
import { ProgressConfigMap } from './progress-configmap.ts';
import { sleepFor } from './long-timer.ts';

/** The wall clock; sleeps longer than setTimeout allows are chunked (src/kube/long-timer.ts). */
export const wallClock: Clock = {
  now: () => Date.now() / 1000,
  sleep: (seconds, signal) => sleepFor(seconds, signal),
};

export interface KubeDriverOptions {
  clock?: Clock;
  /** Pause between eviction attempts a PodDisruptionBudget refused (kubectl drain: 5 s). */
  evictionRetrySeconds?: number;
  /** How often waitFor re-evaluates without a change (time-dependent predicates). */
  recheckSeconds?: number;
  /** Server-side length of each watch before it is resumed (default 4-5 min). */
  watchTimeoutSeconds?: number;
  /** Events' reportingInstance (who applies: the lock holder); default "bootcplan". */
  instance?: string;
}

export class KubeDriver implements ClusterDriver {
  readonly clock: Clock;
  private readonly cache: WatchCache;
  private readonly recheckSeconds: number;
  private readonly writer: ObjectWriter;
  private readonly nodes: NodeOps;
  private readonly lock: LeaseLock;
  private readonly progress: ProgressConfigMap;
  private readonly rollouts: RolloutObjects;
  private closed = false;

  constructor(
    readonly client: KubeClient,
    opts: KubeDriverOptions = {},
  ) {
    this.clock = opts.clock ?? wallClock;
    this.cache = new WatchCache(client, `live:${client.contextName}`, opts.watchTimeoutSeconds, serverHost(client.server));
    this.recheckSeconds = opts.recheckSeconds ?? 2;
    this.writer = new ObjectWriter(client, this.cache);
    this.nodes = new NodeOps(client, this.writer, this.cache, opts.evictionRetrySeconds ?? 5);
    this.lock = new LeaseLock(client, this.cache, this.clock);
    this.progress = new ProgressConfigMap(client, this.cache);
    this.rollouts = new RolloutObjects(client, this.clock, opts.instance ?? 'bootcplan');
  }

  /** Stops every watch; the process can exit. */
  close(): void {
    this.closed = true;
    this.cache.stop();
    this.client.close();
  }

  watchStats() {
    return this.cache.watchStats();
  }

  // ------------------------------------------------------------------ reads

  /**
   * A copy of the watch cache (started, with its first lists, on the first call), with the
   * workloads listed and projected afresh (the cache does not watch them: src/kube/read.ts).
   */
  async snapshot(): Promise<ClusterSnapshot> {
    await this.cache.start();
    const snap = snapshotFromObjects(structuredClone([...this.cache.objects()]), `live:${this.client.contextName}`, serverHost(this.client.server));
    snap.workloads = await readLiveWorkloadsOf(this.client, snap.nodes);
    return snap;
  }
  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions): Promise<T | null> {
    return waitOnCache(this.cache, this.recheckSeconds, predicate, opts);
  }

  // ------------------------------------------------------------------ writes

  patch(ref: ObjectRef, ops: Operation[]): Promise<KObject> {
    return this.writer.patch(ref, ops);
  }
  create(obj: KObject): Promise<KObject> {
    return this.writer.create(obj);
  }
  delete(ref: ObjectRef, opts: { resourceVersion: string | null }): Promise<void> {
    return this.writer.delete(ref, opts);
  }
  setDesiredImageState(node: string, state: DesiredImageState): Promise<void> {
    return this.writer.setDesiredImageState(node, state);
  }
  setPoolPaused(kind: PoolKind, name: string, paused: boolean, by: string): Promise<void> {
    return this.writer.setPoolPaused(kind, name, paused, by);
  }

  // ------------------------------------------------------------------ nodes

  cordon(node: string, by: string, progress?: NodeProgress): Promise<CordonResult> {
    return this.nodes.cordon(node, by, progress);
  }
  uncordon(node: string, by: string, progress?: NodeProgress): Promise<UncordonResult> {
    return this.nodes.uncordon(node, by, progress);
  }
  drain(node: string, opts: DrainOptions): Promise<void> {
    return this.nodes.drain(node, opts);
  }

  // ------------------------------------------------------------------ lock

  acquireLock(req: { holder: string; planId: string; ttlSeconds: number }): Promise<LockRecord> {
    return this.lock.acquire(req);
  }
  renewLock(lockId: string): Promise<LockRecord> {
    return this.lock.renew(lockId);
  }
  releaseLock(lockId: string): Promise<boolean> {
    return this.lock.release(lockId);
  }
  readLock(): Promise<LockRecord | null> {
    return this.lock.read();
  }

  // ------------------------------------------------------------------ progress

  readProgress(): Promise<ProgressState> {
    return this.progress.read();
  }
  writeProgress(p: ProgressRecord, version: string | null): Promise<string> {
    return this.progress.write(p, version);
  }
  writeNodeProgress(node: string, p: NodeProgress): Promise<void> {
    return this.nodes.writeProgress(node, p);
  }
  // ------------------------------------------------------------------ rollout status, Events

  readRollout(name: string): Promise<RolloutObject | null> {
    return this.rollouts.read(name);
  }
  writeRolloutStatus(name: string, status: RolloutStatus): Promise<void> {
    return this.rollouts.writeStatus(name, status);
  }
  writeRolloutLockObserved(name: string, seen: LockSighting | null): Promise<void> {
    return this.rollouts.writeStatus(name, { lockObserved: seen });
  }
  recordEvent(e: ClusterEventRecord, uid: string | null): Promise<void> {
    return this.rollouts.record(e, uid);
  }
}
