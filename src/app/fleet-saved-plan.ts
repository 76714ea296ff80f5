/**
 * A fleet plan's cluster plans, opened before any cluster access (DESIGN §10, as
 * app/saved-plan.ts opens one plan): each plan is this fleet plan's and passes the checks of one
 * saved plan (plan/saved/verify.ts); the Fleet file, at the recorded path (and commit), must still
 * hash to what the plans recorded; it is read once for all of them (files and git ports), and
 * every cluster gets its effective spec and re-planner (fleet/cluster-plans.ts). `apply` of one
 * cluster's plan out of a fleet plan goes through here too (cli/main.ts wires specsOfFleetPlans in
 * as the fleetClusterSpec port).
 */
import type { Plan, PhaseDurations } from '../plan/types.ts';
import { checkSavedPlan } from '../plan/saved/verify.ts';
import { StalePlanError } from '../base/errors.ts';
import type { FleetPlan } from '../fleet/plan-types.ts';
import { fleetClusterSpecs, requireSameFleet, requirePlanOfThisFleet, clusterSpecsOfPlans, type FleetClusterSpec } from '../fleet/cluster-plans.ts';
import { checkFleetPlanAgainstFleet } from '../fleet/plan-verify.ts';
import type { InputPorts } from './ports.ts';
import { checkPlanProvenance, verifyPlanSpec, planSpecFile } from './saved-plan.ts';
import { readFleet, requireValidFleet, type FleetRead } from './fleet-inputs.ts';
import type { CheckedFleet } from '../fleet/spec-load.ts';

/**
 * Cluster plans out of one fleet plan (each names the Fleet file and its cluster): the Fleet,
 * at the recorded path (and commit), must still hash to what they recorded (exit 3); it is then
 * read and validated once for all of them (once per plan: 74 s for 300 clusters), and each
 * plan's cluster is re-planned from its effective spec. They must all name the same Fleet
 * (path, ref, commit, sha256: exit 3) and a cluster it lists (exit 1). `durations`: the
 * simulation's or the planner's, else each plan's own. `readFleetFile`: for tests that count.
 * The checks that need no file are the fleet's (src/fleet/cluster-plans.ts).
 */
export function specsOfFleetPlans(
  ports: InputPorts,
  plans: readonly Plan[],
  durations?: PhaseDurations,
  readFleetFile: typeof readFleet = readFleet,
): { read: FleetRead<CheckedFleet>; clusters: Map<string, FleetClusterSpec> } {
  const first = plans[0];
  requireSameFleet(plans);
  verifyPlanSpec(ports, first);
  const read = readFleetFile(ports, planSpecFile(ports, first), first.spec.ref ? (first.spec.commit ?? first.spec.ref) : undefined);
  requireValidFleet(read);
  if (read.info.sha256 !== first.spec.sha256)
    throw new StalePlanError('the Fleet file changed while it was read', [`${read.info.path} now has sha256 ${read.info.sha256.slice(0, 16)}…`]);
  const byCluster = new Map(plans.map((p) => [p.spec.fleetCluster!, p]));
  const all = fleetClusterSpecs(read, { durations: (name) => durations ?? byCluster.get(name)?.durations });
  return { read, clusters: clusterSpecsOfPlans(all, byCluster, read.info.path) };
}

/**
 * Steps 1 to 4 for the cluster plans of a sealed fleet plan that sit in a batch (`fleet apply`,
 * `fleet rehearse`), before any cluster access: each plan names this fleet plan's Fleet file
 * (path, ref, commit, sha256) and its own cluster (exit 3), and passes the checks of one plan;
 * the provenance of the Fleet file is checked, then the Fleet read and validated once for all
 * (specsOfFleetPlans). Returns each cluster's entry, effective spec and re-planner.
 */
export function openSavedFleetPlans(
  ports: InputPorts,
  fp: FleetPlan,
  durations?: PhaseDurations,
  readFleetFile?: typeof readFleet,
): { read: FleetRead<CheckedFleet> | null; clusters: Map<string, FleetClusterSpec> } {
  // A canary in no batch too: fleet apply confirms it live before batch 1.
  const rolled = fp.clusters.filter((c) => (c.batch !== null || c.canary) && c.plan);
  if (!rolled.length) return { read: null, clusters: new Map() };
  for (const c of rolled) {
    requirePlanOfThisFleet(fp, c);
    checkSavedPlan(c.plan!);
  }
  const plans = rolled.map((c) => c.plan!);
  checkPlanProvenance(ports, plans[0]);
  const opened = specsOfFleetPlans(ports, plans, durations, readFleetFile);
  // The file is trusted only for what the verified Fleet re-derives: batches, strategy, canaries,
  // each cluster's labels, source and destination (exit 3 otherwise).
  checkFleetPlanAgainstFleet(fp, opened.read.loaded.fleet, opened.read.info.path);
  return opened;
}
