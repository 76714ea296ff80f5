/**
 * The `healthChecks` schema (docs/design.md §11; docs/spec.md "Health checks"): a check has a name, exactly
 * one kind (prometheus, alerts, clusterOperators, condition: health-kind-schemas.ts), when it
 * gates, how often and how long it measures, and what a failure does. Used by the Rollout schema
 * (spec.healthChecks and each pool's list) and so by the Fleet's (spec.rollout and its overrides).
 * Static rules only: the default Prometheus URL needs the cluster (OpenShift or not) and is the
 * planner's (src/plan/health.ts). The endpoints' trust rules: health-endpoint-schema.ts.
 */
import { type Schema, type ObjectSchema, type Ctx, isPlainObject, firstIndexByName, namesOf } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';
import { GATE_POINTS, ON_FAILURE, ROLLBACK_SCOPES, HEALTH_CHECK_KINDS, HEALTH_CHECK_MODES } from './types.ts';
import { dnsLabel } from './health-endpoint-schema.ts';
import { alertsSchema, clusterOperatorsSchema, noDuplicates, objectConditionSchema, prometheusSchema } from './health-kind-schemas.ts';

/** A check's fields; in a pool's list, an entry with `enabled: false` needs no kind (it drops the inherited check). */
function checkSchema(inPool: boolean): ObjectSchema {
  return {
    type: 'object',
    required: ['name'],
    fields: {
      name: dnsLabel("The check's name: unique in its list; a pool entry of the same name replaces the Rollout's check for that pool."),
      prometheus: prometheusSchema,
      alerts: alertsSchema,
      clusterOperators: clusterOperatorsSchema,
      condition: objectConditionSchema,
      when: {
        type: 'array',
        minItems: 1,
        items: { type: 'string', enum: GATE_POINTS },
        default: ['preflight', 'afterWave'],
        description:
          "Where it gates: preflight (before the run's first write), afterWave (after each wave's soak, the last wave of each pool included), afterNode (after each node is back; no further node of the pool starts meanwhile).",
        check(v: unknown[], path, ctx) {
          noDuplicates(v, path, ctx);
        },
      },
      intervalSeconds: { type: 'integer', min: 1, max: 3600, default: 30, description: 'Seconds between two measurements.' },
      successes: { type: 'integer', min: 1, max: 100, default: 1, description: 'Passing measurements in a row that pass the check.' },
      failureLimit: {
        type: 'integer',
        min: 0,
        max: 100,
        default: 0,
        description: 'Failing (or erroring: an unreachable source is a failure) measurements tolerated; one more fails the check.',
      },
      timeoutSeconds: {
        type: 'integer',
        min: 1,
        max: 86400,
        default: 600,
        description: 'No verdict within this long fails the check (inconclusive measurements delay, they never pass).',
      },
      requestTimeoutSeconds: {
        type: 'integer',
        min: 1,
        max: 60,
        defaultText: 'the smaller of 10 and intervalSeconds',
        description: 'The longest one measurement may take (the whole HTTP exchange or API read); at most intervalSeconds.',
      },
      mode: {
        type: 'string',
        enum: HEALTH_CHECK_MODES,
        default: 'enforce',
        description:
          'enforce: a failure does what onFailure says; observe: a gate on trial, measured and its verdict recorded (events, Events, status) as the one it would have given; it never halts or rolls back, whatever onFailure says (what it does once enforced).',
      },
      onFailure: {
        type: 'string',
        enum: ON_FAILURE,
        default: 'halt',
        description:
          'halt: the pool is paused and apply exits 5 (status reason HealthCheckFailed, an Event, a notification), and apply --retry measures the failed gate again first; pause: the same, and apply --retry continues past the failed gate without measuring it again; rollback: the nodes this run updated go back to the image each booted before.',
      },
      scope: {
        type: 'string',
        enum: ROLLBACK_SCOPES,
        default: 'run',
        description: "With onFailure: rollback: run (every node this run updated) or wave (the failed wave's).",
      },
      enabled: {
        type: 'boolean',
        default: true,
        description: inPool ? "false drops the Rollout's check of this name for this pool." : 'false keeps the check written but off.',
      },
    },
    check: (c, path, ctx) => checkCheck(c, path, ctx, inPool),
  };
}

function checkCheck(c: Record<string, unknown>, path: string, ctx: Ctx, inPool: boolean): void {
  const kinds = HEALTH_CHECK_KINDS.filter((k) => Object.hasOwn(c, k));
  const dropping = inPool && c.enabled === false && kinds.length === 0;
  if (kinds.length !== 1 && !dropping) {
    ctx.report({
      code: 'health-check-kind',
      path: kinds.length > 1 ? joinPath(path, kinds[1]) : joinPath(path, 'name'),
      atKey: kinds.length > 1,
      message: kinds.length ? `check "${String(c.name)}" has ${kinds.join(' and ')}` : `check "${String(c.name)}" has no kind`,
      expected: 'a check has exactly one of prometheus, alerts, clusterOperators, condition',
      hint: kinds.length ? 'split it into two checks' : inPool ? "add one, or enabled: false to drop the Rollout's check of this name" : 'add one of them',
    });
  }
  const n = (k: string, d: number) => (typeof c[k] === 'number' ? c[k] : d);
  const interval = n('intervalSeconds', 30);
  const successes = n('successes', 1);
  const request = n('requestTimeoutSeconds', Math.min(10, interval));
  const timeout = n('timeoutSeconds', 600);
  if (typeof c.requestTimeoutSeconds === 'number' && request > interval) {
    ctx.report({
      code: 'request-timeout-too-long',
      path: joinPath(path, 'requestTimeoutSeconds'),
      message: `requestTimeoutSeconds ${request} is longer than intervalSeconds ${interval}`,
      expected: `at most ${interval}`,
      hint: 'a measurement must end before the next one is due',
    });
  }
  const least = interval * (successes - 1) + request;
  if (timeout < least) {
    ctx.report({
      code: 'health-timeout-too-short',
      path: joinPath(path, Object.hasOwn(c, 'timeoutSeconds') ? 'timeoutSeconds' : 'successes'),
      message: `the check can never pass: ${successes} successes ${interval} s apart take at least ${least} s, and timeoutSeconds is ${timeout}`,
      expected: `timeoutSeconds >= ${least}`,
      hint: 'raise timeoutSeconds, or lower successes or intervalSeconds',
    });
  }
  if (Object.hasOwn(c, 'scope') && c.onFailure !== 'rollback') {
    ctx.report({
      code: 'scope-without-rollback',
      path: joinPath(path, 'scope'),
      atKey: true,
      message: 'scope says what a rollback takes back, and this check does not roll back',
      expected: 'scope only with onFailure: rollback',
      hint: 'remove scope, or set onFailure: rollback',
    });
  }
}

const healthCheckSchema = checkSchema(false);
const poolHealthCheckSchema = checkSchema(true);

/** A list of checks: each name once. */
export function healthChecksSchema(inPool: boolean): Schema {
  return {
    type: 'array',
    maxItems: 64,
    items: inPool ? poolHealthCheckSchema : healthCheckSchema,
    description: inPool
      ? "Health checks for this pool, merged by name with spec.healthChecks: an entry replaces the Rollout's check of its name whole, enabled: false drops it, new names are added."
      : 'Health checks that gate the rollout (docs/spec.md "Health checks"): a PromQL query, firing alerts, ClusterOperators, or an object\'s condition.',
    check(list: unknown[], path, ctx) {
      firstIndexByName(list, (name, i, first) =>
        ctx.report({
          code: 'duplicate-health-check',
          path: joinPath(joinPath(path, i), 'name'),
          message: `health check "${name}" is listed twice (first at ${path}[${first}])`,
          expected: 'each check name once in a list',
          hint: 'rename one, or merge them',
        }),
      );
    },
  };
}

/**
 * A pool entry that drops (`enabled: false`, no kind) a check the Rollout does not have: a typo
 * that would leave the check running where the reviewer reads it as off.
 */
export function checkPoolDrops(spec: Record<string, unknown>, path: string, ctx: Ctx): void {
  const shared = namesOf(spec.healthChecks);
  if (!Array.isArray(spec.pools)) return;
  spec.pools.forEach((p, i) => {
    if (!isPlainObject(p) || !Array.isArray(p.healthChecks)) return;
    p.healthChecks.forEach((c, j) => {
      if (!isPlainObject(c) || typeof c.name !== 'string' || c.enabled !== false || shared.includes(c.name)) return;
      if (HEALTH_CHECK_KINDS.some((k) => Object.hasOwn(c, k))) return;
      ctx.report({
        code: 'health-check-unknown',
        path: joinPath(joinPath(joinPath(joinPath(path, 'pools'), i), 'healthChecks'), j) + '.name',
        message: `enabled: false drops check "${c.name}", and spec.healthChecks has none of that name`,
        expected: shared.length ? `one of: ${shared.join(', ')}` : 'a check of spec.healthChecks (there is none)',
        hint: 'check the name',
      });
    });
  });
}
