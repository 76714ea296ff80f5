/**
 * The `healthChecks` schema (DESIGN §11; docs/spec.md "Health checks"): a check has a name, exactly
 * one kind (prometheus, alerts, clusterOperators, condition), when it gates, how often and how long
 * it measures, and what a failure does. Used by the Rollout schema (spec.healthChecks and each
 * pool's list) and so by the Fleet's (spec.rollout and its overrides). Static rules only: the
 * default Prometheus URL needs the cluster (OpenShift or not) and is the planner's
 * (src/plan/health.ts).
 *
 * Trust: the spec comes from git and is reviewed, and it names the endpoint bootcplan sends a token
 * to. So credentials are only references to cluster objects (a Secret key) or bootcplan's own
 * identity, never file paths on the machine that applies (no `ca: {file}` exists) and never in the
 * URL; a token is never sent without TLS except to a loopback address.
 */
import { type Schema, type ObjectSchema, type Ctx, isPlainObject, validate, describeType } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';
import {
  GATE_POINTS, ON_FAILURE, ROLLBACK_SCOPES, HEALTH_CHECK_KINDS, ON_EMPTY, ALERT_SOURCES, ALERT_STATES, CONDITION_STATUSES,
} from './types.ts';
import { parseCondition, usesOnEmpty, CONDITION_EXPECTED } from '../domain/health-condition.ts';
import { parseMatcher, MATCHER_EXPECTED } from '../domain/alert-matchers.ts';

/** The longest URL accepted (it ends up in plans, messages and HTTP request lines). */
const MAX_URL = 2048;
/** Kubernetes DNS-1123 label and subdomain (k8s.io/apimachinery pkg/util/validation). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const HOSTS_LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

const dnsLabel = (description: string): Schema => ({ type: 'string', pattern: DNS_LABEL, maxLength: 63, patternText: 'a DNS label: lowercase letters, digits and "-", at most 63 characters', description });
const dnsName = (description: string): Schema => ({ type: 'string', pattern: DNS_SUBDOMAIN_NAME, maxLength: 253, patternText: 'a Kubernetes object name: lowercase letters, digits, "-" and "."', description });
const keySchema = (dflt: string): Schema => ({ type: 'string', pattern: /^[-._a-zA-Z0-9]+$/, maxLength: 253, patternText: 'a ConfigMap or Secret key: letters, digits, "-", "_" and "."', default: dflt, description: 'The key of the data.' });

const keyRef = (what: string, dflt: string): ObjectSchema => ({
  type: 'object', required: ['namespace', 'name'], description: what,
  fields: { namespace: dnsLabel('The namespace.'), name: dnsName('The object\'s name (RBAC can grant get on exactly this name).'), key: keySchema(dflt) },
});

const bearerSecretSchema = keyRef('A Secret holding the bearer token (read per apply, sent only in the Authorization header, never printed).', 'token');
const authObject: ObjectSchema = { type: 'object', required: ['bearerTokenSecret'], fields: { bearerTokenSecret: bearerSecretSchema } };
const caObjects: ObjectSchema = {
  type: 'object',
  fields: { configMap: keyRef('A ConfigMap key holding PEM certificates.', 'ca.crt'), secret: keyRef('A Secret key holding PEM certificates.', 'ca.crt') },
};

const authSchema: Schema = {
  type: 'any', expected: '`ServiceAccount`, `none`, or {bearerTokenSecret: {namespace, name, key}}',
  defaultText: 'ServiceAccount',
  description: 'How bootcplan authenticates: ServiceAccount (the bearer token of bootcplan\'s own Kubernetes identity: in a pod its projected ServiceAccount token), none, or bearerTokenSecret (a token in a Secret; key defaults to token).',
  json: { oneOf: [{ enum: ['ServiceAccount', 'none'] }, { type: 'object', additionalProperties: false, required: ['bearerTokenSecret'], properties: { bearerTokenSecret: { type: 'object' } } }] },
  check(v, path, ctx) {
    if (v === 'ServiceAccount' || v === 'none') return;
    if (typeof v === 'string') {
      ctx.report({ code: 'invalid-enum', path, message: `Unsupported value: "${v}"`, expected: this.expected, hint: /^service ?account$/i.test(v) ? 'did you mean "ServiceAccount"?' : undefined });
      return;
    }
    validate(authObject, v, path, ctx);
  },
};

const caSchema: Schema = {
  type: 'any', expected: '`system`, {configMap: {namespace, name, key}} or {secret: {namespace, name, key}}',
  defaultText: 'the default URL: the service CA bundle (ConfigMap openshift-bootcplan/openshift-service-ca.crt, key service-ca.crt); any other URL: system',
  description: 'Who signs the server\'s certificate: system (Node.js\'s roots), or PEM certificates in a ConfigMap or Secret key (key defaults to ca.crt). The certificate is always verified; there is no option to skip it.',
  json: { oneOf: [{ const: 'system' }, { type: 'object', additionalProperties: false, minProperties: 1, maxProperties: 1, properties: { configMap: { type: 'object' }, secret: { type: 'object' } } }] },
  check(v, path, ctx) {
    if (v === 'system') return;
    if (typeof v === 'string' || !isPlainObject(v)) {
      ctx.report({ code: 'wrong-type', path, message: `expected system or a ConfigMap/Secret reference, got ${describeType(v)}`, expected: this.expected, hint: 'a file path is not accepted: a spec from git never names files on the machine that applies it; put the CA in a ConfigMap' });
      return;
    }
    validate(caObjects, v, path, ctx);
    const kinds = Object.keys(v).filter((k) => k === 'configMap' || k === 'secret');
    if (kinds.length !== 1 && Object.keys(v).every((k) => k === 'configMap' || k === 'secret')) {
      ctx.report({ code: 'ca-one-source', path, message: kinds.length ? 'a CA comes from a ConfigMap or a Secret, not both' : 'the CA names no ConfigMap or Secret', expected: this.expected });
    }
  },
};

const endpointFields: Record<string, Schema> = {
  url: {
    type: 'string', minLength: 1, maxLength: MAX_URL,
    defaultText: 'OpenShift: https://thanos-querier.openshift-monitoring.svc:9091; elsewhere required',
    description: 'The Prometheus (or Thanos Querier, or Alertmanager) base URL; a path is a route prefix. https, or http only with auth: none or to a loopback address. No credentials, query or fragment.',
  },
  auth: authSchema,
  ca: caSchema,
};

/** The URL rules that need the URL and the auth together (docs/spec.md "Health checks"). */
function checkEndpoint(e: Record<string, unknown>, path: string, ctx: Ctx): void {
  if (typeof e.url !== 'string' || !e.url) return;
  const at = joinPath(path, 'url');
  let u: URL;
  try {
    u = new URL(e.url);
  } catch {
    ctx.report({ code: 'health-url-invalid', path: at, message: `"${e.url}" is not an absolute URL`, expected: 'https://host[:port][/prefix]' });
    return;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    ctx.report({ code: 'health-url-invalid', path: at, message: `"${u.protocol}" URLs are not supported`, expected: 'https://host[:port][/prefix]' });
    return;
  }
  if (u.username || u.password) {
    ctx.report({ code: 'url-credentials', path: at, message: 'the URL carries credentials', expected: 'a URL without user:password@', hint: 'put credentials in a Secret: auth.bearerTokenSecret' });
  }
  if (u.search || u.hash || e.url.includes('?') || e.url.includes('#')) {
    ctx.report({ code: 'health-url-invalid', path: at, message: 'the URL has a query or a fragment', expected: 'a base URL: https://host[:port][/prefix]', hint: 'bootcplan adds /api/v1/... and its own parameters' });
  }
  if (u.protocol === 'http:') {
    const loopback = HOSTS_LOOPBACK.test(u.hostname);
    if (e.auth !== 'none' && !loopback) {
      ctx.report({ code: 'http-with-token', path: at, message: 'a token would be sent without TLS', expected: 'an https URL, or auth: none', hint: 'use the https port of the service; an in-cluster Prometheus without authentication needs auth: none' });
    } else if (!loopback) {
      ctx.report({ severity: 'warning', code: 'http-without-tls', path: at, message: `${u.host} is read over plain http: anyone on the path can change the answers the gates rely on`, hint: 'use https where the server offers it' });
    }
  }
}

const prometheusSchema: ObjectSchema = {
  type: 'object', required: ['query', 'condition'],
  description: 'A PromQL instant query and a condition on its result.',
  fields: {
    ...endpointFields,
    query: {
      type: 'string', minLength: 1, maxLength: 4096, pattern: /^[^\u0000]*$/, patternText: 'PromQL without NUL characters',
      description: 'The PromQL expression, evaluated as an instant query (/api/v1/query). Not parsed by bootcplan: a syntax error surfaces at the first measurement as Prometheus\' own message, which the preflight gate catches before any write.',
    },
    condition: {
      type: 'string', minLength: 1, maxLength: 200,
      description: `When a measurement passes: ${CONDITION_EXPECTED}. NaN satisfies no comparison.`,
      check(v: string, path, ctx) {
        const r = parseCondition(v);
        if (!r.ok) ctx.report({ code: 'condition-invalid', path, offset: r.offset, message: `condition ${JSON.stringify(v)}, at character ${r.offset + 1}: ${r.message}`, expected: CONDITION_EXPECTED, hint: r.hint });
      },
    },
    onEmpty: { type: 'string', enum: ON_EMPTY, default: 'fail', description: 'What an empty result means for every/any/value/min/max/sum/avg: fail (a typo in a metric name, a relabelled job or a scrape outage all give empty results) or pass.' },
  },
  check(p, path, ctx) {
    checkEndpoint(p, path, ctx);
    if (p.onEmpty === undefined || typeof p.condition !== 'string') return;
    const r = parseCondition(p.condition);
    if (r.ok && !usesOnEmpty(r.parsed)) {
      ctx.report({ severity: 'warning', code: 'onempty-unused', path: joinPath(path, 'onEmpty'), atKey: true, message: `onEmpty decides nothing for "${p.condition}"`, hint: 'remove onEmpty' });
    }
  },
};

const alertsSchema: ObjectSchema = {
  type: 'object',
  description: 'No firing alert matching the matchers, except those ignored.',
  fields: {
    ...endpointFields,
    source: { type: 'string', enum: ALERT_SOURCES, default: 'prometheus', description: 'prometheus: GET /api/v1/alerts (every active alert, silenced or not); alertmanager: GET /api/v2/alerts, active and neither silenced nor inhibited.' },
    matchers: {
      type: 'array', maxItems: 32, default: [],
      items: {
        type: 'string', minLength: 1, maxLength: 1200,
        check(v: string, path, ctx) {
          const r = parseMatcher(v);
          if (!r.ok) ctx.report({ code: 'matcher-invalid', path, offset: r.offset, message: `matcher ${JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}...` : v)}, at character ${r.offset + 1}: ${r.message}`, expected: MATCHER_EXPECTED, hint: r.hint });
        },
      },
      description: 'Prometheus label matchers, all of which an alert must match to block (AND): label="v", label!="v", label=~"RE2", label!~"RE2"; regexes fully anchored. A missing label is "". None: every alert blocks.',
    },
    ignore: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 253 }, default: ['Watchdog', 'InfoInhibitor'], description: 'Alert names that never block (writing the field replaces the default).' },
    states: {
      type: 'array', minItems: 1, items: { type: 'string', enum: ALERT_STATES }, default: ['firing'],
      description: 'Which alert states block (source prometheus): firing, and pending too for an alert that is brewing.',
      check(v: unknown[], path, ctx) { noDuplicates(v, path, ctx); },
    },
    heartbeat: { type: 'string', maxLength: 253, defaultText: 'Watchdog with the default URL, else "" (none)', description: 'An alert that is always firing when the alerting pipeline works: while it is not, a measurement is inconclusive, never a pass. "" for none.' },
  },
  check(a, path, ctx) {
    checkEndpoint(a, path, ctx);
    if (a.source === 'alertmanager' && Array.isArray(a.states) && a.states.includes('pending')) {
      ctx.report({ code: 'states-pending-alertmanager', path: joinPath(path, 'states'), message: 'Alertmanager knows no pending alerts (Prometheus sends it firing ones only)', expected: 'states: [firing] with source: alertmanager', hint: 'use source: prometheus to block on pending alerts' });
    }
  },
};

const clusterOperatorsSchema: ObjectSchema = {
  type: 'object',
  description: 'ClusterOperators (OpenShift) Available=True and Degraded=False.',
  fields: {
    names: { type: 'array', items: dnsName('A ClusterOperator\'s name.'), default: [], description: 'The ClusterOperators to judge; none: every one.' },
    ignore: { type: 'array', items: dnsName('A ClusterOperator\'s name.'), default: [], description: 'ClusterOperators left out.' },
  },
};

const objectConditionSchema: ObjectSchema = {
  type: 'object', required: ['apiVersion', 'kind', 'name', 'type'],
  description: 'A condition of one object, read through the API server.',
  fields: {
    apiVersion: { type: 'string', pattern: /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/, patternText: 'group/version, or v1 for the core group', description: 'The object\'s apiVersion, e.g. apps/v1.' },
    kind: { type: 'string', pattern: /^[A-Z][A-Za-z0-9]{0,62}$/, patternText: 'a kind such as Deployment', description: 'The object\'s kind.' },
    namespace: dnsLabel('The namespace; leave out for a cluster-scoped object.'),
    name: dnsName('The object\'s name.'),
    type: { type: 'string', pattern: /^[A-Za-z0-9][-A-Za-z0-9_./]{0,315}$/, patternText: 'a condition type such as Available', description: 'The condition type.' },
    status: { type: 'string', enum: CONDITION_STATUSES, default: 'True', description: 'The status that passes.' },
    reason: { type: 'string', minLength: 1, maxLength: 1024, description: 'Also require this reason.' },
  },
};

function noDuplicates(v: unknown[], path: string, ctx: Ctx): void {
  v.forEach((x, i) => {
    if (v.indexOf(x) !== i) ctx.report({ code: 'duplicate-value', path: joinPath(path, i), message: `"${String(x)}" is listed twice`, expected: 'each value once', hint: 'remove the second entry' });
  });
}

/** A check's fields; in a pool's list, an entry with `enabled: false` needs no kind (it drops the inherited check). */
function checkSchema(inPool: boolean): ObjectSchema {
  return {
    type: 'object', required: ['name'],
    fields: {
      name: dnsLabel('The check\'s name: unique in its list; a pool entry of the same name replaces the Rollout\'s check for that pool.'),
      prometheus: prometheusSchema,
      alerts: alertsSchema,
      clusterOperators: clusterOperatorsSchema,
      condition: objectConditionSchema,
      when: {
        type: 'array', minItems: 1, items: { type: 'string', enum: GATE_POINTS }, default: ['preflight', 'afterWave'],
        description: 'Where it gates: preflight (before the run\'s first write), afterWave (after each wave\'s soak, the last wave of each pool included), afterNode (after each node is back; no further node of the pool starts meanwhile).',
        check(v: unknown[], path, ctx) { noDuplicates(v, path, ctx); },
      },
      intervalSeconds: { type: 'integer', min: 1, max: 3600, default: 30, description: 'Seconds between two measurements.' },
      successes: { type: 'integer', min: 1, max: 100, default: 1, description: 'Passing measurements in a row that pass the check.' },
      failureLimit: { type: 'integer', min: 0, max: 100, default: 0, description: 'Failing (or erroring: an unreachable source is a failure) measurements tolerated; one more fails the check.' },
      timeoutSeconds: { type: 'integer', min: 1, max: 86400, default: 600, description: 'No verdict within this long fails the check (inconclusive measurements delay, they never pass).' },
      requestTimeoutSeconds: { type: 'integer', min: 1, max: 60, defaultText: 'the smaller of 10 and intervalSeconds', description: 'The longest one measurement may take (the whole HTTP exchange or API read); at most intervalSeconds.' },
      onFailure: { type: 'string', enum: ON_FAILURE, default: 'halt', description: 'halt: the pool is paused and apply exits 5 (status reason HealthCheckFailed, an Event, a notification); rollback: the nodes this run updated go back to the image each booted before.' },
      scope: { type: 'string', enum: ROLLBACK_SCOPES, default: 'run', description: 'With onFailure: rollback: run (every node this run updated) or wave (the failed wave\'s).' },
      enabled: { type: 'boolean', default: true, description: inPool ? 'false drops the Rollout\'s check of this name for this pool.' : 'false keeps the check written but off.' },
    },
    check: (c, path, ctx) => checkCheck(c, path, ctx, inPool),
  };
}

function checkCheck(c: Record<string, unknown>, path: string, ctx: Ctx, inPool: boolean): void {
  const kinds = HEALTH_CHECK_KINDS.filter((k) => Object.hasOwn(c, k));
  const dropping = inPool && c.enabled === false && kinds.length === 0;
  if (kinds.length !== 1 && !dropping) {
    ctx.report({
      code: 'health-check-kind', path: kinds.length > 1 ? joinPath(path, kinds[1]) : joinPath(path, 'name'), atKey: kinds.length > 1,
      message: kinds.length ? `check "${String(c.name)}" has ${kinds.join(' and ')}` : `check "${String(c.name)}" has no kind`,
      expected: 'a check has exactly one of prometheus, alerts, clusterOperators, condition',
      hint: kinds.length ? 'split it into two checks' : inPool ? 'add one, or enabled: false to drop the Rollout\'s check of this name' : 'add one of them',
    });
  }
  const n = (k: string, d: number) => (typeof c[k] === 'number' ? (c[k] as number) : d);
  const interval = n('intervalSeconds', 30);
  const successes = n('successes', 1);
  const request = n('requestTimeoutSeconds', Math.min(10, interval));
  const timeout = n('timeoutSeconds', 600);
  if (typeof c.requestTimeoutSeconds === 'number' && request > interval) {
    ctx.report({ code: 'request-timeout-too-long', path: joinPath(path, 'requestTimeoutSeconds'), message: `requestTimeoutSeconds ${request} is longer than intervalSeconds ${interval}`, expected: `at most ${interval}`, hint: 'a measurement must end before the next one is due' });
  }
  const least = interval * (successes - 1) + request;
  if (timeout < least) {
    ctx.report({
      code: 'health-timeout-too-short', path: joinPath(path, Object.hasOwn(c, 'timeoutSeconds') ? 'timeoutSeconds' : 'successes'),
      message: `the check can never pass: ${successes} successes ${interval} s apart take at least ${least} s, and timeoutSeconds is ${timeout}`,
      expected: `timeoutSeconds >= ${least}`, hint: 'raise timeoutSeconds, or lower successes or intervalSeconds',
    });
  }
  if (Object.hasOwn(c, 'scope') && c.onFailure !== 'rollback') {
    ctx.report({ code: 'scope-without-rollback', path: joinPath(path, 'scope'), atKey: true, message: 'scope says what a rollback takes back, and this check does not roll back', expected: 'scope only with onFailure: rollback', hint: 'remove scope, or set onFailure: rollback' });
  }
}

export const healthCheckSchema = checkSchema(false);
export const poolHealthCheckSchema = checkSchema(true);

/** A list of checks: each name once. */
export function healthChecksSchema(inPool: boolean): Schema {
  return {
    type: 'array', maxItems: 64, items: inPool ? poolHealthCheckSchema : healthCheckSchema,
    description: inPool
      ? 'Health checks for this pool, merged by name with spec.healthChecks: an entry replaces the Rollout\'s check of its name whole, enabled: false drops it, new names are added.'
      : 'Health checks that gate the rollout (docs/spec.md "Health checks"): a PromQL query, firing alerts, ClusterOperators, or an object\'s condition.',
    check(list: unknown[], path, ctx) {
      const seen = new Map<string, number>();
      list.forEach((c, i) => {
        if (!isPlainObject(c) || typeof c.name !== 'string') return;
        const first = seen.get(c.name);
        if (first === undefined) { seen.set(c.name, i); return; }
        ctx.report({ code: 'duplicate-health-check', path: joinPath(joinPath(path, i), 'name'), message: `health check "${c.name}" is listed twice (first at ${path}[${first}])`, expected: 'each check name once in a list', hint: 'rename one, or merge them' });
      });
    },
  };
}

/**
 * A pool entry that drops (`enabled: false`, no kind) a check the Rollout does not have: a typo
 * that would leave the check running where the reviewer reads it as off.
 */
export function checkPoolDrops(spec: Record<string, unknown>, path: string, ctx: Ctx): void {
  const shared = (Array.isArray(spec.healthChecks) ? spec.healthChecks : []).filter(isPlainObject).map((c) => c.name).filter((n): n is string => typeof n === 'string');
  if (!Array.isArray(spec.pools)) return;
  spec.pools.forEach((p, i) => {
    if (!isPlainObject(p) || !Array.isArray(p.healthChecks)) return;
    p.healthChecks.forEach((c, j) => {
      if (!isPlainObject(c) || typeof c.name !== 'string' || c.enabled !== false || shared.includes(c.name)) return;
      if (HEALTH_CHECK_KINDS.some((k) => Object.hasOwn(c, k))) return;
      ctx.report({
        code: 'health-check-unknown', path: joinPath(joinPath(joinPath(joinPath(path, 'pools'), i), 'healthChecks'), j) + '.name',
        message: `enabled: false drops check "${c.name}", and spec.healthChecks has none of that name`,
        expected: shared.length ? `one of: ${shared.join(', ')}` : 'a check of spec.healthChecks (there is none)',
        hint: 'check the name',
      });
    });
  });
}
