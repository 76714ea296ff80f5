/**
 * The simulator's lock Lease (docs/apply.md, the lock): taken, renewed and released as the
 * driver port asks (src/apply/ports/driver.ts), and read back as its LockRecord. Another holder's
 * Lease expires by when a session saw it change (src/domain/lease-expiry.ts), as on a cluster.
 */
import { createHash } from 'node:crypto';
import type { LeaseObject } from '../cluster/kinds.ts';
import { BOOTCPLAN_NAMESPACE, LOCK_NAME } from '../cluster/types.ts';
import { BOOTCPLAN_LOCK_ID, BOOTCPLAN_LOCK_PLAN_ID } from '../domain/labels.ts';
import { LockHeldError } from '../base/errors.ts';
import { LockLostError, isoOf, type LockRecord } from '../apply/ports/driver.ts';
import type { VirtualClock } from './clock.ts';
import type { ObjectStore } from './store.ts';
import type { SimClusterPort, SimLockPort, SimSession } from './session-port.ts';

/** The lock as a Lease of the simulator holds it (acquireLock writes every field). */
function lockRecordOf(l: LeaseObject): LockRecord {
  const spec = l.spec ?? {};
  return {
    lockId: l.metadata.annotations?.[BOOTCPLAN_LOCK_ID] ?? '',
    holder: spec.holderIdentity ?? '',
    planId: l.metadata.annotations?.[BOOTCPLAN_LOCK_PLAN_ID] ?? '',
    since: spec.acquireTime ?? '',
    renewedAt: spec.renewTime ?? '',
    ttlSeconds: spec.leaseDurationSeconds ?? 0,
  };
}

/** The lock of a simulated cluster, one Lease in bootcplan's namespace. */
export class SimLock implements SimLockPort {
  private counter = 0;

  constructor(
    private readonly sim: Pick<SimClusterPort, 'record'> & { readonly source: string },
    private readonly store: ObjectStore,
    private readonly clock: VirtualClock,
    private readonly random: () => number,
  ) {}

  /** The lock as it is now (null: nobody holds it). */
  leaseOf(): LockRecord | null {
    const l = this.store.get('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    return l ? lockRecordOf(l) : null;
  }

  /**
   * The lock as one apply process reads it: the read is an observation (src/domain/lease-expiry.ts),
   * so the Lease's expiry is judged by when that process saw it change, never by its renewTime.
   */
  readAs(session: SimSession): LockRecord | null {
    const l = this.store.get('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    if (l) session.leaseObserver.observe({ key: `${l.metadata.resourceVersion}`, ttlSeconds: l.spec?.leaseDurationSeconds ?? 0 }, this.clock.now);
    return this.leaseOf();
  }

  /** Takes the lock unless another holder's Lease is still live as `session` observed it. */
  acquire(session: SimSession, req: { holder: string; planId: string; ttlSeconds: number }): LockRecord {
    const cur = this.readAs(session);
    if (cur && !session.leaseObserver.expired(this.clock.now)) throw new LockHeldError(cur.holder, cur.since, cur.lockId, cur.planId);
    const lockId = createHash('sha256').update(`${this.sim.source}/${this.counter++}/${this.random()}`).digest('hex').slice(0, 12);
    if (cur) this.store.remove('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    const lease: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: LOCK_NAME,
        namespace: BOOTCPLAN_NAMESPACE,
        resourceVersion: String(this.clock.nextSeq()),
        annotations: { [BOOTCPLAN_LOCK_ID]: lockId, [BOOTCPLAN_LOCK_PLAN_ID]: req.planId },
      },
      spec: { holderIdentity: req.holder, leaseDurationSeconds: req.ttlSeconds, acquireTime: isoOf(this.clock.now), renewTime: isoOf(this.clock.now) },
    };
    this.store.put(lease);
    this.sim.record(session, 'lock', lockId);
    return lockRecordOf(lease);
  }

  /** Renews the lock `lockId`; LockLostError when it is no longer held. */
  renew(session: SimSession, lockId: string): LockRecord {
    const l = this.store.get('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    if (!l || l.metadata.annotations?.[BOOTCPLAN_LOCK_ID] !== lockId)
      throw new LockLostError(`lock ${lockId} is no longer held${l ? ` (now held by ${l.spec?.holderIdentity})` : ''}`);
    (l.spec ??= {}).renewTime = isoOf(this.clock.now);
    l.metadata.resourceVersion = String(this.clock.nextSeq());
    this.store.changed(l);
    return lockRecordOf(l);
  }

  /** Releases the lock `lockId`; false when it is not the one held. */
  release(session: SimSession, lockId: string): boolean {
    const cur = this.leaseOf();
    if (!cur || cur.lockId !== lockId) return false;
    this.store.remove('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    this.sim.record(session, 'unlock', lockId);
    return true;
  }
}
