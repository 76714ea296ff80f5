/**
 * The answers of the Prometheus and Alertmanager HTTP APIs, checked before anyone reads them.
 * Prometheus (docs/querying/api.md "Format overview"): a JSON envelope
 * `{status: "success"|"error", data, errorType, error, warnings}`; an instant query's `data` is
 * `{resultType, result}`, where a vector is `[{metric: {label: value}, value: [time, "v"]}]` (or
 * `histogram` instead of `value` for a native histogram), a scalar `[time, "v"]`; sample values are
 * strings ("NaN", "+Inf" included). `/api/v1/alerts` answers `data.alerts`, each
 * `{labels, annotations, state, activeAt, value}`. Alertmanager's `/api/v2/alerts`
 * (api/v2/openapi.yaml, gettableAlert) answers a bare array of `{labels, status: {state}}`.
 * This file checks the envelope; the shapes inside are judged, with the check's rules, by the
 * pure src/domain/health-observe.ts. Anything else did not come from such an API: a
 * HealthRequestError('bad-answer').
 */
import { NamedError } from '../base/errors.ts';
import type { HealthErrorKind } from '../domain/health-verdict.ts';
import { printable } from './answers.ts';

/** A failed exchange with a health source: one printable line of at most 300 characters. */
export class HealthRequestError extends NamedError {
  constructor(
    readonly kind: HealthErrorKind,
    message: string,
  ) {
    super(printable(message, 297));
  }
}

/**
 * A Prometheus success envelope's `data` and `warnings`, as they came: the shapes inside are
 * judged by src/domain/health-observe.ts (a wrong one is a `bad-answer` measurement there).
 */
export interface PromEnvelope {
  data: unknown;
  warnings: unknown[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The envelope of a 2xx Prometheus answer; bad-answer for anything that is not one. */
export function successEnvelopeOf(value: unknown, from: string): PromEnvelope {
  if (!isObject(value) || value.status !== 'success' || !isObject(value.data)) {
    throw new HealthRequestError('bad-answer', `not a Prometheus API answer from ${from}: not a {"status": "success", "data": {...}} envelope`);
  }
  const w = value.warnings;
  if (w !== undefined && w !== null && !Array.isArray(w))
    throw new HealthRequestError('bad-answer', `not a Prometheus API answer from ${from}: its warnings are not a list`);
  return { data: value.data, warnings: Array.isArray(w) ? w.slice(0, 10) : [] };
}

/** A Prometheus error envelope's `errorType: error` (printable), or null when the body is not one. */
export function errorEnvelopeOf(body: Buffer): { type: string; error: string } | null {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
    if (isObject(v) && v.status === 'error' && typeof v.error === 'string')
      return { type: typeof v.errorType === 'string' ? v.errorType : 'error', error: v.error };
  } catch {
    /* not an envelope */
  }
  return null;
}
