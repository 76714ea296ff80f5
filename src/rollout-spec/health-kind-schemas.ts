/**
 * The four kinds of health check (docs/design.md §11; docs/spec.md "Health checks"), one schema each:
 * prometheus (a query and a condition, with positions in the condition), alerts (label matchers
 * with positions), clusterOperators, and an object's condition. A check has exactly one of them
 * (health-schema.ts).
 */
import type { ObjectSchema, Ctx } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';
import { ON_EMPTY, ALERT_SOURCES, ALERT_STATES, CONDITION_STATUSES } from './types.ts';
import { parseCondition, usesOnEmpty, CONDITION_EXPECTED } from '../domain/health-condition.ts';
import { parseMatcher, MATCHER_EXPECTED } from '../domain/alert-matchers.ts';
import { checkEndpoint, dnsLabel, dnsName, endpointFields } from './health-endpoint-schema.ts';

/** `prometheus`: a PromQL instant query and a condition on its result. */
export const prometheusSchema: ObjectSchema = {
  type: 'object',
  required: ['query', 'condition'],
  description: 'A PromQL instant query and a condition on its result.',
  fields: {
    ...endpointFields,
    query: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      pattern: /^[^\u0000]*$/,
      patternText: 'PromQL without NUL characters',
      description:
        "The PromQL expression, evaluated as an instant query (/api/v1/query). Not parsed by bootcplan: a syntax error surfaces at the first measurement as Prometheus' own message, which the preflight gate catches before any write.",
    },
    condition: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: `When a measurement passes: ${CONDITION_EXPECTED}. NaN satisfies no comparison.`,
      check(v: string, path, ctx) {
        const r = parseCondition(v);
        if (!r.ok)
          ctx.report({
            code: 'condition-invalid',
            path,
            offset: r.offset,
            message: `condition ${JSON.stringify(v)}, at character ${r.offset + 1}: ${r.message}`,
            expected: CONDITION_EXPECTED,
            hint: r.hint,
          });
      },
    },
    onEmpty: {
      type: 'string',
      enum: ON_EMPTY,
      default: 'fail',
      description:
        'What an empty result means for every/any/value/min/max/sum/avg: fail (a typo in a metric name, a relabelled job or a scrape outage all give empty results) or pass.',
    },
  },
  check(p, path, ctx) {
    checkEndpoint(p, path, ctx);
    if (p.onEmpty === undefined || typeof p.condition !== 'string') return;
    const r = parseCondition(p.condition);
    if (r.ok && !usesOnEmpty(r.parsed)) {
      ctx.report({
        severity: 'warning',
        code: 'onempty-unused',
        path: joinPath(path, 'onEmpty'),
        atKey: true,
        message: `onEmpty decides nothing for "${p.condition}"`,
        hint: 'remove onEmpty',
      });
    }
  },
};

/** `alerts`: no blocking alert, from Prometheus or Alertmanager. */
export const alertsSchema: ObjectSchema = {
  type: 'object',
  description: 'No firing alert matching the matchers, except those ignored.',
  fields: {
    ...endpointFields,
    source: {
      type: 'string',
      enum: ALERT_SOURCES,
      default: 'prometheus',
      description:
        'prometheus: GET /api/v1/alerts (every active alert, silenced or not); alertmanager: GET /api/v2/alerts, active and neither silenced nor inhibited.',
    },
    matchers: {
      type: 'array',
      maxItems: 32,
      default: [],
      items: {
        type: 'string',
        minLength: 1,
        maxLength: 1200,
        check(v: string, path, ctx) {
          const r = parseMatcher(v);
          if (!r.ok)
            ctx.report({
              code: 'matcher-invalid',
              path,
              offset: r.offset,
              message: `matcher ${JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}...` : v)}, at character ${r.offset + 1}: ${r.message}`,
              expected: MATCHER_EXPECTED,
              hint: r.hint,
            });
        },
      },
      description:
        'Prometheus label matchers, all of which an alert must match to block (AND): label="v", label!="v", label=~"RE2", label!~"RE2"; regexes fully anchored. A missing label is "". None: every alert blocks.',
    },
    ignore: {
      type: 'array',
      items: { type: 'string', minLength: 1, maxLength: 253 },
      default: ['Watchdog', 'InfoInhibitor'],
      description: 'Alert names that never block (writing the field replaces the default).',
    },
    states: {
      type: 'array',
      minItems: 1,
      items: { type: 'string', enum: ALERT_STATES },
      default: ['firing'],
      description: 'Which alert states block (source prometheus): firing, and pending too for an alert that is brewing.',
      check(v: unknown[], path, ctx) {
        noDuplicates(v, path, ctx);
      },
    },
    heartbeat: {
      type: 'string',
      maxLength: 253,
      defaultText: 'Watchdog with the default URL, else "" (none)',
      description:
        'An alert that is always firing when the alerting pipeline works: while it is not, a measurement is inconclusive, never a pass. "" for none.',
    },
  },
  check(a, path, ctx) {
    checkEndpoint(a, path, ctx);
    if (a.source === 'alertmanager' && Array.isArray(a.states) && a.states.includes('pending')) {
      ctx.report({
        code: 'states-pending-alertmanager',
        path: joinPath(path, 'states'),
        message: 'Alertmanager knows no pending alerts (Prometheus sends it firing ones only)',
        expected: 'states: [firing] with source: alertmanager',
        hint: 'use source: prometheus to block on pending alerts',
      });
    }
  },
};

/** `clusterOperators`: OpenShift's ClusterOperators available and not degraded. */
export const clusterOperatorsSchema: ObjectSchema = {
  type: 'object',
  description: 'ClusterOperators (OpenShift) Available=True and Degraded=False.',
  fields: {
    names: { type: 'array', items: dnsName("A ClusterOperator's name."), default: [], description: 'The ClusterOperators to judge; none: every one.' },
    ignore: { type: 'array', items: dnsName("A ClusterOperator's name."), default: [], description: 'ClusterOperators left out.' },
  },
};

/** `condition`: a condition of one object. */
export const objectConditionSchema: ObjectSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'name', 'type'],
  description: 'A condition of one object, read through the API server.',
  fields: {
    apiVersion: {
      type: 'string',
      pattern: /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/,
      patternText: 'group/version, or v1 for the core group',
      description: "The object's apiVersion, e.g. apps/v1.",
    },
    kind: { type: 'string', pattern: /^[A-Z][A-Za-z0-9]{0,62}$/, patternText: 'a kind such as Deployment', description: "The object's kind." },
    namespace: dnsLabel('The namespace; leave out for a cluster-scoped object.'),
    name: dnsName("The object's name."),
    type: {
      type: 'string',
      pattern: /^[A-Za-z0-9][-A-Za-z0-9_./]{0,315}$/,
      patternText: 'a condition type such as Available',
      description: 'The condition type.',
    },
    status: { type: 'string', enum: CONDITION_STATUSES, default: 'True', description: 'The status that passes.' },
    reason: { type: 'string', minLength: 1, maxLength: 1024, description: 'Also require this reason.' },
  },
};

/** Reports a value listed twice in `v` (gate points, alert states). */
export function noDuplicates(v: unknown[], path: string, ctx: Ctx): void {
  v.forEach((x, i) => {
    if (v.indexOf(x) !== i)
      ctx.report({
        code: 'duplicate-value',
        path: joinPath(path, i),
        message: `"${String(x)}" is listed twice`,
        expected: 'each value once',
        hint: 'remove the second entry',
      });
  });
}
