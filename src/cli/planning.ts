/**
 * Every cluster of a Fleet read once and re-planned: the spec-and-replan pairs that `fleet
 * apply` and `fleet rehearse` hand to the fleet runner, and that `apply` uses for one cluster's
 * plan out of a fleet plan (cli/main.ts wires it in as the fleetClusterSpec port).
 */
import type { Plan, PhaseDurations } from '../plan/types.ts';
import { verifyPlanSpec, planSpecFile } from '../app/saved-plan.ts';
import { readFleet, requireValidFleet, type FleetRead } from './fleet-inputs.ts';
import { StalePlanError } from '../base/errors.ts';
import { fleetClusterSpecs, requireSameFleet, clusterSpecsOfPlans, type FleetClusterSpec } from '../fleet/cluster-plans.ts';
import { nodeInputs } from '../app/inputs.ts';

/**
 * Cluster plans out of one fleet plan (each names the Fleet file and its cluster): the Fleet,
 * at the recorded path (and commit), must still hash to what they recorded (exit 3); it is then
 * read and validated once for all of them (once per plan: 74 s for 300 clusters), and each
 * plan's cluster is re-planned from its effective spec. They must all name the same Fleet
 * (path, ref, commit, sha256: exit 3) and a cluster it lists (exit 1). `durations`: the
 * simulation's or the planner's, else each plan's own. `readFleetFile`: for tests that count.
 * The checks that need no file are the fleet's (src/fleet/cluster-plans.ts).
 */
export function specsOfFleetPlans(plans: readonly Plan[], durations?: PhaseDurations, readFleetFile: typeof readFleet = readFleet): { read: FleetRead; clusters: Map<string, FleetClusterSpec> } {
  const first = plans[0];
  requireSameFleet(plans);
  verifyPlanSpec(nodeInputs, first);
  const read = readFleetFile(planSpecFile(nodeInputs, first), first.spec.ref ? first.spec.commit ?? first.spec.ref : undefined);
  requireValidFleet(read);
  if (read.info.sha256 !== first.spec.sha256) throw new StalePlanError('the Fleet file changed while it was read', [`${read.info.path} now has sha256 ${read.info.sha256.slice(0, 16)}…`]);
  const byCluster = new Map(plans.map((p) => [p.spec.fleetCluster!, p]));
  const all = fleetClusterSpecs(read, { durations: (name) => durations ?? byCluster.get(name)?.durations });
  return { read, clusters: clusterSpecsOfPlans(all, byCluster, read.info.path) };
}
