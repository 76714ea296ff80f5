/**
 * The fleet runner (DESIGN §10; README "Fleets: fleet apply"): carries a FleetPlan out batch by
 * batch. Pure orchestration: the clock and each cluster's work (open it, read and write its
 * fleet progress record, apply its plan) are passed in, so `fleet apply` (real clusters) and
 * `fleet rehearse` (simulated ones) run the same rules.
 *
 * Rules, in the order they apply:
 * - a fleet plan with an error, or whose canary cannot be applied, is refused before anything
 *   runs (exit 1);
 * - batches run one after another, in the plan's order; the clusters of a batch at the same
 *   time, never more than strategy.maxConcurrency.resolved at once;
 * - a cluster whose fleet progress record says this fleet plan finished it is not applied again
 *   (`already-done`); the record counts only when it names this fleet plan, this fleet, this
 *   cluster and this cluster's plan id, and its times count no later than now (unparseable: not
 *   at all); a canary is never skipped on its record; any other cluster is applied, and its own
 *   apply resumes from (or answers nothing-to-do by) its own progress record;
 * - outside its maintenance window a cluster is not failed: it waits for the window to open and
 *   is applied again then; its batch is not finished meanwhile;
 * - a failure is any other end of a cluster's apply than done / nothing to do: error (1),
 *   stale plan (3), lock held (4), halted (5), policy (6), including a cluster that could not be
 *   opened or whose record could not be read (1);
 * - a batch not finished after batchTimeoutSeconds: its unfinished clusters are stopped at their
 *   next safe point (their apply's AbortSignal, src/apply/interrupt.ts) and recorded
 *   `timed-out` (exit 5); then `abort` stops the fleet, `continue` goes on with the next batch;
 * - a failed or timed-out canary stops the fleet whatever the action: no later batch starts;
 * - a failed non-canary cluster follows batchTimeoutAction as TALM does: `abort` stops the fleet
 *   once its batch has finished (the batch's other clusters are not cut), `continue` goes on;
 * - batchSoakSeconds pass between two batches (measured from the end of the earlier one, so a
 *   rerun does not soak again what was soaked already), not after the last;
 * - a stop request (`signal`, SIGINT/SIGTERM) stops the clusters in flight at their next safe
 *   point (`interrupted`) and starts nothing more.
 * Exit code: the worst of the clusters' (fleetExitCode).
 */
import type { Clock } from '../apply/driver.ts';
import type { FleetProgressRecord } from './record.ts';
import { AbortedError, isoOf } from '../apply/driver.ts';
import type { FleetBatch, FleetClusterPlan, FleetPlan } from './plan-types.ts';
import { EXIT, InputError, InterruptedError, OutsideWindowError, exitCodeOf, type ExitCode } from '../base/errors.ts';
import type { ApplyEvent } from '../apply/events.ts';
import type { FleetClusterOutcome, FleetEvent, FleetHaltReason, UnstampedFleetEvent } from './run-events.ts';
import type { PlanHealthCheck } from '../plan/types.ts';
import type { GateOutcome } from '../apply/health-gates.ts';
import { runBatchGates } from './gates.ts';

/** One cluster as the runner drives it (`fleet apply`: its driver; `fleet rehearse`: its simulation). */
export interface FleetClusterSession {
  readRecord(): Promise<FleetProgressRecord | null>;
  writeRecord(r: FleetProgressRecord): Promise<void>;
  /**
   * Applies the cluster's plan to the end. Stops at its next safe point when `signal` aborts
   * (rejecting); OutsideWindowError (with its next window) means: try again when it opens.
   */
  apply(signal: AbortSignal, onEvent: (e: ApplyEvent) => void): Promise<'done' | 'nothing-to-do'>;
  /**
   * A canary's batch gate (src/fleet/gates.ts): measures `checks` once more, as a gate of its
   * own. Absent: the session cannot measure health checks (a canary with checks then fails it).
   */
  verify?(checks: readonly PlanHealthCheck[], signal: AbortSignal, onEvent: (e: ApplyEvent) => void): Promise<GateOutcome>;
  close?(): void;
}

export interface FleetRunOptions {
  plan: FleetPlan;
  clock: Clock;
  /** Opens one cluster; a rejection is that cluster's failure (exit code of the error). */
  open: (cluster: FleetClusterPlan) => Promise<FleetClusterSession>;
  onEvent?: (e: FleetEvent) => void;
  /** Stop request (reason 'SIGINT' or 'SIGTERM', as for apply). */
  signal?: AbortSignal;
  /** The least wait before a cluster outside its window is tried again (default 10 s). */
  windowRetrySeconds?: number;
}

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
export const EXIT_SEVERITY: readonly ExitCode[] = [EXIT.sigint, EXIT.sigterm, EXIT.error, EXIT.policy, EXIT.halted, EXIT.locked, EXIT.stale, EXIT.changes, EXIT.ok];

/** The worst of `codes` by EXIT_SEVERITY (an unknown code counts as 1); 0 for none. */
export function worstExitCode(codes: Iterable<number>): ExitCode {
  let worst: ExitCode = EXIT.ok;
  for (const c of codes) {
    const known = EXIT_SEVERITY.find((x) => x === c) ?? EXIT.error;
    if (EXIT_SEVERITY.indexOf(known) < EXIT_SEVERITY.indexOf(worst)) worst = known;
  }
  return worst;
}

/** Throws when a fleet plan must not be applied: an error of its own, or a canary that cannot roll. */
export function checkFleetApplicable(plan: FleetPlan): void {
  const errors = plan.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length) throw new InputError(`fleet plan ${plan.id} has ${errors.length} error${errors.length === 1 ? '' : 's'} and cannot be applied`, errors, 'fix the Fleet, plan it again (bootcplan fleet plan), and apply the new fleet plan');
  const byName = new Map(plan.clusters.map((c) => [c.name, c]));
  for (const b of plan.batches) {
    for (const name of b.clusters) {
      const c = byName.get(name);
      if (!c || !c.plan || c.error || c.batch !== b.index) {
        throw new InputError(`fleet plan ${plan.id}: batch ${b.index} names cluster "${name}", which has no plan it can roll`, [], 'bootcplan never writes such a fleet plan: plan the fleet again instead of editing the file');
      }
    }
  }
  for (const name of plan.strategy.canaries) {
    const c = byName.get(name);
    if (c && (c.error || !c.plan || c.plan.diagnostics.some((d) => d.severity === 'error'))) {
      throw new InputError(`canary cluster "${name}" has no plan it can roll (${c.error?.message ?? 'its plan has errors'}): the fleet cannot be applied`, [], c.error?.hint ?? 'fix that cluster (or take it out of strategy.canaries), plan the fleet again, and apply the new fleet plan');
    }
  }
}

/** Runs the fleet. Throws only for a plan that must not be applied; everything else is in the result. */
export async function runFleet(o: FleetRunOptions): Promise<FleetRunResult> {
  checkFleetApplicable(o.plan);
  const run = new FleetRun(o);
  return run.run();
}

interface BatchEnd { failed: string[]; timedOut: string[]; interrupted: boolean; endedAt: number }

class FleetRun {
  private readonly t0: number;
  private readonly results = new Map<string, FleetClusterResult>();
  private readonly batches: FleetBatchResult[];
  private halted: FleetRunResult['halted'] = null;
  /** Clusters an earlier run of this fleet plan finished (their own record), and when (null: unknown). */
  private readonly finishedEarlier = new Map<string, number | null>();

  constructor(private readonly o: FleetRunOptions) {
    this.t0 = o.clock.now();
    for (const c of o.plan.clusters) {
      const unplanned = c.batch === null && (!!c.error || !c.plan || c.plan.diagnostics.some((d) => d.severity === 'error'));
      this.results.set(c.name, {
        name: c.name, canary: c.canary, batch: c.batch,
        outcome: c.batch !== null ? 'not-started' : unplanned ? 'unplanned' : 'unchanged',
        exitCode: unplanned ? EXIT.error : EXIT.ok,
        startedAt: null, finishedAt: null, waitedSeconds: 0,
        message: unplanned ? (c.error?.message ?? 'its plan has errors') : null,
      });
    }
    this.batches = o.plan.batches.map((b) => ({ index: b.index, kind: b.kind, clusters: [...b.clusters], startedAt: null, finishedAt: null, soakSeconds: 0, status: 'not-started' }));
  }

  private since(): number {
    return Math.round((this.o.clock.now() - this.t0) * 1000) / 1000;
  }

  private emit(e: UnstampedFleetEvent): void {
    this.o.onEvent?.({ t: this.since(), ...e } as FleetEvent);
  }

  async run(): Promise<FleetRunResult> {
    const { plan } = this.o;
    this.emit({ type: 'fleet-start', fleetPlanId: plan.id, batches: plan.batches.length, clusters: plan.clusters.length });
    let lastEnd: number | null = null;
    for (let i = 0; i < plan.batches.length; i++) {
      const batch = plan.batches[i];
      if (lastEnd !== null && !(await this.soak(plan.batches[i - 1].index, batch.index, lastEnd))) break;
      if (i > 0 && !(await this.batchGate(plan.batches[i - 1]))) break;
      if (this.o.signal?.aborted) {
        this.halt('interrupted', batch.index, null, `stopped by ${signalName(this.o.signal)} before batch ${batch.index}`);
        break;
      }
      const end = await this.runBatch(batch);
      lastEnd = end.endedAt;
      if (this.stopAfter(batch, end)) break;
    }
    const exitCode = worstExitCode([...this.results.values()].map((r) => r.exitCode));
    this.emit({ type: 'fleet-done', exitCode, halted: this.halted?.reason ?? null });
    return {
      fleetPlanId: plan.id, fleet: plan.fleet.name, startedAt: isoOf(this.t0), durationSeconds: this.since(), exitCode, halted: this.halted,
      batches: this.batches, clusters: plan.clusters.map((c) => this.results.get(c.name)!),
    };
  }

  /** Whether the fleet stops after `batch` (and why, recorded in `halted`). */
  private stopAfter(batch: FleetBatch, end: BatchEnd): boolean {
    const action = this.o.plan.strategy.batchTimeoutAction;
    if (end.interrupted) {
      this.halt('interrupted', batch.index, null, `stopped by ${signalName(this.o.signal!)} in batch ${batch.index}`);
      return true;
    }
    const bad = [...end.failed, ...end.timedOut];
    if (batch.kind === 'canary' && bad.length) {
      this.halt('canary-failed', batch.index, bad[0], `canary ${bad[0]} ${end.failed.length ? `failed: ${this.results.get(bad[0])!.message ?? 'its apply failed'}` : 'did not finish within batchTimeoutSeconds'}; no other cluster was started`);
      return true;
    }
    if (action === 'continue') return false;
    if (end.timedOut.length) {
      this.halt('batch-timeout', batch.index, null, `batch ${batch.index} did not finish within ${this.o.plan.strategy.batchTimeoutSeconds} s (${end.timedOut.join(', ')} stopped at a safe point); batchTimeoutAction is abort`);
      return true;
    }
    if (end.failed.length) {
      this.halt('cluster-failed', batch.index, end.failed[0], `${end.failed.join(', ')} failed in batch ${batch.index}; batchTimeoutAction is abort`);
      return true;
    }
    return false;
  }

  /** After a canary batch soaked: its canaries' batch gates (src/fleet/gates.ts); false when the fleet stops. */
  private async batchGate(prev: FleetBatch): Promise<boolean> {
    const signal = this.o.signal ?? new AbortController().signal;
    try {
      const failed = await runBatchGates({
        plan: this.o.plan, batch: prev, signal, emit: (e) => this.emit(e),
        finished: (name) => ['done', 'nothing-to-do', 'already-done'].includes(this.results.get(name)!.outcome),
        verifier: async (c) => {
          const session = await this.o.open(c);
          return { verify: session.verify ? (checks, sig, onEvent) => session.verify!(checks, sig, onEvent) : null, close: () => session.close?.() };
        },
      });
      if (!failed) return true;
      this.finish(this.results.get(failed.cluster)!, prev.index, 'failed', EXIT.halted, failed.message);
      this.halt('canary-failed', prev.index, failed.cluster, `${failed.message}; no other cluster was started`);
    } catch (err) {
      if (!this.o.signal?.aborted) throw err;
      this.halt('interrupted', prev.index, null, `stopped by ${signalName(this.o.signal)} during the batch gate after batch ${prev.index}`);
    }
    return false;
  }

  private halt(reason: FleetHaltReason, batch: number, cluster: string | null, message: string): void {
    this.halted = { reason, batch, cluster, message };
    this.emit({ type: 'fleet-halted', batch, cluster, reason, message });
  }

  /** Waits what is left of batchSoakSeconds after `lastEnd`; false when a stop request ended it. */
  private async soak(batch: number, next: number, lastEnd: number): Promise<boolean> {
    const left = this.o.plan.strategy.batchSoakSeconds - (this.o.clock.now() - lastEnd);
    if (left <= 0) return true;
    this.batchResult(next).soakSeconds = Math.round(left * 1000) / 1000;
    this.emit({ type: 'fleet-soak', batch, next, seconds: Math.round(left * 1000) / 1000 });
    try {
      await this.o.clock.sleep(left, this.o.signal);
      return true;
    } catch {
      this.halt('interrupted', batch, null, `stopped by ${signalName(this.o.signal!)} while soaking after batch ${batch}`);
      return false;
    }
  }

  private async runBatch(batch: FleetBatch): Promise<BatchEnd> {
    const br = this.batchResult(batch.index);
    br.startedAt = this.since();
    this.emit({ type: 'fleet-batch-start', batch: batch.index, kind: batch.kind, clusters: [...batch.clusters] });
    const stop = new AbortController();
    let timedOut = false;
    const onSignal = () => stop.abort(this.o.signal!.reason);
    this.o.signal?.addEventListener('abort', onSignal, { once: true });
    const timer = new AbortController();
    const timeout = this.o.plan.strategy.batchTimeoutSeconds;
    if (timeout !== null) {
      this.o.clock.sleep(timeout, timer.signal).then(() => {
        timedOut = true;
        const open = batch.clusters.filter((c) => !isFinal(this.results.get(c)!.outcome));
        this.emit({ type: 'fleet-batch-timeout', batch: batch.index, clusters: open, action: this.o.plan.strategy.batchTimeoutAction });
        stop.abort('batch-timeout');
      }, () => undefined);
    }
    const queue = [...batch.clusters];
    const limit = Math.max(1, this.o.plan.strategy.maxConcurrency.resolved);
    const worker = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        if (stop.signal.aborted) this.finishUnstarted(name, batch.index, timedOut);
        else await this.runCluster(this.clusterPlan(name), batch.index, stop.signal, () => timedOut);
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
    timer.abort();
    this.o.signal?.removeEventListener('abort', onSignal);
    const outcomes = batch.clusters.map((c) => this.results.get(c)!);
    const end: BatchEnd = {
      failed: outcomes.filter((r) => r.outcome === 'failed').map((r) => r.name),
      timedOut: outcomes.filter((r) => r.outcome === 'timed-out').map((r) => r.name),
      interrupted: outcomes.some((r) => r.outcome === 'interrupted'),
      endedAt: this.o.clock.now(),
    };
    // A batch every cluster of which finished in an earlier run (a canary: and has nothing to do now) ended when the last of them did.
    const earlier = outcomes.map((r) => (r.outcome === 'already-done' || r.outcome === 'nothing-to-do' ? this.finishedEarlier.get(r.name) : undefined));
    if (outcomes.length && earlier.every((t) => t !== undefined)) end.endedAt = Math.max(...earlier.map((t) => t ?? this.t0));
    br.finishedAt = this.since();
    br.status = end.interrupted ? 'interrupted' : end.timedOut.length ? 'timed-out' : end.failed.length ? 'failed' : 'done';
    this.emit({ type: 'fleet-batch-done', batch: batch.index, failed: end.failed, timedOut: end.timedOut });
    return end;
  }

  private batchResult(index: number): FleetBatchResult {
    return this.batches.find((b) => b.index === index)!;
  }

  private clusterPlan(name: string): FleetClusterPlan {
    return this.o.plan.clusters.find((c) => c.name === name)!;
  }

  /** A cluster of a batch that was stopped before its turn came (more clusters than maxConcurrency). */
  private finishUnstarted(name: string, batch: number, timedOut: boolean): void {
    const r = this.results.get(name)!;
    if (timedOut) this.finish(r, batch, 'timed-out', EXIT.halted, 'its batch ran out of time before it started');
    else this.finish(r, batch, 'interrupted', exitOfSignal(this.o.signal), 'stopped before it started');
  }

  private finish(r: FleetClusterResult, batch: number, outcome: FleetClusterOutcome, exitCode: number, message: string | null): void {
    Object.assign(r, { outcome, exitCode, message, finishedAt: this.since() });
    this.emit({ type: 'fleet-cluster-done', batch, cluster: r.name, outcome, exitCode, message });
  }

  private async runCluster(c: FleetClusterPlan, batch: number, stop: AbortSignal, timedOut: () => boolean): Promise<void> {
    const r = this.results.get(c.name)!;
    r.startedAt = this.since();
    let session: FleetClusterSession | null = null;
    let record: FleetProgressRecord | null = null;
    try {
      session = await this.o.open(c);
      const read = await session.readRecord();
      const before = read && this.isOwnRecord(read, c) ? read : null;
      const finishedBefore = before !== null && (before.outcome === 'done' || before.outcome === 'nothing-to-do');
      if (finishedBefore) this.finishedEarlier.set(c.name, this.recordTime(before.finishedAt));
      // A canary is never skipped on its record: its own apply runs, and answers from its own progress.
      if (finishedBefore && !c.canary) {
        const at = this.finishedEarlier.get(c.name) ?? null;
        this.finish(r, batch, 'already-done', EXIT.ok, `finished by an earlier run of this fleet plan${at !== null ? ` at ${isoOf(at)}` : ''}`);
        r.startedAt = null;
        if (at !== null) r.finishedAt = Math.round((at - this.t0) * 1000) / 1000;
        return;
      }
      const startedAt = before ? before.startedAt : isoOf(this.o.clock.now());
      record = { fleetPlanId: this.o.plan.id, fleet: this.o.plan.fleet.name, cluster: c.name, batch, planId: c.plan!.id, outcome: 'running', exitCode: null, message: null, startedAt, updatedAt: startedAt, finishedAt: null };
      await this.write(session, record, {});
      const outcome = await this.applyUntilDone(session, c, batch, r, stop, record);
      await this.write(session, record, { outcome, exitCode: EXIT.ok, finishedAt: isoOf(this.o.clock.now()) });
      this.finish(r, batch, outcome, EXIT.ok, null);
    } catch (err) {
      // Stopped by the runner (the batch's time ran out, or a stop request) rather than failed on its own.
      const stopped = stop.aborted && (err instanceof InterruptedError || err instanceof AbortedError);
      const { outcome, exitCode } = stopped
        ? (timedOut() ? { outcome: 'timed-out' as const, exitCode: EXIT.halted } : { outcome: 'interrupted' as const, exitCode: exitOfSignal(this.o.signal) })
        : { outcome: 'failed' as const, exitCode: exitCodeOf(err) };
      const message = outcome === 'timed-out' ? 'its batch ran out of time; its apply stopped at a safe point (a rerun resumes it)' : (err as Error).message;
      if (session && record) await this.write(session, record, { outcome, exitCode, message, finishedAt: isoOf(this.o.clock.now()) });
      this.finish(r, batch, outcome, exitCode, message);
    } finally {
      session?.close?.();
    }
  }

  /**
   * The cluster's fleet record is this run's only when it names this fleet plan, this fleet, this
   * cluster and this cluster's plan: a record copied from another cluster (or two Fleet entries
   * reaching one API server), or written by hand with the public fleet plan id, counts for nothing.
   */
  private isOwnRecord(rec: FleetProgressRecord, c: FleetClusterPlan): boolean {
    return rec.fleetPlanId === this.o.plan.id && rec.fleet === this.o.plan.fleet.name && rec.cluster === c.name && rec.planId === c.plan?.id;
  }

  /** A record's time in clock seconds: never later than now (a clock ahead, or a hand-made record); null when unparseable. */
  private recordTime(iso: string | null): number | null {
    const at = iso ? Date.parse(iso) / 1000 : NaN;
    return Number.isFinite(at) ? Math.min(at, this.o.clock.now()) : null;
  }

  /** Applies; outside the window, waits for it to open and applies again. */
  private async applyUntilDone(s: FleetClusterSession, c: FleetClusterPlan, batch: number, r: FleetClusterResult, stop: AbortSignal, record: FleetProgressRecord): Promise<'done' | 'nothing-to-do'> {
    for (let attempt = 1; ; attempt++) {
      // Stopped while the cluster was being opened or its record read: nothing is started.
      if (stop.aborted) throw new AbortedError('stopped before its apply started');
      this.emit({ type: 'fleet-cluster-start', batch, cluster: c.name, attempt });
      try {
        return await s.apply(stop, (event) => this.emit({ type: 'fleet-cluster-event', cluster: c.name, event }));
      } catch (err) {
        if (!(err instanceof OutsideWindowError) || !err.nextWindow || stop.aborted) throw err;
        const opens = Date.parse(err.nextWindow.start) / 1000;
        const wait = Math.max(this.o.windowRetrySeconds ?? 10, Number.isFinite(opens) ? opens - this.o.clock.now() : 0);
        this.emit({ type: 'fleet-cluster-waiting', batch, cluster: c.name, until: err.nextWindow.start, message: err.message });
        await this.write(s, record, { outcome: 'waiting', message: err.message });
        const from = this.o.clock.now();
        try {
          await this.o.clock.sleep(wait, stop);
        } finally {
          r.waitedSeconds += this.o.clock.now() - from;
        }
        await this.write(s, record, { outcome: 'running', message: null });
      }
    }
  }

  /** Saves the cluster's fleet progress record; a failure is a warning (a rerun applies it again, and its apply finds it done). */
  private async write(s: FleetClusterSession, record: FleetProgressRecord, change: Partial<FleetProgressRecord>): Promise<void> {
    Object.assign(record, change, { updatedAt: isoOf(this.o.clock.now()) });
    try {
      await s.writeRecord({ ...record });
    } catch (err) {
      this.emit({ type: 'fleet-record-warning', cluster: record.cluster, message: `the fleet progress record could not be written: ${(err as Error).message}` });
    }
  }
}

function isFinal(o: FleetClusterOutcome): boolean {
  return o !== 'not-started';
}

function signalName(signal: AbortSignal | undefined): 'SIGINT' | 'SIGTERM' {
  return signal?.reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
}

function exitOfSignal(signal: AbortSignal | undefined): number {
  return signalName(signal) === 'SIGINT' ? EXIT.sigint : EXIT.sigterm;
}
