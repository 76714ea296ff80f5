/**
 * Whether a fleet plan file may run (docs/design.md §10, as docs/design.md §6 "Sealed plans" for one cluster):
 * a fleet plan whose content no longer hashes to its id, or that holds a cluster plan whose
 * content no longer hashes to that plan's id, was edited after it was made: it is refused
 * (exit 3) before anything reads it further; and it is trusted only for what the Fleet it was
 * made from re-derives. Pure: the Fleet is read by app/fleet-saved-plan.ts, which then checks
 * each cluster's plan as `apply PLANFILE` does (app/saved-plan.ts, plan/saved/).
 */
import { StalePlanError } from '../base/errors.ts';
import { tamperedId } from '../plan/saved/seal.ts';
import { tamperedFleetId, rederiveFleetPlan, fleetPlanDifferences } from './plan.ts';
import type { FleetSpec } from './spec-types.ts';
import type { FleetPlan } from './plan-types.ts';

export function checkFleetPlanSeal(fp: FleetPlan): void {
  const actual = tamperedFleetId(fp);
  if (actual) {
    throw new StalePlanError('the fleet plan file was modified after it was made', [
      `its content hashes to ${actual}, but it says it is fleet plan ${fp.id}`,
      'use only the file `bootcplan fleet plan --out` wrote, as it was reviewed',
    ]);
  }
  for (const c of fp.clusters) {
    if (!c.plan) continue;
    const planActual = tamperedId(c.plan);
    if (planActual) {
      throw new StalePlanError(`the plan of cluster ${c.name} in fleet plan ${fp.id} was modified after it was made`, [
        `its content hashes to ${planActual}, but it says it is plan ${c.plan.id}`,
        'plan the fleet again instead of editing the file',
      ]);
    }
  }
}

/**
 * A fleet plan file is trusted only for what the verified Fleet re-derives from its own cluster
 * plans (docs/fleets.md "The fleet plan file"): its clusters' names, labels, sources,
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
