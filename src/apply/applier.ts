/**
 * The applier: carries a Plan out through a ClusterDriver (docs/design.md §7 "Pools and waves").
 * Driver-agnostic: `bootcplan apply` runs it against a real cluster, `bootcplan rehearse`
 * and the tests against the simulated one, with the same code.
 *
 * This file is the orchestrator; each job has a file, and they share one ApplyContext
 * (context.ts): the lock (lease.ts), the progress record (progress-book.ts), writing the
 * plan's changes (changes.ts), the gates around waves (wave-gates.ts), the bootc pool
 * runner (bootc-pool.ts), the MCO pool runner (mco-pool.ts), and what is reported without
 * being driven (observe.ts). Reading the cluster: views.ts.
 *
 * Order: MachineConfiguration steps (each `waitAfter` honoured) -> ControlPlaneMachineSet
 * -> the targets of every bootc pool (so all bootc nodes stage in parallel, once) -> pools
 * in ascending priority, each wave by wave.
 *
 * Safety rules, in the order they are checked:
 * - a plan with an error diagnostic is never applied (exit 6 for a control-plane
 *   replacement the spec does not allow, 1 otherwise);
 * - one apply at a time: a Lease held through the driver (exit 4 for the second one);
 * - before any write and before each wave, plan again from the cluster as it is now; if
 *   the remaining work differs from the saved plan, stop (exit 3) and list the difference;
 * - a node is cordoned only while the pool's unavailable count, with it, stays within
 *   maxUnavailable (nodes already out of service count; they need no extra budget);
 * - bootc waves may be regrouped (soft reboots together, once staging shows which nodes
 *   can soft-reboot) but never enlarged, and only among the saved plan's remaining nodes
 *   (composeBootcWave);
 * - a failed node (Degraded, or not back in time) halts the pool: it is paused, the
 *   remaining waves are left untouched (exit 5);
 * - progress is written ahead of every disruptive step, and a rerun reads the cluster's
 *   own state before acting, so an interrupted apply resumes where it stopped and never
 *   reboots a node twice (a node already on the target is never asked to reboot).
 */
import { setMaxListeners } from 'node:events';
import type { Plan, PlanChange } from '../plan/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { InputError, InterruptedError, type LockHeldError, OutsideWindowError } from '../base/errors.ts';
import { checkApplicable } from '../plan/saved/verify.ts';
import { AbortedError, type ClusterDriver } from './ports/driver.ts';
import { ROLLBACK_MARKED, type EventSink } from './ports/events.ts';
import type { ApplyTimeouts } from './engine/context.ts';
import type { PoolContext as ApplyContext } from './pools/context.ts';
import type { Policy } from './ports/policy.ts';
import { Lease } from './engine/lease.ts';
import { ProgressBook } from './engine/progress-book.ts';
import { applyChange } from './engine/changes.ts';
import { checkPolicy, checkStale, StepWait } from './gates/wave-gates.ts';
import type { ApplyOutcome, ApplyResult, StepWaitInfo } from './engine/result.ts';
import { runBootcPool } from './pools/bootc-pool.ts';
import { runBootcSlots } from './pools/bootc-slots.ts';
import { repauseLeftovers, runMcoPool } from './pools/mco-pool.ts';
import { observeStaging } from './pools/observe.ts';
import type { HealthSource } from './ports/health.ts';
import { preflightGate, type GateFailure } from './gates/health-gates.ts';
import { SilenceKeeper, type SilencePort } from './gates/silences.ts';
import { onBatchGateFailure, onGateFailure } from './gates/gate-failure.ts';
import { checkHolds, finishRollback, startRollback } from './gates/holds.ts';
import { interruptible, stopSafely, stopReasonOf, type Position } from './engine/interrupt.ts';
import { NODE_WAIT_SECONDS } from '../domain/bootc-daemon.ts';

export type { ApplyTimeouts } from './engine/context.ts';
export type { ApplyOutcome, ApplyResult, StepWaitInfo } from './engine/result.ts';

export const DEFAULT_TIMEOUTS: ApplyTimeouts = {
  lockTtlSeconds: 300,
  stagingSeconds: 600,
  nodeSeconds: NODE_WAIT_SECONDS,
  budgetSeconds: 1800,
  waitAfterSeconds: 900,
  mcoStartSeconds: 300,
};

export interface ApplyOptions {
  plan: Plan;
  /** Plans again from a snapshot with the spec the plan was made from. */
  replan: (snapshot: ClusterSnapshot) => Plan;
  driver: ClusterDriver;
  /** Who applies: recorded in the lock. */
  holder: string;
  /** Advance at most one wave, then stop (apply --step). */
  step?: boolean;
  onEvent?: EventSink;
  timeouts?: Partial<ApplyTimeouts>;
  /**
   * Policy gate evaluated before the first write and before each wave (maintenance
   * windows): a message stops the apply with PolicyBlockedError (exit 6).
   */
  policy?: Policy;
  /** Wait this long for a lock someone else holds (apply --lock-timeout); default 0: exit 4 at once. */
  lockTimeoutSeconds?: number;
  /** Told while waiting for the lock: who holds it. */
  onLockWait?: (held: LockHeldError, waitedSeconds: number) => void;
  /**
   * A stop request (the CLI aborts it on SIGTERM/SIGINT, with the signal name as the reason; the
   * fleet runner with 'batch-timeout', recorded as that in the progress record):
   * the apply stops at the next safe point, cleans up (src/apply/engine/interrupt.ts), releases the
   * lock and throws InterruptedError.
   */
  signal?: AbortSignal;
  /**
   * The node this apply runs on (NODE_NAME in the apply Job): taken last among the remaining
   * nodes of its bootc pool, whatever the plan's order (its drain evicts this apply; docs/design.md §7
   * "Stopping"). Same nodes, same wave sizes: bootc-pool.ts composeBootcWave, bootc-slots.ts.
   */
  selfNode?: string | null;
  /**
   * apply --retry (docs/apply.md "Holds"): lift the holds this plan's targets meet (a pool held
   * for its target after a failed health check or a rollback) instead of exiting 5.
   */
  retry?: boolean;
  /**
   * Measures the plan's health checks (docs/apply.md "Health gates"): the kube source against a
   * live cluster, the simulated one in a rehearsal. Required when the plan has checks; closed
   * when the apply ends.
   */
  health?: HealthSource;
  /** The Alertmanager the plan's silences are made on (docs/apply.md "Silences"); required when the plan has silences. */
  silences?: SilencePort;
}

export async function apply(o: ApplyOptions): Promise<ApplyResult> {
  if (o.plan.healthChecks?.length && !o.health) {
    // Only a caller's mistake: every command that applies passes a source.
    throw new InputError(
      `plan ${o.plan.id} has health checks and no health source to measure them`,
      [],
      'this is a bug in the caller: apply needs ApplyOptions.health for a plan with health checks',
    );
  }
  if (o.plan.silences?.length && !o.silences) {
    throw new InputError(
      `plan ${o.plan.id} has silences and no Alertmanager port to make them`,
      [],
      'this is a bug in the caller: apply needs ApplyOptions.silences for a plan with silences',
    );
  }
  return underLock(o, runStep);
}

/**
 * A fleet canary's batch gate failed after its apply of `o.plan` finished (docs/fleets.md
 * "Health gates"): the failing check's onFailure is carried out on the canary as its own apply
 * carries it out after a wave, under the canary's lock and on its run record
 * (gate-failure.ts onBatchGateFailure). Never returns: HealthCheckFailedError (held),
 * RolledBackError (rolled back), or why neither could run.
 */
export async function applyBatchGateFailure(o: ApplyOptions, f: GateFailure): Promise<never> {
  return underLock({ ...o, step: false, retry: false }, (ctx) => onBatchGateFailure(ctx, f));
}

/**
 * Takes the lock, makes the apply's context and runs `body` in it; on any early end, what was
 * unpaused is paused again and a stop is recorded (src/apply/engine/interrupt.ts); the lock is released.
 */
async function underLock<T>(o: ApplyOptions, body: (ctx: ApplyContext, t0: number) => Promise<T>): Promise<T> {
  checkApplicable(o.plan);
  const raw = o.driver;
  const timeouts = { ...DEFAULT_TIMEOUTS, ...(o.timeouts ?? {}) };
  const t0 = raw.clock.now();
  // Every wait of the apply ends at once on a stop request or when the lock is lost.
  const halt = new AbortController();
  o.signal?.addEventListener('abort', () => halt.abort(), { once: true });
  const lease = await Lease.acquire(
    raw,
    { holder: o.holder, planId: o.plan.id, ttlSeconds: timeouts.lockTtlSeconds },
    { timeoutSeconds: o.lockTimeoutSeconds ?? 0, onWait: o.onLockWait, signal: o.signal },
    () => halt.abort(),
  ).catch((err) => {
    if (err instanceof AbortedError && o.signal?.aborted) throw new InterruptedError(signalName(o.signal), 'while waiting for the lock: nothing was written');
    throw err;
  });
  const where: Position = { pool: null, wave: null };
  const driver = interruptible(raw, halt.signal);
  // The context running now: the plan's, or the rollback's it started (onFailure: rollback),
  // whose record and unpaused MCO pools a stop must clean up.
  const current = {} as { ctx: ApplyContext };
  let released = false;
  // One keeper for the apply, a rollback it runs included: the silences end with the apply whatever ends it.
  const keeper =
    o.plan.silences?.length && o.silences
      ? new SilenceKeeper({
          plan: o.plan,
          port: o.silences,
          clock: raw.clock,
          emit: (e) => current.ctx.emit(e),
          // The run record lists them for `status` (docs/apply.md "Silences"); a lost lock writes nothing more.
          changed: async (now) => {
            const book = current.ctx.book;
            if (lease.isLost || released || !book.loaded) return;
            if (now.length) book.record.silences = now;
            else delete book.record.silences;
            await book.save();
          },
        })
      : null;
  const ctx = applyContext({ ...o, driver }, timeouts, t0, lease, where, halt.signal, current, keeper);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // one per staging watch (observeStaging)
  void lease.keepRenewed(stop.signal);
  const extending = keeper?.keepExtended(stop.signal).catch(() => undefined);
  const observer = observeStaging(ctx, stop.signal).catch(() => undefined);
  try {
    const result = await body(ctx, t0);
    stop.abort();
    await observer;
    released = await lease.release();
    return result;
  } catch (err) {
    // Ended early with the lock still ours: MCO pools it unpaused are paused again; after a
    // stop request, where it stopped is recorded too (a lost lock writes nothing more).
    const stoppedBy = o.signal?.aborted && (err instanceof AbortedError || err instanceof InterruptedError) ? o.signal : null;
    const error = err instanceof AbortedError ? (lease.lostError ?? err) : err;
    if (!lease.isLost) await stopSafely(current.ctx, raw, where, stoppedBy ? stopReasonOf(stoppedBy) : null).catch(() => undefined);
    if (stoppedBy) throw new InterruptedError(signalName(stoppedBy), stoppedAt(where, current.ctx !== ctx));
    throw error;
  } finally {
    stop.abort();
    // Done, halted, stopped or failed: no silence outlives the apply (a crash leaves them to lapse within the TTL).
    if (keeper) {
      await extending;
      await keeper.endAll().catch(() => undefined);
      keeper.close();
    }
    o.health?.close?.();
    if (!released) {
      try {
        await lease.release();
      } catch {
        // a killed or disconnected process cannot release; the Lease expires
      }
    }
  }
}

function signalName(signal: AbortSignal): 'SIGINT' | 'SIGTERM' {
  return signal.reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM';
}

function stoppedAt(where: Position, inRollback: boolean): string {
  const at = where.pool ? `in pool ${where.pool}${where.wave !== null ? `, wave ${where.wave}` : ''}` : 'before the first wave';
  // The plan's own apply again is held (docs/apply.md "Continuing a rollback"): the rollback is what continues.
  const next = inRollback
    ? 'the rollback is incomplete and the pools stay held: bootcplan plan --rollback plans the rest of it'
    : 'run apply again to continue';
  return `${at}${inRollback ? ' of the rollback' : ''}: stopped at a safe point, MCO pools bootcplan had unpaused are paused again, the lock is released; ${next}`;
}

function applyContext(
  o: ApplyOptions,
  timeouts: ApplyTimeouts,
  t0: number,
  lease: Lease,
  where: Position,
  stop: AbortSignal,
  current: { ctx: ApplyContext },
  silences: SilenceKeeper | null,
): ApplyContext {
  const { plan, driver } = o;
  const pools = [...plan.pools].sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
  const now = () => driver.clock.now();
  return (current.ctx = {
    plan,
    pools,
    driver,
    timeouts,
    replan: o.replan,
    policy: o.policy,
    step: !!o.step,
    selfNode: o.selfNode ?? null,
    retry: !!o.retry,
    lease,
    book: new ProgressBook(driver, plan, pools),
    health: o.health ?? null,
    silences,
    stop,
    now,
    // A rollback in this apply (onFailure: rollback): its own context, the same lock and clock.
    runRollback: (rollback, replan) =>
      runPlan(
        applyContext({ ...o, plan: rollback, replan, policy: undefined, step: false, retry: false }, timeouts, t0, lease, where, stop, current, silences),
        t0,
      ),
    emit: (e) => {
      if (e.type === 'wave-start') Object.assign(where, { pool: e.pool, wave: e.wave });
      else if (e.type === 'pool-start') Object.assign(where, { pool: e.pool, wave: null });
      // A rollback's waves and nodes are marked as such (drawn apart, counted apart).
      const mark = plan.rollback && ROLLBACK_MARKED.has(e.type) ? { rollback: true as const } : {};
      o.onEvent?.({ t: Math.round((now() - t0) * 1000) / 1000, ...e, ...mark });
    },
    wavesRun: 0,
    inFlight: new Set(),
    lastAvailability: new Map(),
    mcoPhase: new Map(),
  });
}

// ----------------------------------------------------------------- main flow

/**
 * apply --step (docs/design.md §3): outside the window or while the wave's nodes are still staging
 * there is nothing it may do now; that is an outcome (`waiting`, exit 0), not an error. A full
 * apply keeps exit 6 for the window.
 */
async function runStep(ctx: ApplyContext, t0: number): Promise<ApplyResult> {
  try {
    return await runPlan(ctx, t0);
  } catch (err) {
    if (!ctx.step) throw err;
    let wait: StepWaitInfo;
    if (err instanceof OutsideWindowError) wait = { reason: 'outside-window', message: err.message, nextWindow: err.nextWindow };
    else if (err instanceof StepWait) wait = { reason: err.reason, message: err.message, nextWindow: null };
    else throw err;
    ctx.emit({ type: 'wait', address: err instanceof StepWait ? `pool ${err.pool}` : 'maintenance window', message: `nothing to do now: ${wait.message}` });
    return { outcome: 'waiting', planId: ctx.plan.id, durationSeconds: ctx.now() - t0, wavesRun: ctx.wavesRun, blocked: [], resumed: ctx.book.resumed, wait };
  }
}

async function runPlan(ctx: ApplyContext, t0: number): Promise<ApplyResult> {
  const { plan, book } = ctx;
  await book.load();
  const lifted = checkHolds(ctx, ctx.retry);
  await repauseLeftovers(ctx);
  const blocked = ctx.pools.flatMap((p) => p.nodes.filter((n) => n.wave === null).map((n) => `${p.name}/${n.name}`));
  const result = (outcome: ApplyOutcome): ApplyResult => ({
    outcome,
    planId: plan.id,
    durationSeconds: ctx.now() - t0,
    wavesRun: ctx.wavesRun,
    blocked,
    resumed: book.resumed,
  });
  ctx.emit({ type: 'start', message: plan.id, resumed: book.resumed });
  if (!book.record.done) startRollback(ctx);
  if (book.record.done) {
    // Holds lifted by --retry on a finished run (a fleet canary held at its batch gate) stay lifted.
    if (lifted) await book.save();
    ctx.emit({ type: 'done', message: 'this plan was applied already' });
    return result('nothing-to-do');
  }
  const { fresh } = await checkStale(ctx);
  checkPolicy(ctx, null, null);
  // The Alertmanager of the silences answers, before the first write (docs/apply.md "Silences").
  await ctx.silences?.preflight();
  // The preflight gate, before the first write (a failure halts with nothing written).
  const preflight = await preflightGate(ctx);
  if (preflight) await onGateFailure(ctx, null, preflight);

  if (!book.record.changesApplied) {
    await book.recordOrigins();
    await book.save(); // the pools' origins and the run chain, before the run's first write
    const pre = plan.changes.filter((c) => !isMcoPoolChange(ctx, c)).sort((a, b) => a.order - b.order);
    const rank = (c: PlanChange) => (c.kind === 'MachineConfiguration' ? 0 : c.kind === 'ControlPlaneMachineSet' ? 1 : c.pool ? 3 : 2);
    pre.sort((a, b) => rank(a) - rank(b) || a.order - b.order);
    for (const c of pre) await applyChange(ctx, c, fresh);
    book.record.changesApplied = true;
    await book.save();
  }

  for (const pool of ctx.pools) {
    const pp = book.pool(pool.name);
    if (pp.done) continue;
    const r = pool.backend === 'bootc' ? await (pool.rollout === 'slots' ? runBootcSlots : runBootcPool)(ctx, pool) : await runMcoPool(ctx, pool);
    if (r === 'stepped') {
      ctx.emit({ type: 'step-end', pool: pool.name, message: 'advanced one wave; run apply again to continue (bootcplan status shows what is left)' });
      await book.save();
      return result('stepped');
    }
    pp.done = true;
    await book.save();
    await ctx.silences?.poolDone(pool.name);
    ctx.emit({ type: 'pool-done', pool: pool.name });
  }
  finishRollback(ctx);
  book.record.done = true;
  await book.save();
  ctx.emit({ type: 'done', message: blocked.length ? `${blocked.length} blocked node(s) were left as they are: ${blocked.join(', ')}` : undefined });
  return result('done');
}

function isMcoPoolChange(ctx: ApplyContext, c: PlanChange): boolean {
  return !!c.pool && ctx.pools.some((p) => p.name === c.pool && p.backend === 'mco');
}
