/**
 * The staging gate of a bootc wave (docs/design.md §7 "Pools and waves"): the wave's nodes start only
 * once each has staged the target; a node staging longer than the pool's limit, or never starting
 * to stage within it, halts the pool. The slot runner's node-by-node version is in bootc-slots.ts.
 */
import type { PlanPool } from '../../plan/types.ts';
import type { NodeFailure } from '../engine/context.ts';
import type { PoolContext } from './context.ts';
import { halt, StepWait } from '../gates/wave-gates.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import { atTarget, peek, rebootRequested, stagingOf, viewIn } from '../ports/views.ts';
import { stagingLimit, stagingStart } from './staging-clock.ts';

/**
 * docs/design.md §7, docs/safety.md rule 8: a node starts only once its BootcNode asks for the target
 * (spec.desiredImage) and has staged it (Idle=False/Staged, Degraded=False); with a tag, the
 * target is the digest the pool resolved (views.ts stagingOf). The staging limit (the pool's
 * stagingTimeoutSeconds) runs from a recorded staging attempt: Idle=False/Staging's
 * lastTransitionTime, or when bootcplan first saw the node staging, kept in the run record
 * (staging-clock.ts). A node that never started staging is given the same limit from the gate's
 * start and then reported as such ("never started staging: ..."), with why.
 */
export async function stagingGate(ctx: PoolContext, pool: PlanPool, names: string[]) {
  const gate: GateClock = { start: ctx.now(), limit: stagingLimit(ctx, pool), firstSeen: new Map(), skewed: new Set() };
  for (;;) {
    const skews: string[] = [];
    const state = await peek(ctx.driver, (s) => stagingRound(ctx, s, pool, names, gate, skews));
    await ctx.book.save(); // first sights of staging nodes (staging-clock.ts), for the next run
    if (state.failed.length) await halt(ctx, pool, state.failed);
    if (!state.waiting.length) return;
    const overdue = state.waiting.filter((w) => ctx.now() - w.since > gate.limit);
    if (ctx.step && !overdue.length && state.waiting.every((w) => w.staging)) {
      // apply --step: the nodes are pulling the image, timed from the cluster's own record or
      // the run record, so the next run still halts one that overruns the limit; nothing to do now.
      throw new StepWait(
        'staging',
        pool.name,
        `waiting for staging: ${state.waiting.length} node(s) of pool ${pool.name} still staging the target (${state.waiting
          .map((w) => w.node)
          .slice(0, 5)
          .join(', ')})${skews.length ? `; ${skews[0]}` : ''}`,
      );
    }
    if (overdue.length) await haltOverdue(ctx, pool, overdue, gate.limit);
    await waitForStagingChange(ctx, pool, names, gate, state.waiting);
  }
}

/** What the gate keeps from one look to the next. */
interface GateClock {
  /** When the gate opened: the limit of a node that never started staging runs from here. */
  start: number;
  /** The pool's staging limit, in seconds. */
  limit: number;
  /** When the gate first saw each node staging: a node seen staging anew wakes the gate. */
  firstSeen: Map<string, number>;
  /** The nodes whose clock skew was reported already (staging-clock.ts stagingStart). */
  skewed: Set<string>;
}

/** A node of the wave the gate still waits for, and since when its limit runs. */
interface StagingWait {
  node: string;
  since: number;
  /** Staging now (its limit runs from the staging attempt), or never started (from the gate's start). */
  staging: boolean;
  /** Why a node that never started staging has not (views.ts stagingOf). */
  why: string;
}

/** One look at the wave's nodes: those the gate waits for, and those Degraded while staging. */
function stagingRound(ctx: PoolContext, s: ClusterSnapshot, pool: PlanPool, names: string[], gate: GateClock, skews: string[]) {
  const waiting: StagingWait[] = [];
  const failed: NodeFailure[] = [];
  for (const name of names) {
    const v = viewIn(s, name);
    if (!v || atTarget(pool, v)) continue;
    if (resumedPastCordon(ctx, s, pool, name)) continue; // resumed mid-update
    if (v.degraded) {
      failed.push({ node: name, reason: 'Degraded while staging', conditions: v.conditions });
      continue;
    }
    const st = stagingOf(s, pool, name);
    if (st.state === 'passed') {
      ctx.book.forgetStaging(pool.name, name);
      continue;
    }
    if (st.state === 'staging') {
      if (!gate.firstSeen.has(name)) gate.firstSeen.set(name, ctx.now());
      const { since, skew } = stagingStart(ctx, pool.name, name, st.since, gate.skewed);
      if (skew) skews.push(skew);
      waiting.push({ node: name, since, staging: true, why: '' });
    } else waiting.push({ node: name, since: gate.start, staging: false, why: st.why });
  }
  return { waiting, failed };
}

/** Halts the pool for the nodes over the staging limit: staging too long, or never started. */
async function haltOverdue(ctx: PoolContext, pool: PlanPool, overdue: StagingWait[], limit: number): Promise<never> {
  const minutes = Math.round(limit / 60);
  const views = await peek(ctx.driver, (s) => overdue.map((w) => ({ w, v: viewIn(s, w.node) })));
  const failures = views.map(({ w, v }) => ({
    node: w.node,
    reason: w.staging ? `staging active for more than ${minutes}m` : `never started staging: ${w.why}`,
    conditions: v?.conditions ?? [],
  }));
  const active = overdue.filter((w) => w.staging).map((w) => w.node);
  const never = overdue.filter((w) => !w.staging).map((w) => w.node);
  return halt(
    ctx,
    pool,
    failures,
    [
      active.length ? `staging active for more than ${minutes} minutes on ${active.join(', ')}` : '',
      never.length ? `never started staging within ${minutes} minutes: ${never.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('; '),
  );
}

/** Waits until a node of the wave passes, starts staging, leaves the gate's care, or the first limit runs out. */
async function waitForStagingChange(ctx: PoolContext, pool: PlanPool, names: string[], gate: GateClock, waiting: StagingWait[]) {
  const deadline = Math.min(...waiting.map((w) => w.since + gate.limit));
  await ctx.driver.waitFor(
    (s) =>
      names.every((name) => {
        const v = viewIn(s, name);
        if (!v || atTarget(pool, v) || v.degraded || resumedPastCordon(ctx, s, pool, name)) return true;
        const st = stagingOf(s, pool, name);
        // A node that starts staging wakes the gate: its own limit starts then.
        return st.state === 'passed' || (st.state === 'staging' && !gate.firstSeen.has(name));
      }),
    { timeoutSeconds: Math.max(0, deadline - ctx.now()) + 0.001, description: `nodes of pool ${pool.name} staged` },
  );
}

/**
 * An update an earlier run took past its cordon: its entry says drained, or its reboot was
 * requested (the BootcNode records that; the entry still says cordon). Such a node passed the
 * staging gate before its cordon.
 */
export function resumedPastCordon(ctx: PoolContext, s: ClusterSnapshot, pool: PlanPool, name: string): boolean {
  return ctx.book.pastCordon(name) || (ctx.book.drives(pool.name, name) && rebootRequested(s, pool, name));
}
