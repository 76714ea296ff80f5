/**
 * The bootc pool runner (docs/design.md §7 "Pools and waves"): bootcplan itself moves the nodes of
 * a BootcNodePool, wave by wave. The targets of every bootc pool were set before the first
 * pool ran, so all their nodes stage in parallel; a wave then cordons, drains and reboots
 * its nodes (setting the BootcNode's desired image state to Booted) within the pool's
 * maxUnavailable budget, and uncordons each node once it runs the target, Idle and Ready.
 *
 * This module composes each wave and orders the gates around it; the wave itself runs in
 * bootc-wave.ts, each node's update in bootc-node.ts.
 */
import type { Plan, PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import type { PoolContext } from './context.ts';
import { afterLastWave, afterWave, beforeWave, checkStale, halt } from '../gates/wave-gates.ts';
import { atTarget, pastStagingGate, peek, viewIn } from '../ports/views.ts';
import { stagingLimit } from './staging-clock.ts';
import { resumedPastCordon, stagingGate } from './staging-gate.ts';
import { onGateFailure } from '../gates/gate-failure.ts';
import { runBootcWave } from './bootc-wave.ts';

export async function runBootcPool(ctx: PoolContext, pool: PlanPool): Promise<'done' | 'stepped'> {
  if (pool.waves.length)
    ctx.emit({
      type: 'pool-start',
      pool: pool.name,
      waves: pool.waves.length,
      message: `${pool.waves.flat().length} node(s), maxUnavailable ${pool.maxUnavailable.resolved}`,
    });
  for (let k = 1; k <= pool.waves.length; k++) {
    if (ctx.book.waveDone(pool.name, k)) continue;
    let fresh = await beforeWave(ctx, pool, k);
    if (!fresh) return 'stepped';
    let names = composeBootcWave(ctx, pool, k, fresh);
    if (pool.rebootPolicy === 'AllowSoftReboot' && names.length && (await peek(ctx.driver, (s) => names.some((n) => stillStaging(ctx, s, pool, n))))) {
      // This wave waits for staging anyway, and whether a node soft-reboots is known
      // only once it has staged: let the pool's nodes (all staging in parallel since the
      // targets were set) finish staging, for at most the staging limit, then compose the
      // wave again from a plan of the cluster as it is then. No halt here: the staging
      // gate below judges the nodes the wave really takes.
      const all = pool.waves.flat();
      await ctx.driver.waitFor((s) => all.every((n) => !stillStaging(ctx, s, pool, n)), {
        timeoutSeconds: stagingLimit(ctx, pool),
        description: `nodes of pool ${pool.name} staged`,
      });
      fresh = (await checkStale(ctx)).fresh;
      names = composeBootcWave(ctx, pool, k, fresh);
    }
    if (!names.length) {
      // Every node the saved plan left for this wave is done already (earlier waves
      // were composed differently, or someone else updated them).
      ctx.book.finishWave(pool.name, k);
      await ctx.book.save();
      continue;
    }
    ctx.emit({ type: 'wave-start', pool: pool.name, wave: k, waves: pool.waves.length, nodes: names });
    await stagingGate(ctx, pool, names);
    const { failures, gateFailure } = await runBootcWave(ctx, pool, k, names);
    if (failures.length) await halt(ctx, pool, failures);
    if (gateFailure) await onGateFailure(ctx, pool, gateFailure);
    await afterWave(ctx, pool, k);
  }
  return afterLastWave(ctx, pool);
}

/** A node of the wave that has not passed the staging gate yet (and is not mid-update). */
function stillStaging(ctx: PoolContext, s: ClusterSnapshot, pool: PlanPool, name: string): boolean {
  const v = viewIn(s, name);
  if (!v || atTarget(pool, v) || pastStagingGate(s, pool, v) || v.degraded) return false;
  return !resumedPastCordon(ctx, s, pool, name);
}

/**
 * The nodes of bootc wave `k` (docs/design.md §7; docs/apply.md "Soft reboots share waves"). The saved plan grouped the
 * nodes by what was known when it was made, but a node's reboot kind is known only once
 * it has staged (BootcNode `status.staged.softRebootCapable`), and a wave lasts as long
 * as its slowest node: soft reboots save time only in waves of their own. So:
 * - the nodes still to do are the saved plan's scheduled nodes that are not on the
 *   target now; checkStale has just refused any other difference, so the set of nodes and
 *   their targets is the saved plan's, only the grouping may change;
 * - when the staging state of those nodes (staged, predicted reboot kind) differs between
 *   the saved plan and the fresh plan made before this wave, they are taken in the fresh
 *   plan's order (staged first, soft reboots first, then zones round-robin:
 *   src/domain/waves.ts); otherwise in the saved plan's order, which gives the saved
 *   plan's wave k unchanged;
 * - nodes an interrupted apply left in flight (a progress record in this pool) come
 *   first, so a rerun finishes them (and uncordons them) before anything else, and a
 *   node already rebooted is never asked again (runBootcNode reads its state first);
 * - the node this apply runs on (ctx.selfNode) comes last, whatever the saved plan's order:
 *   its drain evicts this apply (docs/design.md §7 "Stopping"; src/domain/waves.ts selfLast);
 * - wave k takes as many nodes as the saved plan's wave k, the last wave all that are
 *   left: the number of waves stays the plan's and a wave is never larger than the plan
 *   made it (at most the budget); the budget is enforced again at each cordon
 *   (runBootcWave) whatever the composition.
 */
function composeBootcWave(ctx: PoolContext, pool: PlanPool, k: number, fresh: Plan): string[] {
  const scheduled = pool.waves.flat();
  const fp = fresh.pools.find((p) => p.name === pool.name);
  if (!fp) return pool.waves[k - 1];
  const freshNodes = new Map(fp.nodes.map((n) => [n.name, n]));
  const savedNodes = new Map(pool.nodes.map((n) => [n.name, n]));
  const inFlight = new Set(scheduled.filter((n) => ctx.book.drives(pool.name, n)));
  // Not in the fresh plan: on the target now (anything else made the plan stale).
  const remaining = scheduled.filter((n) => freshNodes.has(n) || inFlight.has(n));
  const changed = remaining.some((n) => {
    const f = freshNodes.get(n);
    const s = savedNodes.get(n);
    return !!f && !!s && (f.staged !== s.staged || f.reboot !== s.reboot);
  });
  const rank = new Map<string, number>();
  if (changed) fp.waves.flat().forEach((n) => rank.set(n, rank.size));
  const base = rank.size;
  scheduled.forEach((n, i) => {
    if (!rank.has(n)) rank.set(n, base + i);
  });
  if (ctx.selfNode && rank.has(ctx.selfNode)) rank.set(ctx.selfNode, Number.MAX_SAFE_INTEGER);
  const byRank = (a: string, b: string) => (rank.get(a) ?? Number.MAX_SAFE_INTEGER) - (rank.get(b) ?? Number.MAX_SAFE_INTEGER);
  const others = remaining.filter((n) => !inFlight.has(n)).sort(byRank);
  const last = k === pool.waves.length;
  const room = last ? others.length : Math.max(0, pool.waves[k - 1].length - inFlight.size);
  return [...inFlight, ...others.slice(0, room)].sort(byRank);
}
