/**
 * The fleet record: one cluster's part of a fleet run, kept in that cluster as JSON in ConfigMap
 * `bootcplan-fleet` key `fleet.json` (docs/fleets.md "fleet apply"). `fleet apply` skips a
 * cluster whose record says the same fleet plan finished it, so a record of another shape is
 * refused with the field that is wrong (fleetProgressOf), never half read.
 *
 * The fleet reaches the record through FleetRecordStore, its own port: the drivers' record-
 * document stores (src/kube/record-documents.ts, src/sim/driver.ts `records`) match it by shape
 * and know nothing of the fleet.
 */
import type { RecordDocument } from '../cluster/types.ts';

/** One cluster's part of a fleet run, recorded in that cluster (a rerun skips it when `done` for the same fleet plan). */
export interface FleetProgressRecord {
  fleetPlanId: string;
  /** The Fleet's metadata.name. */
  fleet: string;
  cluster: string;
  batch: number;
  /** The cluster plan the fleet applies here. */
  planId: string;
  /** `running`/`waiting` while its batch runs; then the cluster's outcome (src/fleet/run-events.ts). */
  outcome: 'running' | 'waiting' | 'done' | 'nothing-to-do' | 'failed' | 'timed-out' | 'interrupted';
  exitCode: number | null;
  message: string | null;
  startedAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** What the fleet needs of a cluster to keep its record there: one JSON document read and written whole. */
export interface FleetRecordStore {
  /** The document; null when there is none. A document that does not decode is refused (an error). */
  read<T>(doc: RecordDocument<T>): Promise<T | null>;
  /** Creates or replaces the document (the cluster's own apply lock orders the applies). */
  write<T>(doc: RecordDocument<T>, value: T): Promise<void>;
}

export const FLEET_PROGRESS_KEY = 'fleet.json';

const OUTCOMES: readonly string[] = ['running', 'waiting', 'done', 'nothing-to-do', 'failed', 'timed-out', 'interrupted'];

/** The record in `text`, or the reason it is not one (a string). */
export function fleetProgressOf(text: string): FleetProgressRecord | string {
  // any: the JSON of a document read from the cluster, checked field by field below.
  let p: any;
  try {
    p = JSON.parse(text);
  } catch {
    return `${FLEET_PROGRESS_KEY} is not valid JSON`;
  }
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return `${FLEET_PROGRESS_KEY} is not a JSON object`;
  for (const f of ['fleetPlanId', 'fleet', 'cluster', 'planId', 'startedAt', 'updatedAt'])
    if (typeof p[f] !== 'string') return `${FLEET_PROGRESS_KEY} has no string ${f}`;
  if (!Number.isSafeInteger(p.batch) || p.batch < 1) return `${FLEET_PROGRESS_KEY} has no batch number`;
  if (!OUTCOMES.includes(p.outcome)) return `${FLEET_PROGRESS_KEY} has an unknown outcome`;
  if (!(p.exitCode === null || Number.isSafeInteger(p.exitCode))) return `${FLEET_PROGRESS_KEY} has an exitCode that is not an integer`;
  if (!(p.message === null || typeof p.message === 'string')) return `${FLEET_PROGRESS_KEY} has a message that is not a string`;
  if (!(p.finishedAt === null || typeof p.finishedAt === 'string')) return `${FLEET_PROGRESS_KEY} has a finishedAt that is not a string`;
  return p as FleetProgressRecord;
}

/** The record as a document: ConfigMap `bootcplan-fleet`, `fleet.json` beside `fleet-plan-id` (for kubectl readers). */
export const FLEET_RECORD: RecordDocument<FleetProgressRecord> = {
  name: 'bootcplan-fleet',
  key: FLEET_PROGRESS_KEY,
  decode: fleetProgressOf,
  summary: (r) => ({ 'fleet-plan-id': r.fleetPlanId }),
  whenDeleted: 'fleet apply then applies this cluster again, and its apply finds what is done',
};

/** This cluster's fleet record; null when there is none. */
export function readFleetRecord(store: FleetRecordStore): Promise<FleetProgressRecord | null> {
  return store.read(FLEET_RECORD);
}

export function writeFleetRecord(store: FleetRecordStore, r: FleetProgressRecord): Promise<void> {
  return store.write(FLEET_RECORD, r);
}
