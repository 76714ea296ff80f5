/**
 * How far a time read from the cluster is believed (docs/design.md §7 "Stopping": "No time read from the
 * cluster counts beyond now plus a small skew allowance"). Pure; `now` is passed in.
 *
 * Times in the cluster were written by other machines' clocks: a BootcNode condition's
 * lastTransitionTime by the node's daemon, a Lease's renewTime by the lock holder, a record
 * bootcplan itself left by another pod. A time ahead of this clock by more than the allowance
 * cannot be a past event seen correctly; counting from it would postpone every limit measured
 * from it (a staging limit, a stuck lock) by the amount of the skew: a clock set to 2099 would
 * postpone it forever. Such a time is counted as now and reported as clock skew. Five minutes
 * is far more than NTP-disciplined clocks drift apart, and the customary tolerance of protocols
 * that compare clocks of different machines (Kerberos: MIT krb5.conf `clockskew`, default 300 s).
 */

/** The skew allowance, in seconds. */
export const CLOCK_SKEW_ALLOWANCE_SECONDS = 300;

interface CredibleTime {
  /** The time to count from: the time read, at most now. */
  at: number;
  /** How far ahead of now the time read was, when that is beyond the allowance (else 0). */
  aheadSeconds: number;
}

/** A time read from the cluster (epoch seconds), as far as it is believed at `now`. */
export function credibleTime(t: number, now: number): CredibleTime {
  if (t > now + CLOCK_SKEW_ALLOWANCE_SECONDS) return { at: now, aheadSeconds: t - now };
  return { at: Math.min(t, now), aheadSeconds: 0 };
}

/** "3h12m" / "73y" style, for a skew report. */
export function skewText(seconds: number): string {
  const s = Math.round(seconds);
  if (s >= 365 * 86400) return `${Math.floor(s / (365 * 86400))}y`;
  if (s >= 86400) return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
  if (s >= 3600) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 60)}m${s % 60}s`;
}
