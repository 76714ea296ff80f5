/**
 * The Rollout object's status and the Kubernetes Events as the driver writes them (docs/gitops.md
 * "The rollout status", "Events"): the shapes both drivers implement (ClusterDriver
 * writeRolloutStatus, recordEvent) and api-limits.ts fits. What they say is made from the apply
 * events in rollout-status.ts, which imports these.
 */
import type { ObjectRef } from '../../cluster/objects.ts';
import type { LockSighting } from '../../domain/lease-expiry.ts';

export type RolloutPhase = 'Progressing' | 'Suspended' | 'Degraded' | 'Healthy';

/** Why the status is what it is: a closed list, also each condition's reason. */
export type RolloutReason =
  | 'Applying'
  | 'WaveStarted'
  | 'Stepped'
  | 'WaitingForStaging'
  | 'AnotherApplyRunning'
  | 'OutsideWindow'
  | 'Stale'
  | 'Halted'
  | 'HealthCheckFailed'
  | 'PolicyBlocked'
  | 'LockStuck'
  | 'Error'
  | 'Applied'
  // A rollback (docs/apply.md "Rollback"): under way, done (a human still looks), or a plan of a held image.
  | 'RollingBack'
  | 'RolledBack'
  | 'Held';

/** The last health gate's verdict (status.healthCheck; docs/apply.md "Health gates"). */
export interface HealthCheckStatus {
  /** The failing check, or the gate's checks when it passed. */
  name: string;
  point: 'preflight' | 'afterWave' | 'afterNode' | 'batch';
  pool: string | null;
  wave: number | null;
  node: string | null;
  result: 'passed' | 'failed';
  /** What the failing check saw (empty for a pass). */
  observed: string;
  at: string;
  /** The gate's checks on trial (mode: observe) and the verdicts they would have given; never acted on. */
  observing?: { name: string; mode: 'observe'; result: 'passed' | 'failed'; observed: string }[];
}

export interface RolloutCondition {
  type: 'Ready' | 'Reconciling' | 'Stalled';
  status: 'True' | 'False';
  reason: RolloutReason;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface RolloutStatus {
  /** metadata.generation of the Rollout object whose spec is the plan's spec (kstatus). */
  observedGeneration?: number;
  phase: RolloutPhase;
  reason: RolloutReason;
  /** One line: "wave 3/7 of pool worker", "outside window until 22:00 Europe/Berlin", ... */
  message: string;
  /** The plan being applied (the reviewed id). */
  planId: string;
  pool: string | null;
  wave: number | null;
  waves: number | null;
  /** Suspended: when the next maintenance window opens (ISO). */
  nextWindow: string | null;
  /** The exit code of the run that wrote this (null while it runs). */
  lastExitCode: number | null;
  updatedAt: string;
  conditions: RolloutCondition[];
  /** What apply --step runs saw of a lock held by another apply (null: removed). */
  lockObserved?: LockSighting | null;
  /** The last health gate's verdict, when the plan has health checks. */
  healthCheck?: HealthCheckStatus | null;
}

/** The reasons of bootcplan's Events, to filter on (`kubectl get events --field-selector reason=...`). */
export type EventReason =
  | 'WaveStarted'
  | 'PoolUpdated'
  | 'PoolHalted'
  | 'HealthCheckPassed'
  | 'HealthCheckObserved'
  | 'HealthCheckFailed'
  | 'NodeUpdated'
  | 'NodeFailed'
  | 'RolloutApplied'
  | 'RolloutStale'
  | 'RolloutHalted'
  | 'RolloutBlocked'
  | 'NodeRolledBack'
  | 'RollbackFinished'
  | 'RolloutHeld';

/** What bootcplan did (events.k8s.io `action`). */
type EventAction = 'StartWave' | 'Uncordon' | 'Halt' | 'Pause' | 'Finish' | 'Apply' | 'CheckHealth';

export interface ClusterEventRecord {
  regarding: ObjectRef;
  type: 'Normal' | 'Warning';
  reason: EventReason;
  action: EventAction;
  note: string;
}

export const EVENT_REPORTING_CONTROLLER = 'bootcplan.dev/apply';
