/**
 * What a run is given and what the engine keeps for it (src/apply/applier.ts makes them once per
 * apply): the plan, the driver and its clock, the timeouts, the event sink, the options (fixed
 * for the run), the lease and the progress book. State another room changes is that room's:
 * the gates' (waves run, the silences) in gates/context.ts, the pool runners' (nodes in flight,
 * availability seen, MCO steps) in pools/context.ts.
 */
import type { Plan, PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot, Condition } from '../../cluster/types.ts';
import type { ClusterDriver } from '../ports/driver.ts';
import type { UnstampedEvent } from '../ports/events.ts';
import type { Lease } from './lease.ts';
import type { ProgressBook } from './progress-book.ts';
import type { Policy } from '../ports/policy.ts';
import type { HealthSource } from '../ports/health.ts';

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

/** What a run is given: fixed from its start to its end, the same for every room. */
interface RunGiven {
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
  /** Measures the plan's health checks (ApplyOptions.health); null for a plan without checks. */
  readonly health: HealthSource | null;
  /** Aborts when the apply is asked to stop or loses its lock (what a health measurement is given). */
  readonly stop: AbortSignal;
  /** Seconds since the epoch, from the driver's clock. */
  now(): number;
  /** Sends an event, stamped with the seconds since the apply started. */
  emit(e: UnstampedEvent): void;
}

/** What the engine keeps for a run: the lock and the progress record (their state is theirs). */
interface RunKept {
  readonly lease: Lease;
  readonly book: ProgressBook;
}

/**
 * What the engine's parts receive (the change writer, a stop's clean-up, holds, the staging
 * clock): what the run is given and what the engine keeps. The gates add theirs
 * (gates/context.ts), the pool runners theirs (pools/context.ts).
 */
export interface RunContext extends RunGiven, RunKept {}

export interface NodeFailure {
  node: string;
  reason: string;
  conditions: Condition[];
}
export type NodeOutcome = { ok: true } | { ok: false; failure: NodeFailure };

/** How a node's reboot ended, as the wait for it sees it (bootc-node.ts runBootcNode). */
export type RebootEnd = { gone: true; conditions: Condition[] } | { failed: true; conditions: Condition[] } | { ok: true };
