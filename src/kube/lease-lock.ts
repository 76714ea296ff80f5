/**
 * The lock on a real cluster: Lease `openshift-bootcplan/bootcplan-lock` (holderIdentity,
 * acquireTime, renewTime, leaseDurationSeconds; lock id and plan id in annotations). Taken
 * only when absent or expired; create (AlreadyExists) and update (resourceVersion) conflicts
 * make concurrent acquirers race safely: exactly one wins.
 *
 * Expired means: this process has seen the Lease unchanged for its whole duration (client-go's
 * observedTime rule, src/domain/lease-expiry.ts); the holder's renewTime is never compared
 * with the local clock. Every write carries the resourceVersion last read or written: a
 * renewal is one PUT of the Lease this process last wrote (client-go's fast path), and only
 * a 409 makes it read the Lease again (still ours: retry; someone else's: LockLostError).
 */
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { BOOTCPLAN_NAMESPACE, LOCK_NAME, type ObjectMeta } from '../cluster/types.ts';
import type { LeaseObject } from '../cluster/kinds.ts';
import { isPlainObject } from '../base/schema.ts';
import { LockHeldError } from '../base/errors.ts';
import { type Clock, type LockRecord, NotFoundError, AlreadyExistsError, ConflictError, LockLostError, isoOf } from '../apply/ports/driver.ts';
import { type KubeClient, KubeRequestError } from './rest.ts';
import { HINT_NOT_API_SERVER } from './api-errors.ts';
import type { WatchCache } from './watch-cache.ts';
import { objectPath, collectionPath, LEASE } from './resources.ts';
import { MANAGED_BY_LABEL, rethrowMissingNamespace } from './bootcplan-namespace.ts';
import { BOOTCPLAN_LOCK_ID, BOOTCPLAN_LOCK_PLAN_ID } from '../domain/labels.ts';
import { LeaseObserver } from '../domain/lease-expiry.ts';

const LOCK_ID_ANNOTATION = BOOTCPLAN_LOCK_ID;
const PLAN_ID_ANNOTATION = BOOTCPLAN_LOCK_PLAN_ID;

/** Lease times are MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(t: number): string {
  const ms = Math.floor(t * 1000);
  const us = Math.floor((t * 1e6) % 1000)
    .toString()
    .padStart(3, '0');
  return new Date(ms).toISOString().replace(/Z$/, `${us}Z`);
}

/** Who holds the lock: user@host (or the pod name in a cluster job). */
export function defaultHolder(env: Record<string, string | undefined> = process.env): string {
  if (env.BOOTCPLAN_HOLDER) return env.BOOTCPLAN_HOLDER;
  let user = 'bootcplan';
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry in a container */
  }
  return `${user}@${env.HOSTNAME ?? hostname()}`;
}

const LEASE_WHAT = `Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}`;

/**
 * The Lease fields the lock reads, checked beyond their types (coordination.k8s.io/v1 LeaseSpec;
 * the types were checked where the answer came in, src/kube/answers.ts): a time that is not a
 * time, or annotations that are not strings, are refused instead of read as "no holder" (which
 * `status` would print as "lock: free").
 */
function checkLease(l: LeaseObject, endpoint: string): LeaseObject {
  const bad = (what: string) =>
    new KubeRequestError(
      `${endpoint}: the ${LEASE_WHAT} is malformed: ${what}`,
      'unexpected-answer',
      endpoint,
      'the API server should never answer this; ' + HINT_NOT_API_SERVER,
    );
  const spec = l.spec;
  for (const f of ['acquireTime', 'renewTime'] as const) {
    const t = spec?.[f];
    if (typeof t === 'string' && !Number.isFinite(Date.parse(t))) throw bad(`spec.${f} is not a time`);
  }
  const ann: unknown = l.metadata.annotations;
  if (ann !== undefined && ann !== null && (!isPlainObject(ann) || Object.values(ann).some((v) => typeof v !== 'string')))
    throw bad('metadata.annotations is not a map of strings');
  return l;
}

function recordOf(l: LeaseObject | null): LockRecord | null {
  const spec = l?.spec;
  if (!l || !spec?.holderIdentity) return null;
  const toIso = (s: string | null | undefined) => (s ? isoOf(Date.parse(s) / 1000) : '');
  return {
    lockId: l.metadata.annotations?.[LOCK_ID_ANNOTATION] ?? '',
    holder: spec.holderIdentity,
    planId: l.metadata.annotations?.[PLAN_ID_ANNOTATION] ?? '',
    since: toIso(spec.acquireTime),
    renewedAt: toIso(spec.renewTime ?? spec.acquireTime),
    ttlSeconds: spec.leaseDurationSeconds ?? 0,
  };
}

/** What changes when the lock is renewed or taken over: the observed record (client-go compares the raw record). */
function leaseKey(l: LeaseObject): string {
  const sp = l.spec ?? {};
  return JSON.stringify([
    l.metadata.annotations?.[LOCK_ID_ANNOTATION] ?? '',
    sp.holderIdentity ?? '',
    sp.acquireTime ?? '',
    sp.renewTime ?? '',
    sp.leaseDurationSeconds ?? 0,
    sp.leaseTransitions ?? 0,
  ]);
}

export class LeaseLock {
  /** This process's memory of the Lease (observed record and time). */
  private readonly observer = new LeaseObserver();
  /** The Lease as this process last wrote it, by lock id (the next renewal's resourceVersion). */
  private readonly mine = new Map<string, LeaseObject>();

  constructor(
    private readonly client: KubeClient,
    private readonly cache: WatchCache,
    private readonly clock: Clock,
  ) {}

  private leasePath() {
    return objectPath(LEASE, LOCK_NAME, BOOTCPLAN_NAMESPACE);
  }
  private async getLease(): Promise<LeaseObject | null> {
    try {
      const l = checkLease(await this.client.request('GET', this.leasePath(), { what: LEASE_WHAT, expect: 'Lease' }), `GET ${this.leasePath()}`);
      if (l.spec?.holderIdentity) this.observer.observe({ key: leaseKey(l), ttlSeconds: l.spec.leaseDurationSeconds ?? 0 }, this.clock.now());
      return l;
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }
  /** Free, or held by a record this process has seen unchanged for its whole duration. */
  private expired(l: LeaseObject): boolean {
    if (!l.spec?.holderIdentity) return true;
    return this.observer.expired(this.clock.now());
  }

  async acquire(req: { holder: string; planId: string; ttlSeconds: number }): Promise<LockRecord> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await this.getLease();
      const held = cur && !this.expired(cur) ? recordOf(cur) : null;
      if (held) throw new LockHeldError(held.holder, held.since, held.lockId, held.planId || null);
      const now = this.clock.now();
      const lockId = randomBytes(6).toString('hex');
      const spec = {
        holderIdentity: req.holder,
        leaseDurationSeconds: Math.max(1, Math.round(req.ttlSeconds)),
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: cur ? (cur.spec?.leaseTransitions ?? 0) + 1 : 0,
      };
      const metadata: ObjectMeta = {
        name: LOCK_NAME,
        namespace: BOOTCPLAN_NAMESPACE,
        labels: { [MANAGED_BY_LABEL]: 'bootcplan' },
        annotations: { [LOCK_ID_ANNOTATION]: lockId, [PLAN_ID_ANNOTATION]: req.planId },
      };
      try {
        let l: LeaseObject;
        if (!cur) {
          l = await this.client
            .request('POST', collectionPath(LEASE, BOOTCPLAN_NAMESPACE), {
              body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec },
              what: LEASE_WHAT,
              expect: 'Lease',
            })
            .catch(rethrowMissingNamespace);
        } else {
          // Take over an expired or released lease; resourceVersion makes this a compare-and-swap.
          metadata.resourceVersion = cur.metadata.resourceVersion;
          l = await this.client.request('PUT', this.leasePath(), {
            body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec },
            what: LEASE_WHAT,
            expect: 'Lease',
          });
        }
        this.cache.wrote(checkLease(l, `PUT ${this.leasePath()}`), LEASE.apiVersion, 'Lease');
        this.mine.set(lockId, l);
        return this.heldRecord(l);
      } catch (err) {
        // Someone else created or updated it between our read and our write: read again.
        if (err instanceof AlreadyExistsError || err instanceof ConflictError || err instanceof NotFoundError) continue;
        throw err;
      }
    }
    throw new ConflictError(`Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}: kept changing while taking the lock`);
  }

  async renew(lockId: string): Promise<LockRecord> {
    let cur = this.mine.get(lockId) ?? null;
    for (let attempt = 0; attempt < 5; attempt++) {
      cur ??= await this.getLease();
      if (!cur || cur.metadata.annotations?.[LOCK_ID_ANNOTATION] !== lockId || !cur.spec?.holderIdentity) {
        this.mine.delete(lockId);
        throw new LockLostError(`lock ${lockId} is no longer held${cur?.spec?.holderIdentity ? ` (now held by ${cur.spec.holderIdentity})` : ''}`);
      }
      // The resourceVersion of the Lease last read or written: a compare-and-swap.
      const body = structuredClone(cur);
      body.spec = { ...body.spec, renewTime: microTime(this.clock.now()) };
      try {
        const l = await this.client.request('PUT', this.leasePath(), { body, what: LEASE_WHAT, expect: 'Lease' });
        this.cache.wrote(checkLease(l, `PUT ${this.leasePath()}`), LEASE.apiVersion, 'Lease');
        this.mine.set(lockId, l);
        return this.heldRecord(l);
      } catch (err) {
        if (err instanceof ConflictError) {
          cur = null;
          continue;
        }
        if (err instanceof NotFoundError) {
          this.mine.delete(lockId);
          throw new LockLostError(`lock ${lockId} is no longer held (the Lease was deleted)`);
        }
        throw err;
      }
    }
    throw new ConflictError(`Lease ${BOOTCPLAN_NAMESPACE}/${LOCK_NAME}: kept changing while renewing the lock`);
  }

  async release(lockId: string): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const cur = await this.getLease();
      if (!cur || cur.metadata.annotations?.[LOCK_ID_ANNOTATION] !== lockId) return false;
      try {
        await this.client.request('DELETE', this.leasePath(), {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: cur.metadata.resourceVersion } },
          what: LEASE_WHAT,
        });
        this.cache.deleted({ kind: 'Lease', name: LOCK_NAME, namespace: BOOTCPLAN_NAMESPACE });
        this.mine.delete(lockId);
        return true;
      } catch (err) {
        if (err instanceof ConflictError) continue;
        if (err instanceof NotFoundError) return false;
        throw err;
      }
    }
    return false;
  }

  /** The record of a Lease this process just wrote with a holder; a Lease written back without one did not take. */
  private heldRecord(l: LeaseObject): LockRecord {
    const r = recordOf(l);
    if (!r)
      throw new KubeRequestError(
        `${LEASE_WHAT}: the API server answered a lock write with a Lease that has no holder`,
        'unexpected-answer',
        `PUT ${this.leasePath()}`,
        HINT_NOT_API_SERVER,
      );
    return r;
  }

  async read(): Promise<LockRecord | null> {
    return recordOf(await this.getLease());
  }
}
