/**
 * The cluster plans of a fleet plan, against the Fleet they were made from (docs/fleets.md "the
 * fleet plan file"): each names this fleet plan's Fleet file and its own cluster; plans carried
 * out together name the same Fleet; and every cluster of the Fleet gets a re-planner that plans
 * it as `fleet plan` did. Pure: the CLI reads the Fleet file and checks its provenance
 * (app/fleet-saved-plan.ts specsOfFleetPlans and openSavedFleetPlans).
 */
import { InputError, StalePlanError } from '../base/errors.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { RolloutSpec } from '../rollout-spec/types.ts';
import { buildPlan } from '../plan/planner.ts';
import type { Plan, PlanSpecInfo, PhaseDurations } from '../plan/types.ts';
import type { FleetCluster } from './spec-types.ts';
import { effectiveSpecs, type CheckedFleet } from './spec-load.ts';
import type { FleetPlan } from './plan-types.ts';

/** One cluster of a Fleet: its entry in the Fleet, its effective spec and its re-planner. */
export interface FleetClusterSpec {
  entry: FleetCluster;
  spec: RolloutSpec;
  replan: (s: ClusterSnapshot) => Plan;
}

/** A Fleet read and validated (its `fleet` is set), and the Fleet file as a plan records its spec. */
interface ValidFleet {
  loaded: CheckedFleet;
  info: PlanSpecInfo;
}

/**
 * Every cluster of a Fleet read and validated once: its effective spec (shared rollout, label
 * overrides, its own overrides) and a re-planner that plans it as `fleet plan` did (spec info:
 * the Fleet file's, naming the cluster). `durations` per cluster (default the planner's).
 */
export function fleetClusterSpecs(
  read: ValidFleet,
  o: { durations?: (cluster: string) => PhaseDurations | undefined; now?: number } = {},
): Map<string, FleetClusterSpec> {
  const fleet = read.loaded.fleet;
  const effective = effectiveSpecs(fleet, read.loaded.map);
  return new Map(
    fleet.spec.clusters.map((entry, i) => {
      const { spec, map } = effective[i];
      const specInfo = { ...read.info, fleetCluster: entry.name };
      const durations = o.durations?.(entry.name);
      const replan = (snapshot: ClusterSnapshot) =>
        buildPlan({ spec, specMap: map, specInfo, snapshot, durations, ...(o.now === undefined ? {} : { now: o.now }) });
      return [entry.name, { entry, spec, replan }];
    }),
  );
}

/** The plan `p` of cluster `cluster` must name this fleet plan's Fleet file (path, ref, commit, sha256) and that cluster (exit 3). */
export function requirePlanOfThisFleet(fp: FleetPlan, cluster: string, p: Plan): void {
  const mismatch =
    p.spec.path !== fp.fleet.path ||
    p.spec.sha256 !== fp.fleet.sha256 ||
    p.spec.commit !== fp.fleet.commit ||
    p.spec.ref !== fp.fleet.ref ||
    p.spec.fleetCluster !== cluster;
  if (mismatch) {
    throw new StalePlanError(`the plan of cluster ${cluster} was not made from this fleet plan's Fleet`, [
      `it names ${p.spec.path} (sha256 ${String(p.spec.sha256).slice(0, 16)}…) for cluster ${JSON.stringify(p.spec.fleetCluster ?? null)}; the fleet plan was made from ${fp.fleet.path} (sha256 ${fp.fleet.sha256.slice(0, 16)}…)`,
      'plan the fleet again instead of editing the file',
    ]);
  }
}

/** Cluster plans carried out together must name the same Fleet file (path, ref, commit, sha256) and a cluster of it (exit 3). */
export function requireSameFleet(plans: readonly Plan[]): void {
  const first = plans[0];
  for (const p of plans) {
    const same = p.spec.path === first.spec.path && p.spec.sha256 === first.spec.sha256 && p.spec.commit === first.spec.commit && p.spec.ref === first.spec.ref;
    if (!same || p.spec.fleetCluster === undefined) {
      throw new StalePlanError(`plans ${first.id} and ${p.id} were not made from the same Fleet`, [
        `${first.spec.path} (sha256 ${String(first.spec.sha256).slice(0, 16)}…) and ${p.spec.path} (sha256 ${String(p.spec.sha256).slice(0, 16)}…)`,
        'plan the fleet again instead of editing the file',
      ]);
    }
  }
}

/** Of `all` (fleetClusterSpecs), the cluster each plan was made for; a cluster the Fleet does not list is an error (exit 1). */
export function clusterSpecsOfPlans(
  all: ReadonlyMap<string, FleetClusterSpec>,
  byCluster: ReadonlyMap<string, Plan>,
  fleetPath: string,
): Map<string, FleetClusterSpec> {
  const clusters = new Map<string, FleetClusterSpec>();
  for (const [cluster, plan] of byCluster) {
    const c = all.get(cluster);
    if (!c)
      throw new InputError(
        `plan ${plan.id} was made for cluster ${JSON.stringify(cluster).slice(0, 80)}, which the Fleet ${fleetPath} does not list`,
        [],
        'plan the fleet again instead of editing the file',
      );
    clusters.set(cluster, c);
  }
  return clusters;
}
