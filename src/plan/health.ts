/**
 * Health checks in the plan (docs/spec.md "Health checks"; docs/apply.md "Health gates"): each
 * pool's effective checks (the Rollout's merged by name with the pool's own), with every default
 * filled in, as the applier will run them; the check names per gate point of each pool; the least
 * time the gates add to the estimate; and the findings that need the cluster (the default URL is
 * OpenShift's). Pure.
 */
import type { DiagnosticInput } from '../base/diagnostics.ts';
import { joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { BOOTCPLAN_NAMESPACE } from '../cluster/types.ts';
import {
  HEALTH_CHECK_KINDS,
  type HealthCheckKind,
  type HealthCheckSpec,
  type HealthAuth,
  type HealthCa,
  type HealthEndpointSpec,
  type RolloutSpec,
} from '../rollout-spec/types.ts';
import { parseCondition } from '../domain/health-condition.ts';
import { minGateSeconds } from '../domain/health-verdict.ts';
import { deepEqual } from '../base/equal.ts';
import type { Plan, PlanHealthCheck, PlanHealthAuth, PlanHealthCa, PlanHealthEndpoint, PlanPool, PlanPoolGates, GatePoint } from './types.ts';

/**
 * OpenShift's in-cluster Thanos Querier, port 9091 `web`: every Querier endpoint, /api/v1/alerts
 * included, for an identity bound to cluster-monitoring-view (cluster-monitoring-operator
 * assets/thanos-querier/service.yaml); its certificate is signed by the service CA.
 */
const OPENSHIFT_MONITORING_URL = 'https://thanos-querier.openshift-monitoring.svc:9091';
/** The service CA bundle the service-ca-cert-publisher puts into every namespace, bootcplan's included. */
const SERVICE_CA: PlanHealthCa = { configMap: { namespace: BOOTCPLAN_NAMESPACE, name: 'openshift-service-ca.crt', key: 'service-ca.crt' } };
/** OpenShift's always-firing alert ("This alert is always firing ... to certify that Alertmanager is working properly"). */
const OPENSHIFT_HEARTBEAT = 'Watchdog';
const DEFAULT_IGNORE = ['Watchdog', 'InfoInhibitor'];
const DEFAULT_WHEN: GatePoint[] = ['preflight', 'afterWave'];

/** A check of the spec and where it is written (its field path). */
interface SpecCheck {
  check: HealthCheckSpec;
  path: string;
}

/** A check with `enabled: false` and no kind only drops the inherited check of its name. */
const drops = (c: HealthCheckSpec) => c.enabled === false && !HEALTH_CHECK_KINDS.some((k) => Object.hasOwn(c, k));

/**
 * The checks that gate one pool: the Rollout's, each replaced whole by the pool's entry of the same
 * name, dropped by an entry with enabled: false, then the pool's new ones; checks that are off
 * (enabled: false) left out. Order: the Rollout's order, then the pool's.
 */
function effectiveChecks(spec: RolloutSpec, poolIndex: number): SpecCheck[] {
  const pool = spec.spec.pools?.[poolIndex];
  const own = pool?.healthChecks ?? [];
  const ownPath = (j: number) => `spec.pools[${poolIndex}].healthChecks[${j}]`;
  const out: SpecCheck[] = [];
  (spec.spec.healthChecks ?? []).forEach((check, i) => {
    const j = own.findIndex((c) => c.name === check.name);
    if (j < 0) out.push({ check, path: `spec.healthChecks[${i}]` });
    else if (!drops(own[j])) out.push({ check: own[j], path: ownPath(j) });
  });
  own.forEach((check, j) => {
    if (!drops(check) && !(spec.spec.healthChecks ?? []).some((c) => c.name === check.name)) out.push({ check, path: ownPath(j) });
  });
  return out.filter((c) => c.check.enabled !== false);
}

const keyRef = (r: { namespace: string; name: string; key?: string }, key: string) => ({ namespace: r.namespace, name: r.name, key: r.key ?? key });

export function planAuth(a: HealthAuth | undefined): PlanHealthAuth {
  if (a === undefined || a === 'ServiceAccount' || a === 'none') return a ?? 'ServiceAccount';
  return { bearerTokenSecret: keyRef(a.bearerTokenSecret, 'token') };
}

export function planCa(c: HealthCa | undefined, defaultUrl: boolean): PlanHealthCa {
  if (c === undefined) return defaultUrl ? SERVICE_CA : 'system';
  if (c === 'system') return c;
  return 'configMap' in c && c.configMap
    ? { configMap: keyRef(c.configMap, 'ca.crt') }
    : { secret: keyRef((c as { secret: { namespace: string; name: string; key?: string } }).secret, 'ca.crt') };
}

/** Where a Prometheus-API check reads from: its URL, else OpenShift's monitoring stack; null (and an error) elsewhere. */
function endpoint(e: HealthEndpointSpec, at: string, openshift: boolean, report: (d: DiagnosticInput) => void): PlanHealthEndpoint | null {
  if (e.url === undefined && !openshift) {
    report({
      code: 'health-url-required',
      path: at,
      atKey: true,
      message: 'this cluster is not OpenShift (no ClusterVersion), so there is no default monitoring URL',
      expected: 'url: the Prometheus (or Alertmanager) base URL',
      hint: 'e.g. url: http://prometheus-operated.monitoring.svc:9090 with auth: none in the cluster (docs/spec.md "Health checks")',
    });
    return null;
  }
  const url = e.url ?? OPENSHIFT_MONITORING_URL;
  return { url, auth: planAuth(e.auth), ca: planCa(e.ca, e.url === undefined) };
}

/** The check as the plan carries it (every default filled in), or null when it cannot run on this cluster (reported). */
function planCheck(sc: SpecCheck, openshift: boolean, report: (d: DiagnosticInput) => void): Omit<PlanHealthCheck, 'pools'> | null {
  const c = sc.check;
  const interval = c.intervalSeconds ?? 30;
  const base = {
    when: c.when ?? DEFAULT_WHEN,
    intervalSeconds: interval,
    successes: c.successes ?? 1,
    failureLimit: c.failureLimit ?? 0,
    timeoutSeconds: c.timeoutSeconds ?? 600,
    requestTimeoutSeconds: c.requestTimeoutSeconds ?? Math.min(10, interval),
    onFailure: c.onFailure ?? 'halt',
    scope: c.scope ?? 'run',
    // Absent is enforce: a plan of enforcing checks is the one planned before modes (sealed plans compare checks whole).
    ...(c.mode === 'observe' ? { mode: 'observe' as const } : {}),
  } as const;
  // The spec validator let through exactly one of the four kinds (spec/health-schema.ts).
  const at = (kind: HealthCheckKind) => joinPath(sc.path, kind);
  if (c.prometheus) {
    const p = c.prometheus;
    const e = endpoint(p, at('prometheus'), openshift, report);
    const parsed = parseCondition(p.condition);
    if (!e || !parsed.ok) return null;
    return {
      name: c.name,
      kind: 'prometheus',
      prometheus: { ...e, query: p.query, condition: p.condition, parsed: parsed.parsed, onEmpty: p.onEmpty ?? 'fail' },
      ...base,
    };
  }
  if (c.alerts) {
    const a = c.alerts;
    const e = endpoint(a, at('alerts'), openshift, report);
    if (!e) return null;
    const heartbeat = a.heartbeat ?? (a.url === undefined ? OPENSHIFT_HEARTBEAT : '');
    return {
      name: c.name,
      kind: 'alerts',
      alerts: {
        ...e,
        source: a.source ?? 'prometheus',
        matchers: a.matchers ?? [],
        ignore: a.ignore ?? DEFAULT_IGNORE,
        states: a.states ?? ['firing'],
        heartbeat,
      },
      ...base,
    };
  }
  if (c.clusterOperators) {
    if (!openshift) {
      report({
        code: 'cluster-operators-not-openshift',
        path: at('clusterOperators'),
        atKey: true,
        message: 'this cluster serves no ClusterOperators (no ClusterVersion: not OpenShift)',
        expected: 'a clusterOperators check only on OpenShift',
        hint: 'gate on a condition check of the workloads that matter, or on Prometheus',
      });
      return null;
    }
    const o = c.clusterOperators;
    return { name: c.name, kind: 'clusterOperators', clusterOperators: { names: o.names ?? [], ignore: o.ignore ?? [] }, ...base };
  }
  const o = c.condition;
  if (!o) throw new Error(`internal: health check ${c.name} has none of the four kinds`);
  return {
    name: c.name,
    kind: 'condition',
    condition: {
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: o.namespace ?? null,
      name: o.name,
      type: o.type,
      status: o.status ?? 'True',
      reason: o.reason ?? null,
    },
    ...base,
  };
}

interface PlannedHealth {
  /** The effective checks, once each; empty when no pool of the plan has any. */
  checks: PlanHealthCheck[];
  /** The least time the preflight gate takes (seconds). */
  preflightSeconds: number;
}

/**
 * The checks of the plan's pools: `gates` set on each pool that has checks. One entry per check of
 * the spec (a pool that replaced an inherited check has an entry of its own, for that pool).
 */
export function planHealth(spec: RolloutSpec, snapshot: ClusterSnapshot, pools: PlanPool[], report: (d: DiagnosticInput) => void): PlannedHealth {
  const openshift = snapshot.clusterVersion !== null && snapshot.clusterVersion !== undefined;
  const byPath = new Map<string, PlanHealthCheck | null>();
  for (const pool of pools) {
    const index = (spec.spec.pools ?? []).findIndex((p) => p.name === pool.name);
    const effective = index < 0 ? [] : effectiveChecks(spec, index);
    const gated: PlanHealthCheck[] = [];
    for (const sc of effective) {
      if (!byPath.has(sc.path)) {
        const c = planCheck(sc, openshift, report);
        byPath.set(sc.path, c ? { ...c, pools: [] } : null);
      }
      const c = byPath.get(sc.path);
      if (!c) continue;
      c.pools.push(pool.name);
      gated.push(c);
    }
    if (!gated.length) continue;
    const names = (point: GatePoint) => gated.filter((c) => c.when.includes(point)).map((c) => c.name);
    pool.gates = { preflight: names('preflight'), afterWave: names('afterWave'), afterNode: names('afterNode'), minSeconds: 0 };
    pool.gates.minSeconds = gateSeconds(pool, gated);
    if (pool.rollout === 'slots' && pool.gates.afterWave.length) {
      report({
        severity: 'warning',
        code: 'afterwave-in-slots',
        path: `spec.pools[${index}].rollout`,
        message: `pool ${pool.name} rolls in slots, which have no waves: its afterWave checks (${pool.gates.afterWave.join(', ')}) run once, when the pool is done`,
        hint: 'use when: [afterNode] to gate each node of a slots pool',
      });
    }
  }
  const checks = [...byPath.values()].filter((c): c is PlanHealthCheck => c !== null && c.pools.length > 0);
  const preflight = checks.filter((c) => c.when.includes('preflight'));
  return { checks, preflightSeconds: Math.max(0, ...preflight.map(minGateSeconds)) };
}

/**
 * The least time a pool's gates add (a gate runs its checks at once, so it takes its slowest
 * check's time): an afterWave gate after every wave, the last included, after its soak (a pool
 * without afterWave checks has no soak after its last wave; slots: one gate when the pool is done);
 * afterNode gates hold the pool's next start, at least once per wave.
 */
function gateSeconds(pool: PlanPool, checks: readonly PlanHealthCheck[]): number {
  if (!pool.waves.length) return 0;
  const slowest = (point: GatePoint) => Math.max(0, ...checks.filter((c) => c.when.includes(point)).map(minGateSeconds));
  const any = (point: GatePoint) => checks.some((c) => c.when.includes(point));
  const afterWave = any('afterWave')
    ? (pool.rollout === 'slots' ? 1 : pool.waves.length) * slowest('afterWave') + (pool.rollout === 'slots' ? 0 : pool.soakSeconds)
    : 0;
  const afterNode = any('afterNode') ? pool.waves.length * slowest('afterNode') : 0;
  return afterWave + afterNode;
}

/** How many gate evaluations the plan runs at least: the preflight once, each pool's afterWave and afterNode gates. */
export function gateCount(plan: Pick<Plan, 'pools' | 'healthChecks'>): number {
  const preflight = (plan.healthChecks ?? []).some((c) => c.when.includes('preflight')) ? 1 : 0;
  return (
    preflight +
    plan.pools.reduce((n, p) => {
      if (!p.gates || !p.waves.length) return n;
      const waves = p.gates.afterWave.length ? (p.rollout === 'slots' ? 1 : p.waves.length) : 0;
      const nodes = p.gates.afterNode.length ? p.waves.flat().length : 0;
      return n + waves + nodes;
    }, 0)
  );
}

/** The checks a pool runs at `point`, as the plan carries them (by name, the entry that gates this pool). */
export function checksAt(plan: Pick<Plan, 'healthChecks'>, pool: Pick<PlanPool, 'name' | 'gates'>, point: GatePoint): PlanHealthCheck[] {
  const names = pool.gates?.[point] ?? [];
  return names.map((n) => (plan.healthChecks ?? []).find((c) => c.name === n && c.pools.includes(pool.name))).filter((c): c is PlanHealthCheck => !!c);
}

/** The preflight gate's checks: every check of any pool whose `when` has preflight, each entry once. */
export function preflightChecks(plan: Pick<Plan, 'healthChecks' | 'pools'>): PlanHealthCheck[] {
  const pools = new Set(plan.pools.filter((p) => p.gates?.preflight.length).map((p) => p.name));
  return (plan.healthChecks ?? []).filter((c) => c.when.includes('preflight') && c.pools.some((p) => pools.has(p)));
}

/**
 * The health checks of two plans, check by check (sealed plans: the reviewed checks are the ones
 * that run): one line per check added, removed or changed, and per pool whose gates differ.
 */
export function healthDifference(saved: Pick<Plan, 'healthChecks' | 'pools'>, fresh: Pick<Plan, 'healthChecks' | 'pools'>): string[] {
  const out: string[] = [];
  const key = (c: PlanHealthCheck) => `${c.name} (${c.pools.join(', ')})`;
  const freshByKey = new Map((fresh.healthChecks ?? []).map((c) => [key(c), c]));
  const savedKeys = new Set((saved.healthChecks ?? []).map(key));
  for (const c of saved.healthChecks ?? []) {
    const f = freshByKey.get(key(c));
    if (!f) out.push(`- health check ${key(c)}: in the plan file, not planned from the spec and the cluster`);
    else if (!deepEqual(c, f)) out.push(`~ health check ${key(c)}: ${JSON.stringify(c)} in the plan file, ${JSON.stringify(f)} from the spec and the cluster`);
  }
  for (const f of fresh.healthChecks ?? [])
    if (!savedKeys.has(key(f))) out.push(`+ health check ${key(f)}: planned from the spec and the cluster, missing from the plan file`);
  // The gate time depends on the waves left (a resumed apply has fewer), the checks do not.
  const points = (g: PlanPoolGates | undefined) => (g ? { preflight: g.preflight, afterWave: g.afterWave, afterNode: g.afterNode } : null);
  for (const sp of saved.pools) {
    const fp = fresh.pools.find((p) => p.name === sp.name);
    if (fp && !deepEqual(points(sp.gates), points(fp.gates)))
      out.push(
        `~ pool ${sp.name}: gates ${JSON.stringify(points(sp.gates))} in the plan file, ${JSON.stringify(points(fp.gates))} from the spec and the cluster`,
      );
  }
  return out;
}

/** Whether a check is on trial (mode: observe): measured and recorded, never acted on. */
export const observing = (c: Pick<PlanHealthCheck, 'mode'>): boolean => c.mode === 'observe';
