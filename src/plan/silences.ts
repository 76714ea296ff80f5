/**
 * Silences in the plan (docs/spec.md "Silences"): each pool's effective section (its own, which
 * replaces the Rollout's whole, or the Rollout's), every default filled in, one entry per section
 * of the spec with the pools it covers. Pure. The default Alertmanager is OpenShift's
 * `alertmanager-main` service in openshift-monitoring, port 9094 `web`: every Alertmanager endpoint
 * for an identity bound to the monitoring-alertmanager-edit Role there (cluster-monitoring-operator
 * assets/alertmanager/service.yaml), its certificate signed by the service CA.
 */
import type { DiagnosticInput } from '../base/diagnostics.ts';
import { joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { RolloutSpec, SilencesSpec } from '../rollout-spec/types.ts';
import { TTL_DEFAULT_MINUTES, nodeSilenceMatchers, type SilenceVars } from '../domain/silences.ts';
import type { Matcher } from '../domain/alert-matchers.ts';
import { planAuth, planCa } from './health.ts';
import type { Plan, PlanPool, PlanSilences } from './types.ts';

export const OPENSHIFT_ALERTMANAGER_URL = 'https://alertmanager-main.openshift-monitoring.svc:9094';

/** A pool's section and where it is written; null: the pool has none. */
function effectiveSection(spec: RolloutSpec, poolIndex: number): { section: SilencesSpec; path: string } | null {
  const own = spec.spec.pools?.[poolIndex]?.silences;
  const found = own
    ? { section: own, path: `spec.pools[${poolIndex}].silences` }
    : spec.spec.silences
      ? { section: spec.spec.silences, path: 'spec.silences' }
      : null;
  return found && found.section.enabled !== false && found.section.matchers?.length ? found : null;
}

/** The plan's silences: one entry per section of the spec that covers a pool of the plan. */
export function planSilences(spec: RolloutSpec, snapshot: ClusterSnapshot, pools: readonly PlanPool[], report: (d: DiagnosticInput) => void): PlanSilences[] {
  const openshift = snapshot.clusterVersion !== null && snapshot.clusterVersion !== undefined;
  const byPath = new Map<string, PlanSilences | null>();
  for (const pool of pools) {
    const index = (spec.spec.pools ?? []).findIndex((p) => p.name === pool.name);
    const found = index < 0 ? null : effectiveSection(spec, index);
    if (!found) continue;
    if (!byPath.has(found.path)) byPath.set(found.path, planSection(found.section, found.path, openshift, report));
    byPath.get(found.path)?.pools.push(pool.name);
  }
  return [...byPath.values()].filter((s): s is PlanSilences => s !== null && s.pools.length > 0);
}

function planSection(s: SilencesSpec, path: string, openshift: boolean, report: (d: DiagnosticInput) => void): PlanSilences | null {
  const am = s.alertmanager ?? {};
  if (am.url === undefined && !openshift) {
    report({
      code: 'alertmanager-url-required',
      path: joinPath(path, 'alertmanager'),
      atKey: true,
      message: 'this cluster is not OpenShift (no ClusterVersion), so there is no default Alertmanager URL',
      expected: 'alertmanager.url: the Alertmanager base URL',
      hint: 'e.g. alertmanager: {url: http://alertmanager-operated.monitoring.svc:9093, auth: none} (docs/spec.md "Silences")',
    });
    return null;
  }
  return {
    alertmanager: { url: am.url ?? OPENSHIFT_ALERTMANAGER_URL, auth: planAuth(am.auth), ca: planCa(am.ca, am.url === undefined) },
    matchers: s.matchers ?? [],
    ttlMinutes: s.ttlMinutes ?? TTL_DEFAULT_MINUTES,
    pools: [],
  };
}

/** The section that covers `pool`, or null. */
export function silencesFor(plan: Pick<Plan, 'silences'>, pool: string): PlanSilences | null {
  return (plan.silences ?? []).find((s) => s.pools.includes(pool)) ?? null;
}

/** The matchers of a node's silences (one list per silence). */
export function nodeSilences(section: PlanSilences, vars: SilenceVars): Matcher[][] {
  return nodeSilenceMatchers(section.matchers, vars).map((m) => [m]);
}
