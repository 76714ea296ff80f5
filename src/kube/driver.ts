/**
 * The ClusterDriver on a real Kubernetes API (contract: src/apply/driver.ts).
 *
 * - snapshot(): a fresh read of every kind of the snapshot contract (src/kube/read.ts).
 * - waitFor(): a watch cache (src/kube/watch-cache.ts: list, then watch each kind from the
 *   list's resourceVersion, resume and reconnect, relist on 410 Gone); the predicate runs on
 *   every change, plus every 2 s without any request (src/kube/wait.ts).
 * - Writes: JSON patch with the plan's `test` ops, merge patches for small idempotent
 *   switches, pool pause (src/kube/object-writes.ts).
 * - cordon, uncordon, drain through the Eviction API (src/kube/node-ops.ts).
 * - Lock: Lease `openshift-bootcplan/bootcplan-lock` (holderIdentity, acquireTime,
 *   renewTime, leaseDurationSeconds; lock id and plan id in annotations). Taken only when
 *   absent or expired; create (AlreadyExists) and update (resourceVersion) conflicts make
 *   concurrent acquirers race safely: exactly one wins.
 * - Progress: ConfigMap `openshift-bootcplan/bootcplan-progress`, keys `plan-id` and
 *   `progress.json`.
 */
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import type { Operation } from 'fast-json-patch';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { BOOTCPLAN_NAMESPACE, LOCK_NAME, PROGRESS_NAME } from '../cluster/types.ts';
import { LockHeldError } from '../base/errors.ts';
import {
  type Clock, type ClusterDriver, type ObjectRef, type LockRecord, type ProgressRecord, type WaitOptions, type DrainOptions,
  type PoolKind, type DesiredImageState,
  NotFoundError, AlreadyExistsError, ConflictError, LockLostError, AbortedError, DriverError, isoOf,
} from '../apply/driver.ts';
import { KubeClient, KubeApiError } from './rest.ts';
import { readLiveSnapshot } from './read.ts';
import { WatchCache } from './watch-cache.ts';
import { waitOnCache } from './wait.ts';
import { ObjectWriter } from './object-writes.ts';
import { NodeOps } from './node-ops.ts';
import {
  objectPath, collectionPath, LEASE, CONFIGMAP,
} from './resources.ts';

export const LOCK_ID_ANNOTATION = 'bootcplan.dev/lock-id';
export const PLAN_ID_ANNOTATION = 'bootcplan.dev/plan-id';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';

export const wallClock: Clock = {
  now: () => Date.now() / 1000,
  sleep: (seconds, signal) => new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError());
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, Math.max(0, seconds) * 1000);
    const onAbort = () => { clearTimeout(t); reject(new AbortedError()); };
    signal?.addEventListener('abort', onAbort, { once: true });
  }),
};

/** Lease times are MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(t: number): string {
  const ms = Math.floor(t * 1000);
  const us = Math.floor((t * 1e6) % 1000).toString().padStart(3, '0');
  return new Date(ms).toISOString().replace(/Z$/, `${us}Z`);
}

export interface KubeDriverOptions {
  clock?: Clock;
  /** Pause between eviction attempts a PodDisruptionBudget refused (kubectl drain: 5 s). */
  evictionRetrySeconds?: number;
  /** How often waitFor re-evaluates without a change (time-dependent predicates). */
  recheckSeconds?: number;
  /** Server-side length of each watch before it is resumed (default 4-5 min). */
  watchTimeoutSeconds?: number;
}

export class KubeDriver implements ClusterDriver {
  readonly clock: Clock;
  private readonly cache: WatchCache;
  private readonly recheckSeconds: number;
  private readonly writer: ObjectWriter;
  private readonly nodes: NodeOps;
  private closed = false;

  constructor(readonly client: KubeClient, opts: KubeDriverOptions = {}) {
    this.clock = opts.clock ?? wallClock;
    this.cache = new WatchCache(client, `live:${client.contextName}`, opts.watchTimeoutSeconds);
    this.recheckSeconds = opts.recheckSeconds ?? 2;
    this.writer = new ObjectWriter(client, this.cache);
    this.nodes = new NodeOps(client, this.writer, opts.evictionRetrySeconds ?? 5);
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

  snapshot(): Promise<ClusterSnapshot> {
    return readLiveSnapshot(this.client);
  }

  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions): Promise<T | null> {
    return waitOnCache(this.cache, this.recheckSeconds, predicate, opts);
  }

  // ------------------------------------------------------------------ writes

  private wrote(o: KObject, apiVersion: string, kind: string): KObject {
    return this.cache.wrote(o, apiVersion, kind);
  }
  patch(ref: ObjectRef, ops: Operation[]): Promise<KObject> { return this.writer.patch(ref, ops); }
  create(obj: KObject): Promise<KObject> { return this.writer.create(obj); }
  setDesiredImageState(node: string, state: DesiredImageState): Promise<void> { return this.writer.setDesiredImageState(node, state); }
  setPoolPaused(kind: PoolKind, name: string, paused: boolean): Promise<void> { return this.writer.setPoolPaused(kind, name, paused); }

  // ------------------------------------------------------------------ nodes

  cordon(node: string): Promise<void> { return this.nodes.cordon(node); }
  uncordon(node: string): Promise<void> { return this.nodes.uncordon(node); }
  drain(node: string, opts: DrainOptions): Promise<void> { return this.nodes.drain(node, opts); }

  // ------------------------------------------------------------------ lock

  private leasePath() {
    return objectPath(LEASE, LOCK_NAME, BOOTCPLAN_NAMESPACE);
  }
  private async getLease(): Promise<any | null> {
    try {
      return await this.client.request('GET', this.leasePath(), { what: `Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}` });
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }
  private recordOf(l: any): LockRecord | null {
    if (!l || !l.spec?.holderIdentity) return null;
    const toIso = (s: string | undefined) => (s ? isoOf(Date.parse(s) / 1000) : '');
    return {
      lockId: l.metadata?.annotations?.[LOCK_ID_ANNOTATION] ?? '',
      holder: l.spec.holderIdentity,
      planId: l.metadata?.annotations?.[PLAN_ID_ANNOTATION] ?? '',
      since: toIso(l.spec.acquireTime),
      renewedAt: toIso(l.spec.renewTime ?? l.spec.acquireTime),
      ttlSeconds: l.spec.leaseDurationSeconds ?? 0,
    };
  }
  private expired(l: any): boolean {
    if (!l?.spec?.holderIdentity) return true;
    const renewed = Date.parse(l.spec.renewTime ?? l.spec.acquireTime ?? '') / 1000;
    if (!Number.isFinite(renewed)) return true;
    return renewed + (l.spec.leaseDurationSeconds ?? 0) < this.clock.now();
  }
  private missingNamespace(err: unknown): never {
    if (err instanceof NotFoundError) {
      throw new KubeApiError(`namespace ${BOOTCPLAN_NAMESPACE} does not exist; bootcplan keeps its lock and progress there`, 404, 'NotFound', 'create it (examples/rbac.yaml does, with the service account and role apply needs)');
    }
    throw err;
  }

  async acquireLock(req: { holder: string; planId: string; ttlSeconds: number }): Promise<LockRecord> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await this.getLease();
      if (cur && !this.expired(cur)) {
        const r = this.recordOf(cur)!;
        throw new LockHeldError(r.holder, r.since, r.lockId, r.planId || null);
      }
      const now = this.clock.now();
      const lockId = randomBytes(6).toString('hex');
      const spec = { holderIdentity: req.holder, leaseDurationSeconds: Math.max(1, Math.round(req.ttlSeconds)), acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: (cur?.spec?.leaseTransitions ?? -1) + 1 };
      const metadata: any = { name: LOCK_NAME, namespace: BOOTCPLAN_NAMESPACE, labels: { [MANAGED_BY_LABEL]: 'bootcplan' }, annotations: { [LOCK_ID_ANNOTATION]: lockId, [PLAN_ID_ANNOTATION]: req.planId } };
      try {
        let l: any;
        if (!cur) {
          l = await this.client.request('POST', collectionPath(LEASE, BOOTCPLAN_NAMESPACE), { body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec }, what: `Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}` }).catch((e) => this.missingNamespace(e));
        } else {
          // Take over an expired or released lease; resourceVersion makes this a compare-and-swap.
          metadata.resourceVersion = cur.metadata.resourceVersion;
          l = await this.client.request('PUT', this.leasePath(), { body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec }, what: `Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}` });
        }
        this.wrote(l, LEASE.apiVersion, 'Lease');
        return this.recordOf(l)!;
      } catch (err) {
        // Someone else created or updated it between our read and our write: read again.
        if (err instanceof AlreadyExistsError || err instanceof ConflictError || err instanceof NotFoundError) continue;
        throw err;
      }
    }
    throw new ConflictError(`Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}: kept changing while taking the lock`);
  }

  async renewLock(lockId: string): Promise<LockRecord> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await this.getLease();
      if (!cur || cur.metadata?.annotations?.[LOCK_ID_ANNOTATION] !== lockId || !cur.spec?.holderIdentity) {
        throw new LockLostError(`lock ${lockId} is no longer held${cur?.spec?.holderIdentity ? ` (now held by ${cur.spec.holderIdentity})` : ''}`);
      }
      cur.spec.renewTime = microTime(this.clock.now());
      try {
        const l = await this.client.request('PUT', this.leasePath(), { body: cur, what: `Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}` });
        this.wrote(l, LEASE.apiVersion, 'Lease');
        return this.recordOf(l)!;
      } catch (err) {
        if (err instanceof ConflictError) continue;
        if (err instanceof NotFoundError) throw new LockLostError(`lock ${lockId} is no longer held (the Lease was deleted)`);
        throw err;
      }
    }
    throw new ConflictError(`Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}: kept changing while renewing the lock`);
  }

  async releaseLock(lockId: string): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await this.getLease();
      if (!cur || cur.metadata?.annotations?.[LOCK_ID_ANNOTATION] !== lockId) return false;
      try {
        await this.client.request('DELETE', this.leasePath(), {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: cur.metadata.resourceVersion } },
          what: `Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}`,
        });
        this.cache.deleted({ kind: 'Lease', name: LOCK_NAME, namespace: BOOTCPLAN_NAMESPACE });
        return true;
      } catch (err) {
        if (err instanceof ConflictError) continue;
        if (err instanceof NotFoundError) return false;
        throw err;
      }
    }
    return false;
  }

  async readLock(): Promise<LockRecord | null> {
    return this.recordOf(await this.getLease());
  }

  // ------------------------------------------------------------------ progress

  private progressPath() {
    return objectPath(CONFIGMAP, PROGRESS_NAME, BOOTCPLAN_NAMESPACE);
  }

  async readProgress(): Promise<ProgressRecord | null> {
    try {
      const cm = await this.client.request('GET', this.progressPath(), { what: `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}` });
      const text = cm?.data?.['progress.json'];
      if (!text) return null;
      try {
        return JSON.parse(text) as ProgressRecord;
      } catch {
        throw new DriverError(`ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}: progress.json is not valid JSON`);
      }
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  async writeProgress(p: ProgressRecord): Promise<void> {
    const body = {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE, labels: { [MANAGED_BY_LABEL]: 'bootcplan' } },
      data: { 'plan-id': p.planId, 'progress.json': JSON.stringify(p) },
    };
    const what = `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}`;
    let cm: any;
    try {
      // The lock serialises writers, so an unconditional replace is safe.
      cm = await this.client.request('PUT', this.progressPath(), { body, what });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      try {
        cm = await this.client.request('POST', collectionPath(CONFIGMAP, BOOTCPLAN_NAMESPACE), { body, what });
      } catch (e) {
        if (e instanceof AlreadyExistsError) cm = await this.client.request('PUT', this.progressPath(), { body, what });
        else this.missingNamespace(e);
      }
    }
    this.wrote(cm, 'v1', 'ConfigMap');
  }
}

/** Who holds the lock: user@host (or the pod name in a cluster job). */
export function defaultHolder(env: Record<string, string | undefined> = process.env): string {
  if (env.BOOTCPLAN_HOLDER) return env.BOOTCPLAN_HOLDER;
  let user = 'bootcplan';
  try { user = userInfo().username; } catch { /* no passwd entry in a container */ }
  return `${user}@${env.HOSTNAME ?? hostname()}`;
}
