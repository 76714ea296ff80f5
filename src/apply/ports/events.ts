/**
 * Typed events of an apply (and a rehearsal: same engine). `t` is seconds since the apply
 * started, from the driver's clock. Renderers: src/render/events.ts.
 *
 * One type per event, each with exactly the fields it carries, so a consumer that checks
 * `type` gets them without asserting. `apply --json` prints them as they are (NDJSON): the
 * field order is the order the applier writes them in.
 */
import { HeldTargetError, LockHeldError, PolicyBlockedError, StalePlanError, exitCodeOf } from '../../base/errors.ts';
import type { Condition } from '../../cluster/types.ts';
import type { GatePositionPoint, MeasurementOutcome } from './health.ts';
import type { FailReason } from '../../domain/health-verdict.ts';
import type { OnFailure } from '../../plan/types.ts';

/** apply started (message: plan id; resumed: true on a rerun). */
interface StartEvent {
  t: number;
  type: 'start';
  message: string;
  resumed: boolean;
}
/** An object change was written; `pool` when the change belongs to one. */
interface ChangeEvent {
  t: number;
  type: 'change';
  address: string;
  pool?: string;
  message: string;
}
/** Waiting for a condition between ordered changes (message). */
interface WaitEvent {
  t: number;
  type: 'wait';
  address: string;
  message: string;
}
/** A bootc node began pulling/staging the target (`stage-start`), or passed the staging gate (`staged`). */
interface StagingEvent {
  t: number;
  type: 'stage-start' | 'staged';
  pool: string;
  node: string;
}
interface PoolStartEvent {
  t: number;
  type: 'pool-start';
  pool: string;
  waves: number;
  message: string;
  rollback?: true;
}
interface WaveStartEvent {
  t: number;
  type: 'wave-start';
  pool: string;
  wave: number;
  waves: number;
  nodes: string[];
  rollback?: true;
}
/** A node's own update; `message` when an administrator's cordon was there already. */
interface CordonEvent {
  t: number;
  type: 'cordon';
  pool: string;
  node: string;
  wave: number;
  message?: string;
  rollback?: true;
}
/** `booted`: the node runs the target and is Ready. */
interface NodeStepEvent {
  t: number;
  type: 'drain-done' | 'booted' | 'uncordon';
  pool: string;
  node: string;
  wave: number;
  rollback?: true;
}
interface RebootEvent {
  t: number;
  type: 'reboot';
  pool: string;
  node: string;
  wave: number;
  kind: 'soft' | 'hard';
  rollback?: true;
}
interface WaveEndEvent {
  t: number;
  type: 'wave-end';
  pool: string;
  wave: number;
  waves: number;
  rollback?: true;
}
/** Soaking `seconds` after wave `wave`. */
interface SoakEvent {
  t: number;
  type: 'soak';
  pool: string;
  wave: number;
  seconds: number;
}
interface PoolDoneEvent {
  t: number;
  type: 'pool-done';
  pool: string;
}
interface NodeFailedEvent {
  t: number;
  type: 'node-failed';
  pool: string;
  node: string;
  message: string;
  conditions: Condition[];
  rollback?: true;
}
/** A node of the pool went out of service on its own (message: why). */
interface NodeUnavailableEvent {
  t: number;
  type: 'node-unavailable';
  pool: string;
  node: string;
  message: string;
  conditions: Condition[];
}
interface NodeAvailableEvent {
  t: number;
  type: 'node-available';
  pool: string;
  node: string;
}
/**
 * The pool was paused; `node` is the first failed node, when a node failed; `check` the health
 * check whose failure halted it (docs/apply.md "Health gates").
 */
interface HaltEvent {
  t: number;
  type: 'halt';
  pool: string;
  node?: string;
  message: string;
  check?: string;
  rollback?: true;
}
/** A health gate starts (docs/apply.md "Health gates"): its position and the checks it runs. */
interface GateStartEvent {
  t: number;
  type: 'gate-start';
  point: GatePositionPoint;
  pool: string | null;
  wave: number | null;
  node?: string;
  checks: string[];
}
/** One measurement of one check at a gate. */
interface GateMeasureEvent {
  t: number;
  type: 'gate-measure';
  point: GatePositionPoint;
  pool: string | null;
  wave: number | null;
  node?: string;
  check: string;
  outcome: MeasurementOutcome;
  observed: string;
  /** Present for a check on trial: its measurements are recorded, never acted on. */
  mode?: 'observe';
}
/** Every enforcing check of the gate passed (`checks`; empty when all observe), after `seconds`. */
interface GatePassEvent {
  t: number;
  type: 'gate-pass';
  point: GatePositionPoint;
  pool: string | null;
  wave: number | null;
  node?: string;
  checks: string[];
  seconds: number;
}
/** A check of the gate failed (the first, in check order); the others were stopped. */
interface GateFailEvent {
  t: number;
  type: 'gate-fail';
  point: GatePositionPoint;
  pool: string | null;
  wave: number | null;
  node?: string;
  check: string;
  reason: FailReason;
  observed: string;
  onFailure: OnFailure;
  seconds: number;
}
/**
 * A silence for a node in flight (docs/apply.md "Silences"): created as the node went out of
 * service, extended, expired; `error`: Alertmanager refused or did not answer (the message says
 * what; no `node` for the preflight check of the Alertmanager).
 */
export interface SilenceEvent {
  t: number;
  type: 'silence';
  action: 'create' | 'extend' | 'expire' | 'error';
  pool: string;
  node?: string;
  ids: string[];
  message: string;
}

/**
 * A check on trial (mode: observe) reached the verdict it would have given at this gate (docs/apply.md
 * "Health gates"): recorded, never acted on. `result: failed` is what it would have done
 * (`onFailure`), had it been enforced; the gate goes on with its enforcing checks.
 */
interface GateObserveEvent {
  t: number;
  type: 'gate-observe';
  point: GatePositionPoint;
  pool: string | null;
  wave: number | null;
  node?: string;
  check: string;
  mode: 'observe';
  result: 'passed' | 'failed';
  /** Why it would have failed (absent for a pass). */
  reason?: FailReason;
  observed: string;
  onFailure: OnFailure;
  seconds: number;
}
/** apply --step stopped after one wave. */
interface StepEndEvent {
  t: number;
  type: 'step-end';
  pool: string;
  message: string;
}
interface DoneEvent {
  t: number;
  type: 'done';
  message?: string;
}
/**
 * A rollback starts (docs/apply.md "Rollback"): `planId` is the rollback plan's, `of` the plan it
 * reverses. The wave and node events that follow carry `rollback: true` until `rollback-done`.
 */
interface RollbackStartEvent {
  t: number;
  type: 'rollback-start';
  planId: string;
  of: string;
  scope: 'run' | 'wave';
  nodes: number;
  pools: string[];
  message: string;
}
/** Every node of the rollback is back on the image it booted before the run. */
interface RollbackDoneEvent {
  t: number;
  type: 'rollback-done';
  planId: string;
  nodes: string[];
  message?: string;
}
/** apply --retry lifted holds of the plan's pools (docs/apply.md "Holds"). */
interface HoldsClearedEvent {
  t: number;
  type: 'holds-cleared';
  pools: string[];
  message: string;
}

/**
 * Why an apply refused to go on (docs/apply.md "Apply and rehearse", Events): a hold on the plan's image (`held`),
 * a plan the cluster moved away from or an edited plan file (`stale`), another apply's lock
 * (`locked`), a maintenance window or a plan the policy blocks (`policy`).
 */
type RefusalReason = 'held' | 'stale' | 'locked' | 'policy';

/**
 * The apply was refused: under `--json` the last line on stdout, so a tool that reads only the
 * events learns why the run did nothing (stderr has the same error; `exitCode` is the process's,
 * 0 for `apply --step` leaving the lock to an apply that is alive). `details`: the error's lines
 * (the holds, the differences).
 */
interface RefusedEvent {
  t: number;
  type: 'refused';
  reason: RefusalReason;
  exitCode: number;
  message: string;
  details: string[];
  hint?: string;
}

export type ApplyEvent =
  | StartEvent
  | ChangeEvent
  | WaitEvent
  | StagingEvent
  | PoolStartEvent
  | WaveStartEvent
  | CordonEvent
  | NodeStepEvent
  | RebootEvent
  | WaveEndEvent
  | SoakEvent
  | PoolDoneEvent
  | NodeFailedEvent
  | NodeUnavailableEvent
  | NodeAvailableEvent
  | HaltEvent
  | StepEndEvent
  | DoneEvent
  | GateStartEvent
  | GateMeasureEvent
  | GatePassEvent
  | GateFailEvent
  | GateObserveEvent
  | RollbackStartEvent
  | RollbackDoneEvent
  | HoldsClearedEvent
  | RefusedEvent
  | SilenceEvent;

type ApplyEventType = ApplyEvent['type'];

/** An event as the applier writes it, before it is stamped with `t`. */
export type UnstampedEvent = ApplyEvent extends infer E ? (E extends ApplyEvent ? Omit<E, 't'> : never) : never;

export type EventSink = (e: ApplyEvent) => void;

/** The event types a rollback's run marks `rollback: true` (its waves and nodes, as drawn apart). */
export const ROLLBACK_MARKED: ReadonlySet<ApplyEventType> = new Set<ApplyEventType>([
  'pool-start',
  'wave-start',
  'cordon',
  'drain-done',
  'booted',
  'uncordon',
  'reboot',
  'wave-end',
  'node-failed',
  'halt',
]);

/** The refusal an error that ended an apply stands for, as an event; null for any other error (a halt, a failure: they have events of their own or are errors). */
export function refusedEvent(err: unknown, t: number, exitCode: number = exitCodeOf(err)): RefusedEvent | null {
  const reason: RefusalReason | null =
    err instanceof HeldTargetError
      ? 'held'
      : err instanceof StalePlanError
        ? 'stale'
        : err instanceof LockHeldError
          ? 'locked'
          : err instanceof PolicyBlockedError
            ? 'policy'
            : null;
  if (!reason || !(err instanceof Error)) return null;
  const details = err instanceof HeldTargetError ? err.report : err instanceof StalePlanError ? err.difference : [];
  const hint = 'hint' in err && typeof err.hint === 'string' ? err.hint : undefined;
  return { t, type: 'refused', reason, exitCode, message: err.message, details: [...details], ...(hint ? { hint } : {}) };
}
