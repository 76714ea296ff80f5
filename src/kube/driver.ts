/**
 * The ClusterDriver on a real Kubernetes API (contract: src/apply/driver.ts).
 *
 * - snapshot(): a fresh read of every kind of the snapshot contract (src/kube/read.ts).
 * - waitFor(): a watch cache (src/kube/watch-cache.ts: list, then watch each kind from the
 *   list's resourceVersion, resume and reconnect, relist on 410 Gone); the predicate runs on
 *   every change, plus every 2 s without any request (src/kube/wait.ts).
 * - Writes: JSON patch (`application/json-patch+json`) with the plan's `test` ops, which
 *   works the same on built-in kinds and custom resources; a failed test is
 *   PreconditionFailedError, never an overwrite. Small idempotent switches (cordon, pause)
 *   use a JSON merge patch. Every write's answer goes into the watch cache at once.
 * - drain(): the Eviction API (policy/v1), PodDisruptionBudget refusals (429) retried until
 *   the timeout; DaemonSet-owned and mirror pods are skipped; waits until the evicted pods
 *   are gone (watch on the node's pods).
 * - Lock: Lease `openshift-bootcplan/bootcplan-lock` (holderIdentity, acquireTime,
 *   renewTime, leaseDurationSeconds; lock id and plan id in annotations). Taken only when
 *   absent or expired; create (AlreadyExists) and update (resourceVersion) conflicts make
 *   concurrent acquirers race safely: exactly one wins.
 * - Progress: ConfigMap `openshift-bootcplan/bootcplan-progress`, keys `plan-id` and
 *   `progress.json`.
 */
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import fjp from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { BOOTCPLAN_NAMESPACE, LOCK_NAME, PROGRESS_NAME } from '../cluster/types.ts';
import { LockHeldError } from '../base/errors.ts';
import {
  type Clock, type ClusterDriver, type ObjectRef, type LockRecord, type ProgressRecord, type WaitOptions, type DrainOptions,
  type PoolKind, type DesiredImageState,
  NotFoundError, AlreadyExistsError, ConflictError, PreconditionFailedError, DrainTimeoutError, LockLostError, AbortedError, DriverError, isoOf,
} from '../apply/driver.ts';
import { KubeClient, KubeApiError, PatchNotApplicableError } from './rest.ts';
import { Reflector } from './watch.ts';
import { readLiveSnapshot } from './read.ts';
import { WatchCache } from './watch-cache.ts';
import { waitOnCache } from './wait.ts';
import {
  resourceOf, objectPath, collectionPath, LEASE, CONFIGMAP, NODE, POD, BOOTC_NODE, BOOTC_NODE_POOL, MACHINE_CONFIG_POOL,
} from './resources.ts';

export const LOCK_ID_ANNOTATION = 'bootcplan.dev/lock-id';
export const PLAN_ID_ANNOTATION = 'bootcplan.dev/plan-id';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';

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
  private readonly evictionRetrySeconds: number;
  private readonly recheckSeconds: number;
  private closed = false;

  constructor(readonly client: KubeClient, opts: KubeDriverOptions = {}) {
    this.clock = opts.clock ?? wallClock;
    this.cache = new WatchCache(client, `live:${client.contextName}`, opts.watchTimeoutSeconds);
    this.evictionRetrySeconds = opts.evictionRetrySeconds ?? 5;
    this.recheckSeconds = opts.recheckSeconds ?? 2;
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

  private refPath(ref: ObjectRef): string {
    const r = resourceOf(ref.apiVersion, ref.kind);
    if (!r) throw new DriverError(`bootcplan does not know the resource of ${ref.apiVersion} ${ref.kind}`);
    return objectPath(r, ref.name, ref.namespace);
  }
  private what(ref: { kind: string; name: string; namespace?: string | null }) {
    return `${ref.kind} ${ref.namespace ? ref.namespace + '/' : ''}${ref.name}`;
  }
  private wrote(o: KObject, apiVersion: string, kind: string): KObject {
    return this.cache.wrote(o, apiVersion, kind);
  }

  async patch(ref: ObjectRef, ops: Operation[]): Promise<KObject> {
    let o: KObject;
    try {
      o = await this.client.request('PATCH', this.refPath(ref), { body: ops, contentType: JSON_PATCH, what: this.what(ref) });
    } catch (err) {
      if (err instanceof PatchNotApplicableError) throw await this.whyNotApplicable(ref, ops);
      throw err;
    }
    return this.wrote(o, ref.apiVersion, ref.kind);
  }

  /** The server does not say which operation failed: apply the patch to a fresh copy here. */
  private async whyNotApplicable(ref: ObjectRef, ops: Operation[]): Promise<DriverError> {
    let current: KObject;
    try {
      current = await this.client.request('GET', this.refPath(ref), { what: this.what(ref) });
    } catch (err) {
      return err as DriverError;
    }
    for (let i = 0; i < ops.length; i++) {
      try {
        fjp.applyOperation(current, structuredClone(ops[i]), true, true, false);
      } catch (err) {
        const op = ops[i];
        if (op.op === 'test') {
          const actual = fjp.getValueByPointer(current, op.path);
          return new PreconditionFailedError(`${this.what(ref)}: ${op.path} is ${JSON.stringify(actual) ?? 'absent'}, the plan expected ${JSON.stringify(op.value)}`, op.path);
        }
        return new DriverError(`${this.what(ref)}: operation ${i + 1} (${op.op} ${op.path}) cannot be applied: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    // It applies now: the object changed between the write and the read.
    return new ConflictError(`${this.what(ref)}: changed while patching; retry`);
  }

  private async mergePatch(ref: ObjectRef, body: unknown): Promise<KObject> {
    const o = await this.client.request('PATCH', this.refPath(ref), { body, contentType: MERGE_PATCH, what: this.what(ref) });
    return this.wrote(o, ref.apiVersion, ref.kind);
  }

  async create(obj: KObject): Promise<KObject> {
    const r = resourceOf(obj.apiVersion, obj.kind);
    if (!r) throw new DriverError(`bootcplan does not know the resource of ${obj.apiVersion} ${obj.kind}`);
    const o = await this.client.request('POST', collectionPath(r, obj.metadata.namespace), { body: obj, what: this.what({ kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace }) });
    return this.wrote(o, obj.apiVersion, obj.kind);
  }

  async cordon(node: string): Promise<void> {
    await this.mergePatch({ apiVersion: 'v1', kind: 'Node', name: node }, { spec: { unschedulable: true } });
  }
  async uncordon(node: string): Promise<void> {
    await this.mergePatch({ apiVersion: 'v1', kind: 'Node', name: node }, { spec: { unschedulable: null } });
  }

  async setDesiredImageState(node: string, state: DesiredImageState): Promise<void> {
    await this.patch({ apiVersion: BOOTC_NODE.apiVersion, kind: 'BootcNode', name: node }, [{ op: 'add', path: '/spec/desiredImageState', value: state }]);
  }

  async setPoolPaused(kind: PoolKind, name: string, paused: boolean): Promise<void> {
    if (kind === 'MachineConfigPool') await this.mergePatch({ apiVersion: MACHINE_CONFIG_POOL.apiVersion, kind, name }, { spec: { paused } });
    else await this.mergePatch({ apiVersion: BOOTC_NODE_POOL.apiVersion, kind, name }, { spec: { rollout: { paused } } });
  }

  // ------------------------------------------------------------------ drain

  async drain(node: string, opts: DrainOptions): Promise<void> {
    const n = await this.client.request('GET', objectPath(NODE, node), { what: `Node ${node}` });
    if (n?.spec?.unschedulable !== true) throw new DriverError(`drain ${node}: the node is not cordoned`);
    const deadline = opts.timeoutSeconds === null || opts.timeoutSeconds <= 0 ? Infinity : Date.now() + opts.timeoutSeconds * 1000;
    const pods = new Reflector(this.client, POD, { fieldSelector: `spec.nodeName=${node}` });
    const refusals = new Map<string, string>();
    const evicted = new Set<string>();
    let wake: (() => void) | null = null;
    const off = pods.onChange(() => wake?.());
    try {
      await pods.start();
      for (;;) {
        const left = [...pods.items.values()].filter((p) => !skippedByDrain(p));
        if (!left.length) return;
        if (Date.now() >= deadline) {
          const names = left.map((p) => `${p.metadata.namespace}/${p.metadata.name}${refusals.has(p.metadata.uid ?? '') ? ` (${refusals.get(p.metadata.uid ?? '')})` : p.metadata.deletionTimestamp ? ' (terminating)' : ''}`);
          throw new DrainTimeoutError(`drain ${node}: ${left.length} pod${left.length === 1 ? '' : 's'} still on the node after ${opts.timeoutSeconds}s: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}`);
        }
        let refused = false;
        for (const p of left) {
          const uid = p.metadata.uid ?? `${p.metadata.namespace}/${p.metadata.name}`;
          if (p.metadata.deletionTimestamp || evicted.has(uid)) continue;
          try {
            await this.client.request('POST', `${objectPath(POD, p.metadata.name, p.metadata.namespace)}/eviction`, {
              body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: p.metadata.name, namespace: p.metadata.namespace } },
              what: `evict pod ${p.metadata.namespace}/${p.metadata.name}`,
            });
            evicted.add(uid);
            refusals.delete(uid);
          } catch (err) {
            if (err instanceof NotFoundError) { evicted.add(uid); continue; }
            // 429: a PodDisruptionBudget does not allow the disruption now; 500 with
            // "more than one PodDisruptionBudget" is also retried, as kubectl drain does.
            if (err instanceof KubeApiError && (err.status === 429 || (err.status === 500 && /PodDisruptionBudget/i.test(err.message)))) {
              refusals.set(uid, err.message.replace(/^[^:]*:\s*/, ''));
              refused = true;
              continue;
            }
            throw err;
          }
        }
        // Wait for a change on the node's pods, or the retry interval of a refused eviction.
        const waitMs = Math.min(refused ? this.evictionRetrySeconds * 1000 : 5000, Math.max(0, deadline - Date.now()));
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => { wake = null; resolve(); }, waitMs);
          wake = () => { clearTimeout(t); wake = null; resolve(); };
        });
      }
    } finally {
      off();
      pods.stop();
    }
  }

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

/** DaemonSet-owned pods (kubectl drain --ignore-daemonsets) and static (mirror) pods stay. */
export function skippedByDrain(p: KObject): boolean {
  if (p.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined) return true;
  return (p.metadata.ownerReferences ?? []).some((r) => r.kind === 'DaemonSet' && r.controller !== false);
}

/** Who holds the lock: user@host (or the pod name in a cluster job). */
export function defaultHolder(env: Record<string, string | undefined> = process.env): string {
  if (env.BOOTCPLAN_HOLDER) return env.BOOTCPLAN_HOLDER;
  let user = 'bootcplan';
  try { user = userInfo().username; } catch { /* no passwd entry in a container */ }
  return `${user}@${env.HOSTNAME ?? hostname()}`;
}
