/**
 * One health check's evaluation at one gate (docs/apply.md "Health gates"): measurements every
 * `intervalSeconds` from the gate's start, each one `pass`, `fail`, `inconclusive` or `error`,
 * reduced to a verdict. Pure: the caller measures and keeps the time (src/apply/gates/health-gates.ts
 * with the driver's clock).
 *
 * - `pass` adds to the run of passes; the check passes after `successes` in a row;
 * - `fail` and `error` count as failures and end the run of passes; the check fails when the
 *   failures exceed `failureLimit`. An error (unreachable, TLS, 401/403, timeout, a bad answer)
 *   is a failure, never a pass: "an unreachable source is a failed check". `failureLimit` is the
 *   one tolerance knob (Argo Rollouts' separate consecutiveErrorLimit, default 4, would let a
 *   dead Prometheus look fine for four intervals);
 * - `inconclusive` (a partial answer, a missing heartbeat, an Unknown condition) ends the run of
 *   passes and counts as nothing else: it delays, it never passes;
 * - measurement k is due at start + k x intervalSeconds; when the next one would start after
 *   start + timeoutSeconds, the check fails at that deadline (reason `timeout`).
 */

export const MEASUREMENT_OUTCOMES = ['pass', 'fail', 'inconclusive', 'error'] as const;
export type MeasurementOutcome = (typeof MEASUREMENT_OUTCOMES)[number];

/** Why a measurement could not be made (outcome `error`). */
export const HEALTH_ERROR_KINDS = [
  'unreachable',
  'timeout',
  'tls',
  'unauthorized',
  'forbidden',
  'http-status',
  'bad-answer',
  'too-large',
  'query-rejected',
  'not-found',
  'no-token',
  'source-missing',
] as const;
export type HealthErrorKind = (typeof HEALTH_ERROR_KINDS)[number];

export interface Measurement {
  outcome: MeasurementOutcome;
  /** One line, at most 300 printable characters, no credentials. */
  observed: string;
  error?: HealthErrorKind;
}

const MAX_OBSERVED = 300;

/** A text for `Measurement.observed`: control characters out, one line, at most 300 characters. */
export function observation(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]+/g, ' ').trim();
  return clean.length > MAX_OBSERVED ? `${clean.slice(0, MAX_OBSERVED - 3)}...` : clean;
}

export interface CheckLimits {
  intervalSeconds: number;
  successes: number;
  failureLimit: number;
  timeoutSeconds: number;
}

export interface CheckState {
  /** When the gate started (seconds; measurement k is due at started + k x interval). */
  started: number;
  measurements: number;
  passesInRow: number;
  failures: number;
  last: Measurement | null;
}

export type FailReason = 'condition' | 'error' | 'timeout';

export type Verdict =
  { state: 'running' } | { state: 'passed'; last: Measurement } | { state: 'failed'; reason: FailReason; last: Measurement | null; message: string };

export function startCheck(at: number): CheckState {
  return { started: at, measurements: 0, passesInRow: 0, failures: 0, last: null };
}

/** The state after one more measurement, and the verdict it reaches (running: none yet). */
export function reduceMeasurement(s: CheckState, m: Measurement, limits: CheckLimits): { state: CheckState; verdict: Verdict } {
  const next: CheckState = { ...s, measurements: s.measurements + 1, last: m };
  if (m.outcome === 'pass') next.passesInRow = s.passesInRow + 1;
  else next.passesInRow = 0;
  if (m.outcome === 'fail' || m.outcome === 'error') next.failures = s.failures + 1;
  if (next.passesInRow >= limits.successes) return { state: next, verdict: { state: 'passed', last: m } };
  if (next.failures > limits.failureLimit) {
    const reason: FailReason = m.outcome === 'error' ? 'error' : 'condition';
    const tolerated = limits.failureLimit ? ` (${next.failures} failed measurements, ${limits.failureLimit} tolerated)` : '';
    return { state: next, verdict: { state: 'failed', reason, last: m, message: `${m.observed}${tolerated}` } };
  }
  return { state: next, verdict: { state: 'running' } };
}

/** When the next measurement is due (seconds), or null when it would start after the deadline. */
export function nextMeasurementAt(s: CheckState, limits: CheckLimits): number | null {
  const at = s.started + s.measurements * limits.intervalSeconds;
  return at <= s.started + limits.timeoutSeconds ? at : null;
}

/** The deadline's verdict: no verdict within timeoutSeconds is a failure. */
export function timeoutVerdict(s: CheckState, limits: CheckLimits): Verdict & { state: 'failed' } {
  const last = s.last ? `; last: ${s.last.outcome} (${s.last.observed})` : '';
  return {
    state: 'failed',
    reason: 'timeout',
    last: s.last,
    message: `no verdict in ${limits.timeoutSeconds} s: ${s.passesInRow} of ${limits.successes} successes in a row${last}`,
  };
}

/** The least time a passing check takes at a gate: `successes` measurements, `intervalSeconds` apart. */
export function minGateSeconds(limits: Pick<CheckLimits, 'intervalSeconds' | 'successes'>): number {
  return limits.intervalSeconds * (limits.successes - 1);
}
