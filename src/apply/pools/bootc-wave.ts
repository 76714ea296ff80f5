/**
 * One bootc wave while it runs (docs/design.md §7 "Pools and waves"): its nodes start, each on one
 * consistent view of the cluster, while the pool's unavailable count stays within the budget
 * (decideRound); a node's failure or a failed afterNode gate stops further starts, the nodes in
 * flight finish; a stop or a lost lock ends the wave once its nodes in flight have stopped.
 * The slot runner (bootc-slots.ts) reuses the round decision, the gate and the run state.
 */
import type { PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import type { NodeView } from '../../domain/nodes.ts';
import { cancelledByCaller } from '../engine/interrupt.ts';
import type { NodeFailure } from '../engine/context.ts';
import type { PoolContext } from './context.ts';
import { availabilitySignature, budgetChanged, failPendingAfterBudgetWait, refusalError } from '../gates/wave-gates.ts';
import type { PolicyRefusal } from '../ports/policy.ts';
import { noticeAvailability } from './observe.ts';
import { atTarget, controlPlaneOutOfService, membersOf, peek, viewIn } from '../ports/views.ts';
import { nodeGate, type GateFailure } from '../gates/health-gates.ts';
import { cordonNow, recordCordonAhead, runBootcNode } from './bootc-node.ts';

/** One bootc wave while it runs (runBootcWave). */
export interface WaveRun {
  pool: PlanPool;
  k: number;
  /** At most this many nodes of the pool out of service (the control plane: one). */
  budget: number;
  /** The wave's nodes not started yet. */
  pending: string[];
  /** The node updates under way, by node. */
  running: Map<string, Promise<void>>;
  failures: NodeFailure[];
  /** The first error that is no node's failure (a driver error): the wave stops on it. */
  fatal: { err?: unknown; set?: boolean };
  /** afterNode health gates running now: no node starts meanwhile (health-gates.ts nodeGate). */
  gating: number;
  /** The first failed afterNode gate: no node starts any more; the nodes in flight finish. */
  gateFailure: GateFailure | null;
  /**
   * The window closed while nodes of the wave waited to start (docs/apply.md "Maintenance
   * windows inside a wave"): no node is cordoned any more, the nodes in flight finish, then the
   * apply stops with this refusal (exit 6).
   */
  closed?: string | PolicyRefusal;
}

/** No node of the wave may start any more: a node failed, or a health gate did. */
export const holding = (w: WaveRun) => w.failures.length > 0 || w.gateFailure !== null || w.closed !== undefined;

/** Budgeted start of the wave's nodes; returns the failures (empty when all succeeded) and a failed afterNode gate. */
export async function runBootcWave(
  ctx: PoolContext,
  pool: PlanPool,
  k: number,
  names: string[],
): Promise<{ failures: NodeFailure[]; gateFailure: GateFailure | null }> {
  const w: WaveRun = {
    pool,
    k,
    budget: pool.controlPlane ? 1 : pool.maxUnavailable.resolved,
    pending: [...names],
    running: new Map(),
    failures: [],
    fatal: {},
    gating: 0,
    gateFailure: null,
  };
  try {
    const failures = await waveLoop(ctx, w);
    if (w.closed !== undefined && !failures.length && !w.gateFailure) throw refusalError(w.closed);
    return { failures, gateFailure: w.gateFailure };
  } catch (err) {
    setFatal(w, err);
    return stopWave(ctx, w);
  }
}

async function waveLoop(ctx: PoolContext, w: WaveRun): Promise<NodeFailure[]> {
  const { pool, k } = w;
  let waitingSince: number | null = null;
  for (;;) {
    if (w.fatal.set) throw w.fatal.err;
    await ctx.lease.assertHeld();
    let started = 0;
    // A node waiting to start (staging, budget, readiness) is cordoned only inside a window
    // (docs/apply.md "Maintenance windows inside a wave"): the nodes already started finish, no
    // new one starts. No wave given: the wave was admitted, only the window's being open counts.
    if (!holding(w) && !w.gating && w.pending.length) w.closed = ctx.policy?.(ctx.now(), pool, null) ?? undefined;
    if (!holding(w) && !w.gating && w.pending.length) {
      // Decide synchronously on one consistent view; no time passes until the cordons.
      const d = await peek(ctx.driver, (s) => decideRound(ctx, s, w));
      for (const name of [...d.done, ...d.gone]) {
        w.pending.splice(w.pending.indexOf(name), 1);
        if (!ctx.book.nodes[name]) continue;
        if (d.done.includes(name)) await ctx.book.finishNode(name);
        else ctx.book.dropNode(name); // the Node is gone, and its entry with it
      }
      if (d.failed.length) {
        w.failures.push(...d.failed);
        for (const f of d.failed) w.pending.splice(w.pending.indexOf(f.node), 1);
      } else {
        // Each node's write-ahead entry goes to its Node with its cordon, in one write.
        const fresh = d.start.map(({ name, v }) => recordCordonAhead(ctx, pool, name, k, v));
        for (const [i, { name, v }] of d.start.entries()) {
          w.pending.splice(w.pending.indexOf(name), 1);
          if (!(await cordonNow(ctx, pool, k, name, v, fresh[i]))) {
            // Someone else cordoned it between the look and the write: theirs, not taken
            // (nothing was written).
            ctx.book.dropNode(name);
            w.pending.push(name);
            continue;
          }
          started++;
          w.running.set(name, startNode(ctx, w, name));
        }
      }
    }
    if (w.fatal.set) throw w.fatal.err;
    if (!w.running.size && (!w.pending.length || holding(w))) break;
    if (!w.pending.length || holding(w) || w.gating) {
      // A gate holds the next start: the wait for budget starts again after it.
      if (w.gating) waitingSince = null;
      await Promise.race(w.running.values());
      continue;
    }
    // Nodes wait for budget or readiness: wake up when a node of ours finishes or the
    // pool's availability changes.
    if (started) waitingSince = null;
    waitingSince ??= ctx.now();
    const remaining = waitingSince + ctx.timeouts.budgetSeconds - ctx.now();
    if (remaining <= 0) {
      await failPendingAfterBudgetWait(ctx, w);
      continue;
    }
    const signature = await peek(ctx.driver, (s) => availabilitySignature(s, pool));
    const ac = new AbortController();
    const changed = budgetChanged(ctx, pool, signature, remaining, ac.signal).then(
      () => undefined,
      (err) => {
        if (!cancelledByCaller(err, ac.signal)) setFatal(w, err);
      },
    );
    await Promise.race([changed, ...w.running.values()]);
    ac.abort();
    await changed;
  }
  return w.failures;
}

/**
 * A wave stopped by a stop request or a lost lock ends only once its nodes in flight have
 * stopped too (their waits end at once; each stops at its next safe point).
 */
async function stopWave(ctx: PoolContext, w: WaveRun): Promise<never> {
  if (ctx.lease.stopRequested || ctx.lease.isLost) await Promise.allSettled([...w.running.values()]);
  throw w.fatal.err;
}

export function setFatal(w: WaveRun, err: unknown) {
  if (!w.fatal.set) {
    w.fatal.set = true;
    w.fatal.err = err;
  }
}

/**
 * Which pending nodes of the wave start now, on one view of the cluster: those on the
 * target are done, deleted ones gone, a Degraded one fails the wave; the others start
 * while the pool's unavailable count, with them, stays within the budget.
 */
export function decideRound(ctx: PoolContext, s: ClusterSnapshot, w: WaveRun) {
  const { pool } = w;
  noticeAvailability(ctx, s, pool, (m) => ctx.book.drives(pool.name, m));
  let unavailable = 0;
  const members = membersOf(s, pool.name);
  for (const m of members) if (viewIn(s, m)?.unavailable) unavailable++;
  if (pool.controlPlane) {
    // etcd counts members, not pools: control-plane nodes out of service elsewhere spend the budget too.
    const inPool = new Set(members);
    unavailable += controlPlaneOutOfService(s, (n) => inPool.has(n)).length;
  }
  const start: { name: string; v: NodeView }[] = [];
  const done: string[] = [];
  const gone: string[] = [];
  const failed: NodeFailure[] = [];
  for (const name of w.pending) {
    const v = viewIn(s, name);
    const rec = ctx.book.nodes[name];
    if (!v) {
      gone.push(name);
      continue;
    }
    const ours = !!rec && !rec.wasCordoned && rec.step !== 'done';
    if (atTarget(pool, v) && (!ours || !v.cordoned)) {
      done.push(name);
      continue;
    }
    if (v.degraded) {
      failed.push({ node: name, reason: 'Degraded', conditions: v.conditions });
      break;
    }
    // Out of service on its own (an administrator's cordon, NotReady, pressure, MCO or
    // bootc-operator work: docs/safety.md rules 5-7): never taken; it waits for the node to come
    // back, and the budget wait ends the pool with a halt that says why. An update of ours in
    // flight (a resumed apply) is out of service already and needs no budget.
    const inFlight = !!rec && rec.step !== 'done';
    if (v.unavailable !== null && !inFlight) continue;
    const needsBudget = v.unavailable === null;
    if (needsBudget && unavailable + 1 > w.budget) continue;
    if (needsBudget) unavailable++;
    start.push({ name, v });
  }
  return { start, done, gone, failed };
}

/** Runs one node's update, then its afterNode gate; its failure joins the wave's, an error stops the wave. */
function startNode(ctx: PoolContext, w: WaveRun, name: string): Promise<void> {
  return runBootcNode(ctx, w.pool, w.k, name)
    .then(async (r) => {
      if (!r.ok) w.failures.push(r.failure);
      else await gateNode(ctx, w, name, w.k);
    })
    .catch((err) => setFatal(w, err))
    .finally(() => w.running.delete(name));
}

/** The afterNode gate of a node that is back (waves and slots): while it runs, no node of the pool starts. */
export async function gateNode(ctx: PoolContext, w: WaveRun, name: string, wave: number): Promise<void> {
  w.gating++;
  try {
    const failed = await nodeGate(ctx, w.pool, wave, name);
    if (failed) w.gateFailure ??= failed;
  } finally {
    w.gating--;
  }
}
