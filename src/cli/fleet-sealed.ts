/**
 * Sealed fleet plans (DESIGN §10, as DESIGN §6 "Sealed plans" for one cluster): a fleet plan
 * file whose content no longer hashes to its id, or that holds a cluster plan whose content no
 * longer hashes to that plan's id, was edited after it was made: it is refused (exit 3) before
 * anything reads it further. Each cluster's plan is then checked and re-planned as `apply
 * PLANFILE` does (cli/sealed.ts openSavedPlan and confirmSavedPlan).
 */
import { StalePlanError } from '../base/errors.ts';
import { tamperedFleetId } from '../plan/fleet.ts';
import type { FleetPlan } from '../plan/fleet-types.ts';
import { tamperedId } from '../plan/seal.ts';

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
