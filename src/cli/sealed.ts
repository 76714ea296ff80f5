/**
 * Applying or rehearsing a saved plan (DESIGN §6 "Sealed plans"): steps 1 to 4 of
 * plan/saved/verify.ts, before any cluster access, with the files they read. Steps 5 and 6
 * (plan/saved/compare.ts confirmSavedPlan) follow once the cluster is read. A sealed fleet
 * plan's cluster plans go through 1 to 4 together (openSavedFleetPlans), the Fleet read once for
 * all, then 5 and 6 each in its cluster's turn.
 */
import type { Plan, PhaseDurations } from '../plan/types.ts';
import { checkSavedPlan } from '../plan/saved/verify.ts';
import { StalePlanError } from '../base/errors.ts';
import { checkPlanProvenance } from './provenance.ts';
import { specOfSavedPlan, specsOfFleetPlans, type SpecForPlan } from './planning.ts';
import { requirePlanOfThisFleet, type FleetClusterSpec } from '../fleet/cluster-plans.ts';
import type { readFleet, FleetRead } from './fleet-inputs.ts';
import type { FleetPlan } from '../fleet/plan-types.ts';
import { checkFleetPlanAgainstFleet } from './fleet-sealed.ts';

/** Steps 1 to 4: before any cluster access. Returns the verified spec and its re-planner. */
export function openSavedPlan(saved: Plan, durations?: PhaseDurations): SpecForPlan {
  checkSavedPlan(saved);
  checkPlanProvenance(saved);
  return specOfSavedPlan(saved, durations);
}

/**
 * Steps 1 to 4 for the cluster plans of a sealed fleet plan that sit in a batch (`fleet apply`,
 * `fleet rehearse`), before any cluster access: each plan names this fleet plan's Fleet file
 * (path, ref, commit, sha256) and its own cluster (exit 3), and passes the checks of one plan;
 * the provenance of the Fleet file is checked, then the Fleet read and validated once for all
 * (planning.ts specsOfFleetPlans). Returns each cluster's entry, effective spec and re-planner.
 */
export function openSavedFleetPlans(fp: FleetPlan, durations?: PhaseDurations, readFleetFile?: typeof readFleet): { read: FleetRead | null; clusters: Map<string, FleetClusterSpec> } {
  // A canary in no batch too: fleet apply confirms it live before batch 1.
  const rolled = fp.clusters.filter((c) => (c.batch !== null || c.canary) && c.plan);
  if (!rolled.length) return { read: null, clusters: new Map() };
  for (const c of rolled) {
    requirePlanOfThisFleet(fp, c);
    checkSavedPlan(c.plan!);
  }
  const plans = rolled.map((c) => c.plan!);
  checkPlanProvenance(plans[0]);
  const opened = specsOfFleetPlans(plans, durations, readFleetFile);
  // The file is trusted only for what the verified Fleet re-derives: batches, strategy, canaries,
  // each cluster's labels, source and destination (exit 3 otherwise).
  checkFleetPlanAgainstFleet(fp, opened.read.loaded.fleet!, opened.read.info.path);
  return opened;
}
