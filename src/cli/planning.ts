/**
 * From a read spec to the planner (DESIGN §1: spec + snapshot -> planner -> Plan): the one
 * place the CLI assembles the planner input, and the spec-and-replan pairs that `apply` and
 * `rehearse` hand to the applier (which replans against the cluster it finds).
 */
import { buildPlan, type PlanInput } from '../plan/planner.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { RolloutSpec } from '../spec/types.ts';
import { readSpec, requireValidSpec, type SpecRead } from './inputs.ts';
import { verifyPlanSpec, planSpecFile } from './provenance.ts';
import { readFleet, requireValidFleet } from './fleet-inputs.ts';
import { effectiveSpecs } from '../spec/fleet-load.ts';
import { InputError } from '../base/errors.ts';

/** What a command may add to the planner input besides the spec and the snapshot. */
export type PlanExtras = Pick<PlanInput, 'durations' | 'now' | 'specChanges'>;

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
  // What was reviewed is what runs: the spec must still hash to what the plan recorded.
  verifyPlanSpec(plan);
  if (plan.spec.fleetCluster !== undefined) return specOfFleetClusterPlan(plan, plan.spec.fleetCluster, durations);
  const read = readSpec(planSpecFile(plan), plan.spec.ref ? plan.spec.commit ?? plan.spec.ref : undefined);
  requireValidSpec(read);
  return { spec: read.loaded.spec!, replan: (s) => buildPlan(planInput(read, s, { durations: durations ?? plan.durations })) };
}

export function specFromFile(file: string, durations?: PhaseDurations): SpecForPlan & { plan: (s: ClusterSnapshot) => Plan } {
  const read = readSpec(file);
  requireValidSpec(read);
  const mk = (s: ClusterSnapshot) => buildPlan(planInput(read, s, { durations }));
  return { spec: read.loaded.spec!, replan: mk, plan: mk };
}

/**
 * A cluster's plan taken out of a fleet plan (its spec info names the Fleet file and the
 * cluster): the Fleet at the recorded path (and commit), already verified by hash, re-planned
 * for that cluster's effective spec, as `fleet plan` made it.
 */
function specOfFleetClusterPlan(plan: Plan, cluster: string, durations?: PhaseDurations): SpecForPlan {
  const read = readFleet(planSpecFile(plan), plan.spec.ref ? plan.spec.commit ?? plan.spec.ref : undefined);
  requireValidFleet(read);
  const fleet = read.loaded.fleet!;
  const index = fleet.spec.clusters.findIndex((c) => c.name === cluster);
  if (index < 0) throw new InputError(`plan ${plan.id} was made for cluster ${JSON.stringify(cluster).slice(0, 80)}, which the Fleet ${read.info.path} does not list`, [], 'plan the fleet again instead of editing the file');
  const eff = effectiveSpecs(fleet, read.loaded.map)[index];
  const specInfo = { ...read.info, fleetCluster: cluster };
  return { spec: eff.spec, replan: (s) => buildPlan({ spec: eff.spec, specMap: eff.map, specInfo, snapshot: s, durations: durations ?? plan.durations }) };
}
