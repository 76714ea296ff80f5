/**
 * One cluster of a fleet batch, as the fleet runner (src/fleet/runner.ts) carries it out
 * (docs/design.md §10; docs/fleets.md "fleet apply"): its fleet progress record read (a rerun skips a
 * cluster this fleet plan finished, a canary never), its apply run to the end, waiting for its
 * maintenance window to open when outside it, and its record written at each step. Its end is
 * done, failed (the error's exit code), or stopped by the runner: timed out or interrupted.
 */
import type { Clock } from '../apply/ports/driver.ts';
import { AbortedError, isoOf } from '../apply/ports/driver.ts';
import type { ApplyEvent } from '../apply/ports/events.ts';
import type { GateFailure, GateOutcome } from '../apply/gates/health-gates.ts';
import { EXIT, InterruptedError, OutsideWindowError, exitCodeOf, messageOf } from '../base/errors.ts';
import type { PlanHealthCheck } from '../plan/types.ts';
import type { FleetClusterPlan, FleetPlan } from './plan-types.ts';
import type { FleetProgressRecord } from './record.ts';
import type { FleetClusterOutcome, UnstampedFleetEvent } from './run-events.ts';
import { exitOfSignal, type FleetClusterResult } from './run-result.ts';

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
  /**
   * A canary's failed batch gate carried out on it (docs/fleets.md "Health gates"): the failing
   * check's onFailure, as its own apply carries it out (src/apply/applier.ts
   * applyBatchGateFailure). Never resolves: RolledBackError (rolled back), HealthCheckFailedError
   * (held), or why it could not act. Absent: the session cannot act on the cluster.
   */
  onGateFailure?(failure: GateFailure, signal: AbortSignal, onEvent: (e: ApplyEvent) => void): Promise<never>;
  close?(): void;
}

/** What a cluster's run needs of the fleet run around it. */
export interface ClusterRunContext {
  plan: FleetPlan;
  clock: Clock;
  /** Opens one cluster; a rejection is that cluster's failure (exit code of the error). */
  open: (cluster: FleetClusterPlan) => Promise<FleetClusterSession>;
  /** The stop request of the fleet run (reason 'SIGINT' or 'SIGTERM'). */
  signal: AbortSignal | undefined;
  /** The least wait before a cluster outside its window is tried again (default 10 s). */
  windowRetrySeconds: number | undefined;
  /** The clock's time the fleet run started. */
  t0: number;
  /** Seconds since the fleet run started. */
  since(): number;
  emit(e: UnstampedFleetEvent): void;
  /** Records the cluster's end in its result and says so (`fleet-cluster-done`). */
  finish(r: FleetClusterResult, batch: number, outcome: FleetClusterOutcome, exitCode: number, message: string | null): void;
  /** Clusters an earlier run of this fleet plan finished (their own record), and when (null: unknown). */
  finishedEarlier: Map<string, number | null>;
}

/**
 * Runs cluster `c` of `batch` to its end, recorded in `r` through `ctx.finish`. `stop` aborts
 * when its batch runs out of time (`timedOut()` then answers true) or on a stop request.
 */
export async function runCluster(
  ctx: ClusterRunContext,
  c: FleetClusterPlan,
  r: FleetClusterResult,
  batch: number,
  stop: AbortSignal,
  timedOut: () => boolean,
): Promise<void> {
  r.startedAt = ctx.since();
  let session: FleetClusterSession | null = null;
  let record: FleetProgressRecord | null = null;
  try {
    session = await ctx.open(c);
    const read = await session.readRecord();
    const before = read && isOwnRecord(ctx, read, c) ? read : null;
    const finishedBefore = before !== null && (before.outcome === 'done' || before.outcome === 'nothing-to-do');
    if (finishedBefore) ctx.finishedEarlier.set(c.name, recordTime(ctx, before.finishedAt));
    // A canary is never skipped on its record: its own apply runs, and answers from its own progress.
    if (finishedBefore && !c.canary) {
      const at = ctx.finishedEarlier.get(c.name) ?? null;
      ctx.finish(r, batch, 'already-done', EXIT.ok, `finished by an earlier run of this fleet plan${at !== null ? ` at ${isoOf(at)}` : ''}`);
      r.startedAt = null;
      if (at !== null) r.finishedAt = Math.round((at - ctx.t0) * 1000) / 1000;
      return;
    }
    const startedAt = before ? before.startedAt : isoOf(ctx.clock.now());
    if (!c.plan) throw new Error(`internal: cluster ${c.name} is run without a plan`); // the runner runs planned clusters only
    record = {
      fleetPlanId: ctx.plan.id,
      fleet: ctx.plan.fleet.name,
      cluster: c.name,
      batch,
      planId: c.plan.id,
      outcome: 'running',
      exitCode: null,
      message: null,
      startedAt,
      updatedAt: startedAt,
      finishedAt: null,
    };
    await writeRecord(ctx, session, record, {});
    const outcome = await applyUntilDone(ctx, session, c, batch, r, stop, record);
    await writeRecord(ctx, session, record, { outcome, exitCode: EXIT.ok, finishedAt: isoOf(ctx.clock.now()) });
    ctx.finish(r, batch, outcome, EXIT.ok, null);
  } catch (err) {
    // Stopped by the runner (the batch's time ran out, or a stop request) rather than failed on its own.
    const stopped = stop.aborted && (err instanceof InterruptedError || err instanceof AbortedError);
    const { outcome, exitCode } = stopped
      ? timedOut()
        ? { outcome: 'timed-out' as const, exitCode: EXIT.halted }
        : { outcome: 'interrupted' as const, exitCode: exitOfSignal(ctx.signal) }
      : { outcome: 'failed' as const, exitCode: exitCodeOf(err) };
    const message = outcome === 'timed-out' ? 'its batch ran out of time; its apply stopped at a safe point (a rerun resumes it)' : messageOf(err);
    if (session && record) await writeRecord(ctx, session, record, { outcome, exitCode, message, finishedAt: isoOf(ctx.clock.now()) });
    ctx.finish(r, batch, outcome, exitCode, message);
  } finally {
    session?.close?.();
  }
}

/**
 * The cluster's fleet record is this run's only when it names this fleet plan, this fleet, this
 * cluster and this cluster's plan: a record copied from another cluster (or two Fleet entries
 * reaching one API server), or written by hand with the public fleet plan id, counts for nothing.
 */
function isOwnRecord(ctx: ClusterRunContext, rec: FleetProgressRecord, c: FleetClusterPlan): boolean {
  return rec.fleetPlanId === ctx.plan.id && rec.fleet === ctx.plan.fleet.name && rec.cluster === c.name && rec.planId === c.plan?.id;
}

/** A record's time in clock seconds: never later than now (a clock ahead, or a hand-made record); null when unparseable. */
function recordTime(ctx: ClusterRunContext, iso: string | null): number | null {
  const at = iso ? Date.parse(iso) / 1000 : NaN;
  return Number.isFinite(at) ? Math.min(at, ctx.clock.now()) : null;
}

/** Applies; outside the window, waits for it to open and applies again. */
async function applyUntilDone(
  ctx: ClusterRunContext,
  s: FleetClusterSession,
  c: FleetClusterPlan,
  batch: number,
  r: FleetClusterResult,
  stop: AbortSignal,
  record: FleetProgressRecord,
): Promise<'done' | 'nothing-to-do'> {
  for (let attempt = 1; ; attempt++) {
    // Stopped while the cluster was being opened or its record read: nothing is started.
    if (stop.aborted) throw new AbortedError('stopped before its apply started');
    ctx.emit({ type: 'fleet-cluster-start', batch, cluster: c.name, attempt });
    try {
      return await s.apply(stop, (event) => ctx.emit({ type: 'fleet-cluster-event', cluster: c.name, event }));
    } catch (err) {
      if (!(err instanceof OutsideWindowError) || !err.nextWindow || stop.aborted) throw err;
      const opens = Date.parse(err.nextWindow.start) / 1000;
      const wait = Math.max(ctx.windowRetrySeconds ?? 10, Number.isFinite(opens) ? opens - ctx.clock.now() : 0);
      ctx.emit({ type: 'fleet-cluster-waiting', batch, cluster: c.name, until: err.nextWindow.start, message: err.message });
      await writeRecord(ctx, s, record, { outcome: 'waiting', message: err.message });
      const from = ctx.clock.now();
      try {
        await ctx.clock.sleep(wait, stop);
      } finally {
        r.waitedSeconds += ctx.clock.now() - from;
      }
      await writeRecord(ctx, s, record, { outcome: 'running', message: null });
    }
  }
}

/** Saves the cluster's fleet progress record; a failure is a warning (a rerun applies it again, and its apply finds it done). */
async function writeRecord(ctx: ClusterRunContext, s: FleetClusterSession, record: FleetProgressRecord, change: Partial<FleetProgressRecord>): Promise<void> {
  Object.assign(record, change, { updatedAt: isoOf(ctx.clock.now()) });
  try {
    await s.writeRecord({ ...record });
  } catch (err) {
    ctx.emit({ type: 'fleet-record-warning', cluster: record.cluster, message: `the fleet progress record could not be written: ${messageOf(err)}` });
  }
}
