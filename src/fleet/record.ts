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
import { isPlainObject } from '../base/schema.ts';
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

const OUTCOMES: readonly FleetProgressRecord['outcome'][] = ['running', 'waiting', 'done', 'nothing-to-do', 'failed', 'timed-out', 'interrupted'];
const isOutcome = (v: unknown): v is FleetProgressRecord['outcome'] => OUTCOMES.some((o) => o === v);

/** The record in `text`, or the reason it is not one (a string). */
export function fleetProgressOf(text: string): FleetProgressRecord | string {
  let p: unknown;
  try {
    p = JSON.parse(text);
  } catch {
    return `${FLEET_PROGRESS_KEY} is not valid JSON`;
  }
  if (!isPlainObject(p)) return `${FLEET_PROGRESS_KEY} is not a JSON object`;
  const { fleetPlanId, fleet, cluster, planId, startedAt, updatedAt, batch, outcome, exitCode, message, finishedAt } = p;
  const noString = (f: string) => `${FLEET_PROGRESS_KEY} has no string ${f}`;
  if (typeof fleetPlanId !== 'string') return noString('fleetPlanId');
  if (typeof fleet !== 'string') return noString('fleet');
  if (typeof cluster !== 'string') return noString('cluster');
  if (typeof planId !== 'string') return noString('planId');
  if (typeof startedAt !== 'string') return noString('startedAt');
  if (typeof updatedAt !== 'string') return noString('updatedAt');
  if (typeof batch !== 'number' || !Number.isSafeInteger(batch) || batch < 1) return `${FLEET_PROGRESS_KEY} has no batch number`;
  if (!isOutcome(outcome)) return `${FLEET_PROGRESS_KEY} has an unknown outcome`;
  if (!(exitCode === null || (typeof exitCode === 'number' && Number.isSafeInteger(exitCode))))
    return `${FLEET_PROGRESS_KEY} has an exitCode that is not an integer`;
  if (!(message === null || typeof message === 'string')) return `${FLEET_PROGRESS_KEY} has a message that is not a string`;
  if (!(finishedAt === null || typeof finishedAt === 'string')) return `${FLEET_PROGRESS_KEY} has a finishedAt that is not a string`;
  // The object as read (its fields in their order, any others kept), each field now of its type.
  return { ...p, fleetPlanId, fleet, cluster, batch, planId, outcome, exitCode, message, startedAt, updatedAt, finishedAt };
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
