/**
 * The wave timeline model behind the HTML chart (pools x time, one bar per node from the
 * start of its drain until it is back in service). Built only from the plan: its waves and
 * its `durations`, with the same arithmetic as src/domain/timing.ts (pools one after
 * another in plan order; every bootc node stages in parallel from the start of the
 * rollout, and a bootc wave holding a node that still stages starts no earlier than
 * `stage` seconds in; a wave lasts as long as its slowest node; soak between waves), so
 * the chart ends at `plan.summary.estimatedSeconds`.
 *
 * Large plans are aggregated: one row per node while the plan is small, otherwise one
 * row per wave, otherwise one row per run of consecutive waves. Pure.
 */
import type { Plan, PlanPool, PhaseDurations, RebootKind, Backend } from '../plan/types.ts';
import { nodeWindowSeconds } from '../domain/timing.ts';
import { outOfServiceAtOnce } from '../domain/budget.ts';
import { foldNames, naturalCompare, plural } from './format.ts';

/** `staging` appears only in rehearsal timelines (src/render/rehearsal-timeline.ts). */
export type PhaseKind = 'drain' | 'stage' | 'reboot' | 'soft-reboot' | 'ready' | 'staging';

export interface Phase {
  kind: PhaseKind;
  start: number;
  end: number;
}

export interface RowSpan {
  start: number;
  /** When the slowest node of the span is back in service. */
  end: number;
  /** When the soft-rebooted nodes are back (null when none soft-reboot, or all do). */
  softEnd: number | null;
  nodes: number;
  soft: number;
  hard: number;
  unknown: number;
  /** The wave(s) this span covers. */
  waveFrom: number;
  waveTo: number;
  /** Per-node rows: drain, (stage), reboot, ready. Rehearsal wave rows: the phases of the wave's slowest node. */
  phases?: Phase[];
  /** Rehearsal wave rows of mixed waves: the phases of the slowest soft-rebooted node. */
  softPhases?: Phase[];
  /** Rehearsal per-node rows: the node's own staging (before its bar). */
  staging?: Phase;
  /** Rehearsal: nodes of the span that failed. */
  failed?: number;
}

export interface TimelineRow {
  pool: string;
  kind: 'node' | 'waves' | 'staging';
  /** Short label for the axis. */
  label: string;
  /** Longer text for a tooltip. */
  title: string;
  nodes: number;
  spans: RowSpan[];
}

interface WaveSpan {
  wave: number;
  start: number;
  end: number;
  nodes: number;
}

/** A health gate on a rehearsal's timeline: when it ran, how it ended, what it was. */
export interface TimelineGate {
  start: number;
  end: number;
  result: 'passed' | 'failed' | 'stopped';
  /** Hover text: the point, the checks or the failing check and what it saw. */
  title: string;
  /** The failing check (a failed gate only), labelled on the chart. */
  check?: string;
}

export interface PoolLane {
  /** A rollback's waves of the pool (a rehearsal: docs/apply.md "Rollback"), drawn apart. */
  rollback?: true;
  name: string;
  backend: Backend;
  controlPlane: boolean;
  start: number;
  end: number;
  soakSeconds: number;
  /** bootc staging (from the start of the rollout, in parallel for every bootc pool's unstaged nodes), shown in the first pool that waits for it. */
  staging: { start: number; end: number; nodes: number } | null;
  waves: WaveSpan[];
  rows: TimelineRow[];
  blocked: number;
  /** A rehearsal's health gates in this pool (the preflight gate in the first pool's lane). */
  gates?: TimelineGate[];
}

/** A rehearsal's wait for a maintenance window: a bar of its own on the chart, counted in the makespan. */
export interface TimelineWait {
  start: number;
  end: number;
  /** On the bar: "waited 5d7h for Sun 2026-12-13 01:00 Asia/Singapore". */
  label: string;
  /** Hover text: what it waited before, why, until when (rehearsal-windows.ts waitText). */
  title: string;
}

export interface Timeline {
  /** When a rehearsal's rollback started, and why: a rule across the chart. */
  rollbackAt?: { t: number; label: string };
  /** A rehearsal's waits for maintenance windows (docs/apply.md "Rehearsal and maintenance windows"). */
  windowWaits?: TimelineWait[];
  totalSeconds: number;
  durations: PhaseDurations;
  pools: PoolLane[];
  /** All rows, pool by pool (the lanes' rows concatenated). */
  rows: TimelineRow[];
  /** How rows were built. */
  granularity: 'node' | 'wave' | 'waves';
  nodes: number;
  waves: number;
  /** The most nodes out of service at once (domain/budget.ts outOfServiceAtOnce; a rehearsal: as measured). */
  peakUnavailable: number;
}

export interface TimelineOptions {
  /** Most bar rows (staging rows not counted); default 60. */
  maxRows?: number;
}

export function nodePhases(d: PhaseDurations, backend: Backend, reboot: RebootKind, start: number): Phase[] {
  const out: Phase[] = [];
  let t = start;
  const push = (kind: PhaseKind, len: number) => {
    if (len > 0) out.push({ kind, start: t, end: t + len });
    t += len;
  };
  push('drain', d.drain);
  if (backend === 'mco') push('stage', d.stage);
  if (reboot === 'soft') push('soft-reboot', d.softReboot);
  else push('reboot', d.reboot);
  push('ready', d.ready);
  return out;
}

export function buildTimeline(plan: Plan, opts: TimelineOptions = {}): Timeline {
  const d = plan.durations;
  const maxRows = Math.max(1, opts.maxRows ?? 60);
  const totalNodes = plan.pools.reduce((s, p) => s + p.waves.reduce((ss, w) => ss + w.length, 0), 0);
  const totalWaves = plan.pools.reduce((s, p) => s + p.waves.length, 0);
  const granularity: Timeline['granularity'] = totalNodes <= maxRows ? 'node' : totalWaves <= maxRows ? 'wave' : 'waves';
  // Nodes bootc stages before the first bootc wave: every bootc pool's unstaged scheduled nodes.
  const toStage = plan.pools.filter((p) => p.backend === 'bootc').reduce((s, p) => s + p.nodes.filter((n) => n.wave !== null && !n.staged).length, 0);

  const stagingEnd = plan.pools.some(needsStaging) ? d.stage : null;
  let t = 0;
  let stagingShown = false;
  const lanes: PoolLane[] = [];
  let peak = 0;
  for (const pool of plan.pools) {
    // The staging row goes in the first pool with waves that waits for it.
    const showStaging = !!pool.waves.length && needsStaging(pool) && !stagingShown && stagingEnd !== null;
    if (showStaging) stagingShown = true;
    const per = granularity === 'waves' && pool.waves.length ? bucketSize(plan, pool, maxRows) : 1;
    const laid = poolLane(pool, t, { d, granularity, rowsPer: per, stagingEnd, staging: showStaging ? toStage : null });
    lanes.push(laid.lane);
    t = laid.lane.end;
    peak = Math.max(peak, laid.peak);
  }
  return {
    totalSeconds: t,
    durations: d,
    pools: lanes,
    rows: lanes.flatMap((l) => l.rows),
    granularity,
    nodes: totalNodes,
    waves: totalWaves,
    peakUnavailable: peak,
  };
}

/** A bootc pool with a scheduled node that has not staged the target: its waves wait for the staging. */
function needsStaging(pool: PlanPool): boolean {
  return pool.backend === 'bootc' && pool.nodes.some((n) => n.wave !== null && !n.staged);
}

/** What laying out one pool's lane needs from the whole timeline. */
interface LaneContext {
  d: PhaseDurations;
  granularity: Timeline['granularity'];
  /** Waves per row unless granularity is 'node': 1 for 'wave', a pool's share of maxRows for 'waves'. */
  rowsPer: number;
  /** When bootc staging ends (null: no pool stages). */
  stagingEnd: number | null;
  /** The nodes to show on this lane's staging row, or null: no staging row here. */
  staging: number | null;
}

/** A pool's lane from `t0`: its waves one after another (soak between them), and its rows; `peak`: its most nodes out of service at once. */
function poolLane(pool: PlanPool, t0: number, ctx: LaneContext): { lane: PoolLane; peak: number } {
  const { d, granularity, stagingEnd } = ctx;
  const nodes = new Map(pool.nodes.map((n) => [n.name, n]));
  const lane: PoolLane = {
    name: pool.name,
    backend: pool.backend,
    controlPlane: pool.controlPlane,
    start: t0,
    end: t0,
    soakSeconds: pool.soakSeconds,
    staging: null,
    waves: [],
    rows: [],
    blocked: pool.nodes.filter((n) => n.blockedBy).length,
  };
  if (!pool.waves.length) return { lane, peak: 0 };
  const waits = needsStaging(pool);
  if (ctx.staging !== null && stagingEnd !== null) lane.staging = { start: 0, end: stagingEnd, nodes: ctx.staging };
  let t = t0;
  // The nodes already out of service stay out while the pool rolls out (domain/budget.ts).
  const peak = outOfServiceAtOnce(pool);
  const spans: RowSpan[] = [];
  const nodeRows: TimelineRow[] = [];
  pool.waves.forEach((wave, i) => {
    if (waits && stagingEnd !== null && wave.some((name) => !nodes.get(name)?.staged)) t = Math.max(t, stagingEnd);
    const start = t;
    let end = start;
    let soft = 0,
      hard = 0,
      unknown = 0;
    for (const name of wave) {
      const reboot = nodes.get(name)?.reboot ?? 'unknown';
      if (reboot === 'soft') soft++;
      else if (reboot === 'hard') hard++;
      else unknown++;
      end = Math.max(end, start + nodeWindowSeconds(d, pool.backend, reboot));
      if (granularity === 'node') nodeRows.push(nodeRow(pool, name, nodes.get(name)?.zone, i + 1, reboot, start, d));
    }
    const softEnd = soft && soft < wave.length ? start + nodeWindowSeconds(d, pool.backend, 'soft') : null;
    spans.push({ start, end, softEnd, nodes: wave.length, soft, hard, unknown, waveFrom: i + 1, waveTo: i + 1 });
    lane.waves.push({ wave: i + 1, start, end, nodes: wave.length });
    t = end;
    if (i < pool.waves.length - 1) t += pool.soakSeconds;
  });
  lane.end = t;

  if (lane.staging) lane.rows.push(stagingRow(pool.name, lane.staging));
  if (granularity === 'node') lane.rows.push(...nodeRows);
  else lane.rows.push(...waveRows(pool, spans, ctx.rowsPer));
  return { lane, peak };
}

/** One node's row: its phases from the start of its wave. */
function nodeRow(
  pool: PlanPool,
  name: string,
  zone: string | null | undefined,
  wave: number,
  reboot: RebootKind,
  start: number,
  d: PhaseDurations,
): TimelineRow {
  const phases = nodePhases(d, pool.backend, reboot, start);
  return {
    pool: pool.name,
    kind: 'node',
    label: name,
    title: `${name}${zone ? ` (${zone})` : ''}: wave ${wave}, ${reboot === 'unknown' ? 'reboot not yet known (decided once staged)' : `${reboot} reboot`}`,
    nodes: 1,
    spans: [
      {
        start,
        end: phases[phases.length - 1]?.end ?? start,
        softEnd: null,
        nodes: 1,
        soft: +(reboot === 'soft'),
        hard: +(reboot === 'hard'),
        unknown: +(reboot === 'unknown'),
        waveFrom: wave,
        waveTo: wave,
        phases,
      },
    ],
  };
}

/** bootc staging, every unstaged node in parallel from the start of the rollout. */
function stagingRow(pool: string, staging: { start: number; end: number; nodes: number }): TimelineRow {
  return {
    pool,
    kind: 'staging',
    label: 'staging',
    title: `bootc stages the new image on ${plural(staging.nodes, 'node')} in parallel from the start; waves with unstaged nodes wait for it`,
    nodes: staging.nodes,
    spans: [{ start: staging.start, end: staging.end, softEnd: null, nodes: staging.nodes, soft: 0, hard: 0, unknown: 0, waveFrom: 0, waveTo: 0 }],
  };
}

/** Consecutive waves per row so that all pools together stay within maxRows (each pool gets a share). */
function bucketSize(plan: Plan, pool: PlanPool, maxRows: number): number {
  const withWaves = plan.pools.filter((p) => p.waves.length);
  const total = withWaves.reduce((s, p) => s + p.waves.length, 0);
  const share = Math.max(1, Math.floor((maxRows * pool.waves.length) / total));
  return Math.max(1, Math.ceil(pool.waves.length / share));
}

function waveRows(pool: PlanPool, spans: RowSpan[], per: number): TimelineRow[] {
  const rows: TimelineRow[] = [];
  for (let i = 0; i < spans.length; i += per) {
    const chunk = spans.slice(i, i + per);
    const from = chunk[0].waveFrom;
    const to = chunk[chunk.length - 1].waveTo;
    const n = chunk.reduce((s, x) => s + x.nodes, 0);
    const soft = chunk.reduce((s, x) => s + x.soft, 0);
    const hard = chunk.reduce((s, x) => s + x.hard, 0);
    const unknown = chunk.reduce((s, x) => s + x.unknown, 0);
    const names = pool.waves
      .slice(from - 1, to)
      .flat()
      .sort(naturalCompare);
    rows.push({
      pool: pool.name,
      kind: 'waves',
      label: from === to ? `wave ${from}` : `waves ${from}-${to}`,
      title: `${from === to ? `wave ${from}` : `waves ${from}-${to}`}: ${plural(n, 'node')} (${soft} soft, ${hard} hard, ${unknown} not yet known): ${foldNames(names, 6)}`,
      nodes: n,
      spans: chunk,
    });
  }
  return rows;
}
