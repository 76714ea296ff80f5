/**
 * The API's bounds on the reporting objects bootcplan writes (docs/safety.md "Bounded I/O"):
 * each record is fitted before it reaches a driver (rollout-report.ts), and both drivers
 * check it again before the write (src/kube/rollout-object.ts refuses without a request; the
 * simulator refuses as the API server would), so a bound missed here fails a test instead of
 * losing an Event on a cluster. Pure.
 *
 * - events.k8s.io/v1 Event (k8s.io/kubernetes pkg/apis/core/validation/events.go): `note` at
 *   most 1,024 bytes, `reason` and `action` 1-128 bytes, `reportingInstance` 1-128 bytes
 *   (Go `len()`: UTF-8 bytes). A 75-node wave's note passed 1,024 bytes.
 * - bootcplan.dev Rollout status: the `maxLength` / `maxItems` of deploy/rollout-crd.yaml
 *   (OpenAPI `maxLength` counts characters); test/kube/api-limits.test.ts reads them from the CRD.
 */
import { cutToBytes, cutToChars, utf8Length, codePointLength } from '../../base/text-budget.ts';
import type { ClusterEventRecord, RolloutStatus } from './rollout-object.ts';

export const EVENT_LIMITS = { noteBytes: 1024, reasonBytes: 128, actionBytes: 128, reportingInstanceBytes: 128 } as const;

export const ROLLOUT_STATUS_LIMITS = {
  message: 4096,
  reason: 64,
  planId: 128,
  pool: 253,
  conditions: 8,
  conditionType: 64,
  conditionReason: 64,
  conditionMessage: 4096,
  lockObservedField: 512,
  healthName: 253,
  healthObserved: 1024,
} as const;

/** The record with its note cut to the Event's byte budget. */
export function fitEvent(e: ClusterEventRecord): ClusterEventRecord {
  const note = cutToBytes(e.note, EVENT_LIMITS.noteBytes);
  return note === e.note ? e : { ...e, note };
}

/** What the API server would refuse in the Event (empty: nothing). */
export function eventProblems(e: ClusterEventRecord): string[] {
  const out: string[] = [];
  const bytes = (field: string, v: string, max: number) => {
    if (!v) out.push(`${field}: Required value`);
    else if (utf8Length(v) > max) out.push(`${field}: can have at most ${max} bytes, has ${utf8Length(v)}`);
  };
  bytes('reason', e.reason, EVENT_LIMITS.reasonBytes);
  bytes('action', e.action, EVENT_LIMITS.actionBytes);
  if (utf8Length(e.note) > EVENT_LIMITS.noteBytes) out.push(`note: can have at most ${EVENT_LIMITS.noteBytes} bytes, has ${utf8Length(e.note)}`);
  return out;
}

/** The status with its messages cut to the CRD's bounds. */
export function fitRolloutStatus(s: RolloutStatus): RolloutStatus {
  const L = ROLLOUT_STATUS_LIMITS;
  const h = s.healthCheck;
  return {
    ...s,
    message: cutToChars(s.message, L.message),
    conditions: s.conditions.map((c) => ({ ...c, message: cutToChars(c.message, L.conditionMessage) })),
    ...(h
      ? {
          healthCheck: {
            ...h,
            name: cutToChars(h.name, L.healthName),
            observed: cutToChars(h.observed, L.healthObserved),
            ...(h.observing
              ? { observing: h.observing.map((o) => ({ ...o, name: cutToChars(o.name, L.healthName), observed: cutToChars(o.observed, L.healthObserved) })) }
              : {}),
          },
        }
      : {}),
  };
}

/** What the API server would refuse in the status (or a patch of part of it), by the CRD's schema (empty: nothing). */
export function rolloutStatusProblems(s: Partial<RolloutStatus>): string[] {
  const L = ROLLOUT_STATUS_LIMITS;
  const out: string[] = [];
  const chars = (field: string, v: string | null | undefined, max: number) => {
    if (typeof v === 'string' && codePointLength(v) > max)
      out.push(`status.${field}: Too long: may not be more than ${max} characters, has ${codePointLength(v)}`);
  };
  chars('message', s.message, L.message);
  chars('reason', s.reason, L.reason);
  chars('planId', s.planId, L.planId);
  chars('pool', s.pool, L.pool);
  for (const [k, v] of Object.entries<string>({ ...s.lockObserved })) chars(`lockObserved.${k}`, v, L.lockObservedField);
  if (s.healthCheck) {
    chars('healthCheck.name', s.healthCheck.name, L.healthName);
    chars('healthCheck.observed', s.healthCheck.observed, L.healthObserved);
    chars('healthCheck.pool', s.healthCheck.pool, L.pool);
    chars('healthCheck.node', s.healthCheck.node, L.pool);
  }
  const conditions = s.conditions ?? [];
  if (conditions.length > L.conditions) out.push(`status.conditions: Too many: must have at most ${L.conditions} items`);
  conditions.forEach((c, i) => {
    chars(`conditions[${i}].type`, c.type, L.conditionType);
    chars(`conditions[${i}].reason`, c.reason, L.conditionReason);
    chars(`conditions[${i}].message`, c.message, L.conditionMessage);
  });
  return out;
}
