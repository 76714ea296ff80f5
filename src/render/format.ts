/** Small formatting helpers shared by the renderers (pure). */
import pc from 'picocolors';
import { outOfServiceFigure } from '../domain/budget.ts';

export type Colors = ReturnType<typeof pc.createColors>;

export function colors(enabled: boolean): Colors {
  return pc.createColors(enabled);
}

/**
 * Whether an output is coloured (docs/design.md §2; no-color.org): never with NO_COLOR set, always with
 * FORCE_COLOR set (and not 0), else when it goes to a terminal (`tty`).
 */
export function useColor(io: { env: Record<string, string | undefined> }, tty: boolean): boolean {
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  if (io.env.FORCE_COLOR && io.env.FORCE_COLOR !== '0') return true;
  return tty;
}

/**
 * 5400 -> "1h30m"; 90 -> "1m30s"; 45 -> "45s"; 0 -> "0s"; 2 days and more: 183600 -> "2d3h".
 * Not a finite number (a crafted plan file: a string, or 1e400 read as Infinity) -> "?".
 */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  if (s >= 172800) {
    const d = Math.floor(s / 86400);
    const hh = Math.floor((s % 86400) / 3600);
    const mm = Math.floor((s % 3600) / 60);
    return `${d}d${hh ? `${hh}h` : ''}${mm ? `${mm}m` : ''}`;
  }
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h) return m ? `${h}h${m}m` : `${h}h`;
  if (m) return r ? `${m}m${r}s` : `${m}m`;
  return `${r}s`;
}

/** sha256:e26b09deae87… -> "sha256:e26b09de…" */
export function shortDigest(d: string | null | undefined, n = 8): string {
  if (!d) return '(unknown)';
  const m = /^(.*?)(sha256:)([0-9a-f]{64})$/.exec(d);
  if (!m) return d;
  return `${m[1]}${m[2]}${m[3].slice(0, n)}…`;
}

/** 12345 -> "12,345": en-US grouping whatever the machine's locale, so reports compare byte for byte. */
export function formatCount(n: number): string {
  // A crafted plan file may hold anything here: it is written as it is (callers escape it).
  return typeof n === 'number' ? n.toLocaleString('en-US') : String(n);
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function padTable(input: string[][], gap = 2): string[] {
  // Cells are data: a crafted plan file may put a number or null where a name belongs.
  const rows = input.map((r) => r.map(String));
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(c))));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i] - visibleLength(c) + gap)))
      .join('')
      .trimEnd(),
  );
}

function visibleLength(s: string): number {
  return s.replace(/\x1b\[[0-9;]*m/g, '').length;
}

/**
 * At most `width` visible characters of a line with colour codes: cut between codes, never
 * inside one, and ended with "…" and a reset when cut, so a long name (data) cannot leave
 * a colour or bold open on the terminal.
 */
export function clipVisible(line: string, width: number): string {
  if (visibleLength(line) <= width) return line;
  let out = '';
  let shown = 0;
  let coloured = false;
  for (const m of line.matchAll(/\x1b\[[0-9;]*m|[^\x1b]+|\x1b/g)) {
    if (m[0].startsWith('\x1b[')) {
      out += m[0];
      coloured = true;
      continue;
    }
    const room = width - 1 - shown;
    if (room <= 0) break;
    out += m[0].slice(0, room);
    shown += Math.min(room, m[0].length);
  }
  return `${out}…${coloured ? '\x1b[0m' : ''}`;
}

/** Folds a sorted list of names: ["w-1","w-2","w-3","w-7"] -> "w-1..w-3, w-7" when names share a numeric suffix pattern. */
export function foldNames(names: readonly string[], max = 12): string {
  const groups: string[] = [];
  let i = 0;
  while (i < names.length) {
    const m = /^(.*?)(\d+)$/.exec(names[i]);
    let j = i;
    if (m) {
      while (j + 1 < names.length) {
        const n = /^(.*?)(\d+)$/.exec(names[j + 1]);
        if (!n || n[1] !== m[1] || Number(n[2]) !== Number(m[2]) + (j + 1 - i) || n[2].length !== m[2].length) break;
        j++;
      }
    }
    groups.push(j - i >= 2 ? `${names[i]}..${names[j]}` : j > i ? `${names[i]}, ${names[j]}` : names[i]);
    i = j + 1;
  }
  if (groups.length > max) return `${groups.slice(0, max).join(', ')} and ${groups.length - max} more`;
  return groups.join(', ');
}

/** Made on first use: an ICU collator costs 5-10 ms to create, paid by every command that loads this module otherwise. */
let collator: Intl.Collator | null = null;
/** "w-2" < "w-10". */
export const naturalCompare = (a: string, b: string): number =>
  (collator ??= new Intl.Collator('en', { numeric: true })).compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);

/** [1,2,3,5,7,8] -> "1-3, 5, 7-8" (input need not be sorted; duplicates are ignored). */
export function foldNumbers(nums: readonly number[], max = 8): string {
  const sorted = [...new Set(nums)].sort((a, b) => a - b);
  const parts: string[] = [];
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : String(sorted[i]));
    i = j + 1;
  }
  if (parts.length > max) return `${parts.slice(0, max).join(', ')} and ${parts.length - max} more`;
  return parts.join(', ');
}

/**
 * Folds a long list of waves for text output: more than `max` items keep the first `head` and
 * the last `tail`; `hidden` waves are left out at index `at` of `items`, where the caller
 * writes one "… N more waves …" line. `count` tells how many waves an item stands for (a line
 * may cover a run of waves). `-o json` keeps all.
 */
export function foldWaves<T>(
  all: readonly T[],
  o: { max?: number; head?: number; tail?: number; count?: (item: T) => number } = {},
): { items: T[]; hidden: number; at: number } {
  const max = o.max ?? 12,
    head = o.head ?? 5,
    tail = o.tail ?? 1;
  if (all.length <= max || all.length <= head + tail + 1) return { items: [...all], hidden: 0, at: all.length };
  const hidden = all.slice(head, all.length - tail).reduce((s, x) => s + (o.count ? o.count(x) : 1), 0);
  return { items: [...all.slice(0, head), ...all.slice(all.length - tail)], hidden, at: head };
}

/** Inserts the "… N more waves …" line of `foldWaves` into already padded lines. */
export function withFold(lines: string[], fold: { hidden: number; at: number }, indent: string, paint: (s: string) => string = (s) => s): string[] {
  if (!fold.hidden) return lines;
  const out = [...lines];
  out.splice(fold.at, 0, paint(`${indent}… ${plural(fold.hidden, 'more wave')} …`));
  return out;
}

/** Replaces the few non-ASCII symbols the renderers use by plain ASCII. */
export function toAscii(s: string): string {
  return s.replace(/…/g, '...').replace(/→/g, '->').replace(/×/g, 'x').replace(/—/g, '-').replace(/·/g, '-').replace(/≤/g, '<=');
}

interface NodeGroupInput {
  name: string;
  from: string | null;
  to: string;
  reboot: string;
  wave: number | null;
  staged: boolean;
  blockedBy: string | null;
}

/** Nodes of one pool whose change is identical: same from, to, reboot kind and blocked reason. */
interface NodeGroup {
  pool: string;
  from: string | null;
  to: string;
  reboot: string;
  blockedBy: string | null;
  /** Natural-sorted. */
  names: string[];
  /** Sorted, unique; empty for blocked nodes. */
  waves: number[];
  staged: number;
}

/** Groups a pool's node changes; scheduled groups by first wave, blocked ones last. */
export function groupNodes(pool: string, nodes: readonly NodeGroupInput[]): NodeGroup[] {
  const by = new Map<string, NodeGroup>();
  for (const n of nodes) {
    const key = `${n.from}\u0000${n.to}\u0000${n.reboot}\u0000${n.blockedBy ?? ''}`;
    let g = by.get(key);
    if (!g) by.set(key, (g = { pool, from: n.from, to: n.to, reboot: n.reboot, blockedBy: n.blockedBy, names: [], waves: [], staged: 0 }));
    g.names.push(n.name);
    if (n.wave !== null) g.waves.push(n.wave);
    if (n.staged) g.staged++;
  }
  const groups = [...by.values()];
  for (const g of groups) {
    g.names.sort(naturalCompare);
    g.waves = [...new Set(g.waves)].sort((a, b) => a - b);
  }
  const first = (g: NodeGroup) => (g.blockedBy ? Infinity : (g.waves[0] ?? Infinity));
  return groups.sort(
    (a, b) =>
      first(a) - first(b) || (a.blockedBy ?? '').localeCompare(b.blockedBy ?? '') || b.names.length - a.names.length || a.reboot.localeCompare(b.reboot),
  );
}

const REBOOT_TEXT: Record<string, string> = {
  soft: 'soft reboot',
  hard: 'hard reboot',
  unknown: 'reboot not yet known (decided once staged)',
};

/**
 * "9 nodes in worker: sha256:aaa… -> sha256:bbb…, soft reboot, 9 staged, waves 1-4"
 * (names are folded separately with `foldNames`).
 */
export function describeGroup(g: NodeGroup, opts: { withPool?: boolean; slots?: boolean } = {}): string {
  const head = `${plural(g.names.length, 'node')}${opts.withPool === false ? '' : ` in ${g.pool}`}`;
  const change = `${shortDigest(g.from)} -> ${shortDigest(g.to)}`;
  const staged = g.staged === g.names.length ? 'staged' : g.staged ? `${g.staged} staged` : 'not staged';
  if (g.blockedBy === 'pool-paused') return `${head}: ${change}, held: pool paused, nothing stages`;
  if (g.blockedBy) return `${head}: ${change}, not scheduled (${g.blockedBy})`;
  return `${head}: ${change}, ${REBOOT_TEXT[g.reboot] ?? `${g.reboot} reboot`}, ${staged}, ${g.waves.length === 1 ? (opts.slots ? 'batch' : 'wave') : opts.slots ? 'batches' : 'waves'} ${foldNumbers(g.waves)}`;
}

/** Reboot kinds of the scheduled nodes of some pools ('unknown': decided once staged). */
export function rebootMix(pools: readonly { nodes: readonly { wave: number | null; reboot: string }[] }[]): { soft: number; hard: number; unknown: number } {
  let soft = 0;
  let hard = 0;
  let unknown = 0;
  for (const p of pools) {
    for (const n of p.nodes) {
      if (n.wave === null) continue;
      if (n.reboot === 'soft') soft++;
      else if (n.reboot === 'hard') hard++;
      else unknown++;
    }
  }
  return { soft, hard, unknown };
}

/** Risky changes of a plan: the disruptive ones, and replacements (incl. the CPMS's). */
export function riskTally<C extends { action: string; risk: string }>(plan: {
  changes: readonly C[];
  bootImages: { controlPlaneMachineSet: { replacement: boolean } | null };
}) {
  const risky = plan.changes.filter((c) => c.action !== 'noop' && c.risk !== 'none');
  const replacement = risky.filter((c) => c.risk === 'replacement').length + (plan.bootImages.controlPlaneMachineSet?.replacement ? 1 : 0);
  return { risky, replacement, disruptive: risky.filter((c) => c.risk === 'disruptive').length };
}

/** "12 nodes in 4 waves"; with slots pools "12 nodes: 3 in 1 wave, 9 in slots" (a slots pool's batches are no waves to wait for). */
export function nodesLine(plan: {
  summary: { nodes: number; waves: number };
  pools: readonly { rollout?: string; waves: readonly (readonly string[])[] }[];
}): string {
  const s = plan.summary;
  const slots = plan.pools.filter((p) => p.rollout === 'slots');
  if (!slots.length) return `${plural(s.nodes, 'node')} in ${plural(s.waves, 'wave')}`;
  const inSlots = slots.reduce((n, p) => n + p.waves.flat().length, 0);
  const waves = s.waves - slots.reduce((n, p) => n + p.waves.length, 0);
  return `${plural(s.nodes, 'node')}: ${inSlots < s.nodes ? `${s.nodes - inSlots} in ${plural(waves, 'wave')}, ` : ''}${inSlots} in slots`;
}

/**
 * "at most 3 nodes out of service at once (1 already out of service included)": the one figure
 * of nodes out of service (src/domain/budget.ts outOfServiceFigure) as text and Markdown say it;
 * the HTML report says the same from the same function.
 */
export function outOfServiceWords(pools: Parameters<typeof outOfServiceFigure>[0]): string {
  const { atOnce, already } = outOfServiceFigure(pools);
  return `at most ${plural(atOnce, 'node')} out of service at once${already ? ` (${already} already out of service included)` : ''}`;
}
