/**
 * Reports a run of `apply` where operators look (docs/gitops.md "The rollout status", "Events", "Notifications"): the status of the Rollout
 * object (rollout-status.ts), the Kubernetes Events on the pools and nodes, and an optional
 * notification hook (`--notify URL`, src/app/notify.ts). It listens to the applier's events
 * and is told the run's outcome; every write goes through the driver, one at a time, in order,
 * in the background. Reporting never fails an apply: a write that fails is a warning, once
 * per kind.
 *
 * API requests it adds: 1 read of the Rollout object per run; 1 status write per wave and at
 * the end; Events: 1 per node (NodeUpdated or NodeFailed), 1 per wave and per pool, at most
 * 1 on the Rollout per run.
 */
import type { Plan } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import type { ApplyEvent } from '../ports/events.ts';
import type { ClusterDriver, RolloutObject } from '../ports/driver.ts';
import type { ApplyResult } from '../engine/result.ts';
import { deepEqual } from '../../base/equal.ts';
import {
  StalePlanError,
  RolloutHaltedError,
  RolledBackError,
  HeldTargetError,
  PolicyBlockedError,
  LockHeldError,
  LockStuckError,
  exitCodeOf,
  messageOf,
} from '../../base/errors.ts';
import { isoOf } from '../ports/driver.ts';
import type { LockSighting } from '../../domain/lease-expiry.ts';
import { peek } from '../ports/views.ts';
import { type StatusCore, type RebootSeen, conditionsOf, statusOfEvent, clusterEventOf, rolloutEventOf, windowTime, haltMessage } from './rollout-status.ts';
import { type RolloutStatus, type ClusterEventRecord, type HealthCheckStatus } from '../ports/rollout-object.ts';
import { fitEvent, fitRolloutStatus } from '../ports/api-limits.ts';

/** The small JSON document `--notify URL` posts. */
export interface NotifyDocument {
  kind: 'bootcplan.dev/rollout-notification';
  /** health-check-observed: a check on trial (mode: observe) would have failed; nothing was done. */
  event: 'wave-start' | 'halt' | 'done' | 'stale' | 'health-check-failed' | 'health-check-observed';
  rollout: string;
  planId: string;
  phase: StatusCore['phase'];
  message: string;
  pool: string | null;
  wave: number | null;
  waves: number | null;
  at: string;
  /** health-check-failed, health-check-observed: the check and what it saw. */
  check?: string;
  observed?: string;
  /** health-check-observed: always observe, so that no receiver takes it for a failure that acted. */
  mode?: 'observe';
}

interface ReporterOptions {
  /** The Rollout object's name: the spec's metadata.name. */
  rollout: string;
  /** The spec the plan was made from: the object's generation is observed only when its spec is this one. */
  spec: unknown;
  /** Posts a notification (failures are the notifier's to report). */
  notify?: (doc: NotifyDocument) => Promise<void>;
  /** One line to stderr. */
  warn: (message: string) => void;
  /**
   * Warn when there is no Rollout object. Only the in-cluster Job (`apply --step`) is expected
   * to report into one; an apply from a workstation without GitOps has none, and says nothing.
   */
  expectObject?: boolean;
}

/** The final status of a run, from its result or its error (docs/design.md §3 exit codes). */
function finalStatusOf(
  outcome: { result: ApplyResult } | { error: unknown },
  now: string,
  last: { core: StatusCore | null; failure: { node: string; message: string } | null },
): StatusCore {
  if ('result' in outcome) {
    const r = outcome.result;
    if (r.outcome === 'done' || r.outcome === 'nothing-to-do')
      return {
        phase: 'Healthy',
        reason: 'Applied',
        message: `plan ${r.planId} applied${r.blocked.length ? `; ${r.blocked.length} blocked node(s) left as they are` : ''}`,
      };
    if (r.outcome === 'stepped') {
      const at = last.core?.pool ? `wave ${last.core.wave}/${last.core.waves} of pool ${last.core.pool} done` : 'advanced one step';
      return { ...pick(last.core), phase: 'Progressing', reason: 'Stepped', message: `${at}; the next run continues` };
    }
    const w = r.wait;
    // The applier gives every `waiting` outcome its wait (applier.ts).
    if (!w) throw new Error(`internal: apply ended ${r.outcome} without saying what it waits for`);
    if (w.reason === 'outside-window') {
      return {
        ...pick(last.core),
        phase: 'Suspended',
        reason: 'OutsideWindow',
        nextWindow: w.nextWindow?.start ?? null,
        message: w.nextWindow ? `outside window until ${windowTime(w.nextWindow.start, w.nextWindow.timezone, now)}` : `outside window: ${w.message}`,
      };
    }
    return { ...pick(last.core), phase: 'Progressing', reason: 'WaitingForStaging', message: w.message };
  }
  const err = outcome.error;
  if (err instanceof StalePlanError) return { phase: 'Degraded', reason: 'Stale', message: `stale: re-plan needed (${err.difference[0] ?? err.message})` };
  if (err instanceof RolledBackError) return { ...pick(last.core), phase: 'Degraded', reason: 'RolledBack', message: err.message };
  if (err instanceof HeldTargetError) return { phase: 'Degraded', reason: 'Held', message: `held: ${err.message}` };
  if (err instanceof RolloutHaltedError) {
    if (last.core?.reason === 'Halted' || last.core?.reason === 'HealthCheckFailed') return last.core;
    return { phase: 'Degraded', reason: 'Halted', message: haltMessage('?', null, err.message, last.failure) };
  }
  if (err instanceof LockHeldError)
    return { phase: 'Degraded', reason: 'LockStuck', message: err instanceof LockStuckError ? err.message : `lock stuck: ${err.message}` };
  if (err instanceof PolicyBlockedError) return { phase: 'Degraded', reason: 'PolicyBlocked', message: `blocked by policy: ${err.message}` };
  return { phase: 'Degraded', reason: 'Error', message: `error (exit ${exitCodeOf(err)}): ${messageOf(err)}` };
}

const pick = (c: StatusCore | null) => ({ pool: c?.pool ?? null, wave: c?.wave ?? null, waves: c?.waves ?? null });

export class RolloutReporter {
  private object: RolloutObject | null = null;
  private chain: Promise<void> = Promise.resolve();
  private readonly warned = new Set<string>();
  private last: StatusCore | null = null;
  private lastFailure: { node: string; message: string } | null = null;
  private readonly failures = new Map<string, string>();
  /** Reboot requests seen in this run, by node, for the NodeUpdated Event that follows. */
  private readonly reboots = new Map<string, RebootSeen>();
  /** The status reason the last run left (its conditions' reason), read at open. */
  private before: string | null = null;
  /** The last health gate's verdict of this run (status.healthCheck). */
  private gate: HealthCheckStatus | null = null;
  /** The verdicts of the running gate's observing checks so far (status.healthCheck.observing). */
  private observing: NonNullable<HealthCheckStatus['observing']> = [];

  constructor(
    private readonly driver: ClusterDriver,
    private readonly plan: Plan,
    private readonly o: ReporterOptions,
  ) {}

  /** Reads the Rollout object (one request); without one, only Events and notifications are sent. */
  async open(): Promise<void> {
    try {
      this.object = await this.driver.readRollout(this.o.rollout);
      this.before = this.object?.conditions[0]?.reason ?? null;
      if (!this.object && this.o.expectObject !== false)
        this.warnOnce(
          'absent',
          `no Rollout object ${this.o.rollout} in the cluster: the rollout status is not recorded (sync the spec file itself, docs/gitops.md "The rollout status")`,
        );
    } catch (err) {
      this.warnOnce('read', `the rollout status is not recorded: reading Rollout ${this.o.rollout} failed: ${messageOf(err)}`);
    }
  }

  /** The applier's event sink (synchronous; the writes follow in the background). */
  readonly onEvent = (e: ApplyEvent): void => {
    if (e.type === 'node-failed') this.failures.set(e.node, e.message);
    if (e.type === 'gate-start') this.observing = [];
    if (e.type === 'gate-observe') this.observing.push({ name: e.check, mode: 'observe', result: e.result, observed: e.observed });
    if (e.type === 'gate-pass' || e.type === 'gate-fail') {
      this.gate = {
        name: e.type === 'gate-pass' ? e.checks.join(', ') || 'no enforcing check' : e.check,
        point: e.point,
        pool: e.pool,
        wave: e.wave,
        node: e.node ?? null,
        result: e.type === 'gate-pass' ? 'passed' : 'failed',
        observed: e.type === 'gate-fail' ? e.observed : '',
        at: this.isoNow(),
        ...(this.observing.length ? { observing: this.observing.slice(0, 16) } : {}),
      };
    }
    const failure = e.type === 'halt' && e.node ? this.failures.get(e.node) : undefined;
    if (e.type === 'halt' && e.node && failure !== undefined) this.lastFailure = { node: e.node, message: failure };
    const core = statusOfEvent(e, this.plan, this.lastFailure);
    if (core) {
      this.last = core;
      this.enqueue('status', () => this.writeStatus(core, null));
    }
    if (e.type === 'reboot') this.reboots.set(e.node, { kind: e.kind, at: this.isoNow() });
    const ev = clusterEventOf(e, this.plan, e.type === 'booted' ? this.reboots.get(e.node) : undefined, this.o.rollout);
    if (e.type === 'booted' || e.type === 'node-failed') this.reboots.delete(e.node);
    if (ev) this.enqueue('event', () => this.record(ev));
    // A halt for a failed health check was notified with the check (health-check-failed).
    if ((e.type === 'wave-start' || (e.type === 'halt' && !e.check)) && core) this.notify(e.type, core, this.isoNow());
    if (e.type === 'gate-fail' && core) this.notify('health-check-failed', core, this.isoNow(), { check: e.check, observed: e.observed });
    // A check on trial that would have failed: told as such (the rollout goes on), with the status as it stands.
    if (e.type === 'gate-observe' && e.result === 'failed' && this.last)
      this.notify('health-check-observed', this.last, this.isoNow(), { check: e.check, observed: e.observed, mode: 'observe' });
  };

  /** What earlier apply --step runs saw of a lock they could not take (status.lockObserved), or null. */
  get lockObserved(): LockSighting | null {
    return this.object?.lockObserved ?? null;
  }

  /** Keeps what this run saw of a held lock for the next run (status.lockObserved alone); false without a Rollout object. */
  async keepLockObserved(seen: LockSighting): Promise<boolean> {
    if (!this.object) return false;
    this.enqueue('status', () => this.driver.writeRolloutLockObserved(this.o.rollout, seen));
    await this.chain;
    return true;
  }

  /** The run ended: the final status, the Rollout's Event, the stale notification; waits for every write. */
  async finish(outcome: { result: ApplyResult } | { error: unknown }, exitCode: number): Promise<StatusCore> {
    const now = this.isoNow();
    const core = finalStatusOf(outcome, now, { core: this.last, failure: this.lastFailure });
    // A run that held the lock ends what earlier runs saw of another's lock.
    this.enqueue('status', () => this.writeStatus(core, exitCode, 'result' in outcome && !!this.object?.lockObserved));
    // The Rollout's Event and the done / stale notifications once per change of state, not on
    // every CronJob run that finds the same (an applied plan, a stale plan until re-planned).
    if (core.reason !== this.before) {
      const ev = rolloutEventOf(this.o.rollout, core, this.plan);
      if (ev && this.object) this.enqueue('event', () => this.record(ev));
      if (core.reason === 'Applied') this.notify('done', core, now);
      if (core.reason === 'Stale') this.notify('stale', core, now);
    }
    await this.chain;
    return core;
  }

  private isoNow() {
    return isoOf(this.driver.clock.now());
  }

  private notify(event: NotifyDocument['event'], c: StatusCore, at: string, check?: { check: string; observed: string; mode?: 'observe' }) {
    const send = this.o.notify;
    if (!send) return;
    const doc: NotifyDocument = {
      kind: 'bootcplan.dev/rollout-notification',
      event,
      rollout: this.o.rollout,
      planId: this.plan.id,
      phase: c.phase,
      message: c.message,
      pool: c.pool ?? null,
      wave: c.wave ?? null,
      waves: c.waves ?? null,
      at,
      ...(check ?? {}),
    };
    this.enqueue('notify', () => send(doc));
  }

  private enqueue(kind: string, fn: () => Promise<unknown>) {
    this.chain = this.chain.then(fn).then(
      () => undefined,
      (err) => this.warnOnce(kind, `could not record the rollout ${kind}: ${messageOf(err)}`),
    );
  }

  private warnOnce(kind: string, message: string) {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    this.o.warn(`warning: ${message}`);
  }

  private async writeStatus(core: StatusCore, exitCode: number | null, clearLockObserved = false): Promise<void> {
    const obj = this.object;
    if (!obj) return;
    const now = this.isoNow();
    // kstatus: the generation is observed only when the object's spec is the plan's spec.
    const generation = deepEqual(obj.spec, this.o.spec) ? obj.generation : undefined;
    const status: RolloutStatus = {
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      phase: core.phase,
      reason: core.reason,
      message: core.message,
      planId: this.plan.id,
      pool: core.pool ?? null,
      wave: core.wave ?? null,
      waves: core.waves ?? null,
      nextWindow: core.nextWindow ?? null,
      lastExitCode: exitCode,
      updatedAt: now,
      conditions: conditionsOf(core, now, generation, obj.conditions),
      ...(clearLockObserved ? { lockObserved: null } : {}),
      ...(this.gate ? { healthCheck: this.gate } : {}),
    };
    const fitted = fitRolloutStatus(status);
    await this.driver.writeRolloutStatus(this.o.rollout, fitted);
    obj.conditions = fitted.conditions;
    if (clearLockObserved) obj.lockObserved = null;
  }

  private async record(ev: ClusterEventRecord): Promise<void> {
    const uid =
      ev.regarding.kind === 'Node' || ev.regarding.kind.endsWith('Pool')
        ? await peek(this.driver, (s) => uidIn(s, ev.regarding.kind, ev.regarding.name)).catch(() => undefined)
        : this.object?.uid;
    await this.driver.recordEvent(fitEvent(ev), uid ?? null);
  }
}

function uidIn(s: ClusterSnapshot, kind: string, name: string): string | undefined {
  const list = kind === 'Node' ? s.nodes : kind === 'BootcNodePool' ? s.bootcNodePools : s.machineConfigPools;
  return list.find((o) => o.metadata.name === name)?.metadata.uid;
}

/** The exit code `apply` ends with for an error or a result (for the status's lastExitCode). */
export function exitOf(outcome: { result: ApplyResult } | { error: unknown }): number {
  return 'result' in outcome ? 0 : exitCodeOf(outcome.error);
}
