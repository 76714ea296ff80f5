/**
 * What the parts of one apply share (src/apply/applier.ts makes it once per apply and
 * hands it to the change writer, the wave gates, the bootc and MCO pool runners and the
 * observer): the plan, the driver and its clock, the timeouts, the event sink, the lease,
 * the progress book, and the little state the runners and the observer have in common.
 */
import type { Plan, PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot, Condition } from '../../cluster/types.ts';
import type { ClusterDriver } from '../ports/driver.ts';
import type { UnstampedEvent } from '../ports/events.ts';
import type { Lease } from './lease.ts';
import type { ProgressBook } from './progress-book.ts';
import type { Policy } from '../ports/policy.ts';
import type { ApplyResult } from './result.ts';
import type { HealthSource } from '../ports/health.ts';
import type { SilenceKeeper } from '../gates/silences.ts';

export interface ApplyTimeouts {
  /** Lease duration; renewed every third of it. */
  lockTtlSeconds: number;
  /** Active staging longer than this halts the pool (docs/design.md §7: 10 minutes). */
  stagingSeconds: number;
  /** From the reboot request until the node runs the target, Idle and Ready. */
  nodeSeconds: number;
  /** Waiting for budget or for a wave's node to be Ready before it can start. */
  budgetSeconds: number;
  /** Waiting for a change's `waitAfter` condition. */
  waitAfterSeconds: number;
  /** MCO pools: waiting for the MCO to start updating nodes after an unpause. */
  mcoStartSeconds: number;
}

export interface ApplyContext {
  readonly plan: Plan;
  /** The plan's pools in the order they run: ascending priority, then name. */
  readonly pools: readonly PlanPool[];
  readonly driver: ClusterDriver;
  readonly timeouts: ApplyTimeouts;
  /** Plans again from a snapshot with the spec the plan was made from. */
  readonly replan: (snapshot: ClusterSnapshot) => Plan;
  /** The maintenance-window gate (ApplyOptions.policy). */
  readonly policy: Policy | undefined;
  /** Advance at most one wave, then stop (apply --step). */
  readonly step: boolean;
  /** The node this apply runs on (ApplyOptions.selfNode): last among its bootc pool's remaining nodes. */
  readonly selfNode: string | null;
  /** apply --retry: lift the holds this plan's targets meet (ApplyOptions.retry). */
  readonly retry: boolean;
  /**
   * Runs a rollback plan within this apply, under its lock, as the applier runs any plan
   * (src/apply/gates/rollback-runner.ts rollBackNow; no gates, soak, windows or --step).
   */
  readonly runRollback: (plan: Plan, replan: (s: ClusterSnapshot) => Plan) => Promise<ApplyResult>;
  readonly lease: Lease;
  readonly book: ProgressBook;
  /** Measures the plan's health checks (ApplyOptions.health); null for a plan without checks. */
  readonly health: HealthSource | null;
  /** The silences for the nodes in flight (ApplyOptions.silences); null for a plan without them. */
  readonly silences: SilenceKeeper | null;
  /** Aborts when the apply is asked to stop or loses its lock (what a health measurement is given). */
  readonly stop: AbortSignal;
  /** Seconds since the epoch, from the driver's clock. */
  now(): number;
  /** Sends an event, stamped with the seconds since the apply started. */
  emit(e: UnstampedEvent): void;
  /** Waves this run finished (apply --step stops after one). */
  wavesRun: number;
  /** Nodes whose update bootcplan is driving now (not reported as node-unavailable). */
  readonly inFlight: Set<string>;
  /** node -> was it out of service when last looked at (nodes bootcplan does not drive). */
  readonly lastAvailability: Map<string, boolean>;
  /** MCO pools: node -> the last of its update steps reported (trackMco). */
  readonly mcoPhase: Map<string, number>;
}

export interface NodeFailure {
  node: string;
  reason: string;
  conditions: Condition[];
}
export type NodeOutcome = { ok: true } | { ok: false; failure: NodeFailure };

/** How a node's reboot ended, as the wait for it sees it (bootc-node.ts runBootcNode). */
export type RebootEnd = { gone: true; conditions: Condition[] } | { failed: true; conditions: Condition[] } | { ok: true };
