/**
 * From a read spec to the planner (DESIGN §1: spec + snapshot -> planner -> Plan): the one
 * place the CLI assembles the planner input, and the spec-and-replan pairs that `apply` and
 * `rehearse` hand to the applier (which replans against the cluster it finds).
 */
import { buildPlan, selfNodeOf, type PlanInput } from '../plan/planner.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { RolloutSpec } from '../spec/types.ts';
import { verifyPlanSpec, planSpecFile } from './provenance.ts';
import { readFleet, requireValidFleet, type FleetRead } from './fleet-inputs.ts';
import { StalePlanError } from '../base/errors.ts';
import { fleetClusterSpecs, requireSameFleet, clusterSpecsOfPlans, type FleetClusterSpec } from '../fleet/cluster-plans.ts';
import { readSpec, requireValidSpec, nodeInputs, type SpecRead } from '../app/inputs.ts';

/** What a command may add to the planner input besides the spec and the snapshot. */
export type PlanExtras = Pick<PlanInput, 'durations' | 'now' | 'specChanges' | 'selfNode'>;

/**
 * The node this process runs on, when it runs in the cluster it plans: NODE_NAME, which the
 * example apply Jobs set from the downward API (spec.nodeName). It goes last in its bootc pool
 * (DESIGN §7 "Stopping"). Elsewhere (a laptop, CI) it is unset, and nothing moves.
 */
export function selfNodeFrom(env: Record<string, string | undefined>): string | null {
  const n = env.NODE_NAME?.trim();
  return n ? n : null;
}

/** The planner input for a spec that passed `requireValidSpec`; its warnings carry into the plan. */
export function planInput(read: SpecRead, snapshot: ClusterSnapshot, extras: PlanExtras = {}): PlanInput {
  return { spec: read.loaded.spec!, specMap: read.loaded.map, specInfo: read.info, snapshot, specDiagnostics: read.loaded.diagnostics, ...extras };
}

export interface SpecForPlan {
  spec: RolloutSpec;
  replan: (s: ClusterSnapshot) => Plan;
}

/** The spec a saved plan was made from, checked by hash (a changed spec makes the plan stale). */
export function specOfSavedPlan(plan: Plan, durations?: PhaseDurations): SpecForPlan {
  if (plan.spec.fleetCluster !== undefined) return specsOfFleetPlans([plan], durations).clusters.get(plan.spec.fleetCluster)!;
  // What was reviewed is what runs: the spec must still hash to what the plan recorded.
  verifyPlanSpec(plan);
  const read = readSpec(nodeInputs, planSpecFile(plan), plan.spec.ref ? plan.spec.commit ?? plan.spec.ref : undefined);
  requireValidSpec(read);
  // Re-planned on the node the reviewed plan was made on (if it names one), so that its waves
  // come out as reviewed; the applier takes the node it runs on now last (ApplyOptions.selfNode).
  const selfNode = selfNodeOf(plan);
  return { spec: read.loaded.spec!, replan: (s) => buildPlan(planInput(read, s, { durations: durations ?? plan.durations, selfNode })) };
}

export function specFromFile(file: string, durations?: PhaseDurations, selfNode: string | null = null): SpecForPlan & { plan: (s: ClusterSnapshot) => Plan } {
  const read = readSpec(nodeInputs, file);
  requireValidSpec(read);
  const mk = (s: ClusterSnapshot) => buildPlan(planInput(read, s, { durations, selfNode }));
  return { spec: read.loaded.spec!, replan: mk, plan: mk };
}

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
  verifyPlanSpec(first);
  const read = readFleetFile(planSpecFile(first), first.spec.ref ? first.spec.commit ?? first.spec.ref : undefined);
  requireValidFleet(read);
  if (read.info.sha256 !== first.spec.sha256) throw new StalePlanError('the Fleet file changed while it was read', [`${read.info.path} now has sha256 ${read.info.sha256.slice(0, 16)}…`]);
  const byCluster = new Map(plans.map((p) => [p.spec.fleetCluster!, p]));
  const all = fleetClusterSpecs(read, { durations: (name) => durations ?? byCluster.get(name)?.durations });
  return { read, clusters: clusterSpecsOfPlans(all, byCluster, read.info.path) };
}
