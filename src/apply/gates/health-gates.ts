/**
 * Health gates (docs/apply.md "Health gates"; docs/design.md §11): the plan's checks measured at the
 * points the spec names, and the rollout held at a gate until they pass.
 *
 * - preflight: before the run's first write, once per run record (a resumed run does not repeat
 *   it). A failure writes nothing: the cluster was unhealthy before bootcplan touched it;
 * - afterWave: after each wave's soak, the last wave of each pool included (then the pool is
 *   done only once its gate passed). The gate after wave k belongs to the run that would start
 *   wave k+1 (as the soak does), so `apply --step` runs it in the next run; the run record keeps
 *   the waves whose gate passed (PoolProgress.gatesPassed), so a resumed run re-runs exactly the
 *   gate that is due. A slots pool has no waves: its afterWave checks run once, when it is done;
 * - afterNode: after each node is back (no further node of the pool starts meanwhile; not
 *   recorded: a resumed run checks the pool at its next gate).
 * A gate measures its checks at once, each on its own interval (src/domain/health-verdict.ts);
 * it passes when all passed and fails at the first failed check, in check order. Its waits are the
 * driver clock's and its measurements get the apply's stop signal: a stop ends a gate within 2 s
 * (docs/design.md §7 "Stopping"), and the gate is simply due again.
 */
import type { PlanHealthCheck, PlanPool, GatePoint } from '../../plan/types.ts';
import { checksAt, observing, preflightChecks } from '../../plan/health.ts';
import type { Clock } from '../ports/driver.ts';
import type { HealthSource, GatePosition, Measurement } from '../ports/health.ts';
import type { UnstampedEvent } from '../ports/events.ts';
import type { GateContext } from './context.ts';
import {
  startCheck,
  reduceMeasurement,
  nextMeasurementAt,
  timeoutVerdict,
  type CheckState,
  type Verdict,
  type FailReason,
} from '../../domain/health-verdict.ts';
import { isoOf } from '../ports/driver.ts';
import { MAX_OBSERVED, MAX_OBSERVING, type ObservingVerdict } from '../../cluster/progress.ts';

/** What failed at a gate: the first failing check (in check order), why, and what it saw last. */
export interface GateFailure {
  check: PlanHealthCheck;
  reason: FailReason;
  observed: string;
  position: GatePosition;
  /** Seconds the gate ran. */
  seconds: number;
}

/** A check on trial (mode: observe) and the verdict it would have given at a gate. */
export interface ObservedVerdict {
  check: PlanHealthCheck;
  result: 'passed' | 'failed';
  reason: FailReason | null;
  observed: string;
  position: GatePosition;
}

export type GateOutcome = { passed: true; seconds: number } | { passed: false; failure: GateFailure };

/** What a gate needs; no apply context, so that a fleet's batch gate (src/fleet/) runs the same code. */
export interface GateRun {
  source: HealthSource;
  clock: Clock;
  checks: readonly PlanHealthCheck[];
  position: GatePosition;
  /** A stop: the gate's sleeps and measurements end at once (rejecting). */
  signal: AbortSignal;
  emit: (e: UnstampedEvent) => void;
}

/** A source gets requestTimeoutSeconds per measurement; one that does not answer by then and this much more is taken as timed out. */
const MEASURE_GRACE_SECONDS = 2;

const positionFields = (p: GatePosition) => ({ point: p.point, pool: p.pool, wave: p.wave, ...(p.node ? { node: p.node } : {}) });

/** The `gate-fail` event of a failure (a fleet's batch gate hands it to the canary's rollout status too). */
export function gateFailEvent(f: GateFailure): Extract<UnstampedEvent, { type: 'gate-fail' }> {
  return {
    type: 'gate-fail',
    ...positionFields(f.position),
    check: f.check.name,
    reason: f.reason,
    observed: f.observed,
    onFailure: f.check.onFailure,
    seconds: f.seconds,
  };
}

/**
 * Evaluates one gate to its verdict (see the file's header). Rejects only on a stop (or a source's
 * bug). A check on trial (mode: observe) is measured as the others are and its verdict recorded
 * (`gate-observe`) once it has one, but only the enforcing checks decide the gate; the gate waits
 * for the observing checks' verdicts too (each ends by its timeoutSeconds), so that the trial sees
 * what the enforced check would see, its time included.
 */
export async function evaluateGate(o: GateRun): Promise<GateOutcome> {
  const t0 = o.clock.now();
  const where = positionFields(o.position);
  o.emit({ type: 'gate-start', ...where, checks: o.checks.map((c) => c.name) });
  const states: CheckState[] = o.checks.map(() => startCheck(t0));
  const verdicts: Verdict[] = o.checks.map(() => ({ state: 'running' }));
  const seconds = () => Math.round((o.clock.now() - t0) * 1000) / 1000;
  const observed: ObservedVerdict[] = [];
  for (;;) {
    o.checks.forEach((c, i) => {
      const v = verdicts[i];
      if (!observing(c) || v.state === 'running' || observed.some((x) => x.check === c)) return;
      const r: ObservedVerdict =
        v.state === 'passed'
          ? { check: c, result: 'passed', reason: null, observed: v.last.observed, position: o.position }
          : { check: c, result: 'failed', reason: v.reason, observed: v.message, position: o.position };
      observed.push(r);
      o.emit({
        type: 'gate-observe',
        ...where,
        check: c.name,
        mode: 'observe',
        result: r.result,
        ...(r.reason ? { reason: r.reason } : {}),
        observed: r.observed,
        onFailure: c.onFailure,
        seconds: seconds(),
      });
    });
    const failed = verdicts.findIndex((v, i) => v.state === 'failed' && !observing(o.checks[i]));
    if (failed >= 0) {
      const v = verdicts[failed] as Extract<Verdict, { state: 'failed' }>;
      const failure: GateFailure = { check: o.checks[failed], reason: v.reason, observed: v.message, position: o.position, seconds: seconds() };
      o.emit(gateFailEvent(failure));
      return { passed: false, failure };
    }
    if (verdicts.every((v, i) => v.state === 'passed' || (v.state === 'failed' && observing(o.checks[i])))) {
      o.emit({ type: 'gate-pass', ...where, checks: o.checks.filter((c) => !observing(c)).map((c) => c.name), seconds: seconds() });
      return { passed: true, seconds: seconds() };
    }
    const now = o.clock.now();
    // Each running check's next moment: its next measurement, or its deadline when that comes first.
    const next = o.checks.map((c, i) => {
      if (verdicts[i].state !== 'running') return Infinity;
      const deadline = states[i].started + c.timeoutSeconds;
      const at = nextMeasurementAt(states[i], c);
      return at === null || Math.max(at, now) > deadline ? Math.max(deadline, now) : Math.max(at, now);
    });
    const t = Math.min(...next);
    if (t > now) await o.clock.sleep(t - now, o.signal);
    const due = o.checks.map((_, i) => i).filter((i) => next[i] <= t);
    const timedOut = due.filter((i) => {
      const at = nextMeasurementAt(states[i], o.checks[i]);
      return at === null || Math.max(at, t) > states[i].started + o.checks[i].timeoutSeconds;
    });
    for (const i of timedOut) verdicts[i] = timeoutVerdict(states[i], o.checks[i]);
    const measuring = due.filter((i) => !timedOut.includes(i));
    const got = await Promise.all(measuring.map((i) => measureOnce(o, o.checks[i])));
    measuring.forEach((i, j) => {
      const trial = observing(o.checks[i]) ? { mode: 'observe' as const } : {};
      o.emit({ type: 'gate-measure', ...where, check: o.checks[i].name, outcome: got[j].outcome, observed: got[j].observed, ...trial });
      const r = reduceMeasurement(states[i], got[j], o.checks[i]);
      states[i] = r.state;
      verdicts[i] = r.verdict;
    });
  }
}

/**
 * One measurement, bounded: the source bounds itself by requestTimeoutSeconds; a source that
 * does not answer by then (and MEASURE_GRACE_SECONDS more) gives an `error timeout` measurement.
 * A stop rejects at once, whatever the source does.
 */
async function measureOnce(o: GateRun, check: PlanHealthCheck): Promise<Measurement> {
  const own = new AbortController();
  const onStop = () => own.abort();
  o.signal.addEventListener('abort', onStop, { once: true });
  if (o.signal.aborted) own.abort();
  const bound = check.requestTimeoutSeconds + MEASURE_GRACE_SECONDS;
  const guard = o.clock
    .sleep(bound, own.signal)
    .then((): Measurement => ({ outcome: 'error', error: 'timeout', observed: `no answer within ${check.requestTimeoutSeconds} s` }));
  const measured = o.source.measure(check, o.position, own.signal);
  try {
    return await Promise.race([measured, guard]);
  } finally {
    own.abort();
    o.signal.removeEventListener('abort', onStop);
    // The loser of the race settles later, cancelled: the race has decided already.
    guard.catch(() => undefined);
    measured.catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------
// The gate points in an apply

/**
 * Runs a gate of the apply at `position` with `checks`; records the last verdict for the report,
 * and each observing check's verdict in the run record (`observing`: the last per check and pool,
 * for `status`), saved with the gate.
 */
export async function runGate(ctx: GateContext, position: GatePosition, checks: readonly PlanHealthCheck[]): Promise<GateOutcome> {
  if (!ctx.health) throw new Error(`plan ${ctx.plan.id} has health checks and the apply has no health source`);
  let seen = false;
  const emit = (e: UnstampedEvent) => {
    if (e.type === 'gate-observe') {
      seen = true;
      recordObserving(ctx, e);
    }
    ctx.emit(e);
  };
  // Alert checks leave out what bootcplan's own silences for the nodes in flight cover (src/apply/gates/silences.ts).
  const source = ctx.silences ? ctx.silences.aware(ctx.health) : ctx.health;
  const out = await evaluateGate({ source, clock: ctx.driver.clock, checks, position, signal: ctx.stop, emit });
  if (seen) await ctx.book.save();
  return out;
}

/** Keeps an observing check's verdict in the run record: one per check and pool, the newest last. */
function recordObserving(ctx: GateContext, e: Extract<UnstampedEvent, { type: 'gate-observe' }>): void {
  const rec = ctx.book.record;
  const v: ObservingVerdict = {
    check: e.check,
    pool: e.pool,
    point: e.point,
    wave: e.wave,
    node: e.node ?? null,
    result: e.result,
    observed: e.observed.slice(0, MAX_OBSERVED),
    at: nowIso(ctx),
  };
  rec.observing = [...(rec.observing ?? []).filter((x) => x.check !== v.check || x.pool !== v.pool), v].slice(-MAX_OBSERVING);
}

/** The pool's checks at `point`. */
export function poolChecks(ctx: GateContext, pool: PlanPool, point: GatePoint): PlanHealthCheck[] {
  return checksAt(ctx.plan, pool, point);
}

/**
 * The preflight gate: before the run's first write, once per run record. Returns its failure, or
 * null when it passed or has nothing to check (then the record says so and a rerun skips it).
 * A check that halted a pool in the run record this apply replaces (an `apply -f` re-planned
 * after the halt gets a new plan id, and so a new record) is measured here too, whatever its
 * `when`: the next wave must not start on the word of the checks that did not fail.
 */
export async function preflightGate(ctx: GateContext): Promise<GateFailure | null> {
  const checks = [...preflightChecks(ctx.plan), ...haltedBefore(ctx)];
  if (!checks.length || ctx.book.record.preflightPassed) return null;
  const out = await runGate(ctx, { point: 'preflight', pool: null, wave: null, node: null }, checks);
  if (!out.passed) return out.failure;
  ctx.book.record.preflightPassed = true;
  await ctx.book.save();
  return null;
}

/** The plan's checks (each entry once) that halted a pool of the replaced run record, for its pools in this plan. */
function haltedBefore(ctx: GateContext): PlanHealthCheck[] {
  const prev = ctx.book.previous;
  if (!prev) return [];
  const pre = new Set(preflightChecks(ctx.plan));
  const out: PlanHealthCheck[] = [];
  for (const [pool, pp] of Object.entries(prev.pools)) {
    const name = pp.halted?.check;
    const c = name ? (ctx.plan.healthChecks ?? []).find((x) => x.name === name && x.pools.includes(pool)) : undefined;
    if (c && !pre.has(c) && !out.includes(c)) out.push(c);
  }
  return out;
}

/**
 * The afterWave gate that is due before wave `k` of a waves pool: the one after wave k-1, when
 * its gate has not passed yet (PoolProgress.gatesPassed). Runs after the soak. Null: passed, or
 * nothing due.
 */
export async function dueWaveGate(ctx: GateContext, pool: PlanPool, k: number): Promise<GateFailure | null> {
  const checks = poolChecks(ctx, pool, 'afterWave');
  const pp = ctx.book.pool(pool.name);
  const after = Math.min(k - 1, pp.wavesDone);
  if (!checks.length || pool.rollout === 'slots' || after < 1 || (pp.gatesPassed ?? 0) >= after) return null;
  const out = await runGate(ctx, { point: 'afterWave', pool: pool.name, wave: after, node: null }, checks);
  if (!out.passed) return out.failure;
  pp.gatesPassed = after;
  await ctx.book.save();
  return null;
}

/** Whether the pool's last afterWave gate is still due (its waves are done, its gate has not passed). */
export function finalGateDue(ctx: GateContext, pool: PlanPool): boolean {
  const pp = ctx.book.pool(pool.name);
  return (
    pool.waves.length > 0 && pp.wavesDone >= pool.waves.length && (pp.gatesPassed ?? 0) < pool.waves.length && poolChecks(ctx, pool, 'afterWave').length > 0
  );
}

/** The gate after the pool's last wave (after its soak); a slots pool's only afterWave gate. */
export async function finalGate(ctx: GateContext, pool: PlanPool): Promise<GateFailure | null> {
  const n = pool.waves.length;
  const out = await runGate(ctx, { point: 'afterWave', pool: pool.name, wave: n, node: null }, poolChecks(ctx, pool, 'afterWave'));
  if (!out.passed) return out.failure;
  ctx.book.pool(pool.name).gatesPassed = n;
  await ctx.book.save();
  return null;
}

/** The afterNode gate of `node`, once it is back; null when it passed or the pool has none. */
export async function nodeGate(ctx: GateContext, pool: PlanPool, wave: number, node: string): Promise<GateFailure | null> {
  const checks = poolChecks(ctx, pool, 'afterNode');
  if (!checks.length) return null;
  const out = await runGate(ctx, { point: 'afterNode', pool: pool.name, wave, node }, checks);
  return out.passed ? null : out.failure;
}

/**
 * The afterNode gates of an MCO wave: the MCO moves a wave's nodes itself, so each node's gate
 * starts as the wave's wait sees it back (`see`), and the wave ends with all of them (`settle`:
 * the first failure in the order the nodes came back, or null). A failure stops the next unpause;
 * the nodes the MCO took already finish.
 */
export function mcoNodeGates(ctx: GateContext, pool: PlanPool, wave: number): { see(node: string): void; settle(): Promise<GateFailure | null> } {
  const checks = poolChecks(ctx, pool, 'afterNode');
  const seen = new Set<string>();
  const runs: Promise<{ failure: GateFailure | null } | { err: unknown }>[] = [];
  return {
    see(node) {
      if (!checks.length || seen.has(node)) return;
      seen.add(node);
      runs.push(
        runGate(ctx, { point: 'afterNode', pool: pool.name, wave, node }, checks).then(
          (o) => ({ failure: o.passed ? null : o.failure }),
          (err: unknown) => ({ err }),
        ),
      );
    },
    async settle() {
      for (const r of await Promise.all(runs)) {
        if ('err' in r) throw r.err;
        if (r.failure) return r.failure;
      }
      return null;
    },
  };
}

/** "after wave 2/4 of pool worker", "after node w-3 of pool worker", "before the first write". */
export function gateWhere(p: GatePosition, waves?: number): string {
  if (p.point === 'preflight') return 'before the first write';
  if (p.point === 'afterNode') return `after node ${p.node} of pool ${p.pool}`;
  if (p.point === 'batch') return "after the canary's batch";
  return `after wave ${p.wave}${waves ? `/${waves}` : ''} of pool ${p.pool}`;
}

/** The ISO time of now, for records. */
export function nowIso(ctx: GateContext): string {
  return isoOf(ctx.now());
}
