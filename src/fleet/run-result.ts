/**
 * What a fleet run answers (src/fleet/runner.ts): each batch's and each cluster's end, why the
 * fleet stopped, and its exit code, the worst of the clusters' (docs/design.md §10). The fleet run's
 * text and JSON (src/fleet/run-text.ts) and the fleet rehearsal read it.
 */
import { EXIT, type ExitCode } from '../base/errors.ts';
import type { FleetBatch } from './plan-types.ts';
import type { FleetClusterOutcome, FleetHaltReason } from './run-events.ts';

export interface FleetClusterResult {
  name: string;
  canary: boolean;
  batch: number | null;
  outcome: FleetClusterOutcome;
  exitCode: number;
  /** Seconds since the fleet run started (null: it did not run in this run). */
  startedAt: number | null;
  finishedAt: number | null;
  /** Seconds spent waiting for its maintenance window. */
  waitedSeconds: number;
  message: string | null;
}

export type FleetBatchStatus = 'done' | 'failed' | 'timed-out' | 'interrupted' | 'not-started';

export interface FleetBatchResult {
  index: number;
  kind: FleetBatch['kind'];
  clusters: string[];
  /** Seconds since the fleet run started; null when it did not start. */
  startedAt: number | null;
  finishedAt: number | null;
  /** Soak waited before this batch (seconds). */
  soakSeconds: number;
  /** `failed`: a cluster failed (none timed out); `timed-out`: the batch ran out of time. */
  status: FleetBatchStatus;
}

export interface FleetRunResult {
  fleetPlanId: string;
  fleet: string;
  /** ISO time the run started; the other times are seconds since then. */
  startedAt: string;
  durationSeconds: number;
  exitCode: ExitCode;
  halted: { reason: FleetHaltReason; batch: number; cluster: string | null; message: string } | null;
  batches: FleetBatchResult[];
  /** Every cluster of the fleet, in the plan's order. */
  clusters: FleetClusterResult[];
}

/**
 * The order of severity of exit codes when several clusters end differently: a stop by a
 * signal (130, 143), then error 1 > policy 6 > halted 5 > lock 4 > stale 3 > changes 2 > 0.
 */
const EXIT_SEVERITY: readonly ExitCode[] = [EXIT.sigint, EXIT.sigterm, EXIT.error, EXIT.policy, EXIT.halted, EXIT.locked, EXIT.stale, EXIT.changes, EXIT.ok];

/** The worst of `codes` by EXIT_SEVERITY (an unknown code counts as 1); 0 for none. */
export function worstExitCode(codes: Iterable<number>): ExitCode {
  let worst: ExitCode = EXIT.ok;
  for (const c of codes) {
    const known = EXIT_SEVERITY.find((x) => x === c) ?? EXIT.error;
    if (EXIT_SEVERITY.indexOf(known) < EXIT_SEVERITY.indexOf(worst)) worst = known;
  }
  return worst;
}

/** The exit code of a cluster stopped by a stop request: 130 for SIGINT, 143 for SIGTERM (as apply's). */
export function exitOfSignal(signal: AbortSignal | undefined): number {
  return signalName(signal) === 'SIGINT' ? EXIT.sigint : EXIT.sigterm;
}

/** The signal a stop request stands for (its AbortSignal reason; SIGTERM unless SIGINT). */
export function signalName(signal: AbortSignal | undefined): 'SIGINT' | 'SIGTERM' {
  return signal?.reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
}
