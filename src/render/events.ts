/**
 * Renderers for apply/rehearse events (src/apply/ports/events.ts): NDJSON (`--json`), one line
 * per event, the CI log (`CiProgress`: one line per wave start and end, with counts, elapsed
 * and ETA, plus the events that need a reader), a live per-pool progress block for a terminal
 * (`TtyProgress`), and the progress of a long rehearsal (`RehearseProgress`). Pure: they
 * return strings; the caller writes them (progress goes to stderr). Counts and the ETA come
 * from the progress model (src/render/progress.ts); time from the events' `t` or a clock the
 * caller passes in.
 *
 * Events carry cluster data (node names, conditions, API messages): the human renderers read
 * each event through `forDisplay`, so no control sequence, bidi override or line break from
 * data reaches a terminal or a log (docs/safety.md "What is masked in outputs"); NDJSON is the event exactly, with the characters
 * a terminal acts on written as JSON escapes (`jsonText`).
 */
import type { ApplyEvent } from '../apply/ports/events.ts';
import { colors, formatDuration, foldNames, clipVisible, plural, type Colors } from './format.ts';
import { ProgressModel, type PoolProgress, type ProgressPlan } from './progress.ts';
import { forDisplay } from './secrets.ts';
import { jsonText } from '../base/json-text.ts';

export function eventToNdjson(e: ApplyEvent): string {
  return jsonText(e) + '\n';
}

/** "+1h02m03s" style offset, fixed width for aligned logs. */
export function clockOf(t: number): string {
  const s = Math.max(0, Math.round(t));
  const h = Math.floor(s / 3600),
    m = Math.floor((s % 3600) / 60),
    r = s % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(r).padStart(2, '0')}`;
}

/** One plain line per event (CI logs). */
const SILENCE_DONE = { create: 'created', extend: 'extended', expire: 'expired' } as const;

export function formatEventLine(event: ApplyEvent, opts: { color?: boolean } = {}): string {
  const e = forDisplay(event);
  const c = colors(!!opts.color);
  const where = ['pool' in e ? e.pool : undefined, 'node' in e ? e.node : undefined].filter(Boolean).join('/');
  const head = `[${clockOf(e.t)}] ${where ? where + ' ' : ''}`;
  const cond =
    'conditions' in e && e.conditions.length ? ' [' + e.conditions.map((x) => `${x.type}=${x.status}${x.reason ? `/${x.reason}` : ''}`).join(', ') + ']' : '';
  switch (e.type) {
    case 'start':
      return `[${clockOf(e.t)}] ${e.resumed ? 'resuming' : 'applying'} plan ${e.message}`;
    case 'change':
      return `${head}${c.yellow('~')} ${e.address} written${e.message ? ` (${e.message})` : ''}`;
    case 'wait':
      return `${head}waiting: ${e.message}`;
    case 'pool-start':
      return `${head}${c.bold('pool start')}: ${e.waves} wave(s); ${e.message}`.trimEnd();
    case 'wave-start':
      return `${head}${c.bold(`wave ${e.wave}/${e.waves}`)} start: ${foldNames(e.nodes)}`;
    case 'wave-end':
      return `${head}${c.green(`wave ${e.wave}/${e.waves} done`)}`;
    case 'reboot':
      return `${head}reboot (${e.kind})`;
    case 'soak':
      return `${head}soak ${formatDuration(e.seconds)} after wave ${e.wave}`;
    case 'node-failed':
      return `${head}${c.red('FAILED')}: ${e.message}${cond}`;
    case 'node-unavailable':
      return `${head}${c.yellow('out of service')} on its own${e.message ? ` (${e.message})` : ''}${cond}`;
    case 'node-available':
      return `${head}back in service`;
    case 'halt':
      return `${head}${c.red('HALTED')}: ${e.message} (pool paused)`;
    case 'step-end':
      return `${head}step done: ${e.message}`;
    case 'pool-done':
      return `${head}${c.green('pool done')}`;
    case 'done':
      return `[${clockOf(e.t)}] ${c.green('done')}${e.message ? `: ${e.message}` : ''}`;
    case 'gate-start':
      return `${gateHead(e)}health gate ${gateWhere(e)}: ${e.checks.join(', ')}`;
    case 'gate-measure':
      return `${gateHead(e)}${e.check}${e.mode ? ' (observe)' : ''}: ${e.outcome === 'pass' ? c.green('pass') : e.outcome === 'inconclusive' ? c.yellow('inconclusive') : c.red(e.outcome)} (${e.observed})`;
    case 'gate-pass':
      return `${gateHead(e)}${c.green('health gate passed')} ${gateWhere(e)} in ${formatDuration(e.seconds)}: ${e.checks.join(', ') || 'no enforcing check (observing only)'}`;
    case 'gate-fail':
      return `${gateHead(e)}${c.red('HEALTH CHECK FAILED')}: ${e.check} ${gateWhere(e)} (${e.reason}): ${e.observed}; on failure: ${e.onFailure}`;
    case 'gate-observe':
      return `${gateHead(e)}${c.yellow('observing')} ${e.check} (mode: observe, not enforced) ${gateWhere(e)}: ${e.result === 'failed' ? `${c.yellow('would have failed')} (${e.reason ?? 'condition'}; on failure once enforced: ${e.onFailure})` : 'would have passed'}${e.observed ? `: ${e.observed}` : ''}`;
    case 'rollback-start':
      return `[${clockOf(e.t)}] ${c.red(c.bold('ROLLBACK'))} of plan ${e.of} (scope ${e.scope}): ${e.nodes} node(s) of ${e.pools.join(', ')}; ${e.message}`;
    case 'rollback-done':
      return `[${clockOf(e.t)}] ${c.yellow('rolled back')}: ${e.nodes.length ? foldNames(e.nodes) : "no node, only the pools' images"}${e.message ? `; ${e.message}` : ''}`;
    case 'holds-cleared':
      return `[${clockOf(e.t)}] holds lifted (apply --retry): ${e.pools.join(', ')}; ${e.message}`;
    case 'refused':
      return `[${clockOf(e.t)}] ${c.red('refused')} (${e.reason}, exit ${e.exitCode}): ${e.message}`;
    case 'silence':
      // Which of the lifecycle this is (docs/apply.md "Silences"): created, extended, expired, or a failure.
      return `${head}silence ${e.action === 'error' ? c.red('error') : SILENCE_DONE[e.action]}${e.ids.length ? ` (${plural(e.ids.length, 'silence')})` : ''}: ${e.message}`;
    default:
      return `${head}${e.type}${'message' in e && e.message ? `: ${e.message}` : ''}`;
  }
}

type GateEvent = Extract<ApplyEvent, { type: 'gate-start' | 'gate-measure' | 'gate-pass' | 'gate-fail' | 'gate-observe' }>;
const gateHead = (e: GateEvent) => `[${clockOf(e.t)}] ${[e.pool, e.node].filter(Boolean).join('/')}${e.pool || e.node ? ' ' : ''}`;
function gateWhere(e: GateEvent): string {
  return e.point === 'preflight'
    ? 'before the first write'
    : e.point === 'afterNode'
      ? 'after the node'
      : e.point === 'batch'
        ? 'after the batch'
        : `after wave ${e.wave}`;
}

/** The event types a progress display shows as a line of their own (the rest move the counts). */
const NOTABLE = new Set<string>([
  'start',
  'change',
  'wait',
  'pool-start',
  'soak',
  'node-failed',
  'node-unavailable',
  'node-available',
  'halt',
  'step-end',
  'pool-done',
  'done',
  'gate-pass',
  'gate-fail',
  'gate-observe',
  'rollback-start',
  'rollback-done',
  'holds-cleared',
]);

/** The events the live block scrolls above it (pool start, end and soak show in the pool's line). */
const ABOVE = new Set<string>([
  'start',
  'change',
  'wait',
  'node-failed',
  'node-unavailable',
  'node-available',
  'halt',
  'step-end',
  'done',
  'gate-pass',
  'gate-fail',
  'gate-observe',
  'rollback-start',
  'rollback-done',
  'holds-cleared',
]);

export interface ProgressOptions {
  color: boolean;
  /** Terminal width (default 100). */
  width?: number;
  /** The plan's totals and estimates (`progressPlan`); without it totals and ETA read "?". */
  plan?: ProgressPlan | null;
}

/** "112/300", or "112/?" without a plan. */
function countOf(model: ProgressModel, p: PoolProgress): string {
  return `${model.done(p)}/${p.total ?? '?'}`;
}

const eta = (s: number | null): string => (s === null ? '?' : formatDuration(s));

/** The time part of a pool's line: elapsed and ETA while it rolls, the estimate while it waits. */
function poolTimes(model: ProgressModel, p: PoolProgress, now: number): string {
  const since = p.startedAt ?? now;
  switch (p.status) {
    case 'waiting':
      return `est. ${eta(model.poolEta(p, now))}`;
    case 'done':
      return `took ${formatDuration((p.endedAt ?? now) - since)}`;
    case 'halted':
      return `halted after ${formatDuration((p.endedAt ?? now) - since)}`;
    default: {
      const soak = p.soakUntil !== null && p.soakUntil > now && p.wave === p.lastFinished ? `, soak ${formatDuration(p.soakUntil - now)} left` : '';
      return `${formatDuration(now - since)} elapsed, ETA ${eta(model.poolEta(p, now))}${soak}`;
    }
  }
}

/** One pool's live line: status, bar, nodes done / total, elapsed and ETA, staging, nodes in flight. */
export function poolLine(model: ProgressModel, pool: PoolProgress, now: number, c: Colors, width = 100): string {
  const p = pool;
  const name = forDisplay(String(p.name));
  const done = model.done(pool);
  const bar = progressBar(p.total ? done / p.total : 0, 20);
  const act = [...p.active].map(([n, st]) => `${forDisplay(n)}:${forDisplay(st)}`).join(' ');
  const stage = (p.staging || p.staged) && p.status !== 'done' ? `, staged ${p.staged}${p.staging ? ` (+${p.staging} staging)` : ''}` : '';
  const status =
    p.status === 'halted'
      ? c.red('halted'.padEnd(12))
      : p.status === 'done'
        ? c.green('done'.padEnd(12))
        : p.status === 'waiting'
          ? 'waiting'.padEnd(12)
          : `wave ${p.wave}/${p.waves}`.padEnd(12);
  const line = `${c.bold(name.padEnd(12))} ${status} ${bar} ${countOf(model, pool)} nodes, ${poolTimes(model, pool, now)}${stage}${act ? '  ' + act : ''}`;
  return clipVisible(line, width);
}

/** The last line of the block: elapsed, ETA, the plan's estimate and how the finished waves compared to it. */
export function totalLine(model: ProgressModel, now: number): string {
  if (!model.plan) return `elapsed ${formatDuration(now)}`;
  const finished = [...model.pools.values()].some((p) => p.finished.length);
  const ratio = finished ? `; finished waves took ${Math.round(model.ratio(null) * 100)}% of their estimate` : '';
  return `elapsed ${formatDuration(now)}, ETA ${eta(model.eta(now))} (plan estimate ${formatDuration(model.plan.estimatedSeconds)}${ratio})`;
}

/**
 * A live progress display for a terminal: one line per pool (nodes done / total, the current
 * wave, elapsed and ETA, nodes in flight and their step) and a total line, redrawn in place on
 * every event (and on `tick`); the events that need a reader scroll above it.
 */
export class TtyProgress {
  readonly model: ProgressModel;
  private drawn = 0;
  constructor(private readonly opts: ProgressOptions & { notable?: boolean } = { color: true }) {
    this.model = new ProgressModel(opts.plan ?? null);
  }

  /** What to write to the terminal for this event; `now`: seconds on the events' clock (default the event's). */
  update(event: ApplyEvent, now?: number): string {
    this.model.update(event);
    const above = this.opts.notable !== false && ABOVE.has(event.type) ? formatEventLine(event, this.opts) + '\n' : '';
    return this.clear() + above + this.draw(now ?? this.model.t);
  }

  /** Redraws with the time moved on (no event). */
  tick(now: number): string {
    return this.clear() + this.draw(Math.max(now, this.model.t));
  }

  /** Erases the block (a rehearsal's report follows). */
  clear(): string {
    if (!this.drawn) return '';
    const s = `\x1b[${this.drawn}A\x1b[J`;
    this.drawn = 0;
    return s;
  }

  draw(now: number): string {
    const c = colors(this.opts.color);
    const width = this.opts.width ?? 100;
    const lines: string[] = [];
    for (const p of this.model.pools.values()) lines.push(poolLine(this.model, p, now, c, width));
    lines.push(c.dim(clipVisible(totalLine(this.model, now), width)));
    this.drawn = lines.length;
    return lines.join('\n') + '\n';
  }
}

/**
 * The progress of an apply in a log (not a terminal): a line when a wave starts (its nodes,
 * nodes done / total) and when it ends (how long it took, nodes done / total, the pool's
 * elapsed time and the ETA), and the events that need a reader (changes, waits, soak,
 * failures, halts, pool start and end) as `formatEventLine` writes them. The per-node
 * steps are in `apply --json`.
 */
export class CiProgress {
  readonly model: ProgressModel;
  constructor(private readonly opts: { color?: boolean; plan?: ProgressPlan | null } = {}) {
    this.model = new ProgressModel(opts.plan ?? null);
  }

  update(event: ApplyEvent): string {
    this.model.update(event);
    const e = forDisplay(event);
    const c = colors(!!this.opts.color);
    const p = 'pool' in event && event.pool !== undefined ? this.model.pools.get(String(event.pool)) : undefined;
    if (e.type === 'wave-start' && p) {
      const nodes = Array.isArray(e.nodes) ? e.nodes : [];
      return `[${clockOf(e.t)}] ${e.pool} ${c.bold(`wave ${e.wave}/${e.waves}`)} start: ${nodes.length} node(s) (${foldNames(nodes.map(String), 6)}); ${countOf(this.model, p)} nodes done\n`;
    }
    if (e.type === 'wave-end' && p) {
      const took = p.waveStartedAt === null ? '' : ` in ${formatDuration(e.t - p.waveStartedAt)}`;
      const all = this.model.plan && this.model.plan.pools.length > 1 ? `, all pools ETA ${eta(this.model.eta(e.t))}` : '';
      return `[${clockOf(e.t)}] ${e.pool} ${c.green(`wave ${e.wave}/${e.waves} done`)}${took}: ${countOf(this.model, p)} nodes done, ${poolTimes(this.model, p, e.t)}${all}\n`;
    }
    if (NOTABLE.has(e.type) || (e.type === 'cordon' && e.message)) return formatEventLine(event, this.opts) + '\n';
    return '';
  }
}

/**
 * The progress of a rehearsal on stderr, paced by the wall clock (`clock`, milliseconds): a
 * rehearsal that ends within `quietMs` (default 2 s) writes nothing. On a terminal, the live
 * block of `TtyProgress` (redrawn at most every 100 ms, erased by `finish`); otherwise one
 * line per pool in progress at `quietMs`, then every `everyMs` (default 10 s). Elapsed and
 * ETA are simulated time, as the apply would see it; "wall clock" is the rehearsal's own.
 */
export class RehearseProgress {
  private readonly tty: TtyProgress;
  private readonly start: number;
  private last: number | null = null;
  constructor(private readonly opts: ProgressOptions & { terminal: boolean; clock: () => number; quietMs?: number; everyMs?: number }) {
    this.tty = new TtyProgress({ ...opts, notable: false });
    this.start = opts.clock();
  }

  update(event: ApplyEvent): string {
    this.tty.model.update(event);
    const now = this.opts.clock();
    if (now - this.start < (this.opts.quietMs ?? 2000)) return '';
    if (this.last !== null && now - this.last < (this.opts.terminal ? 100 : (this.opts.everyMs ?? 10_000))) return '';
    this.last = now;
    return this.opts.terminal ? this.tty.clear() + this.tty.draw(this.tty.model.t) : this.lines(now);
  }

  /** The plain lines: one per pool in progress. */
  lines(now: number): string {
    const m = this.tty.model;
    const c = colors(this.opts.color);
    const out: string[] = [];
    for (const p of m.pools.values()) {
      if (p.status !== 'rolling') continue;
      out.push(
        `rehearsing: ${forDisplay(p.name)} wave ${p.wave}/${p.waves}, ${countOf(m, p)} nodes; simulated ${formatDuration(m.t)}, ETA ${eta(m.eta(m.t))} (simulated); ${formatDuration((now - this.start) / 1000)} wall clock`,
      );
    }
    return out.map((l) => c.dim(l) + '\n').join('');
  }

  /** Erases the live block. */
  finish(): string {
    return this.opts.terminal ? this.tty.clear() : '';
  }
}

function progressBar(frac: number, width: number): string {
  const full = Math.round(Math.max(0, Math.min(1, frac)) * width);
  return '[' + '#'.repeat(full) + '.'.repeat(width - full) + ']';
}
