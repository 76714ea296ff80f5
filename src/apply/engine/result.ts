/**
 * What an apply returns (src/apply/applier.ts apply): its outcome, and why an apply --step did
 * nothing now. Apart from the applier so that what a run is given (context.ts) and the report
 * (rollout-report.ts) can name it without importing the applier that imports them.
 */

/** Why an apply --step waits: outside the maintenance window, or the wave's nodes still staging. */
export type StepWaitReason = 'outside-window' | 'staging';

/**
 * `waiting` (apply --step only): nothing may be done right now (outside the maintenance
 * window, the wave's nodes still staging); `wait` says why. The CLI exits 0 for it.
 */
export type ApplyOutcome = 'done' | 'stepped' | 'nothing-to-do' | 'waiting';

/** Why an apply --step did nothing now, and (outside the window) when the next window opens. */
export interface StepWaitInfo {
  reason: StepWaitReason;
  message: string;
  nextWindow: { start: string; timezone: string } | null;
}

export interface ApplyResult {
  outcome: ApplyOutcome;
  planId: string;
  durationSeconds: number;
  wavesRun: number;
  /** Nodes the plan left out (blocked); they still need the target. */
  blocked: string[];
  resumed: boolean;
  /** outcome `waiting`: why. */
  wait?: StepWaitInfo;
}
