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
