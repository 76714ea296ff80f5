/**
 * A fleet plan's cluster plans, opened before any cluster access (docs/design.md §10, as
 * app/saved-plan.ts opens one plan): each plan is this fleet plan's and passes the checks of one
 * saved plan (plan/saved/verify.ts); the Fleet file, at the recorded path (and commit), must still
 * hash to what the plans recorded; it is read once for all of them (files and git ports), and
 * every cluster gets its effective spec and re-planner (fleet/cluster-plans.ts). `apply` of one
 * cluster's plan out of a fleet plan goes through here too (cli/main.ts wires specOfFleetClusterPlan in
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
  const byCluster = new Map<string, Plan>();
  for (const p of plans) if (p.spec.fleetCluster !== undefined) byCluster.set(p.spec.fleetCluster, p); // each has one: requireSameFleet
  const all = fleetClusterSpecs(read, { durations: (name) => durations ?? byCluster.get(name)?.durations });
  return { read, clusters: clusterSpecsOfPlans(all, byCluster, read.info.path) };
}

/** The fleetClusterSpec port (cli/main.ts wires it in): the spec of one cluster's plan out of a fleet plan, applied alone. */
export function specOfFleetClusterPlan(ports: InputPorts, plan: Plan, durations: PhaseDurations): FleetClusterSpec {
  const { clusters } = specsOfFleetPlans(ports, [plan], durations);
  // specsOfFleetPlans refuses a plan that names no cluster, or one the Fleet does not list.
  const c = plan.spec.fleetCluster === undefined ? undefined : clusters.get(plan.spec.fleetCluster);
  if (!c) throw new Error(`internal: plan ${plan.id} has no cluster of its Fleet`);
  return c;
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
  const rolled = fp.clusters.flatMap((c) => ((c.batch !== null || c.canary) && c.plan ? [{ name: c.name, plan: c.plan }] : []));
  if (!rolled.length) return { read: null, clusters: new Map() };
  for (const { name, plan } of rolled) {
    requirePlanOfThisFleet(fp, name, plan);
    checkSavedPlan(plan);
  }
  const plans = rolled.map((c) => c.plan);
  checkPlanProvenance(ports, plans[0]);
  const opened = specsOfFleetPlans(ports, plans, durations, readFleetFile);
  // The file is trusted only for what the verified Fleet re-derives: batches, strategy, canaries,
  // each cluster's labels, source and destination (exit 3 otherwise).
  checkFleetPlanAgainstFleet(fp, opened.read.loaded.fleet, opened.read.info.path);
  return opened;
}
