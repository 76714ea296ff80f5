/**
 * A rehearsal: the applier run against a simulated cluster built from a snapshot, with
 * the plan's (or given) phase durations and optional faults. Same engine, same events,
 * same errors as `apply`; the result adds per-wave times and the most nodes of each
 * pool that were out of service at any instant. It says what happened; the exit code an
 * error stands for is the CLI's (base/errors.ts `exitCodeOf`).
 */
import type { BootcOperatorAbilities } from '../domain/bootc-daemon.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { apply, type ApplyTimeouts } from '../apply/applier.ts';
import { checkApplicable } from '../plan/saved/verify.ts';
import type { ApplyEvent } from '../apply/ports/events.ts';
import { OutsideWindowError, RolloutHaltedError, messageOf } from '../base/errors.ts';
import { windowPolicy } from '../apply/ports/policy.ts';
import { openWindowAt, type WindowSpec } from '../domain/windows.ts';
import type { Policy } from '../apply/ports/policy.ts';
import { SimCluster, type FaultOptions } from './cluster.ts';
import { SimHealthSource, type SimHealthOptions } from './health.ts';
import { SimAlertmanager } from './alertmanager.ts';
import type { JitterOptions } from './jitter.ts';

export interface RehearsalWave {
  /** A wave of a rollback (its events carry `rollback: true`; docs/apply.md "Rollback"). */
  rollback?: true;
  wave: number;
  /** seconds since the start */
  start: number;
  end: number | null;
  nodes: string[];
}

/** A health gate as the rehearsal ran it (docs/apply.md "Health gates"). */
interface RehearsalGate {
  point: 'preflight' | 'afterWave' | 'afterNode' | 'batch';
  pool: string | null;
  wave: number | null;
  node?: string;
  /** Seconds since the start. */
  start: number;
  end: number | null;
  result: 'passed' | 'failed' | 'stopped';
  /** The failing check, and what it saw. */
  check?: string;
  observed?: string;
  /** The gate's checks on trial (mode: observe) and the verdicts they would have given (never acted on). */
  observing?: { check: string; result: 'passed' | 'failed'; observed: string }[];
}

export interface RehearsalPool {
  /** The rollback's waves of the pool, apart from its forward waves (an entry of its own). */
  rollback?: true;
  name: string;
  backend: string;
  maxUnavailable: number;
  peakUnavailable: number;
  waves: RehearsalWave[];
  failedNodes: string[];
}

/**
 * A wait for a maintenance window: the policy refused to start (or to start the next wave, the
 * overrun rule) and the rehearsal waited for the next window, as apply --step in a CronJob or
 * fleet apply does (docs/apply.md "Rehearsal and maintenance windows"). Seconds since the start.
 */
export interface RehearsalWindowWait {
  start: number;
  end: number;
  /** The pool and wave it waited before (or inside: window-closed), or null before the first write. */
  pool: string | null;
  wave: number | null;
  /**
   * outside-window: before a write or a wave, no window open; wave-would-overrun: the wave's
   * estimate did not fit what was left; window-closed: the window closed while nodes of the
   * admitted wave waited to start (docs/apply.md "Maintenance windows inside a wave").
   */
  reason: 'outside-window' | 'wave-would-overrun' | 'window-closed';
  message: string;
  /** When the window it waited for opened (ISO, UTC) and its time zone. */
  opens: string;
  timezone: string;
}

/** The windows a rehearsal kept: when it started (ISO, UTC), the rule, the windows, its waits. */
export interface RehearsalWindows {
  start: string;
  rule: string;
  windows: { schedule: string; duration: string; timezone: string }[];
  waits: RehearsalWindowWait[];
  /** Seconds spent waiting for windows (part of durationSeconds). */
  waitedSeconds: number;
}

/** The rule the rehearsal keeps, in words (docs/design.md §4 maintenanceWindows; src/domain/schedule.ts gateWave). */
const WINDOW_RULE =
  'apply starts only inside a maintenance window, a wave starts only if its estimate fits in what is left of the open window, and no node is cordoned after the window closed (the nodes started finish); otherwise the rehearsal waits for the next window, as apply --step in a CronJob (or fleet apply) does';

export interface Rehearsal {
  planId: string;
  /** The maintenance windows kept (absent when the spec has none). */
  windows?: RehearsalWindows;
  durationSeconds: number;
  /** The plan's estimate (same duration model), for comparison. */
  estimatedSeconds: number;
  halted: boolean;
  /** Why the rehearsal stopped early (halt, stale plan), or null. */
  stopped: string | null;
  durations: PhaseDurations;
  faults: FaultOptions | null;
  /** Per-node duration jitter (rehearse --jitter), or null. */
  jitter?: JitterOptions | null;
  /**
   * A plan with pools in slots is rehearsed a second time with those pools in waves (the same
   * order and batches, the same durations, jitter and faults): the gain slots bring. Null otherwise.
   */
  wavesComparison?: { durationSeconds: number; estimatedSeconds: number; stopped: string | null } | null;
  reboots: { soft: number; hard: number; failed: number };
  /** The most reboots of one node (a rollback takes a node back: at most 2). */
  maxRebootsPerNode?: number;
  /** The rollback the rehearsal ran (a rollback plan, or onFailure: rollback), or null. */
  rollback?: RehearsalRollback | null;
  pools: RehearsalPool[];
  /** The health gates in the order they ran (absent when the plan has no checks). */
  gates?: RehearsalGate[];
  /** The health faults asked for (--fail-check, --fail-check-rate), when any. */
  healthFaults?: { failChecks: string[]; failRate: number; seed: number } | null;
  events: ApplyEvent[];
}

/** A rollback in a rehearsal: when, why, how many nodes in how many waves, the most out of service. */
interface RehearsalRollback {
  start: number;
  end: number | null;
  why: string;
  nodes: number;
  waves: number;
  peakUnavailable: number;
}

interface RehearseInput {
  plan: Plan;
  replan: (s: ClusterSnapshot) => Plan;
  snapshot: ClusterSnapshot;
  durations?: PhaseDurations;
  /** What the simulated bootc-operator can do; default the installed one (the plan's planner input must agree). */
  bootcOperator?: BootcOperatorAbilities;
  faults?: FaultOptions | null;
  jitter?: JitterOptions | null;
  timeouts?: Partial<ApplyTimeouts>;
  onEvent?: (e: ApplyEvent) => void;
  /** Health faults (rehearse --fail-check, --fail-check-rate); every check passes without. */
  health?: SimHealthOptions | null;
  /** The spec's maintenance windows: kept as apply keeps them (none: apply at any time). */
  windows?: readonly WindowSpec[];
  /** The virtual start, epoch seconds (default: the simulator's, sim/cluster.ts). */
  start?: number;
}

/**
 * Runs the rehearsal. A plan that must not be applied throws like apply does; an error
 * that stops the rehearsal (a stale plan, a halt) is part of the result: `stopped` is its
 * message, `halted` says whether it was a halt, and `error` is the error itself; `sim` is the
 * simulated cluster as the apply left it.
 */
export async function rehearse(input: RehearseInput): Promise<{ rehearsal: Rehearsal; error: unknown; sim: SimCluster }> {
  checkApplicable(input.plan);
  const durations = input.durations ?? input.plan.durations;
  const { sim, events, error, duration, waits, t0 } = await simulate(input, input.plan, input.replan, durations, input.onEvent);
  let wavesComparison: Rehearsal['wavesComparison'] = null;
  if (input.plan.pools.some((p) => p.rollout === 'slots')) {
    const twin = asWaves(input.plan);
    const w = await simulate(input, twin, (s) => asWaves(input.replan(s)), durations);
    wavesComparison = {
      durationSeconds: Math.round(w.duration * 1000) / 1000,
      estimatedSeconds: twin.summary.estimatedSeconds,
      stopped: w.error ? messageOf(w.error) : null,
    };
  }
  const pools: RehearsalPool[] = input.plan.pools.flatMap((p) => {
    const waves = wavesOf(events, p.name);
    const failedNodes = (back: boolean) => [
      ...new Set(events.flatMap((e) => (e.type === 'node-failed' && e.pool === p.name && !!e.rollback === back ? [e.node] : []))),
    ];
    const entry = (back: boolean): RehearsalPool => ({
      ...(back ? { rollback: true as const } : {}),
      name: p.name,
      backend: p.backend,
      maxUnavailable: p.maxUnavailable.resolved,
      peakUnavailable: sim.peakUnavailable.get(p.name) ?? 0,
      waves: waves.filter((w) => !!w.rollback === back),
      failedNodes: failedNodes(back),
    });
    // A rollback plan rehearsed alone has only rollback waves; a forward plan's rollback (onFailure) follows its own.
    return [...(input.plan.rollback ? [] : [entry(false)]), ...(waves.some((w) => w.rollback) ? [entry(true)] : [])];
  });
  const rehearsal: Rehearsal = {
    planId: input.plan.id,
    ...(input.windows?.length
      ? {
          windows: {
            start: new Date(t0 * 1000).toISOString(),
            rule: WINDOW_RULE,
            windows: input.windows.map((w) => ({ schedule: w.schedule, duration: w.duration, timezone: w.timezone ?? 'UTC' })),
            waits,
            waitedSeconds: waits.reduce((n, w) => n + (w.end - w.start), 0),
          },
        }
      : {}),
    durationSeconds: Math.round(duration * 1000) / 1000,
    estimatedSeconds: input.plan.summary.estimatedSeconds,
    halted: error instanceof RolloutHaltedError,
    stopped: error ? messageOf(error) : null,
    durations,
    faults: input.faults ?? null,
    jitter: input.jitter ?? null,
    wavesComparison,
    reboots: {
      soft: sim.reboots.filter((r) => r.kind === 'soft').length,
      hard: sim.reboots.filter((r) => r.kind === 'hard').length,
      failed: sim.reboots.filter((r) => r.failed).length,
    },
    maxRebootsPerNode: Math.max(0, ...sim.rebootCounts().values()),
    rollback: rollbackOf(events, sim),
    pools,
    events,
  };
  if (input.plan.healthChecks?.length) {
    rehearsal.gates = gatesOf(events);
    const h = input.health;
    rehearsal.healthFaults =
      h && ((h.failChecks?.length ?? 0) > 0 || (h.failRate ?? 0) > 0)
        ? { failChecks: (h.failChecks ?? []).map((r) => r.text), failRate: h.failRate ?? 0, seed: h.seed ?? 1 }
        : null;
  }
  // The simulated cluster as the rehearsal left it: a fleet's batch gate acts on it afterwards.
  return { rehearsal, error, sim };
}

/** A pool's waves from the events: forward and rollback waves apart (their numbers start at 1 each). */
function wavesOf(events: readonly ApplyEvent[], pool: string): RehearsalWave[] {
  const waves: RehearsalWave[] = [];
  for (const e of events) {
    if (!('pool' in e) || e.pool !== pool) continue;
    if (e.type === 'wave-start') waves.push({ ...(e.rollback ? { rollback: true as const } : {}), wave: e.wave, start: e.t, end: null, nodes: e.nodes });
    if (e.type === 'wave-end') {
      const w = waves.find((x) => x.wave === e.wave && x.end === null && !!x.rollback === !!e.rollback);
      if (w) w.end = e.t;
    }
  }
  return waves;
}

/** The rollback of the rehearsal, from its events and the simulator's cordon records. */
function rollbackOf(events: readonly ApplyEvent[], sim: SimCluster): RehearsalRollback | null {
  const start = events.find((e) => e.type === 'rollback-start');
  if (!start || start.type !== 'rollback-start') return null;
  const done = events.find((e) => e.type === 'rollback-done');
  const waves = events.filter((e) => e.type === 'wave-start' && e.rollback).length;
  const peak = Math.max(0, ...sim.cordons.filter((c) => c.t >= start.t && !c.wasUnavailable).map((c) => c.unavailableAfter));
  return { start: start.t, end: done ? done.t : null, why: start.message, nodes: start.nodes, waves, peakUnavailable: peak };
}

async function simulate(input: RehearseInput, plan: Plan, replan: (s: ClusterSnapshot) => Plan, durations: PhaseDurations, onEvent?: (e: ApplyEvent) => void) {
  const start = input.start === undefined ? undefined : new Date(input.start * 1000).toISOString();
  const sim = new SimCluster(input.snapshot, {
    durations,
    faults: input.faults ?? undefined,
    jitter: input.jitter ?? null,
    bootcOperator: input.bootcOperator,
    start,
  });
  const events: ApplyEvent[] = [];
  const waits: RehearsalWindowWait[] = [];
  let error: unknown = null;
  let duration: number;
  const driver = sim.driver('rehearsal');
  const t0 = driver.clock.now();
  const gate = windowPolicy(input.windows, plan);
  // The pool and wave the policy last refused (before the first write: none); a refusal
  // inside a wave that started (no wave asked, docs/apply.md "Maintenance windows inside a
  // wave") names that wave.
  let refused: { pool: string | null; wave: number | null; inWave?: true } = { pool: null, wave: null };
  const policy: Policy | undefined = gate
    ? (now, pool, wave) => {
        const r = gate(now, pool, wave);
        const open = pool && wave === null ? openWave(events, pool.name) : null;
        if (r) refused = open === null || !pool ? { pool: pool?.name ?? null, wave } : { pool: pool.name, wave: open, inWave: true };
        return r;
      }
    : undefined;
  const round = (t: number) => Math.round(t * 1000) / 1000;
  const push = (e: ApplyEvent) => {
    events.push(e);
    onEvent?.(e);
  };
  for (;;) {
    // Each apply's events count from its own start; the rehearsal's from the first.
    const base = driver.clock.now() - t0;
    try {
      await apply({
        plan,
        replan,
        driver,
        holder: 'bootcplan rehearse',
        health: plan.healthChecks?.length ? new SimHealthSource(input.health ?? {}) : undefined,
        silences: plan.silences?.length ? new SimAlertmanager(() => driver.clock.now()) : undefined,
        timeouts: input.timeouts,
        policy,
        onEvent: (e) => {
          push(base ? { ...e, t: round(e.t + base) } : e);
        },
      });
      duration = driver.clock.now() - t0;
      break;
    } catch (err) {
      const wait = err instanceof OutsideWindowError ? windowWait(err, input.windows ?? [], driver.clock.now(), t0, waits) : null;
      if (!wait) {
        error = err;
        duration = events.length ? events[events.length - 1].t : driver.clock.now() - t0;
        break;
      }
      // Apply stopped at the window (exit 6, nothing left half done); the next run starts when it opens.
      const { inWave, ...at } = refused;
      Object.assign(wait, at, inWave ? { reason: 'window-closed' } : {});
      waits.push(wait);
      push({ t: round(wait.start), type: 'wait', address: 'maintenance window', message: `${wait.message}: waiting until ${wait.opens}` });
      sim.advance(wait.end - wait.start);
    }
  }
  return { sim, events, error, duration, waits, t0 };
}

/** The wave of the pool that started and has not ended, from the events; null when none. */
function openWave(events: readonly ApplyEvent[], pool: string): number | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'wave-end' && e.pool === pool) return null;
    if (e.type === 'wave-start' && e.pool === pool) return e.wave;
  }
  return null;
}

/**
 * The wait an OutsideWindowError stands for, or null when there is none to wait for: no next
 * window, or a wave refused right at the opening of the window waited for (it never fits:
 * apply would stop with exit 6 at every window, and so does the rehearsal).
 */
function windowWait(
  err: OutsideWindowError,
  windows: readonly WindowSpec[],
  now: number,
  t0: number,
  before: readonly RehearsalWindowWait[],
): RehearsalWindowWait | null {
  const opens = err.nextWindow ? Date.parse(err.nextWindow.start) / 1000 : NaN;
  if (!err.nextWindow || !Number.isFinite(opens) || opens <= now) return null;
  const last = before[before.length - 1];
  if (last && last.end + t0 === now) return null;
  const reason = openWindowAt(windows, now * 1000) ? 'wave-would-overrun' : 'outside-window';
  return {
    start: now - t0,
    end: opens - t0,
    pool: null,
    wave: null,
    reason,
    message: err.message,
    opens: err.nextWindow.start,
    timezone: err.nextWindow.timezone,
  };
}

/** The gates from the events: each gate-start with its pass or fail (none: stopped). */
function gatesOf(events: readonly ApplyEvent[]): RehearsalGate[] {
  const out: RehearsalGate[] = [];
  for (const e of events) {
    if (e.type === 'gate-start')
      out.push({ point: e.point, pool: e.pool, wave: e.wave, ...(e.node ? { node: e.node } : {}), start: e.t, end: null, result: 'stopped' });
    else if (e.type === 'gate-observe') {
      const g = [...out]
        .reverse()
        .find((x) => x.end === null && x.point === e.point && x.pool === e.pool && x.wave === e.wave && (x.node ?? null) === (e.node ?? null));
      if (g) g.observing = [...(g.observing ?? []), { check: e.check, result: e.result, observed: e.observed }];
    } else if (e.type === 'gate-pass' || e.type === 'gate-fail') {
      const g = [...out]
        .reverse()
        .find((x) => x.end === null && x.point === e.point && x.pool === e.pool && x.wave === e.wave && (x.node ?? null) === (e.node ?? null));
      if (!g) continue;
      g.end = e.t;
      g.result = e.type === 'gate-pass' ? 'passed' : 'failed';
      if (e.type === 'gate-fail') Object.assign(g, { check: e.check, observed: e.observed });
    }
  }
  return out;
}

/**
 * The plan with its slots pools in waves, for the comparison: a slots pool's admission batches
 * are the waves the same pool would have (same order, same size), so dropping `rollout` gives
 * exactly the waves plan; its estimate is the waves estimate the planner computed beside.
 */
function asWaves(plan: Plan): Plan {
  if (!plan.pools.some((p) => p.rollout === 'slots')) return plan;
  const pools = plan.pools.map((p) => {
    if (p.rollout !== 'slots') return p;
    const { rollout: _r, wavesEstimatedSeconds, ...rest } = p;
    return { ...rest, estimatedSeconds: wavesEstimatedSeconds ?? p.estimatedSeconds };
  });
  const estimatedSeconds = pools.reduce((s, p) => s + p.estimatedSeconds, 0);
  return { ...plan, formatVersion: '1.0', pools, summary: { ...plan.summary, estimatedSeconds } };
}
