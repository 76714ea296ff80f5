/**
 * The progress model behind the apply/rehearse progress displays (src/render/events.ts):
 * per pool, nodes done of the plan's total, the current wave, elapsed and an ETA. Pure: it
 * reads the plan and the applier's typed events (src/apply/ports/events.ts); time is the events'
 * `t` (seconds since the apply started) or a `now` the caller passes in.
 *
 * Nodes done / total: the total is the pool's scheduled nodes in the plan (never the nodes of
 * the waves started so far, the old "112/114 of 300" count); a node is done when bootcplan
 * uncordons it, or when its wave ends (a node an administrator had cordoned stays cordoned);
 * the waves of a resumed apply that an earlier run finished count with the plan's sizes.
 *
 * The ETA rule (docs/apply.md "Progress"): the plan's estimate gives every wave a slot, from the end of
 * the wave before it (or the start of its pool) to its own end, with the same arithmetic as
 * the plan's estimate (src/render/timeline.ts: staging wait, soak, the slowest node), so the
 * slots of all waves add up to the plan's estimate. Each wave that ends in this run is
 * observed over the same slot (from the previous wave-end, or the pool-start, to its
 * wave-end). The ratio r = sum of observed / sum of estimated slots of the finished waves of
 * the pool (of all pools while the pool has none; 1 before any wave ended). A pool's ETA is
 * r x (the rest of the slot in progress, never below 0, plus the slots of its later waves);
 * the whole ETA is the sum over the pools not done. A halted pool has no ETA.
 */
import type { ApplyEvent } from '../apply/ports/events.ts';
import type { Plan } from '../plan/types.ts';
import { buildTimeline } from './timeline.ts';

/** What the progress display needs from the plan. */
export interface ProgressPlan {
  estimatedSeconds: number;
  pools: { name: string; nodes: number; waveNodes: number[]; slots: number[] }[];
}

/** The plan's pools with waves: their scheduled nodes and their waves' estimated slots. */
export function progressPlan(plan: Plan): ProgressPlan {
  const tl = buildTimeline(plan, { maxRows: 1 });
  const pools: ProgressPlan['pools'] = [];
  for (const pool of plan.pools ?? []) {
    const waves = Array.isArray(pool?.waves) ? pool.waves : [];
    if (!waves.length) continue;
    const lane = tl.pools.find((l) => l.name === pool.name);
    const slots = waves.map((_, i) => {
      const w = lane?.waves[i];
      const prev = i === 0 ? lane?.start : lane?.waves[i - 1]?.end;
      const v = w && prev !== undefined ? w.end - prev : 0;
      return Number.isFinite(v) && v > 0 ? v : 0;
    });
    const waveNodes = waves.map((w) => (Array.isArray(w) ? w.length : 0));
    pools.push({ name: pool.name, nodes: waveNodes.reduce((s, n) => s + n, 0), waveNodes, slots });
  }
  const est = Number(plan.summary?.estimatedSeconds);
  return { estimatedSeconds: Number.isFinite(est) ? est : 0, pools };
}

/** A finished wave: its slot as the plan estimated it and as it was observed. */
export interface WaveTiming {
  estimated: number;
  observed: number;
}

/** Observed / estimated over the finished waves; null when nothing with an estimate ended yet. */
export function observedRatio(finished: readonly WaveTiming[]): number | null {
  let est = 0,
    obs = 0;
  for (const f of finished) {
    if (!(f.estimated > 0) || !Number.isFinite(f.observed)) continue;
    est += f.estimated;
    obs += Math.max(0, f.observed);
  }
  return est > 0 ? obs / est : null;
}

/**
 * Seconds left for a pool: `slots` are the estimated slots of its waves not finished yet, the
 * first one in progress (or next) since `intoCurrent` seconds; every slot scaled by `ratio`.
 */
export function remainingSeconds(slots: readonly number[], intoCurrent: number, ratio: number): number {
  return remainingFrom(slots, suffixSums(slots), 0, intoCurrent, ratio);
}

/** after[i] = slots[i] + ... + slots[n-1] (after[n] = 0). */
function suffixSums(slots: readonly number[]): number[] {
  const after = new Array<number>(slots.length + 1).fill(0);
  for (let i = slots.length - 1; i >= 0; i--) after[i] = after[i + 1] + slots[i];
  return after;
}

/** `remainingSeconds` of slots[from..] in constant time, with the suffix sums. */
function remainingFrom(slots: readonly number[], after: readonly number[], from: number, intoCurrent: number, ratio: number): number {
  if (from >= slots.length) return 0;
  return Math.max(0, slots[from] * ratio - Math.max(0, intoCurrent)) + after[from + 1] * ratio;
}

export type PoolStatus = 'waiting' | 'rolling' | 'done' | 'halted' | 'stepped';

export interface PoolProgress {
  name: string;
  status: PoolStatus;
  /** Scheduled nodes of the pool in the plan; null without a plan. */
  total: number | null;
  /** Nodes that ran the target at the end of this run's events (see the file comment). */
  done: number;
  /** The last wave started (0 before the first), of `waves`. */
  wave: number;
  waves: number;
  startedAt: number | null;
  endedAt: number | null;
  /** Soaking until then (events' clock), after a `soak` event. */
  soakUntil: number | null;
  /** When the last wave started. */
  waveStartedAt: number | null;
  /** The slot in progress started here: the last wave-end, or the pool-start. */
  slotStart: number | null;
  lastFinished: number;
  finished: WaveTiming[];
  /** The finished waves' slots added up, as `observedRatio` counts them. */
  sums: WaveTiming;
  /** Nodes in flight and their last step. */
  active: Map<string, string>;
  staged: number;
  staging: number;
  failed: string[];
  doneNodes: Set<string>;
  /** Nodes of waves that never started in this run (finished by an earlier run). */
  skipped: number;
  seenWaves: Set<number>;
  waveNames: Map<number, string[]>;
  slots: number[];
  /** Suffix sums of `slots`. */
  after: number[];
  waveNodes: number[];
}

const num = (v: unknown, d = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);

/** Folds events into per-pool progress; `eta` reads it at any moment. */
export class ProgressModel {
  readonly pools = new Map<string, PoolProgress>();
  /** The latest event time. */
  t = 0;
  constructor(readonly plan: ProgressPlan | null = null) {
    for (const p of plan?.pools ?? []) this.pool(p.name);
  }

  update(e: ApplyEvent): void {
    this.t = Math.max(this.t, num(e.t));
    const p = 'pool' in e && e.pool !== undefined ? this.pool(String(e.pool)) : null;
    if (!p) return;
    const t = num(e.t, this.t);
    const node = 'node' in e && e.node !== undefined ? String(e.node) : null;
    switch (e.type) {
      case 'pool-start':
        p.status = 'rolling';
        p.waves = num(e.waves, p.waves);
        p.startedAt = t;
        p.slotStart = t;
        break;
      case 'wave-start':
        this.waveStart(p, num(e.wave), num(e.waves, p.waves), Array.isArray(e.nodes) ? e.nodes.map(String) : [], t);
        break;
      case 'wave-end':
        this.waveEnd(p, num(e.wave), t);
        break;
      case 'soak':
        p.soakUntil = t + num(e.seconds);
        break;
      case 'stage-start':
        p.staging++;
        break;
      case 'staged':
        p.staged++;
        p.staging = Math.max(0, p.staging - 1);
        break;
      case 'cordon':
      case 'drain-done':
      case 'booted':
        if (node) p.active.set(node, e.type);
        break;
      case 'reboot':
        if (node) p.active.set(node, `reboot:${String(e.kind)}`);
        break;
      case 'uncordon':
        if (node) {
          p.active.delete(node);
          p.doneNodes.add(node);
        }
        break;
      case 'node-failed':
        if (node) {
          p.failed.push(node);
          p.active.delete(node);
        }
        break;
      case 'halt':
        p.status = 'halted';
        p.endedAt = t;
        break;
      case 'step-end':
        if (p.status === 'rolling') p.status = 'stepped';
        p.endedAt = t;
        break;
      case 'pool-done':
        p.status = 'done';
        p.endedAt = t;
        p.active.clear();
        if (p.total !== null) p.skipped = Math.max(0, p.total - p.doneNodes.size);
        break;
    }
  }

  private waveStart(p: PoolProgress, k: number, waves: number, names: string[], t: number): void {
    if (p.status === 'waiting') {
      p.status = 'rolling';
      p.startedAt ??= t;
      p.slotStart ??= t;
    }
    for (let j = 1; j < k; j++) {
      if (p.seenWaves.has(j)) continue;
      p.seenWaves.add(j);
      p.skipped += p.waveNodes[j - 1] ?? 0;
    }
    p.seenWaves.add(k);
    p.wave = k;
    p.waves = waves;
    p.waveStartedAt = t;
    p.waveNames.set(k, names);
  }

  private waveEnd(p: PoolProgress, k: number, t: number): void {
    for (const n of p.waveNames.get(k) ?? [])
      if (!p.failed.includes(n)) {
        p.doneNodes.add(n);
        p.active.delete(n);
      }
    const est = p.slots[k - 1];
    if (est !== undefined && p.slotStart !== null) {
      const w = { estimated: est, observed: t - p.slotStart };
      p.finished.push(w);
      if (w.estimated > 0 && Number.isFinite(w.observed)) {
        p.sums.estimated += w.estimated;
        p.sums.observed += Math.max(0, w.observed);
      }
    }
    p.lastFinished = Math.max(p.lastFinished, k);
    p.slotStart = t;
  }

  pool(name: string): PoolProgress {
    let p = this.pools.get(name);
    if (!p) {
      const planned = this.plan?.pools.find((x) => x.name === name);
      p = {
        name,
        status: 'waiting',
        total: planned ? planned.nodes : null,
        done: 0,
        wave: 0,
        waves: planned?.waveNodes.length ?? 0,
        startedAt: null,
        endedAt: null,
        soakUntil: null,
        waveStartedAt: null,
        slotStart: null,
        lastFinished: 0,
        finished: [],
        sums: { estimated: 0, observed: 0 },
        active: new Map(),
        staged: 0,
        staging: 0,
        failed: [],
        doneNodes: new Set(),
        skipped: 0,
        seenWaves: new Set(),
        waveNames: new Map(),
        slots: planned?.slots ?? [],
        after: suffixSums(planned?.slots ?? []),
        waveNodes: planned?.waveNodes ?? [],
      };
      this.pools.set(name, p);
    }
    return p;
  }

  /** Nodes done of a pool (never more than its total). */
  done(p: PoolProgress): number {
    const d = p.skipped + p.doneNodes.size;
    return p.total === null ? d : Math.min(p.total, d);
  }

  /** The ratio the ETA scales the estimate by, for a pool (see the file comment). */
  ratio(p: PoolProgress | null): number {
    // observedRatio over the running sums (constant time per redraw)
    const own = p ? observedRatio([p.sums]) : null;
    if (own !== null) return own;
    const all = [...this.pools.values()].reduce((a, x) => ({ estimated: a.estimated + x.sums.estimated, observed: a.observed + x.sums.observed }), {
      estimated: 0,
      observed: 0,
    });
    return observedRatio([all]) ?? 1;
  }

  /** Seconds left for one pool at `now`; null when halted or unknown (no plan). */
  poolEta(p: PoolProgress, now = this.t): number | null {
    if (p.status === 'done') return 0;
    if (p.status === 'halted' || !p.slots.length) return null;
    const r = this.ratio(p);
    if (p.status === 'waiting') return remainingFrom(p.slots, p.after, 0, 0, r);
    const next = p.wave > p.lastFinished ? p.wave : p.lastFinished + 1;
    return remainingFrom(p.slots, p.after, next - 1, now - (p.slotStart ?? now), r);
  }

  /** Seconds left for the whole plan; null when a pool halted or there is no plan. */
  eta(now = this.t): number | null {
    if (!this.plan) return null;
    let sum = 0;
    for (const p of this.pools.values()) {
      const e = this.poolEta(p, now);
      if (e === null) return null;
      sum += e;
    }
    return sum;
  }
}
