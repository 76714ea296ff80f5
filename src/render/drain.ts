/**
 * The drain forecast as the renderers say it (docs/apply.md "Drain forecast"), pure: per wave a
 * line ("2 serialized by PDB payments/api, 1 blocked"), each finding once with its wave, nodes,
 * pods, budget numbers and hint, and what the applier does with a blocked drain (PlanPool.drain
 * onBlocked: halt, the default, or skip). Text, Markdown and HTML build on these.
 */
import type { Plan, PlanPool } from '../plan/types.ts';
import type { DrainClass, DrainFinding } from '../domain/drain-forecast.ts';
import { plural } from './format.ts';

/** The order the classes are counted and listed in: worst first. */
const WORST_FIRST: readonly Exclude<DrainClass, 'ok'>[] = ['blocked', 'outage', 'no-room', 'serialized'];

/** What a forecast-blocked node of the pool meets at apply: its drain halts the rollout, or the node is skipped. */
function blockedOutcome(pool: PlanPool): string {
  return pool.drain?.onBlocked === 'skip' ? 'will be skipped' : 'will halt';
}

/** "2 serialized by PDB payments/api, 1 blocked, 1 bare pod deleted", or null when every drain of the wave is ok. */
function waveDrainWords(pool: PlanPool, wave: readonly string[]): string | null {
  const byName = new Map(pool.nodes.map((n) => [n.name, n]));
  const parts: string[] = [];
  const forecasts = wave.flatMap((name) => {
    const f = byName.get(name)?.drainForecast;
    return f ? [f] : [];
  });
  for (const cls of WORST_FIRST) {
    const of = forecasts.filter((f) => f.class === cls);
    if (!of.length) continue;
    const budgets = [...new Set(of.flatMap((f) => f.findings.filter((x) => x.class === cls && x.budget !== null).map((x) => x.budget ?? '')))].sort();
    const by = cls === 'serialized' && budgets.length ? ` by PDB ${budgets.join(', ')}` : '';
    parts.push(`${of.length} ${cls}${by}${cls === 'blocked' ? ` (${blockedOutcome(pool)})` : ''}`);
  }
  const deleted = forecasts.reduce((s, f) => s + f.effects.filter((e) => e.effect === 'deleted-unmanaged').length, 0);
  const lost = forecasts.reduce((s, f) => s + f.effects.filter((e) => e.effect === 'emptydir-lost').length, 0);
  if (deleted) parts.push(`${plural(deleted, 'bare pod')} deleted`);
  if (lost) parts.push(`emptyDir data of ${plural(lost, 'pod')} lost`);
  return parts.length ? parts.join(', ') : null;
}

export interface DrainItem {
  pool: string;
  /** The wave (a slots pool: the batch) of the finding's nodes. */
  wave: number;
  finding: DrainFinding;
  /** What the applier does: for a blocked drain, "will halt" or "will be skipped"; else null. */
  outcome: string | null;
}

/** Every finding of the plan once (a wave's finding is copied to each of its nodes), worst first, then in plan order. */
export function drainItems(plan: Plan): DrainItem[] {
  const out: DrainItem[] = [];
  for (const pool of plan.pools) {
    const seen = new Set<string>();
    for (const n of pool.nodes) {
      if (!n.drainForecast || n.wave === null) continue;
      for (const f of n.drainForecast.findings) {
        const key = `${n.wave}\u0000${f.reason}\u0000${f.budget ?? ''}\u0000${f.pods.join(',')}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ pool: pool.name, wave: n.wave, finding: f, outcome: f.class === 'blocked' ? blockedOutcome(pool) : null });
      }
    }
  }
  const rank = (i: DrainItem) => WORST_FIRST.indexOf(i.finding.class);
  return out
    .map((x, i) => ({ x, i }))
    .sort((a, b) => rank(a.x) - rank(b.x) || a.i - b.i)
    .map((e) => e.x);
}

/** One finding in words: "wave 2, w-01 (payments/api-1): PDB payments/api ... (3 healthy, 2 desired, 1 allowed, 3 expected; 2 evictions)". */
export function drainItemWords(i: DrainItem, maxPods = 4): string {
  const f = i.finding;
  const pods = f.pods.length > maxPods ? `${f.pods.slice(0, maxPods).join(', ')} and ${f.pods.length - maxPods} more` : f.pods.join(', ');
  const n = f.numbers;
  const numbers = n
    ? ` (${n.currentHealthy} healthy, ${n.desiredHealthy} desired, ${n.disruptionsAllowed} allowed, ${n.expectedPods} expected; ${plural(n.evictions, 'eviction')})`
    : '';
  return `pool ${i.pool} wave ${i.wave}, ${f.nodes.join(', ')} (${pods}): ${f.message}${numbers}`;
}

/** Does any node of the plan carry a forecast? */
export function hasDrainForecast(plan: Plan): boolean {
  return plan.pools.some((p) => p.nodes.some((n) => n.drainForecast));
}

/** A line of the text plan's drain part, with how loud it is. */
interface DrainLine {
  text: string;
  level: 'dim' | 'warn' | 'bad';
}

const MAX_WAVE_LINES = 12;
const MAX_FINDINGS = 10;

/** The pool's drain lines for the text plan: each wave with a finding, then the findings with their hints; [] without a forecast. */
export function poolDrainLines(plan: Plan, pool: PlanPool): DrainLine[] {
  if (!pool.nodes.some((n) => n.drainForecast)) return [];
  const word = pool.rollout === 'slots' ? 'batch' : 'wave';
  const waves = pool.waves.flatMap((w, i) => {
    const words = waveDrainWords(pool, w);
    return words ? [{ i, words }] : [];
  });
  if (!waves.length) return [{ text: `  drain: ok in every ${word} (no PodDisruptionBudget waits, no workload goes down)`, level: 'dim' }];
  const out: DrainLine[] = [];
  for (const w of waves.slice(0, MAX_WAVE_LINES))
    out.push({ text: `  drain ${word} ${w.i + 1}: ${w.words}`, level: /blocked|outage|no-room/.test(w.words) ? 'bad' : 'warn' });
  if (waves.length > MAX_WAVE_LINES)
    out.push({ text: `  … ${plural(waves.length - MAX_WAVE_LINES, `more ${word}`)} with drain findings (-o json has them all)`, level: 'dim' });
  const items = drainItems(plan).filter((i) => i.pool === pool.name);
  for (const i of items.slice(0, MAX_FINDINGS)) {
    out.push({
      text: `    ${i.finding.class}${i.outcome ? `, ${i.outcome}` : ''}: ${drainItemWords(i).replace(/^pool \S+ /, '')}`,
      level: i.finding.class === 'serialized' ? 'warn' : 'bad',
    });
    out.push({ text: `      hint: ${i.finding.hint}`, level: 'dim' });
  }
  if (items.length > MAX_FINDINGS) out.push({ text: `    … ${plural(items.length - MAX_FINDINGS, 'more finding')} (-o json has them all)`, level: 'dim' });
  return out;
}
