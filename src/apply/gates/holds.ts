/**
 * Holds (docs/apply.md "Holds"): a pool whose health check failed after this run updated nodes
 * of it, or that was rolled back, is held for the run's target image. An apply that targets that
 * image again exits 5 before it writes anything, until the spec targets another image for the
 * pool (run-chain.ts carriedHolds drops the hold) or a human runs `apply --retry`. Without holds
 * a GitOps CronJob (`apply PLANFILE --step`) would start the same plan again right after a
 * rollback: the cluster then looks exactly as when the plan was made, so it is not stale.
 */
import type { RunContext } from '../engine/context.ts';
import { HeldTargetError } from '../../base/errors.ts';
import { MAX_HOLDS, type Hold, type ProgressRecord } from '../../cluster/progress.ts';
import type { Plan } from '../../plan/types.ts';
import { isoOf } from '../ports/driver.ts';
import { planTargets } from '../engine/run-chain.ts';
import { checksAt } from '../../plan/health.ts';

/** The holds of a run record that a plan's targets meet (none for a rollback plan: it goes back from them). */
function holdsMet(plan: Plan, rec: ProgressRecord | null): Hold[] {
  if (plan.rollback || !rec) return [];
  const targets = planTargets(plan);
  return (rec.holds ?? []).filter((h) => targets[h.pool] === h.target);
}

/**
 * Refuses a plan whose targets are held, before anything is written (exit 5). `apply` calls it
 * on the run record it reads before it checks a saved plan against the cluster: a held plan says
 * so, rather than that the rollback made it stale.
 */
export function refuseHeld(plan: Plan, rec: ProgressRecord | null): void {
  const met = holdsMet(plan, rec);
  if (!met.length) return;
  throw new HeldTargetError(
    `${met.length === 1 ? `pool ${met[0].pool} is` : `pools ${met.map((h) => h.pool).join(', ')} are`} held back from this image: nothing was written`,
    [...met.map(describeHold), 'apply --retry to try this image again (a human decision: the check that failed may fail again), or plan another image'],
  );
}

/**
 * The holds this plan's targets meet refuse it, or, with `retry`, are lifted (reported as an
 * event); whether any was. A pool paused by its check (onFailure: pause) in this plan's own run
 * record goes on past the gate that failed: the --retry is the human's word for it, so that gate
 * counts as passed (gatesPassed) and is not measured again. A halt's gate is measured again first;
 * so is a pause's when a new plan continues the run (its preflight gate, src/apply/gates/health-gates.ts).
 */
export function checkHolds(ctx: RunContext, retry: boolean): boolean {
  const rec = ctx.book.record;
  const met = holdsMet(ctx.plan, rec);
  if (!met.length) return false;
  if (!retry) refuseHeld(ctx.plan, rec);
  rec.holds = (rec.holds ?? []).filter((h) => !met.includes(h));
  const passed: string[] = [];
  for (const h of met) {
    const pp = rec.pools[h.pool];
    if (h.action !== 'paused' || !ctx.book.resumed || h.planId !== ctx.plan.id || !pp) continue;
    // The failed gate was the afterWave one after the last wave done (an afterNode gate is not recorded).
    const pool = ctx.plan.pools.find((p) => p.name === h.pool);
    if (pool && checksAt(ctx.plan, pool, 'afterWave').length && pp.wavesDone > (pp.gatesPassed ?? 0)) pp.gatesPassed = pp.wavesDone;
    pp.halted = null;
    passed.push(h.pool);
  }
  const past = passed.length
    ? `; ${passed.join(', ')} ${passed.length === 1 ? 'goes' : 'go'} on past the gate that paused it, not measured again (onFailure: pause)`
    : '';
  ctx.emit({ type: 'holds-cleared', pools: met.map((h) => h.pool), message: met.map(describeHold).join('; ') + past });
  return true;
}

/** "pool worker: sha256:ab12… was rolled back at … because health check X failed (…)". */
export function describeHold(h: Hold): string {
  const what = h.action === 'rolled-back' ? 'was rolled back' : h.action === 'paused' ? 'was paused' : 'was halted';
  const why = h.check ? `because health check ${h.check} failed (${h.observed})` : h.observed ? `(${h.observed})` : '';
  return `pool ${h.pool}: ${h.target.startsWith('sha256:') ? h.target.slice(0, 19) + '…' : h.target} ${what} at ${h.at} ${why}`.trimEnd();
}

/** Records a hold (one per pool: a newer one replaces the pool's older one). */
export function addHold(ctx: RunContext, hold: Omit<Hold, 'at'>): void {
  const rec = ctx.book.record;
  const rest = (rec.holds ?? []).filter((h) => h.pool !== hold.pool);
  rec.holds = [...rest, { ...hold, observed: hold.observed.slice(0, 1024), at: isoOf(ctx.now()) }].slice(-MAX_HOLDS);
}

/**
 * The pools a rollback plan holds for the run's image: the ones it takes back, and those scope wave
 * leaves with the run's image (docs/apply.md "Rollback": a node of them could still boot it).
 */
export function rollbackHeldPools(plan: Plan): string[] {
  const r = plan.rollback;
  if (!r) return [];
  const pools = [
    ...plan.pools.map((p) => p.name),
    ...r.leftovers.filter((l) => l.what === 'kept-on-target' || l.what === 'target-still-staged').map((l) => l.pool),
  ];
  return [...new Set(pools)].filter((p) => Object.hasOwn(r.source.targets, p));
}

/**
 * A rollback plan ran to its end: every pool it rolled back, or left with the run's image, is held
 * for the run's target, and the nodes it returned are reported (`rollback-done`).
 */
export function finishRollback(ctx: RunContext): void {
  const r = ctx.plan.rollback;
  if (!r) return;
  const back = new Set(ctx.plan.pools.map((p) => p.name));
  for (const pool of rollbackHeldPools(ctx.plan)) {
    addHold(ctx, {
      pool,
      target: r.source.targets[pool],
      action: back.has(pool) ? 'rolled-back' : 'halted',
      check: r.trigger.check,
      observed: r.trigger.observed ?? `rolled back by plan ${ctx.plan.id}`,
      planId: r.of.planId,
    });
  }
  const nodes = ctx.plan.pools.flatMap((p) => p.nodes.filter((n) => n.wave !== null).map((n) => n.name));
  ctx.emit({
    type: 'rollback-done',
    planId: ctx.plan.id,
    nodes,
    message: r.leftovers.length ? `${r.leftovers.length} node(s) left with something of the run (see the plan's warnings)` : undefined,
  });
}

/** A rollback plan's run starts: what it reverses, and how many nodes go back. */
export function startRollback(ctx: RunContext): void {
  const r = ctx.plan.rollback;
  if (!r) return;
  const nodes = ctx.plan.pools.reduce((n, p) => n + p.nodes.filter((x) => x.wave !== null).length, 0);
  const why = r.trigger.check ? `health check ${r.trigger.check} failed${r.trigger.observed ? `: ${r.trigger.observed}` : ''}` : 'planned with plan --rollback';
  ctx.emit({ type: 'rollback-start', planId: ctx.plan.id, of: r.of.planId, scope: r.scope, nodes, pools: ctx.plan.pools.map((p) => p.name), message: why });
}
