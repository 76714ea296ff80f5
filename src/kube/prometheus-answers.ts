/**
 * The answers of the Prometheus and Alertmanager HTTP APIs, checked before anyone reads them.
 * Prometheus (docs/querying/api.md "Format overview"): a JSON envelope
 * `{status: "success"|"error", data, errorType, error, warnings}`; an instant query's `data` is
 * `{resultType, result}`, where a vector is `[{metric: {label: value}, value: [time, "v"]}]` (or
 * `histogram` instead of `value` for a native histogram), a scalar `[time, "v"]`; sample values are
 * strings ("NaN", "+Inf" included). `/api/v1/alerts` answers `data.alerts`, each
 * `{labels, annotations, state, activeAt, value}`. Alertmanager's `/api/v2/alerts`
 * (api/v2/openapi.yaml, gettableAlert) answers a bare array of `{labels, status: {state}}`.
 * Anything else did not come from such an API: a HealthRequestError('bad-answer').
 */
import type { HealthErrorKind } from '../domain/health-measurement.ts';
import { printable } from './answers.ts';

/** A failed exchange with a health source: one printable line of at most 300 characters. */
export class HealthRequestError extends Error {
  constructor(readonly kind: HealthErrorKind, message: string) {
    super(printable(message, 297));
    this.name = 'HealthRequestError';
  }
}

/** More series or alerts than this in one answer: `too-large` (aggregate in the query). */
export const MAX_ITEMS = 10_000;

export interface PromSample {
  metric: Record<string, string>;
  /** The sample value as the API wrote it ("0.5", "NaN", "+Inf"); null for a native histogram. */
  value: string | null;
}
export type PromQueryResult =
  | { resultType: 'vector'; samples: PromSample[] }
  | { resultType: 'scalar'; value: string }
  | { resultType: 'matrix' | 'string' };
export interface PromQueryAnswer {
  result: PromQueryResult;
  /** The envelope's warnings (a Thanos partial response says so here), each one printable line. */
  warnings: string[];
}
export interface PromAlert {
  labels: Record<string, string>;
  /** Prometheus: pending | firing. Alertmanager: firing (active or not yet processed) | suppressed. */
  state: string;
}
export interface PromAlertsAnswer {
  alerts: PromAlert[];
  warnings: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// A float as Prometheus formats it (strconv.FormatFloat), or its special values.
const SAMPLE_VALUE = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|NaN|[+-]Inf)$/;

function badAnswer(what: string, why: string): never {
  throw new HealthRequestError('bad-answer', `not a Prometheus API answer: ${what} ${why}`);
}

function labelMap(v: unknown, where: string): Record<string, string> {
  if (!isObject(v)) badAnswer(where, 'has no label map');
  for (const x of Object.values(v)) if (typeof x !== 'string') badAnswer(where, 'has a label whose value is not a string');
  return v as Record<string, string>;
}

function sampleValue(v: unknown, where: string): string {
  if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'number' || typeof v[1] !== 'string' || !SAMPLE_VALUE.test(v[1])) {
    badAnswer(where, 'has no [time, "value"] pair');
  }
  return v[1] as string;
}

function warningsOf(envelope: Record<string, unknown>): string[] {
  const w = envelope.warnings;
  if (w === undefined || w === null) return [];
  if (!Array.isArray(w)) badAnswer('the envelope', 'has warnings that are not a list');
  return w.slice(0, 10).map((x) => printable(String(x), 200));
}

/** The `data` of a Prometheus success envelope; bad-answer for anything else. */
function successData(value: unknown): { data: Record<string, unknown>; warnings: string[] } {
  if (!isObject(value) || value.status !== 'success') badAnswer('the body', 'is not a {"status": "success"} envelope');
  if (!isObject(value.data)) badAnswer('the envelope', 'has no data object');
  return { data: value.data, warnings: warningsOf(value) };
}

/** An instant query's answer. More than MAX_ITEMS series is too-large before anything else. */
export function queryAnswerOf(value: unknown): PromQueryAnswer {
  const { data, warnings } = successData(value);
  const result = data.result;
  switch (data.resultType) {
    case 'vector': {
      if (!Array.isArray(result)) badAnswer('the vector', 'is not a list');
      if (result.length > MAX_ITEMS) throw new HealthRequestError('too-large', `more than ${MAX_ITEMS} series: aggregate in the query`);
      const samples = result.map((s: unknown, i: number): PromSample => {
        const where = `series ${i + 1}`;
        if (!isObject(s)) badAnswer(where, 'is not an object');
        const metric = labelMap(s.metric, where);
        if (s.value === undefined && s.histogram !== undefined) return { metric, value: null };
        return { metric, value: sampleValue(s.value, where) };
      });
      return { result: { resultType: 'vector', samples }, warnings };
    }
    case 'scalar':
      return { result: { resultType: 'scalar', value: sampleValue(result, 'the scalar') }, warnings };
    case 'matrix':
    case 'string':
      return { result: { resultType: data.resultType }, warnings };
    default:
      return badAnswer('the result type', `${printable(JSON.stringify(data.resultType) ?? 'undefined', 40)} is none of vector, scalar, matrix, string`);
  }
}

function tooManyAlerts(n: number): void {
  if (n > MAX_ITEMS) throw new HealthRequestError('too-large', `more than ${MAX_ITEMS} alerts in the answer: narrow the source (a tenancy port, Alertmanager filters)`);
}

/** Prometheus' (or Thanos') `/api/v1/alerts`. */
export function alertsAnswerOf(value: unknown): PromAlertsAnswer {
  const { data, warnings } = successData(value);
  if (!Array.isArray(data.alerts)) badAnswer('data.alerts', 'is not a list');
  tooManyAlerts(data.alerts.length);
  const alerts = data.alerts.map((a: unknown, i: number): PromAlert => {
    const where = `alert ${i + 1}`;
    if (!isObject(a)) badAnswer(where, 'is not an object');
    if (typeof a.state !== 'string') badAnswer(where, 'has no state');
    return { labels: labelMap(a.labels, where), state: a.state };
  });
  return { alerts, warnings };
}

/**
 * Alertmanager's `/api/v2/alerts`. Asked for with silenced=false and inhibited=false, every
 * alert it returns blocks: `active` and `unprocessed` (received, not yet matched against
 * silences and inhibitions) count as firing; a `suppressed` one (an older Alertmanager that
 * ignored the parameters) does not.
 */
export function alertmanagerAnswerOf(value: unknown): PromAlertsAnswer {
  const refuse = (what: string, why: string): never => {
    throw new HealthRequestError('bad-answer', `not an Alertmanager API answer: ${what} ${why}`);
  };
  if (!Array.isArray(value)) return refuse('the body', 'is not a list of alerts');
  tooManyAlerts(value.length);
  const alerts = value.map((a: unknown, i: number): PromAlert => {
    const where = `alert ${i + 1}`;
    if (!isObject(a) || !isObject(a.status) || typeof a.status.state !== 'string') return refuse(where, 'has no status.state');
    const labels = isObject(a.labels) && Object.values(a.labels).every((x) => typeof x === 'string') ? a.labels as Record<string, string> : refuse(where, 'has no label map of strings');
    return { labels, state: a.status.state === 'suppressed' ? 'suppressed' : 'firing' };
  });
  return { alerts, warnings: [] };
}

/** A Prometheus error envelope's `errorType: error` (printable), or null when the body is not one. */
export function errorEnvelopeOf(body: Buffer): { type: string; error: string } | null {
  try {
    const v = JSON.parse(body.toString('utf8'));
    if (isObject(v) && v.status === 'error' && typeof v.error === 'string') return { type: typeof v.errorType === 'string' ? v.errorType : 'error', error: v.error };
  } catch { /* not an envelope */ }
  return null;
}
