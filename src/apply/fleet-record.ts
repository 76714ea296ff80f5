/**
 * The fleet progress record (src/apply/driver.ts FleetProgressRecord) as it is stored: JSON in
 * ConfigMap `bootcplan-fleet` key `fleet.json`. `fleet apply` skips a cluster whose record says
 * the same fleet plan finished it, so a record of another shape is refused with the field that is
 * wrong (both drivers read through fleetProgressOf), never half read.
 */
import type { FleetProgressRecord } from './driver.ts';

export const FLEET_PROGRESS_KEY = 'fleet.json';

const OUTCOMES: readonly string[] = ['running', 'waiting', 'done', 'nothing-to-do', 'failed', 'timed-out', 'interrupted'];

/** The record in `text`, or the reason it is not one (a string). */
export function fleetProgressOf(text: string): FleetProgressRecord | string {
  let p: any;
  try {
    p = JSON.parse(text);
  } catch {
    return `${FLEET_PROGRESS_KEY} is not valid JSON`;
  }
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return `${FLEET_PROGRESS_KEY} is not a JSON object`;
  for (const f of ['fleetPlanId', 'fleet', 'cluster', 'planId', 'startedAt', 'updatedAt']) if (typeof p[f] !== 'string') return `${FLEET_PROGRESS_KEY} has no string ${f}`;
  if (!Number.isSafeInteger(p.batch) || p.batch < 1) return `${FLEET_PROGRESS_KEY} has no batch number`;
  if (!OUTCOMES.includes(p.outcome)) return `${FLEET_PROGRESS_KEY} has an unknown outcome`;
  if (!(p.exitCode === null || Number.isSafeInteger(p.exitCode))) return `${FLEET_PROGRESS_KEY} has an exitCode that is not an integer`;
  if (!(p.message === null || typeof p.message === 'string')) return `${FLEET_PROGRESS_KEY} has a message that is not a string`;
  if (!(p.finishedAt === null || typeof p.finishedAt === 'string')) return `${FLEET_PROGRESS_KEY} has a finishedAt that is not a string`;
  return p as FleetProgressRecord;
}
