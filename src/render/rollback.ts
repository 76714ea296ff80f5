/**
 * What every plan renderer says of the way back (docs/apply.md "Rollback"): a rollback plan's
 * headline and facts (what it reverses, why, the run's plans), and each pool's rollback target
 * (where its nodes go back to, by which lever, whether they download it again). Plain words
 * here; text, Markdown and HTML escape them as they write them. Pure: reads only the plan.
 */
import type { Plan, PlanPool } from '../plan/types.ts';
import { formatDuration, plural, shortDigest } from './format.ts';

/** "Rollback of plan 1a2b… (scope run): 2 nodes back to IMAGE in 1 wave", or null for a forward plan. */
export function rollbackHeadline(plan: Plan): string | null {
  const r = plan.rollback;
  if (!r) return null;
  const images = [...new Set(plan.pools.map((p) => p.rollback?.to ?? p.targetImage))];
  const to = images.length === 1 ? images[0] : 'the images they booted before the run';
  const nodes = plan.summary.nodes;
  if (!nodes) return `Rollback of plan ${r.of.planId} (scope ${r.scope}): nothing to roll back`;
  return `Rollback of plan ${r.of.planId} (scope ${r.scope}): ${plural(nodes, 'node')} back to ${to} in ${plural(plan.summary.waves, 'wave')} (est. ${formatDuration(plan.summary.estimatedSeconds)})`;
}

/** The facts under the headline: why, the run, where it stopped, what is left alone. */
export function rollbackFacts(plan: Plan): string[] {
  const r = plan.rollback;
  if (!r) return [];
  const t = r.trigger;
  const why =
    t.kind === 'health-check'
      ? `because health check ${t.check} failed${t.observed ? `: ${t.observed}` : ''}`
      : `planned with plan --rollback${t.observed ? ` (the run stopped: ${t.observed})` : ''}`;
  const out = [why];
  out.push(
    `the run ${r.of.run.id} (${plural(r.of.run.planIds.length, 'plan')}: ${r.of.run.planIds.join(', ')}), started ${r.of.startedAt}${r.pool ? `, stopped in pool ${r.pool}${r.wave ? `, wave ${r.wave}` : ''}` : ''}`,
  );
  if (r.scope === 'wave' && r.source.scopeWave)
    out.push(`scope wave: only the nodes of wave ${r.source.scopeWave.wave} of pool ${r.source.scopeWave.pool} go back`);
  if (r.leftovers.length) out.push(`${plural(r.leftovers.length, 'node')} keep something of the run and are not rebooted (see the warnings)`);
  if (r.excluded.length)
    out.push(
      `${plural(r.excluded.length, 'node')} updated by the run are out of service and left to a human: ${r.excluded.map((e) => `${e.node} (${e.why})`).join(', ')}`,
    );
  out.push(
    "no health gates, no soak and no maintenance windows during a rollback; the pools are held for the run's image once it is done (apply --retry to try it again)",
  );
  return out;
}

/** How a pool's nodes get the image back: stored (bootc's rollback deployment) or downloaded again (MCO). */
function downloadWords(download: boolean): string {
  return download ? 'downloaded again: the MCO removed the rollback deployment' : "the rollback deployment's image: no download";
}

/**
 * A pool's way back in words: "back to IMAGE via LEVER (no download …)", or "none
 * (rollback-mixed-origins): why"; null for a pool without one (a forward pool with no node to update).
 */
export function poolWayBack(p: PlanPool): string | null {
  const rb = p.rollback;
  if (!rb) return null;
  if (!rb.available) return `none${rb.refusedBy ? ` (${rb.refusedBy})` : ''}${rb.why ? `: ${rb.why}` : ''}`;
  return `back to ${shortDigest(rb.to, 12)} via ${rb.via} (${downloadWords(rb.download)})`;
}

/** "pool worker: back to IMAGE via LEVER (no download)", or null for a pool without a way back shown. */
function poolRollbackLine(p: PlanPool): string | null {
  const way = poolWayBack(p);
  return way === null ? null : `pool ${p.name}: ${way}`;
}

/** Each pool's way back as table cells: pool, back to (null: none, `refusal` says why), via, download. */
export function poolRollbackRows(plan: Plan): { pool: string; to: string | null; refusal: string | null; via: string; download: string }[] {
  return plan.pools.flatMap((p) => {
    const rb = p.rollback;
    if (!rb) return [];
    const refusal = rb.available ? null : `${rb.refusedBy ? `${rb.refusedBy}: ` : ''}${rb.why ?? 'no rollback'}`;
    return [{ pool: p.name, to: rb.available ? shortDigest(rb.to, 12) : null, refusal, via: rb.via, download: rb.download ? 'yes' : 'no' }];
  });
}

/** The heading of the pools' ways back in a forward plan (a rollback plan has its headline instead). */
export const FORWARD_WAY_BACK = "Way back: where a rollback of this run would take each pool (plan --rollback, or a health check's onFailure: rollback)";

/**
 * The text block of a rollback plan: its headline and facts, then each pool's way back. A forward
 * plan says its pools' ways back in each pool's section instead (render/text.ts), next to its gates.
 */
export function rollbackTextLines(plan: Plan, paint: { bold: (s: string) => string; red: (s: string) => string; dim: (s: string) => string }): string[] {
  const head = rollbackHeadline(plan);
  if (!head) return [];
  const pools = plan.pools.flatMap((p) => poolRollbackLine(p) ?? []);
  return [paint.red(paint.bold(head)), ...rollbackFacts(plan).map((l) => paint.dim(`  ${l}`)), ...pools.map((l) => `  ${l}`), ''];
}
