/**
 * `onFailure: rollback`, at once (docs/apply.md "Rollback"): a health check failed after this
 * run updated nodes, and the spec that asked for a rollback was reviewed, so the apply that saw
 * the failure plans the way back and carries it out itself, under the lock it holds (no second
 * acquire: another apply would get a window in between). The same planner as `plan --rollback`
 * (src/plan/rollback-planner.ts), from the run record in memory and the cluster as it is now;
 * the same applier code as any plan (budget, cordon, drain, staging gate, halts), without gates,
 * soak or maintenance windows, and to its end even under --step (restoring is urgent). The
 * caller has let the nodes in flight finish (every gate sits between node starts).
 */
import { RolledBackError } from '../../base/errors.ts';
import type { RollbackScope } from '../../cluster/progress.ts';
import { MAX_OBSERVED } from '../../cluster/progress.ts';
import { planRollback, rollbackInputOf } from '../../plan/rollback-planner.ts';
import type { GateContext } from './context.ts';
import { isoOf } from '../ports/driver.ts';
import { addHold, rollbackHeldPools } from './holds.ts';

/** The failed check that asks for the rollback, and where it failed. */
interface RollbackRequest {
  check: string;
  /** What the check saw (one line). */
  observed: string;
  scope: RollbackScope;
  pool: string;
  /** The wave after which (or in which) the check failed; null before any wave. */
  wave: number | null;
}

/**
 * Plans the rollback of this run and runs it; ends with RolledBackError (exit 5: the nodes are
 * back, a human still has to look at what failed). A rollback that cannot be planned without an
 * error (mixed origins, a node that would stage an image it never booted, ...) is not started:
 * `refuse` halts the pool instead, saying why.
 */
export async function rollBackNow(ctx: GateContext, req: RollbackRequest, refuse: (why: string) => Promise<never>): Promise<never> {
  const at = isoOf(ctx.now());
  ctx.book.pool(req.pool).halted = { node: null, reason: `health check ${req.check} failed: ${req.observed}`.slice(0, 500), check: req.check };
  // Held from here on (docs/apply.md "Holds"): a rollback stopped half-way is not followed by the
  // CronJob's next run rolling forward again; the finished rollback replaces it (rolled-back).
  const pool = ctx.plan.pools.find((p) => p.name === req.pool);
  if (pool)
    addHold(ctx, {
      pool: pool.name,
      target: pool.targetDigest ?? pool.targetImage,
      action: 'halted',
      check: req.check,
      observed: req.observed,
      planId: ctx.plan.id,
    });
  await ctx.book.save();
  const input = rollbackInputOf(ctx.book.record, req.scope);
  if ('refused' in input) return refuse(input.refused);
  input.trigger = { kind: 'health-check', check: req.check, observed: req.observed.slice(0, MAX_OBSERVED), at };
  input.pool = req.pool;
  input.wave = req.wave;
  if (req.scope === 'wave') {
    if (req.wave === null) return refuse('scope wave: no wave of this run had started');
    input.source.scopeWave = { planId: ctx.book.record.planId, pool: req.pool, wave: req.wave };
  }
  const durations = ctx.plan.durations;
  const plan = planRollback(input, await ctx.driver.snapshot(), { durations });
  const errors = plan.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length) return refuse(errors.map((d) => d.message).join('; '));
  if (!plan.summary.nodes) return refuse('no node of this run is on its image any more: nothing to roll back');
  // Every pool the rollback takes back or leaves with the run's image is held from here on too.
  const held = rollbackHeldPools(plan);
  for (const name of held.filter((p) => p !== req.pool)) {
    const target = input.source.targets[name];
    addHold(ctx, { pool: name, target, action: 'halted', check: req.check, observed: req.observed, planId: ctx.plan.id });
  }
  await ctx.book.save();
  await ctx.runRollback(plan, (s) => planRollback(input, s, { durations, ownPlanId: plan.id }));
  const nodes = plan.pools.flatMap((p) => p.nodes.filter((n) => n.wave !== null).map((n) => n.name));
  const imageOnly = plan.pools.filter((p) => !p.nodes.some((n) => n.wave !== null)).map((p) => p.name);
  const withNodes = plan.pools.filter((p) => !imageOnly.includes(p.name)).map((p) => p.name);
  throw new RolledBackError(
    `rolled back ${nodes.length} node(s) of ${withNodes.join(', ')} to the image each booted before${imageOnly.length ? ` (and the image of ${imageOnly.join(', ')}, no node of which had booted the run's)` : ''}: health check ${req.check} failed: ${req.observed}`,
    [
      ...plan.pools.map((p) => {
        const back = p.nodes.filter((n) => n.wave !== null).map((n) => n.name);
        return back.length
          ? `pool ${p.name}: ${back.join(', ')} back on ${p.targetImage}`
          : `pool ${p.name}: its image back to ${p.targetImage}, no node rebooted`;
      }),
      ...plan.diagnostics.filter((d) => d.severity === 'warning').map((d) => `warning: ${d.message}`),
      `rollback plan ${plan.id}; ${held.length === 1 ? `the pool ${held[0]} is` : `the pools ${held.join(', ')} are`} held for this run's image: a later apply of it exits 5 until the spec targets another image or apply --retry`,
    ],
    nodes,
  );
}
