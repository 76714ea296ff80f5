/**
 * The fleet runner (docs/design.md §10; docs/fleets.md "fleet apply"): carries a FleetPlan out batch by
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
 *   next safe point (their apply's AbortSignal, src/apply/engine/interrupt.ts) and recorded
 *   `timed-out` (exit 5); then `abort` stops the fleet, `continue` goes on with the next batch;
 * - a failed or timed-out canary stops the fleet whatever the action: no later batch starts;
 * - a failed non-canary cluster follows batchTimeoutAction as TALM does: `abort` stops the fleet
 *   once its batch has finished (the batch's other clusters are not cut), `continue` goes on;
 * - batchSoakSeconds pass between two batches (measured from the end of the earlier one, so a
 *   rerun does not soak again what was soaked already), not after the last;
 * - a stop request (`signal`, SIGINT/SIGTERM) stops the clusters in flight at their next safe
 *   point (`interrupted`) and starts nothing more.
 * Exit code: the worst of the clusters' (worstExitCode, src/fleet/run-result.ts).
 */
import type { Clock } from '../apply/ports/driver.ts';
import { isoOf } from '../apply/ports/driver.ts';
import type { FleetBatch, FleetClusterPlan, FleetPlan } from './plan-types.ts';
import { EXIT, InputError } from '../base/errors.ts';
import { mustFind, mustGet } from '../base/internal.ts';
import type { FleetClusterOutcome, FleetEvent, FleetHaltReason, UnstampedFleetEvent } from './run-events.ts';
import { runBatchGates } from './gates.ts';
import { runCluster, type ClusterRunContext, type FleetClusterSession } from './cluster-run.ts';
import { exitOfSignal, signalName, worstExitCode, type FleetBatchResult, type FleetClusterResult, type FleetRunResult } from './run-result.ts';

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

/** Throws when a fleet plan must not be applied: an error of its own, or a canary that cannot roll. */
export function checkFleetApplicable(plan: FleetPlan): void {
  const errors = plan.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length)
    throw new InputError(
      `fleet plan ${plan.id} has ${errors.length} error${errors.length === 1 ? '' : 's'} and cannot be applied`,
      errors,
      'fix the Fleet, plan it again (bootcplan fleet plan), and apply the new fleet plan',
    );
  const byName = new Map(plan.clusters.map((c) => [c.name, c]));
  for (const b of plan.batches) {
    for (const name of b.clusters) {
      const c = byName.get(name);
      if (!c || !c.plan || c.error || c.batch !== b.index) {
        throw new InputError(
          `fleet plan ${plan.id}: batch ${b.index} names cluster "${name}", which has no plan it can roll`,
          [],
          'bootcplan never writes such a fleet plan: plan the fleet again instead of editing the file',
        );
      }
    }
  }
  for (const name of plan.strategy.canaries) {
    const c = byName.get(name);
    if (c && (c.error || !c.plan || c.plan.diagnostics.some((d) => d.severity === 'error'))) {
      throw new InputError(
        `canary cluster "${name}" has no plan it can roll (${c.error?.message ?? 'its plan has errors'}): the fleet cannot be applied`,
        [],
        c.error?.hint ?? 'fix that cluster (or take it out of strategy.canaries), plan the fleet again, and apply the new fleet plan',
      );
    }
  }
}

/** Runs the fleet. Throws only for a plan that must not be applied; everything else is in the result. */
export async function runFleet(o: FleetRunOptions): Promise<FleetRunResult> {
  checkFleetApplicable(o.plan);
  const run = new FleetRun(o);
  return run.run();
}

interface BatchEnd {
  failed: string[];
  timedOut: string[];
  interrupted: boolean;
  endedAt: number;
}

class FleetRun {
  private readonly t0: number;
  private readonly results = new Map<string, FleetClusterResult>();
  private readonly batches: FleetBatchResult[];
  private halted: FleetRunResult['halted'] = null;
  /** Clusters an earlier run of this fleet plan finished (their own record), and when (null: unknown). */
  private readonly finishedEarlier = new Map<string, number | null>();
  /** What each cluster's run (src/fleet/cluster-run.ts) shares of this one. */
  private readonly clusterRun: ClusterRunContext;

  constructor(private readonly o: FleetRunOptions) {
    this.t0 = o.clock.now();
    this.clusterRun = {
      plan: o.plan,
      clock: o.clock,
      open: o.open,
      signal: o.signal,
      windowRetrySeconds: o.windowRetrySeconds,
      t0: this.t0,
      since: () => this.since(),
      emit: (e) => this.emit(e),
      finish: (...args) => this.finish(...args),
      finishedEarlier: this.finishedEarlier,
    };
    for (const c of o.plan.clusters) {
      const unplanned = c.batch === null && (!!c.error || !c.plan || c.plan.diagnostics.some((d) => d.severity === 'error'));
      this.results.set(c.name, {
        name: c.name,
        canary: c.canary,
        batch: c.batch,
        outcome: c.batch !== null ? 'not-started' : unplanned ? 'unplanned' : 'unchanged',
        exitCode: unplanned ? EXIT.error : EXIT.ok,
        startedAt: null,
        finishedAt: null,
        waitedSeconds: 0,
        message: unplanned ? (c.error?.message ?? 'its plan has errors') : null,
      });
    }
    this.batches = o.plan.batches.map((b) => ({
      index: b.index,
      kind: b.kind,
      clusters: [...b.clusters],
      startedAt: null,
      finishedAt: null,
      soakSeconds: 0,
      status: 'not-started',
    }));
  }

  private since(): number {
    return Math.round((this.o.clock.now() - this.t0) * 1000) / 1000;
  }

  private emit(e: UnstampedFleetEvent): void {
    this.o.onEvent?.({ t: this.since(), ...e });
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
      fleetPlanId: plan.id,
      fleet: plan.fleet.name,
      startedAt: isoOf(this.t0),
      durationSeconds: this.since(),
      exitCode,
      halted: this.halted,
      batches: this.batches,
      clusters: plan.clusters.map((c) => this.result(c.name)),
    };
  }

  /** Whether the fleet stops after `batch` (and why, recorded in `halted`). */
  private stopAfter(batch: FleetBatch, end: BatchEnd): boolean {
    const action = this.o.plan.strategy.batchTimeoutAction;
    if (end.interrupted) {
      this.halt('interrupted', batch.index, null, `stopped by ${signalName(this.o.signal)} in batch ${batch.index}`);
      return true;
    }
    const bad = [...end.failed, ...end.timedOut];
    if (batch.kind === 'canary' && bad.length) {
      this.halt(
        'canary-failed',
        batch.index,
        bad[0],
        `canary ${bad[0]} ${end.failed.length ? `failed: ${this.result(bad[0]).message ?? 'its apply failed'}` : 'did not finish within batchTimeoutSeconds'}; no other cluster was started`,
      );
      return true;
    }
    if (action === 'continue') return false;
    if (end.timedOut.length) {
      this.halt(
        'batch-timeout',
        batch.index,
        null,
        `batch ${batch.index} did not finish within ${this.o.plan.strategy.batchTimeoutSeconds} s (${end.timedOut.join(', ')} stopped at a safe point); batchTimeoutAction is abort`,
      );
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
        plan: this.o.plan,
        batch: prev,
        signal,
        emit: (e) => this.emit(e),
        finished: (name) => ['done', 'nothing-to-do', 'already-done'].includes(this.result(name).outcome),
        verifier: async (c) => {
          const session = await this.o.open(c);
          return {
            verify: session.verify?.bind(session) ?? null,
            act: session.onGateFailure?.bind(session) ?? null,
            close: () => session.close?.(),
          };
        },
      });
      if (!failed) return true;
      this.finish(this.result(failed.cluster), prev.index, 'failed', EXIT.halted, failed.message);
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
      this.halt('interrupted', batch, null, `stopped by ${signalName(this.o.signal)} while soaking after batch ${batch}`);
      return false;
    }
  }

  private async runBatch(batch: FleetBatch): Promise<BatchEnd> {
    const br = this.batchResult(batch.index);
    br.startedAt = this.since();
    this.emit({ type: 'fleet-batch-start', batch: batch.index, kind: batch.kind, clusters: [...batch.clusters] });
    const stop = new AbortController();
    let timedOut = false;
    // Listens on o.signal only, so the reason read is that signal's.
    const onSignal = () => stop.abort(this.o.signal?.reason);
    this.o.signal?.addEventListener('abort', onSignal, { once: true });
    const timer = new AbortController();
    const timeout = this.o.plan.strategy.batchTimeoutSeconds;
    if (timeout !== null) {
      this.o.clock.sleep(timeout, timer.signal).then(
        () => {
          timedOut = true;
          const open = batch.clusters.filter((c) => !isFinal(this.result(c).outcome));
          this.emit({ type: 'fleet-batch-timeout', batch: batch.index, clusters: open, action: this.o.plan.strategy.batchTimeoutAction });
          stop.abort('batch-timeout');
        },
        () => undefined,
      );
    }
    const queue = [...batch.clusters];
    const limit = Math.max(1, this.o.plan.strategy.maxConcurrency.resolved);
    const worker = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        if (stop.signal.aborted) this.finishUnstarted(name, batch.index, timedOut);
        else await runCluster(this.clusterRun, this.clusterPlan(name), this.result(name), batch.index, stop.signal, () => timedOut);
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
    timer.abort();
    this.o.signal?.removeEventListener('abort', onSignal);
    const outcomes = batch.clusters.map((c) => this.result(c));
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

  /** The result of cluster `name`: the constructor made one for every cluster of the plan. */
  private result(name: string): FleetClusterResult {
    return mustGet(this.results, name, 'result of cluster');
  }

  private batchResult(index: number): FleetBatchResult {
    return mustFind(this.batches, (b) => b.index === index, `result of batch ${index}`);
  }

  private clusterPlan(name: string): FleetClusterPlan {
    return mustFind(this.o.plan.clusters, (c) => c.name === name, `plan of cluster ${name}`);
  }

  /** A cluster of a batch that was stopped before its turn came (more clusters than maxConcurrency). */
  private finishUnstarted(name: string, batch: number, timedOut: boolean): void {
    const r = this.result(name);
    if (timedOut) this.finish(r, batch, 'timed-out', EXIT.halted, 'its batch ran out of time before it started');
    else this.finish(r, batch, 'interrupted', exitOfSignal(this.o.signal), 'stopped before it started');
  }

  private finish(r: FleetClusterResult, batch: number, outcome: FleetClusterOutcome, exitCode: number, message: string | null): void {
    Object.assign(r, { outcome, exitCode, message, finishedAt: this.since() });
    this.emit({ type: 'fleet-cluster-done', batch, cluster: r.name, outcome, exitCode, message });
  }
}

function isFinal(o: FleetClusterOutcome): boolean {
  return o !== 'not-started';
}
