/**
 * Renderers for apply/rehearse events (src/apply/events.ts): NDJSON (`--json`), plain
 * lines for CI logs, and a live per-pool progress block for a terminal. Pure: they return
 * strings; the caller writes them (progress goes to stderr).
 *
 * Events carry cluster data (node names, conditions, API messages): the human renderers read
 * each event through `forDisplay`, so no control sequence, bidi override or line break from
 * data reaches a terminal or a log (issue 13); NDJSON is the event exactly, with the characters
 * a terminal acts on written as JSON escapes (`jsonText`).
 */
import type { ApplyEvent } from '../apply/events.ts';
import { colors, formatDuration, foldNames, clipVisible } from './format.ts';
import { forDisplay } from './secrets.ts';
import { jsonText } from './vocabulary.ts';

export function eventToNdjson(e: ApplyEvent): string {
  return jsonText(e) + '\n';
}

/** "+1h02m03s" style offset, fixed width for aligned logs. */
export function clockOf(t: number): string {
  const s = Math.max(0, Math.round(t));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(r).padStart(2, '0')}`;
}

/** One plain line per event (CI logs). */
export function formatEventLine(event: ApplyEvent, opts: { color?: boolean } = {}): string {
  const e = forDisplay(event);
  const c = colors(!!opts.color);
  const where = ['pool' in e ? e.pool : undefined, 'node' in e ? e.node : undefined].filter(Boolean).join('/');
  const head = `[${clockOf(e.t)}] ${where ? where + ' ' : ''}`;
  const cond = 'conditions' in e && e.conditions.length ? ' [' + e.conditions.map((x) => `${x.type}=${x.status}${x.reason ? `/${x.reason}` : ''}`).join(', ') + ']' : '';
  switch (e.type) {
    case 'start': return `[${clockOf(e.t)}] ${e.resumed ? 'resuming' : 'applying'} plan ${e.message}`;
    case 'change': return `${head}${c.yellow('~')} ${e.address} written${e.message ? ` (${e.message})` : ''}`;
    case 'wait': return `${head}waiting: ${e.message}`;
    case 'pool-start': return `${head}${c.bold('pool start')}: ${e.waves} wave(s); ${e.message}`.trimEnd();
    case 'wave-start': return `${head}${c.bold(`wave ${e.wave}/${e.waves}`)} start: ${foldNames(e.nodes)}`;
    case 'wave-end': return `${head}${c.green(`wave ${e.wave}/${e.waves} done`)}`;
    case 'reboot': return `${head}reboot (${e.kind})`;
    case 'soak': return `${head}soak ${formatDuration(e.seconds)} after wave ${e.wave}`;
    case 'node-failed': return `${head}${c.red('FAILED')}: ${e.message}${cond}`;
    case 'node-unavailable': return `${head}${c.yellow('out of service')} on its own${e.message ? ` (${e.message})` : ''}${cond}`;
    case 'node-available': return `${head}back in service`;
    case 'halt': return `${head}${c.red('HALTED')}: ${e.message} (pool paused)`;
    case 'step-end': return `${head}step done: ${e.message}`;
    case 'pool-done': return `${head}${c.green('pool done')}`;
    case 'done': return `[${clockOf(e.t)}] ${c.green('done')}${e.message ? `: ${e.message}` : ''}`;
    default: return `${head}${e.type}${'message' in e && e.message ? `: ${e.message}` : ''}`;
  }
}

interface PoolState {
  wave: number;
  waves: number;
  staged: number;
  staging: number;
  done: number;
  total: number;
  active: Map<string, string>;
  failed: string[];
  status: string;
}

/**
 * A live progress display: one line per pool (wave, nodes done, nodes in flight and
 * their step), redrawn in place on every event; notable events scroll above it.
 */
export class TtyProgress {
  private pools = new Map<string, PoolState>();
  private drawn = 0;
  private t = 0;
  constructor(private readonly opts: { color: boolean; width?: number } = { color: true }) {}

  /** Returns what to write to the terminal for this event. */
  update(event: ApplyEvent): string {
    const e = forDisplay(event);
    this.t = e.t;
    let above = '';
    const p = 'pool' in e && e.pool ? this.pool(e.pool) : null;
    switch (e.type) {
      case 'pool-start': if (p) { p.waves = e.waves; p.status = 'rolling'; } break;
      case 'wave-start': if (p) { p.wave = e.wave; p.waves = e.waves; p.total = Math.max(p.total, p.done + e.nodes.length); } break;
      case 'stage-start': if (p) p.staging++; break;
      case 'staged': if (p) { p.staged++; p.staging = Math.max(0, p.staging - 1); } break;
      case 'cordon': case 'drain-done': case 'reboot': case 'booted':
        if (p && e.node) p.active.set(e.node, e.type === 'reboot' ? `reboot:${e.kind}` : e.type);
        break;
      case 'uncordon': if (p && e.node) { p.active.delete(e.node); p.done++; } break;
      case 'wave-end':
        if (p) for (const [n, st] of p.active) if (st === 'booted') { p.active.delete(n); p.done++; }
        break;
      case 'pool-done': if (p) { p.status = 'done'; p.active.clear(); } break;
      case 'node-failed': if (p && e.node) { p.failed.push(e.node); p.active.delete(e.node); } above = formatEventLine(e, this.opts) + '\n'; break;
      case 'halt': if (p) p.status = 'halted'; above = formatEventLine(e, this.opts) + '\n'; break;
      case 'start': case 'change': case 'wait': case 'node-unavailable': case 'node-available': case 'step-end': case 'done':
        above = formatEventLine(e, this.opts) + '\n';
        break;
    }
    return this.clear() + above + this.draw();
  }

  private pool(name: string): PoolState {
    let p = this.pools.get(name);
    if (!p) this.pools.set(name, (p = { wave: 0, waves: 0, staged: 0, staging: 0, done: 0, total: 0, active: new Map(), failed: [], status: 'waiting' }));
    return p;
  }

  private clear(): string {
    if (!this.drawn) return '';
    const s = `\x1b[${this.drawn}A\x1b[J`;
    this.drawn = 0;
    return s;
  }

  private draw(): string {
    const c = colors(this.opts.color);
    const width = this.opts.width ?? 100;
    const lines: string[] = [];
    for (const [name, p] of this.pools) {
      const bar = p.total ? progressBar(p.done / p.total, 20) : ' '.repeat(20);
      const act = [...p.active].map(([n, st]) => `${n}:${st}`).join(' ');
      const stage = p.staging || p.staged ? ` staged ${p.staged}${p.staging ? ` (+${p.staging} staging)` : ''}` : '';
      const status = p.status === 'halted' ? c.red('halted') : p.status === 'done' ? c.green('done') : `wave ${p.wave}/${p.waves}`;
      const line = `${c.bold(String(name).padEnd(12))} ${status.padEnd(12)} ${bar} ${p.done}/${p.total}${stage}${act ? '  ' + act : ''}`;
      lines.push(clipVisible(line, width));
    }
    lines.push(c.dim(`elapsed ${formatDuration(this.t)}`));
    this.drawn = lines.length;
    return lines.join('\n') + '\n';
  }
}

function progressBar(frac: number, width: number): string {
  const full = Math.round(Math.max(0, Math.min(1, frac)) * width);
  return '[' + '#'.repeat(full) + '.'.repeat(width - full) + ']';
}
