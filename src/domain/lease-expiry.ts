/**
 * When a lock Lease held by someone else counts as expired (DESIGN §7 "one apply at a time").
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

/** What a process read of a Lease: the fields of the record, and the lease duration. */
export interface ObservedLease {
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
