/**
 * The bootc slot runner (spec `rollout: slots`; docs/spec.md "Slots"): the nodes of a
 * BootcNodePool are admitted one by one, in the plan's order, as soon as the pool's budget
 * has room, instead of in waves that wait for their slowest node. Each node runs the same
 * steps as in a wave (bootc-node.ts: write-ahead record, cordon with bootcplan's mark, drain,
 * reboot request, wait until on the target, Idle and Ready, uncordon), and the same rules hold:
 * - the budget: a node is admitted only while the pool's nodes out of service, with it, stay
 *   within maxUnavailable (nodes out of service on their own count; the control plane counts
 *   across the cluster): bootc-wave.ts decideRound, on one view of the cluster per round;
 * - staging: a node is admitted only once it passed the staging gate (the same gate as a
 *   wave's, node by node: a staged node does not wait for its batch); staging active longer
 *   than the staging limit, or never started within it, stops admission and halts the pool
 *   once the nodes in flight are back;
 * - maintenance windows: checked before every admission round, with the estimate of the
 *   node's admission batch (its slowest node); once the window refuses, nothing more is
 *   admitted, the nodes in flight finish, and the apply stops (exit 6);
 * - staleness: the cluster is planned again before the first admission and then once per
 *   admission batch (the plan's `waves` of a slots pool: waveSize nodes each), that is every
 *   waveSize admissions, as often as waves would; not once per node, which at 1,000 nodes
 *   would cost 1,000 re-plans. A difference stops admission, lets the nodes in flight finish,
 *   and stops the apply (exit 3). Between two re-plans each admission still reads the node's
 *   own state (deleted, Degraded, out of service on its own, on the target already);
 * - a failed node stops admission at once; the nodes in flight finish, then the pool halts
 *   (paused, exit 5);
 * - `apply --step` admits one batch and returns once its nodes are back;
 * - resume: nodes an interrupted run left in flight come first and need no budget; a batch is
 *   recorded as finished once all its nodes and all earlier batches' are back (the cursor `wavesDone`), so `status`
 *   and a rerun read slots as they read waves.
 */
import type { Plan, PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import { cancelledByCaller } from '../engine/interrupt.ts';
import type { NodeFailure } from '../engine/context.ts';
import type { PoolContext } from './context.ts';
import { afterLastWave, afterWave, availabilitySignature, beforeWave, failPendingAfterBudgetWait, checkPolicy, checkStale, halt } from '../gates/wave-gates.ts';
import { decideRound, gateNode, holding, setFatal, type WaveRun } from './bootc-wave.ts';
import { cordonNow, recordCordonAhead, runBootcNode } from './bootc-node.ts';
import { onGateFailure } from '../gates/gate-failure.ts';
import { atTarget, peek, stagingOf, viewIn } from '../ports/views.ts';
import { stagingLimit, stagingStart } from './staging-clock.ts';
import { selfLast } from '../../domain/waves.ts';

/** One slots run of a pool (runBootcSlots). `pending`: the admitted batches' nodes not started yet. */
interface SlotRun extends WaveRun {
  /** Nodes of batches not opened yet, in admission order. */
  queue: string[];
  /** The batch (wave of the plan) of a node of the pool; every node the run holds is in one. */
  batchOf: (node: string) => number;
  /** batch -> its nodes not back yet (batches opened or left to open, not finished). */
  left: Map<number, Set<string>>;
  opened: Set<number>;
  /** Nodes an interrupted run left in flight: admitted with the first batch. */
  resumed: Set<string>;
  /** Admission stopped: a gate's error, thrown once the nodes in flight are back, or --step. */
  stop: { err: unknown } | { stepped: true } | null;
  /** Staging gate: when a pending node was opened, and first seen staging. */
  openedAt: Map<string, number>;
  firstSeen: Map<string, number>;
  /** Nodes whose clock skew was reported (staging-clock.ts). */
  skewed: Set<string>;
  /** Pending nodes that wait for the staging gate (as of the last round), and the earliest limit. */
  staging: { nodes: string[]; deadline: number };
}

export async function runBootcSlots(ctx: PoolContext, pool: PlanPool): Promise<'done' | 'stepped'> {
  const todo = pool.waves.map((_, i) => i + 1).filter((b) => !ctx.book.waveDone(pool.name, b));
  if (!todo.length) return afterLastWave(ctx, pool);
  const k = pool.controlPlane ? 1 : pool.maxUnavailable.resolved;
  ctx.emit({
    type: 'pool-start',
    pool: pool.name,
    waves: pool.waves.length,
    message: `${pool.waves.flat().length} node(s) in slots: each admitted as soon as fewer than ${k} are out of service`,
  });
  const fresh = await beforeWave(ctx, pool, todo[0]);
  if (!fresh) return 'stepped';
  const s = slotRun(ctx, pool, fresh, k);
  for (const [b, nodes] of s.left) {
    if (nodes.size) continue;
    // Every node of this batch is on the target already (someone else, or an earlier run).
    s.left.delete(b);
  }
  // The run record keeps a cursor (batches 1..n finished), not a list: it moves over the
  // leading batches with nothing left; later ones are recorded as the ones before them finish.
  recordFinishedBatches(ctx, s);
  await ctx.book.save();
  if (s.queue.length) {
    await admitAll(ctx, s);
    if (s.failures.length) await halt(ctx, pool, s.failures);
    if (s.gateFailure) await onGateFailure(ctx, pool, s.gateFailure);
    if (s.stop && 'err' in s.stop) throw s.stop.err;
    if (s.stop) return 'stepped';
  }
  return afterLastWave(ctx, pool);
}

/**
 * The admission order: the saved plan's (checkStale has just refused any other difference),
 * without the nodes on the target now, nodes an interrupted run left in flight first, the node
 * this apply runs on (ctx.selfNode) last, in the last batch (its drain evicts this apply).
 */
function slotRun(ctx: PoolContext, pool: PlanPool, fresh: Plan, k: number): SlotRun {
  const scheduled = pool.waves.flat();
  const fp = fresh.pools.find((p) => p.name === pool.name);
  const freshNodes = new Set(fp ? fp.nodes.map((n) => n.name) : scheduled);
  const resumed = new Set(scheduled.filter((n) => ctx.book.drives(pool.name, n)));
  const remaining = scheduled.filter((n) => freshNodes.has(n) || resumed.has(n));
  const batches = new Map<string, number>();
  pool.waves.forEach((w, i) => w.forEach((n) => batches.set(n, i + 1)));
  const self = ctx.selfNode !== null && remaining.includes(ctx.selfNode) && !resumed.has(ctx.selfNode) ? ctx.selfNode : null;
  if (self) batches.set(self, pool.waves.length);
  const batchOf = (n: string): number => {
    const b = batches.get(n);
    if (b === undefined) throw new Error(`internal: node ${n} is in no wave of pool ${pool.name}`);
    return b;
  };
  const left = new Map<number, Set<string>>();
  pool.waves.forEach((_, i) => {
    if (!ctx.book.waveDone(pool.name, i + 1)) left.set(i + 1, new Set());
  });
  for (const n of remaining) left.get(batchOf(n))?.add(n);
  return {
    pool,
    k: 0,
    budget: k,
    pending: [],
    running: new Map(),
    failures: [],
    fatal: {},
    gating: 0,
    gateFailure: null,
    queue: selfLast([...resumed, ...remaining.filter((n) => !resumed.has(n))], self, (n) => n),
    batchOf,
    left,
    opened: new Set(),
    resumed,
    stop: null,
    openedAt: new Map(),
    firstSeen: new Map(),
    skewed: new Set(),
    staging: { nodes: [], deadline: Infinity },
  };
}

/** Admits nodes until none is left, a node failed or a gate stopped admission; returns once none is in flight. */
async function admitAll(ctx: PoolContext, s: SlotRun): Promise<void> {
  let waitingSince: number | null = null;
  for (;;) {
    if (s.fatal.set) throw s.fatal.err;
    await ctx.lease.assertHeld();
    const started = holding(s) || s.stop || s.gating ? 0 : await admitRound(ctx, s);
    if (s.fatal.set) throw s.fatal.err;
    // The budget wait counts only while no node of ours is in flight: a node that waits for
    // a slot our own nodes hold waits as long as they take (they have their own limits).
    if (started || s.running.size) waitingSince = null;
    const admitting = !holding(s) && !s.stop && (s.pending.length > 0 || s.queue.length > 0);
    if (!s.running.size && !admitting) return;
    if (!admitting || s.gating) {
      // A node's afterNode gate (it is among those running) holds every admission until it ends.
      await Promise.race(s.running.values());
      continue;
    }
    if (!s.pending.length) continue; // open the next batch
    const ac = new AbortController();
    const wake = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err) => {
          if (!cancelledByCaller(err, ac.signal)) setFatal(s, err);
        },
      );
    if (s.running.size) {
      // Nodes of ours hold slots: admission is looked at again when one of them is back, or
      // when a node waiting for the staging gate passes it. Not on every change of the pool:
      // at 1,000 nodes that is thousands of looks at every member (a node that comes back
      // on its own frees its slot at the next of these moments).
      const staged = s.staging.nodes.length
        ? wake(
            ctx.driver.waitFor((snap) => stagingMoved(s, snap), {
              timeoutSeconds: Math.max(0, s.staging.deadline - ctx.now()) + 0.001,
              signal: ac.signal,
              description: `staging in pool ${s.pool.name}`,
            }),
          )
        : null;
      await Promise.race([...(staged ? [staged] : []), ...s.running.values()]);
      ac.abort();
      await staged;
      continue;
    }
    // No node of ours in flight: the budget is held by nodes out of service on their own (or
    // nodes wait for staging). Wake up when the pool's availability changes or a waiting node
    // passes the staging gate; after the budget wait, the pool halts saying why.
    waitingSince ??= ctx.now();
    const remaining = waitingSince + ctx.timeouts.budgetSeconds - ctx.now();
    if (remaining <= 0) {
      await failPendingAfterBudgetWait(ctx, s);
      continue;
    }
    const signature = await peek(ctx.driver, (snap) => availabilitySignature(snap, s.pool));
    const seconds = Math.max(0, Math.min(remaining, s.staging.deadline - ctx.now())) + 0.001;
    await wake(
      ctx.driver.waitFor((snap) => availabilitySignature(snap, s.pool) !== signature || stagingMoved(s, snap), {
        timeoutSeconds: seconds,
        signal: ac.signal,
        description: `budget or staging in pool ${s.pool.name}`,
      }),
    );
  }
}

/** Opens the next batch when the admitted ones have all started, checks the window, and starts what the budget allows. */
async function admitRound(ctx: PoolContext, s: SlotRun): Promise<number> {
  if (!s.pending.length && s.queue.length && !(await openBatch(ctx, s))) return 0;
  if (!s.pending.length) return 0;
  const batch = Math.max(...s.pending.map((n) => s.batchOf(n)));
  try {
    checkPolicy(ctx, s.pool, batch);
  } catch (err) {
    s.stop = { err };
    return 0;
  }
  const { staging, d } = await peek(ctx.driver, (snap) => {
    const staging = stagingWaits(ctx, s, snap);
    const waiting = new Set(staging.waiting.map((w) => w.node));
    return { staging, d: decideRound(ctx, snap, { ...s, pending: s.pending.filter((n) => !waiting.has(n)) }) };
  });
  await ctx.book.save(); // first sights of staging nodes (staging-clock.ts), for a later run
  s.staging = { nodes: staging.waiting.map((w) => w.node), deadline: Math.min(Infinity, ...staging.waiting.map((w) => w.since + stagingLimit(ctx, s.pool))) };
  if (staging.overdue.length) {
    s.failures.push(...staging.overdue);
    for (const f of staging.overdue) s.pending.splice(s.pending.indexOf(f.node), 1);
    return 0;
  }
  for (const name of [...d.done, ...d.gone]) {
    s.pending.splice(s.pending.indexOf(name), 1);
    if (d.done.includes(name)) await ctx.book.finishNode(name);
    else ctx.book.dropNode(name); // the Node is gone, and its entry with it
    if (d.done.includes(name)) await nodeBack(ctx, s, name);
  }
  if (d.failed.length) {
    s.failures.push(...d.failed);
    for (const f of d.failed) s.pending.splice(s.pending.indexOf(f.node), 1);
    return 0;
  }
  // One write-ahead record for every node admitted in this round, then the cordons.
  const fresh = d.start.map(({ name, v }) => recordCordonAhead(ctx, s.pool, name, s.batchOf(name), v));
  if (d.start.length) await ctx.book.save();
  let started = 0;
  for (const [i, { name, v }] of d.start.entries()) {
    s.pending.splice(s.pending.indexOf(name), 1);
    if (!(await cordonNow(ctx, s.pool, s.batchOf(name), name, v, fresh[i]))) {
      // Someone else cordoned it between the look and the write: theirs, not taken.
      ctx.book.dropNode(name);
      await ctx.book.save();
      s.pending.push(name);
      continue;
    }
    started++;
    s.running.set(name, startSlotNode(ctx, s, name));
  }
  return started;
}

/**
 * Opens the next admission batch: the first one of this run as it is; a later one only after
 * a re-plan shows the remaining work unchanged (and never with --step). Returns false when
 * admission stops instead.
 */
async function openBatch(ctx: PoolContext, s: SlotRun): Promise<boolean> {
  if (s.opened.size) {
    if (ctx.step) {
      s.stop = { stepped: true };
      return false;
    }
    try {
      await checkStale(ctx);
    } catch (err) {
      s.stop = { err };
      return false;
    }
  }
  const fresh = s.queue.filter((n) => !s.resumed.has(n));
  const b = fresh.length ? s.batchOf(fresh[0]) : Math.max(...s.queue.map((n) => s.batchOf(n)));
  const nodes = s.queue.filter((n) => (s.opened.size === 0 && s.resumed.has(n)) || s.batchOf(n) <= b);
  s.queue = s.queue.filter((n) => !nodes.includes(n));
  for (const n of nodes) s.opened.add(s.batchOf(n));
  s.pending.push(...nodes);
  for (const n of nodes) s.openedAt.set(n, ctx.now());
  ctx.emit({ type: 'wave-start', pool: s.pool.name, wave: b, waves: s.pool.waves.length, nodes });
  return true;
}

/** Runs one admitted node's update, then its afterNode gate; its failure stops admission, an error stops the run. */
function startSlotNode(ctx: PoolContext, s: SlotRun, name: string): Promise<void> {
  return runBootcNode(ctx, s.pool, s.batchOf(name), name)
    .then(async (r) => {
      if (!r.ok) s.failures.push(r.failure);
      else {
        await gateNode(ctx, s, name, s.batchOf(name));
        await nodeBack(ctx, s, name);
      }
    })
    .catch((err) => setFatal(s, err))
    .finally(() => s.running.delete(name));
}

/** A node is back on the target: its batch is a finished wave once all its nodes are. */
async function nodeBack(ctx: PoolContext, s: SlotRun, name: string): Promise<void> {
  const b = s.batchOf(name);
  const left = s.left.get(b);
  if (!left) return;
  left.delete(name);
  if (left.size || !s.opened.has(b) || s.queue.some((n) => s.batchOf(n) === b)) return;
  s.left.delete(b);
  // The run record's cursor says "batches 1..n finished": batch b moves it only once every
  // batch before it has finished too (with jitter a later batch can finish first).
  for (let k = ctx.book.pool(s.pool.name).wavesDone + 1; k <= s.pool.waves.length && !s.left.has(k); k++) await afterWave(ctx, s.pool, k);
}

/** At the start: the leading batches with nothing left to do move the cursor (no events: nothing ran). */
function recordFinishedBatches(ctx: PoolContext, s: SlotRun): void {
  let k = ctx.book.pool(s.pool.name).wavesDone;
  while (k < s.pool.waves.length && !s.left.has(k + 1)) k++;
  ctx.book.finishWave(s.pool.name, k);
}

/**
 * The staging gate, node by node (docs/design.md §7, docs/safety.md rule 8; the wave's version is
 * staging-gate.ts stagingGate): pending nodes not past the gate wait; the limit runs from the
 * node's recorded staging attempt (Idle=False/Staging's lastTransitionTime, or when first seen
 * staging), or from its admission batch's opening for a node that never started staging.
 * Nodes in flight, gone, Degraded or on the target are decideRound's.
 */
function stagingWaits(ctx: PoolContext, s: SlotRun, snap: ClusterSnapshot) {
  const waiting: { node: string; since: number }[] = [];
  const overdue: NodeFailure[] = [];
  const limit = stagingLimit(ctx, s.pool);
  const minutes = Math.round(limit / 60);
  for (const name of s.pending) {
    const v = viewIn(snap, name);
    if (!v || atTarget(s.pool, v) || v.degraded || ctx.book.pastCordon(name) || ctx.book.drives(s.pool.name, name)) continue;
    const st = stagingOf(snap, s.pool, name);
    if (st.state === 'passed') {
      ctx.book.forgetStaging(s.pool.name, name);
      continue;
    }
    let since: number;
    let reason: string;
    if (st.state === 'staging') {
      if (!s.firstSeen.has(name)) s.firstSeen.set(name, ctx.now());
      since = stagingStart(ctx, s.pool.name, name, st.since, s.skewed).since;
      reason = `staging active for more than ${minutes}m`;
    } else {
      since = s.openedAt.get(name) ?? ctx.now();
      reason = `never started staging: ${st.why}`;
    }
    if (ctx.now() - since > limit) overdue.push({ node: name, reason, conditions: v.conditions });
    else waiting.push({ node: name, since });
  }
  return { waiting, overdue };
}

/** A node that waited for the staging gate passed it, or started staging (its own limit starts then). */
function stagingMoved(s: SlotRun, snap: ClusterSnapshot): boolean {
  return s.staging.nodes.some((name) => {
    const st = stagingOf(snap, s.pool, name);
    return st.state === 'passed' || (st.state === 'staging' && !s.firstSeen.has(name));
  });
}
