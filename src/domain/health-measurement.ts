/**
 * One measurement of a health check (design of the health gates, "Evaluation state machine"):
 * what a source saw, as pass / fail / inconclusive / error, with one line that says what it saw.
 * An error (unreachable, TLS, 401/403, timeout, a bad answer) counts as a failure, never as a
 * pass; its kind says why, so that messages and hints can name the fix.
 */
export const HEALTH_ERROR_KINDS = [
  'unreachable', 'timeout', 'tls', 'unauthorized', 'forbidden', 'http-status', 'bad-answer',
  'too-large', 'query-rejected', 'not-found', 'no-token', 'source-missing',
] as const;
export type HealthErrorKind = (typeof HEALTH_ERROR_KINDS)[number];

export interface Measurement {
  outcome: 'pass' | 'fail' | 'inconclusive' | 'error';
  /** One line, at most OBSERVED_MAX characters, printable, never a credential. */
  observed: string;
  error?: HealthErrorKind;
}

/** The longest `observed` line kept for messages, status and Events. */
export const OBSERVED_MAX = 300;
