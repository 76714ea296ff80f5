/**
 * When a lock Lease held by someone else counts as expired (docs/design.md §7 "one apply at a time").
 * Pure; the time is passed in.
 *
 * Upstream rule: k8s.io/client-go tools/leaderelection/leaderelection.go. A candidate never
 * compares the holder's `renewTime` with its own clock. `tryAcquireOrRenew` keeps the raw
 * record it last read (`observedRawRecord`) and, whenever the record it reads differs, calls
 * `setObservedRecord`, which stamps `observedTime = le.clock.Now()` (the candidate's own clock);
 * `isLeaseValid(now)` is `observedTime + LeaseDurationSeconds > now`. So a lease expires
 * only after THIS process has seen it unchanged for a whole lease duration, whatever the
 * holder's clock says (package doc, doc.go: "tolerant to arbitrary clock skew").
 *
 * The holder's side is the mirror image (`renew` in the same file gives up after
 * RenewDeadline): the holder counts its lease from the time it SENT its last successful
 * renewal, which is no later than the time any other process can first see that renewal, so
 * the holder always believes its lease ends no later than anyone else does.
 */
import { CLOCK_SKEW_ALLOWANCE_SECONDS, credibleTime, skewText } from './clock-skew.ts';

/** What a process read of a Lease: the fields of the record, and the lease duration. */
interface ObservedLease {
  /** Everything of the record that a renewal or a takeover changes (holder, lock id, times). */
  key: string;
  /** leaseDurationSeconds of the record read. */
  ttlSeconds: number;
}

/** One process's memory of the lock Lease (client-go's observedRecord + observedTime). */
export class LeaseObserver {
  private last: { key: string; at: number; ttl: number } | null = null;

  /** Records a read at `now` (seconds, this process's clock); the time moves only when the record changed. */
  observe(lease: ObservedLease, now: number): void {
    if (!this.last || this.last.key !== lease.key) this.last = { key: lease.key, at: now, ttl: lease.ttlSeconds };
    else this.last.ttl = lease.ttlSeconds;
  }

  /** isLeaseValid negated: the last record read has been unchanged for its whole duration. */
  expired(now: number): boolean {
    return !!this.last && this.last.at + this.last.ttl <= now;
  }

  /** When the lease expires as this process sees it, unless it changes first (null: never read). */
  expiresAt(): number | null {
    return this.last ? this.last.at + this.last.ttl : null;
  }
}

// ---------------------------------------------------------------------------------------
// Across processes: `apply --step` in a CronJob is a new process every run, so the rule above,
// kept in memory, would never see a Lease unchanged for a whole duration. What a run observed
// is kept where the next run reads it (the Rollout status, `lockObserved`: src/app/apply-report.ts)
// and judged here. It never takes a lock over: it was written by another pod's clock, so it
// only decides when a human is needed (exit 4, docs/design.md §3), with the skew allowance added.

/** What `apply --step` runs observed of a lock they could not take (the Rollout's status.lockObserved). */
export interface LockSighting {
  lockId: string;
  holder: string;
  /** The Lease record as read: acquire time, renew time, duration (it changes at every renewal). */
  record: string;
  /** When a run first saw this lock id held (the observing runs' clocks, ISO 8601). */
  heldSince: string;
  /** When a run first saw this exact record (ISO 8601). */
  recordSince: string;
}

/** The lock as a run read it (LockRecord's fields, times as epoch seconds). */
interface HeldLock {
  lockId: string;
  holder: string;
  acquiredAt: number;
  renewedAt: number;
  ttlSeconds: number;
}

export interface LockJudgement {
  /** The sighting to keep for the next run. */
  next: LockSighting;
  /** Why the lock is stuck (a human is needed), or null while its holder may be at work. */
  stuck: string | null;
  /** Clock-skew reports (a Lease time, or a kept sighting, ahead of this clock beyond the allowance). */
  skew: string[];
}

const iso = (t: number) => new Date(Math.round(t) * 1000).toISOString().replace('.000Z', 'Z');

/**
 * A held lock judged at `now` (this run's clock) against what earlier runs saw (`prev`, or null):
 * stuck when the record has not changed for its duration plus the skew allowance (its holder
 * stopped renewing: gone, or cut off), or when the same lock id has been seen held for
 * `stuckAfterSeconds` (longer than any one step takes).
 */
export function judgeHeldLock(prev: LockSighting | null, lock: HeldLock, now: number, stuckAfterSeconds: number): LockJudgement {
  const skew: string[] = [];
  for (const [what, t] of [
    ['acquireTime', lock.acquiredAt],
    ['renewTime', lock.renewedAt],
  ] as const) {
    const c = credibleTime(t, now);
    if (c.aheadSeconds)
      skew.push(
        `the lock Lease's ${what} ${iso(t)} is ${skewText(c.aheadSeconds)} ahead of this clock (allowance ${skewText(CLOCK_SKEW_ALLOWANCE_SECONDS)}): counted as now; check the clock of ${lock.holder}`,
      );
  }
  const kept = (at: string | undefined, what: string): number => {
    const t = at ? Date.parse(at) / 1000 : NaN;
    if (!Number.isFinite(t)) return now;
    const c = credibleTime(t, now);
    if (c.aheadSeconds) skew.push(`the rollout status's lockObserved.${what} ${at} is ${skewText(c.aheadSeconds)} ahead of this clock: counted from now`);
    return c.at;
  };
  const record = `${iso(lock.acquiredAt)} ${iso(lock.renewedAt)} ${lock.ttlSeconds}s`;
  const same = prev && prev.lockId === lock.lockId ? prev : null;
  const heldSince = same ? kept(same.heldSince, 'heldSince') : now;
  const recordSince = same && same.record === record ? kept(same.recordSince, 'recordSince') : now;
  const next: LockSighting = { lockId: lock.lockId, holder: lock.holder, record, heldSince: iso(heldSince), recordSince: iso(recordSince) };
  let stuck: string | null = null;
  if (now - recordSince >= lock.ttlSeconds + CLOCK_SKEW_ALLOWANCE_SECONDS) {
    stuck = `its holder has not renewed it for ${skewText(now - recordSince)} (seen unchanged since ${next.recordSince}; the lease lasts ${lock.ttlSeconds}s): it is gone or cut off`;
  } else if (now - heldSince >= stuckAfterSeconds) {
    stuck = `it has been held for ${skewText(now - heldSince)} (seen held since ${next.heldSince}), longer than any one step takes`;
  }
  return { next, stuck, skew };
}
