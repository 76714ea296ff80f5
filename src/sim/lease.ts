/** The simulator's lock Lease read back as the driver port's LockRecord (src/apply/driver.ts). */
import type { LeaseObject } from '../cluster/kinds.ts';
import { BOOTCPLAN_LOCK_ID, BOOTCPLAN_LOCK_PLAN_ID } from '../domain/labels.ts';
import type { LockRecord } from '../apply/driver.ts';

/** The lock as a Lease of the simulator holds it (acquireLock writes every field). */
export function lockRecordOf(l: LeaseObject): LockRecord {
  const spec = l.spec ?? {};
  return {
    lockId: l.metadata.annotations?.[BOOTCPLAN_LOCK_ID] ?? '', holder: spec.holderIdentity ?? '', planId: l.metadata.annotations?.[BOOTCPLAN_LOCK_PLAN_ID] ?? '',
    since: spec.acquireTime ?? '', renewedAt: spec.renewTime ?? '', ttlSeconds: spec.leaseDurationSeconds ?? 0,
  };
}
