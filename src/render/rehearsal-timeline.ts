/**
 * The wave timeline of a rehearsal (`bootcplan rehearse -o html`): the same model as the
 * plan's chart (src/render/timeline.ts), but every bar comes from the rehearsal's events
 * instead of the plan's durations:
 * - a node's bar runs from its `cordon` to its `uncordon` (or `booted` when an
 *   administrator's cordon stays, or `node-failed`); its phases are drain (`cordon` ->
 *   `drain-done`), the MCO's image pull (`drain-done` -> `reboot`, when there is a gap),
 *   reboot (`reboot` -> `booted`, soft or hard as the event says) and until Ready. Events do
 *   not say when the rebooted node came back before it was Ready, so the `reboot` ->
 *   `booted` span is split with the rehearsal's phase durations: the reboot (or soft
 *   reboot) first, the rest until Ready; `booted` -> `uncordon` counts as until Ready too;
 * - staging: one row per bootc pool from its first `stage-start` to its last `staged`
 *   (and, on per-node rows, each node's own `stage-start` -> `staged`);
 * - a wave runs from its `wave-start` to its `wave-end` (open when the rehearsal stopped);
 * - each wait for a maintenance window is a bar of its own (`windows.waits`), in the makespan.
 * Large rehearsals aggregate rows like plans do: one row per node while small, otherwise
 * one row per wave, otherwise one row per run of consecutive waves. Pure.
 */
import type { Plan, PlanPool } from '../plan/types.ts';
import type { Rehearsal, RehearsalPool, RehearsalWave } from '../sim/rehearse.ts';
import type { ApplyEvent } from '../apply/ports/events.ts';
import { foldNames, naturalCompare, plural } from './format.ts';
import { waitLabel, waitText } from './rehearsal-windows.ts';
import type { Timeline, TimelineOptions, TimelineRow, RowSpan, PoolLane, Phase, TimelineGate } from './timeline.ts';

interface NodeTrack {
  stageStart?: number;
  staged?: number;
  cordon?: number;
  drainDone?: number;
  reboot?: number;
  kind?: 'soft' | 'hard';
  booted?: number;
  uncordon?: number;
  failed?: number;
}

interface NodeSpan {
  name: string;
  wave: number;
  start: number;
  end: number;
  kind: 'soft' | 'hard' | 'unknown';
  failed: boolean;
  phases: Phase[];
  staging: Phase | null;
}

/** A pool's key among the tracks: its rollback's nodes apart from its forward ones (a node may be in both). */
const trackKey = (pool: string, rollback: boolean | undefined) => (rollback ? `${pool}\u0000rollback` : pool);

function tracks(events: readonly ApplyEvent[]): Map<string, Map<string, NodeTrack>> {
  const out = new Map<string, Map<string, NodeTrack>>();
  for (const e of events) {
    if (!('node' in e) || !e.node || e.pool === null) continue;
    const key = trackKey(e.pool, 'rollback' in e ? e.rollback : undefined);
    let pool = out.get(key);
    if (!pool) out.set(key, (pool = new Map<string, NodeTrack>()));
    let t = pool.get(e.node);
    if (!t) pool.set(e.node, (t = {}));
    // The first occurrence of each step counts (a resumed wave may repeat a cordon).
    switch (e.type) {
      case 'stage-start':
        t.stageStart ??= e.t;
        break;
      case 'staged':
        t.staged ??= e.t;
        break;
      case 'cordon':
        t.cordon ??= e.t;
        break;
      case 'drain-done':
        t.drainDone ??= e.t;
        break;
      case 'reboot':
        t.reboot ??= e.t;
        t.kind ??= e.kind;
        break;
      case 'booted':
        t.booted ??= e.t;
        break;
      case 'uncordon':
        t.uncordon ??= e.t;
        break;
      case 'node-failed':
        t.failed ??= e.t;
        break;
      default:
        break;
    }
  }
  return out;
}

function nodeSpan(name: string, wave: number, t: NodeTrack, r: Rehearsal, waveEnd: number): NodeSpan | null {
  const start = t.cordon ?? t.drainDone ?? t.reboot ?? t.booted;
  if (start === undefined) return null;
  const end = t.uncordon ?? t.booted ?? t.failed ?? waveEnd;
  const phases: Phase[] = [];
  const push = (kind: Phase['kind'], a: number | undefined, b: number | undefined) => {
    if (a === undefined || b === undefined || b <= a) return;
    phases.push({ kind, start: a, end: b });
  };
  const afterDrain = t.reboot ?? t.failed ?? end;
  push('drain', start, t.drainDone ?? afterDrain);
  // MCO: the daemon pulls the image after the drain, before it reboots.
  if (t.drainDone !== undefined && t.reboot !== undefined) push('stage', t.drainDone, t.reboot);
  if (t.reboot !== undefined) {
    const back = t.booted ?? t.failed ?? end;
    const len = t.kind === 'soft' ? r.durations.softReboot : r.durations.reboot;
    const split = Math.min(back, t.reboot + len);
    push(t.kind === 'soft' ? 'soft-reboot' : 'reboot', t.reboot, split);
    push('ready', split, back);
  }
  if (t.booted !== undefined) push('ready', t.booted, end);
  // adjacent "ready" pieces become one
  const merged: Phase[] = [];
  for (const p of phases) {
    const prev = merged[merged.length - 1];
    if (prev && prev.kind === p.kind && prev.end === p.start) prev.end = p.end;
    else merged.push({ ...p });
  }
  const staging = t.stageStart !== undefined ? { kind: 'staging' as const, start: t.stageStart, end: t.staged ?? start } : null;
  return {
    name,
    wave,
    start,
    end: Math.max(start, end),
    kind: t.kind ?? 'unknown',
    failed: t.failed !== undefined,
    phases: merged,
    staging: staging && staging.end > staging.start ? staging : null,
  };
}

export function buildRehearsalTimeline(plan: Plan, r: Rehearsal, opts: TimelineOptions = {}): Timeline {
  const maxRows = Math.max(1, opts.maxRows ?? 60);
  const byPool = tracks(r.events);
  const totalNodes = r.pools.reduce((s, p) => s + p.waves.reduce((ss, w) => ss + w.nodes.length, 0), 0);
  const totalWaves = r.pools.reduce((s, p) => s + p.waves.length, 0);
  const granularity: Timeline['granularity'] = totalNodes <= maxRows ? 'node' : totalWaves <= maxRows ? 'wave' : 'waves';
  const lanes: PoolLane[] = [];
  let total = r.durationSeconds;
  for (const rp of r.pools) {
    const lane = poolLane(plan, r, rp, byPool.get(trackKey(rp.name, rp.rollback)) ?? new Map<string, NodeTrack>(), { granularity, maxRows, totalWaves });
    lanes.push(lane);
    total = Math.max(total, lane.end, lane.staging?.end ?? 0);
  }
  placeGates(r, lanes, granularity === 'node');
  const waits = (r.windows?.waits ?? []).map((w) => ({ start: w.start, end: w.end, label: waitLabel(w), title: waitText(w) }));
  for (const w of waits) total = Math.max(total, w.end);
  return {
    ...(waits.length ? { windowWaits: waits } : {}),
    totalSeconds: total,
    durations: r.durations,
    pools: lanes,
    rows: lanes.flatMap((l) => l.rows),
    granularity,
    nodes: totalNodes,
    waves: totalWaves,
    peakUnavailable: Math.max(0, ...r.pools.map((p) => p.peakUnavailable)),
    ...(r.rollback ? { rollbackAt: { t: r.rollback.start, label: `rollback: ${r.rollback.why}` } } : {}),
  };
}

/**
 * The rehearsal's health gates on their pools' lanes (the preflight gate on the first lane with
 * rows). afterNode gates only on per-node charts, or when one failed: a wave row stands for many.
 */
function placeGates(r: Rehearsal, lanes: PoolLane[], perNode: boolean): void {
  for (const g of r.gates ?? []) {
    if (g.point === 'afterNode' && !perNode && g.result !== 'failed') continue;
    const lane = g.pool === null ? lanes.find((l) => l.rows.length) : lanes.find((l) => l.name === g.pool);
    if (!lane) continue;
    const where = g.point === 'preflight' ? 'preflight gate' : g.point === 'afterNode' ? `gate after node ${g.node}` : `gate after wave ${g.wave}`;
    const gate: TimelineGate = {
      start: g.start,
      end: g.end ?? r.durationSeconds,
      result: g.result,
      title: `${where}: ${g.result}${g.check ? `: ${g.check}: ${g.observed ?? ''}` : ''}`,
      ...(g.check ? { check: g.check } : {}),
    };
    (lane.gates ??= []).push(gate);
  }
}

/** How many rows the chart may have, and so how it groups them. */
interface RowBudget {
  granularity: Timeline['granularity'];
  maxRows: number;
  totalWaves: number;
}

/** One pool of the rehearsal: its staging, its waves and its rows. */
function poolLane(plan: Plan, r: Rehearsal, rp: RehearsalPool, nodes: Map<string, NodeTrack>, rows: RowBudget): PoolLane {
  const pp = plan.pools.find((p) => p.name === rp.name);
  const lane: PoolLane = {
    ...(rp.rollback ? { rollback: true as const } : {}),
    name: rp.name,
    backend: pp?.backend ?? (rp.backend as PoolLane['backend']),
    controlPlane: pp?.controlPlane ?? false,
    start: 0,
    end: 0,
    soakSeconds: pp?.soakSeconds ?? 0,
    staging: null,
    waves: [],
    rows: [],
    blocked: pp ? pp.nodes.filter((n) => n.blockedBy).length : 0,
  };
  const { staging, staged } = poolStaging(nodes, r);
  lane.staging = staging;
  const spans: RowSpan[] = [];
  const nodeRows: TimelineRow[] = [];
  for (const w of rp.waves) {
    const waveEnd = w.end ?? r.durationSeconds;
    const ns = w.nodes.map((n) => nodeSpan(n, w.wave, nodes.get(n) ?? {}, r, waveEnd)).filter((x): x is NodeSpan => x !== null);
    const span = waveSpan(w, ns, waveEnd);
    spans.push(span);
    lane.waves.push({ wave: w.wave, start: span.start, end: span.end, nodes: w.nodes.length });
    if (rows.granularity === 'node') {
      for (const n of [...ns].sort((a, b) => a.start - b.start || naturalCompare(a.name, b.name))) nodeRows.push(nodeRow(rp.name, pp, w.wave, n));
    }
  }
  // The pool's span: its waves (staging runs in parallel for all bootc pools, its own row).
  lane.start = spans.length ? Math.min(...spans.map((s) => s.start)) : (lane.staging?.start ?? 0);
  lane.end = spans.length ? Math.max(...spans.map((s) => s.end)) : (lane.staging?.end ?? lane.start);
  if (lane.staging) {
    lane.rows.push({
      pool: rp.name,
      kind: 'staging',
      label: 'staging',
      title: `bootc staged the new image on ${plural(staged, 'node')} of pool ${rp.name} (${plural(lane.staging.nodes, 'node')} started staging), from the first stage-start to the last staged event`,
      nodes: lane.staging.nodes,
      spans: [
        { start: lane.staging.start, end: lane.staging.end, softEnd: null, nodes: lane.staging.nodes, soft: 0, hard: 0, unknown: 0, waveFrom: 0, waveTo: 0 },
      ],
    });
  }
  if (rows.granularity === 'node') lane.rows.push(...nodeRows);
  else lane.rows.push(...waveRows(rp, spans, rows));
  return lane;
}

/** Staging of a pool's nodes (bootc), from the events; `staged`: how many nodes finished it. */
function poolStaging(nodes: Map<string, NodeTrack>, r: Rehearsal): { staging: PoolLane['staging']; staged: number } {
  const stagingStarts: number[] = [];
  const stagedAt: number[] = [];
  for (const t of nodes.values()) {
    if (t.stageStart !== undefined) stagingStarts.push(t.stageStart);
    if (t.staged !== undefined) stagedAt.push(t.staged);
  }
  if (!stagingStarts.length) return { staging: null, staged: stagedAt.length };
  const end = stagedAt.length ? Math.max(...stagedAt) : r.durationSeconds;
  return { staging: { start: Math.min(...stagingStarts), end, nodes: stagingStarts.length }, staged: stagedAt.length };
}

/** A wave's span: from its start until its slowest node is back, with that node's phases. */
function waveSpan(w: RehearsalWave, ns: NodeSpan[], waveEnd: number): RowSpan {
  const soft = ns.filter((n) => n.kind === 'soft');
  const slowest = ns.reduce<NodeSpan | null>((a, b) => (!a || b.end > a.end ? b : a), null);
  const slowestSoft = soft.reduce<NodeSpan | null>((a, b) => (!a || b.end > a.end ? b : a), null);
  const failed = ns.filter((n) => n.failed).length;
  return {
    start: w.start,
    end: Math.max(waveEnd, slowest?.end ?? w.start),
    softEnd: soft.length && soft.length < w.nodes.length && slowestSoft ? slowestSoft.end : null,
    nodes: w.nodes.length,
    soft: soft.length,
    hard: ns.filter((n) => n.kind === 'hard').length,
    unknown: w.nodes.length - ns.filter((n) => n.kind !== 'unknown').length,
    waveFrom: w.wave,
    waveTo: w.wave,
    phases: slowest?.phases,
    softPhases: slowestSoft && soft.length < w.nodes.length ? slowestSoft.phases : undefined,
    failed,
  };
}

function nodeRow(pool: string, pp: PlanPool | undefined, wave: number, n: NodeSpan): TimelineRow {
  const zone = pp?.nodes.find((x) => x.name === n.name)?.zone;
  return {
    pool,
    kind: 'node',
    label: n.name,
    title: `${n.name}${zone ? ` (${zone})` : ''}: wave ${wave}, ${n.kind === 'unknown' ? 'not rebooted' : `${n.kind} reboot`}${n.failed ? ', FAILED' : ''}`,
    nodes: 1,
    spans: [
      {
        start: n.start,
        end: n.end,
        softEnd: null,
        nodes: 1,
        soft: +(n.kind === 'soft'),
        hard: +(n.kind === 'hard'),
        unknown: +(n.kind === 'unknown'),
        waveFrom: wave,
        waveTo: wave,
        phases: n.phases,
        staging: n.staging ?? undefined,
        failed: +n.failed,
      },
    ],
  };
}

/** Rows of one wave each, or of runs of consecutive waves when there are too many. */
function waveRows(rp: RehearsalPool, spans: RowSpan[], rows: RowBudget): TimelineRow[] {
  const out: TimelineRow[] = [];
  const share = Math.max(1, Math.floor((rows.maxRows * rp.waves.length) / Math.max(1, rows.totalWaves)));
  const per = rows.granularity === 'wave' ? 1 : Math.max(1, Math.ceil(rp.waves.length / share));
  for (let i = 0; i < spans.length; i += per) {
    const chunk = spans.slice(i, i + per);
    const from = chunk[0].waveFrom;
    const to = chunk[chunk.length - 1].waveTo;
    const n = chunk.reduce((s, x) => s + x.nodes, 0);
    const sum = (k: 'soft' | 'hard' | 'unknown' | 'failed') => chunk.reduce((s, x) => s + (x[k] ?? 0), 0);
    const names = rp.waves
      .slice(i, i + per)
      .flatMap((w) => w.nodes)
      .sort(naturalCompare);
    const label = from === to ? `wave ${from}` : `waves ${from}-${to}`;
    out.push({
      pool: rp.name,
      kind: 'waves',
      label,
      title: `${label}: ${plural(n, 'node')} (${sum('soft')} soft, ${sum('hard')} hard${sum('unknown') ? `, ${sum('unknown')} not rebooted` : ''}${sum('failed') ? `, ${sum('failed')} failed` : ''}): ${foldNames(names, 6)}`,
      nodes: n,
      spans: chunk,
    });
  }
  return out;
}
