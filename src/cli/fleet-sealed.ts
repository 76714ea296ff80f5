/**
 * Sealed fleet plans (DESIGN §10, as DESIGN §6 "Sealed plans" for one cluster): a fleet plan
 * file whose content no longer hashes to its id, or that holds a cluster plan whose content no
 * longer hashes to that plan's id, was edited after it was made: it is refused (exit 3) before
 * anything reads it further. Each cluster's plan is then checked and re-planned as `apply
 * PLANFILE` does (app/saved-plan.ts openSavedPlan, plan/saved/compare.ts confirmSavedPlan).
 */
import { StalePlanError } from '../base/errors.ts';
import { tamperedFleetId, rederiveFleetPlan, fleetPlanDifferences } from '../fleet/plan.ts';
import type { FleetSpec } from '../fleet/spec-types.ts';
import type { FleetPlan } from '../fleet/plan-types.ts';
import { tamperedId } from '../plan/saved/seal.ts';
import { checkSavedPlan } from '../plan/saved/verify.ts';
import type { PhaseDurations } from '../plan/types.ts';
import { checkPlanProvenance } from '../app/saved-plan.ts';
import { nodeInputs } from '../app/inputs.ts';
import { specsOfFleetPlans } from './planning.ts';
import { requirePlanOfThisFleet, type FleetClusterSpec } from '../fleet/cluster-plans.ts';
import type { readFleet, FleetRead } from './fleet-inputs.ts';

export function checkFleetPlanSeal(fp: FleetPlan): void {
  const actual = tamperedFleetId(fp);
  if (actual) {
    throw new StalePlanError('the fleet plan file was modified after it was made', [
      `its content hashes to ${actual}, but it says it is fleet plan ${fp.id}`,
      'use only the file `bootcplan fleet plan --out` wrote, as it was reviewed',
    ]);
  }
  for (const c of fp.clusters) {
    const planActual = c.plan ? tamperedId(c.plan) : null;
    if (planActual) {
      throw new StalePlanError(`the plan of cluster ${c.name} in fleet plan ${fp.id} was modified after it was made`, [
        `its content hashes to ${planActual}, but it says it is plan ${c.plan!.id}`,
        'plan the fleet again instead of editing the file',
      ]);
    }
  }
}

/**
 * A fleet plan file is trusted only for what the verified Fleet re-derives from its own cluster
 * plans (README "Fleets: the fleet plan file"): its clusters' names, labels, sources,
 * destinations and canary flags, its strategy and its batches must be what the Fleet (already
 * checked against the sha256 the plans recorded) gives, else it is refused (exit 3) naming what
 * differs. Called before any cluster is reached (fleet apply, fleet render argocd, fleet rehearse).
 */
export function checkFleetPlanAgainstFleet(fp: FleetPlan, fleet: FleetSpec, fleetPath: string): void {
  const differences = fleetPlanDifferences(fp, rederiveFleetPlan(fleet, fp));
  if (!differences.length) return;
  throw new StalePlanError(`fleet plan ${fp.id} is not what the Fleet ${fleetPath} gives from its own cluster plans`, [
    `it differs in: ${differences.slice(0, 10).join('; ')}${differences.length > 10 ? `; and ${differences.length - 10} more` : ''}`,
    'a fleet plan file is trusted only for what its Fleet re-derives; use the file `bootcplan fleet plan --out` wrote, or plan the fleet again',
  ]);
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
  checkPlanProvenance(nodeInputs, plans[0]);
  const opened = specsOfFleetPlans(plans, durations, readFleetFile);
  // The file is trusted only for what the verified Fleet re-derives: batches, strategy, canaries,
  // each cluster's labels, source and destination (exit 3 otherwise).
  checkFleetPlanAgainstFleet(fp, opened.read.loaded.fleet!, opened.read.info.path);
  return opened;
}
