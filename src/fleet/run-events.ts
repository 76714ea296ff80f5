/**
 * Typed events of a fleet run (`fleet apply`, `fleet rehearse`: the same runner,
 * src/fleet/runner.ts). `t` is seconds since the fleet run started, from the runner's
 * clock. One type per event, each with exactly the fields it carries; `fleet apply -o json`
 * prints them as NDJSON, interleaved with each cluster's own apply events wrapped in
 * `fleet-cluster-event`.
 */
import type { ApplyEvent } from '../apply/ports/events.ts';
import type { FleetBatchKind } from './plan-types.ts';

/**
 * What became of one cluster in a fleet run (a closed set: the renderers, the exit code and
 * the fleet progress record rely on it).
 * - `done`, `nothing-to-do`: its apply finished (exit 0);
 * - `already-done`: its fleet progress record says this fleet plan finished it (a rerun);
 * - `failed`: its apply ended with an error (exitCode says which);
 * - `timed-out`: its batch ran out of time; its apply was stopped at a safe point (exit 5);
 * - `interrupted`: the fleet run was stopped by a signal while it ran;
 * - `not-started`: no batch reached it (the fleet stopped before);
 * - `unplanned`: it has no plan it could roll (an error at `fleet plan`): in no batch (exit 1);
 * - `unchanged`: nothing to change: in no batch (exit 0).
 */
export const FLEET_CLUSTER_OUTCOMES = [
  'done',
  'nothing-to-do',
  'already-done',
  'failed',
  'timed-out',
  'interrupted',
  'not-started',
  'unplanned',
  'unchanged',
] as const;
export type FleetClusterOutcome = (typeof FLEET_CLUSTER_OUTCOMES)[number];

/** Why a fleet run stopped before its last batch. */
export const FLEET_HALT_REASONS = ['canary-failed', 'cluster-failed', 'batch-timeout', 'interrupted'] as const;
export type FleetHaltReason = (typeof FLEET_HALT_REASONS)[number];

/** The run started. */
interface FleetStartEvent {
  t: number;
  type: 'fleet-start';
  fleetPlanId: string;
  batches: number;
  clusters: number;
}
interface FleetBatchStartEvent {
  t: number;
  type: 'fleet-batch-start';
  batch: number;
  kind: FleetBatchKind;
  clusters: string[];
}
/** A cluster's apply starts (`attempt` > 1: again, after waiting for its maintenance window). */
interface FleetClusterStartEvent {
  t: number;
  type: 'fleet-cluster-start';
  batch: number;
  cluster: string;
  attempt: number;
}
/** Outside the cluster's maintenance window: not a failure; its batch waits for it (`until`: when the window opens, ISO). */
interface FleetClusterWaitingEvent {
  t: number;
  type: 'fleet-cluster-waiting';
  batch: number;
  cluster: string;
  until: string;
  message: string;
}
/** One of the cluster's own apply events, as `apply -o json` prints it. */
interface FleetClusterEventEvent {
  t: number;
  type: 'fleet-cluster-event';
  cluster: string;
  event: ApplyEvent;
}
interface FleetClusterDoneEvent {
  t: number;
  type: 'fleet-cluster-done';
  batch: number;
  cluster: string;
  outcome: FleetClusterOutcome;
  exitCode: number;
  message: string | null;
}
/** The batch ran out of time; `clusters`: those not finished, stopped at their next safe point. */
interface FleetBatchTimeoutEvent {
  t: number;
  type: 'fleet-batch-timeout';
  batch: number;
  clusters: string[];
  action: 'continue' | 'abort';
}
interface FleetBatchDoneEvent {
  t: number;
  type: 'fleet-batch-done';
  batch: number;
  failed: string[];
  timedOut: string[];
}
/** Waiting `seconds` (what is left of batchSoakSeconds) before batch `next`. */
interface FleetSoakEvent {
  t: number;
  type: 'fleet-soak';
  batch: number;
  next: number;
  seconds: number;
}
/** No later batch starts; `cluster`: the one whose failure stopped it (null for a timeout or a signal). */
interface FleetHaltedEvent {
  t: number;
  type: 'fleet-halted';
  batch: number;
  cluster: string | null;
  reason: FleetHaltReason;
  message: string;
}
/** A canary's batch gate (src/fleet/gates.ts): its afterWave checks measured again after its batch soaked. */
interface FleetBatchGateEvent {
  t: number;
  type: 'fleet-batch-gate';
  batch: number;
  cluster: string;
  result: 'passed' | 'failed';
  check: string | null;
  observed: string | null;
  seconds: number;
}
/** The fleet progress record of a cluster could not be written (the run goes on; a rerun applies that cluster again, harmlessly). */
interface FleetRecordWarningEvent {
  t: number;
  type: 'fleet-record-warning';
  cluster: string;
  message: string;
}
interface FleetDoneEvent {
  t: number;
  type: 'fleet-done';
  exitCode: number;
  halted: FleetHaltReason | null;
}

export type FleetEvent =
  | FleetStartEvent
  | FleetBatchStartEvent
  | FleetClusterStartEvent
  | FleetClusterWaitingEvent
  | FleetClusterEventEvent
  | FleetClusterDoneEvent
  | FleetBatchTimeoutEvent
  | FleetBatchDoneEvent
  | FleetSoakEvent
  | FleetHaltedEvent
  | FleetRecordWarningEvent
  | FleetDoneEvent
  | FleetBatchGateEvent;

/** An event as the runner writes it, before it is stamped with `t`. */
export type UnstampedFleetEvent = FleetEvent extends infer E ? (E extends FleetEvent ? Omit<E, 't'> : never) : never;
