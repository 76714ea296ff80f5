/**
 * One node of a bootc pool taken through its update (docs/design.md §7 "Pools and waves"): the
 * write-ahead entry and bootcplan's marked cordon, the drain, the reboot request (the BootcNode's
 * desired image state set to Booted), the wait until it runs the target, Idle and Ready, and the
 * uncordon of bootcplan's own cordon only. Shared by the wave runner (bootc-wave.ts) and the slot
 * runner (bootc-slots.ts), so a node is updated the same way whichever admits it.
 */
import type { PlanPool } from '../../plan/types.ts';
import type { Condition } from '../../cluster/types.ts';
import { conditionOf, type NodeView } from '../../domain/nodes.ts';
import { DrainTimeoutError, isoOf } from '../ports/driver.ts';
import type { NodeOutcome, RebootEnd } from '../engine/context.ts';
import type { PoolContext } from './context.ts';
import { retry } from '../engine/retry.ts';
import { atTarget, bootedFrom, bootcNodeIn, peek, viewIn } from '../ports/views.ts';
import { rebootWait } from '../../domain/bootc-daemon.ts';

/**
 * The write-ahead entry of a cordon, in memory: cordonNow writes it with the cordon (the
 * budget was checked just before, on the same view). Returns whether the node's entry is new.
 */
export function recordCordonAhead(ctx: PoolContext, pool: PlanPool, name: string, k: number, v: NodeView): boolean {
  const old = ctx.book.nodes[name];
  const fresh = !old || old.step === 'done';
  if (fresh) ctx.book.putNode(name, { pool: pool.name, wave: k, step: 'cordon', wasCordoned: v.cordoned, ...bootedFrom(v) });
  else if (old.step === 'failed') ctx.book.setNode(name, { planId: ctx.plan.id, pool: pool.name, wave: k, step: 'cordon', ...(old.from ? {} : bootedFrom(v)) });
  ctx.inFlight.add(name);
  return fresh || old.step === 'failed';
}

/**
 * Cordons a node of the wave with bootcplan's mark (the plan id; its uncordon undoes only
 * that). Returns false when someone else cordoned it between the look and the write: the
 * node is theirs, and it is not drained or rebooted.
 */
export async function cordonNow(ctx: PoolContext, pool: PlanPool, k: number, name: string, v: NodeView, fresh: boolean): Promise<boolean> {
  if (!v.cordoned) {
    const r = await ctx.lease.write(() => ctx.driver.cordon(name, ctx.plan.id, ctx.book.nodes[name]));
    if (r === 'cordoned') {
      ctx.emit({ type: 'cordon', pool: pool.name, node: name, wave: k });
      return true;
    }
    ctx.emit({
      type: 'node-unavailable',
      pool: pool.name,
      node: name,
      message: 'cordoned by someone else just now: not taken, it stays cordoned',
      conditions: v.conditions,
    });
    return false;
  }
  // Cordoned already (an administrator's, or this update's own from an earlier run): no
  // cordon to write, the new entry goes alone.
  if (fresh) {
    await ctx.book.writeNode(name);
    if (ctx.book.nodes[name]?.wasCordoned)
      ctx.emit({ type: 'cordon', pool: pool.name, node: name, wave: k, message: 'already cordoned by an administrator; it stays cordoned' });
  }
  return true;
}

export async function runBootcNode(ctx: PoolContext, pool: PlanPool, k: number, name: string): Promise<NodeOutcome> {
  ctx.inFlight.add(name);
  // Silenced before its drain and reboot (docs/apply.md "Silences"); a resumed node keeps its own.
  await ctx.silences?.begin(pool.name, name, k);
  try {
    const fail = (reason: string, conditions: Condition[]): NodeOutcome => ({ ok: false, failure: { node: name, reason, conditions } });
    const rec = ctx.book.nodes[name];
    const state = await peek(ctx.driver, (s) => ({ v: viewIn(s, name), bn: bootcNodeIn(s, name) }));
    const v = state.v;
    if (!v) return fail('the Node was deleted during its update', []);
    if (!atTarget(pool, v)) {
      const dis = state.bn?.spec?.desiredImageState;
      const rebooting = dis === 'Booted' || conditionOf(state.bn, 'Idle')?.reason === 'Rebooting';
      if (!rebooting) {
        if (rec.step === 'cordon' || rec.step === 'drain') {
          ctx.book.setNode(name, { step: 'drain' }); // saved with the next step: a rerun drains again, which is harmless
          await ctx.lease.assertHeld();
          try {
            await ctx.driver.drain(name, { timeoutSeconds: pool.drainTimeoutSeconds });
          } catch (err) {
            if (err instanceof DrainTimeoutError) return fail(err.message, v.conditions);
            throw err;
          }
          ctx.emit({ type: 'drain-done', pool: pool.name, node: name, wave: k });
        }
        const bn = await peek(ctx.driver, (s) => bootcNodeIn(s, name)?.status?.staged?.softRebootCapable === true);
        // A node the plan predicts as a full reboot (RebootOnly, or an operator that performs no
        // soft reboots: src/domain/bootc-daemon.ts) is one, whatever its staged entry says.
        const planned = pool.nodes.find((n) => n.name === name)?.reboot;
        const kind: 'soft' | 'hard' = pool.rebootPolicy === 'AllowSoftReboot' && planned !== 'hard' && bn ? 'soft' : 'hard';
        await ctx.lease.assertHeld();
        // No write-ahead entry: the BootcNode's desiredImageState is the record of the request
        // (views.ts rebootRequested); the entry's step, time and kind go to the Node with the
        // uncordon (marked done).
        ctx.book.setNode(name, { step: 'reboot', rebootKind: kind, rebootAt: isoOf(ctx.now()) });
        await retry(() => ctx.driver.setDesiredImageState(name, 'Booted'));
        ctx.emit({ type: 'reboot', pool: pool.name, node: name, wave: k, kind });
      }
      const bound = rebootWait(ctx.timeouts.nodeSeconds, pool.rebootTimeoutSeconds);
      const r = await ctx.driver.waitFor(
        (s): RebootEnd | null => {
          const x = viewIn(s, name);
          if (!x) return { gone: true, conditions: [] };
          if (x.degraded) return { failed: true, conditions: x.conditions };
          const idle = conditionOf(bootcNodeIn(s, name), 'Idle');
          if (atTarget(pool, x) && idle?.status === 'True' && x.ready) return { ok: true as const };
          return null;
        },
        { timeoutSeconds: bound.seconds, description: `${name} booted into the target` },
      );
      if (!r) {
        const x = await peek(ctx.driver, (s) => viewIn(s, name));
        return fail(`not back on the target within ${bound.words}`, x?.conditions ?? []);
      }
      if ('gone' in r) return fail('the Node was deleted during its update', []);
      if ('failed' in r) return fail('Degraded after the reboot', r.conditions ?? []);
      ctx.emit({ type: 'booted', pool: pool.name, node: name, wave: k });
    }
    ctx.book.setNode(name, { step: 'booted' });
    // The entry is marked done with the uncordon (one write), or alone when there is none.
    if (ctx.book.nodes[name]?.wasCordoned || !(await uncordonOurs(ctx, pool, k, name))) await ctx.book.finishNode(name);
    ctx.book.dropNode(name);
    return { ok: true };
  } finally {
    ctx.inFlight.delete(name);
  }
}

/**
 * Undoes bootcplan's own cordon of a node it updated (docs/safety.md rule 6; src/domain/cordons.ts):
 * only a node carrying this plan's `bootcplan.dev/cordoned-by` mark is uncordoned. A node
 * someone else took over meanwhile (an administrator who removed or replaced the mark to keep
 * it cordoned) stays cordoned, and that is reported.
 */
async function uncordonOurs(ctx: PoolContext, pool: PlanPool, k: number, name: string): Promise<boolean> {
  // A rollback that continues an unfinished one (docs/apply.md "Continuing a rollback") undoes
  // the cordons that one marked with its own plan id; a rollback undoes those the run it reverses
  // left (stopped or killed between a cordon and its uncordon), marked with that run's plan id.
  const entry = ctx.book.nodes[name];
  const rb = ctx.plan.rollback;
  const by = entry && (rb?.continues?.includes(entry.planId) || rb?.of.run.planIds.includes(entry.planId)) ? entry.planId : ctx.plan.id;
  const r = await retry(() => ctx.driver.uncordon(name, by, ctx.book.doneEntry(name)));
  if (r === 'uncordoned') ctx.emit({ type: 'uncordon', pool: pool.name, node: name, wave: k });
  else if (r === 'not-ours') {
    const v = await peek(ctx.driver, (s) => viewIn(s, name));
    if (v?.cordoned)
      ctx.emit({
        type: 'node-unavailable',
        pool: pool.name,
        node: name,
        message: 'cordoned by someone else while bootcplan updated it (no bootcplan.dev/cordoned-by mark of this plan): left cordoned',
        conditions: v.conditions,
      });
  }
  return r !== 'not-ours';
}
