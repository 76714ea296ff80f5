/**
 * The bootc pool runner (DESIGN §7 "Pools and waves"): bootcplan itself moves the nodes of
 * a BootcNodePool, wave by wave. The targets of every bootc pool were set before the first
 * pool ran, so all their nodes stage in parallel; a wave then cordons, drains and reboots
 * its nodes (setting the BootcNode's desired image state to Booted) within the pool's
 * maxUnavailable budget, and uncordons each node once it runs the target, Idle and Ready.
 */
import type { Plan, PlanPool } from '../plan/types.ts';
import type { ClusterSnapshot, Condition } from '../cluster/types.ts';
import { conditionOf, type NodeView } from '../domain/nodes.ts';
import { DrainTimeoutError, isoOf } from './driver.ts';
import { cancelledByCaller } from './interrupt.ts';
import type { ApplyContext, NodeFailure, NodeOutcome, RebootEnd } from './context.ts';
import { retry } from './changes.ts';
import { afterLastWave, afterWave, availabilitySignature, beforeWave, budgetChanged, failPendingAfterBudgetWait, checkStale, halt } from './wave-gates.ts';
import { noticeAvailability } from './observe.ts';
import { atTarget, bootedFrom, bootcNodeIn, controlPlaneOutOfService, membersOf, pastStagingGate, peek, viewIn } from './views.ts';
import { stagingLimit } from './staging-clock.ts';
import { resumedPastCordon, stagingGate } from './staging-gate.ts';
import { nodeGate, type GateFailure } from './health-gates.ts';
import { onGateFailure } from './gate-failure.ts';

export async function runBootcPool(ctx: ApplyContext, pool: PlanPool): Promise<'done' | 'stepped'> {
  if (pool.waves.length) ctx.emit({ type: 'pool-start', pool: pool.name, waves: pool.waves.length, message: `${pool.waves.flat().length} node(s), maxUnavailable ${pool.maxUnavailable.resolved}` });
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
      await ctx.driver.waitFor((s) => all.every((n) => !stillStaging(ctx, s, pool, n)), { timeoutSeconds: stagingLimit(ctx, pool), description: `nodes of pool ${pool.name} staged` });
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
function stillStaging(ctx: ApplyContext, s: ClusterSnapshot, pool: PlanPool, name: string): boolean {
  const v = viewIn(s, name);
  if (!v || atTarget(pool, v) || pastStagingGate(s, pool, v) || v.degraded) return false;
  return !resumedPastCordon(ctx, s, pool, name);
}


/**
 * The nodes of bootc wave `k` (DESIGN §7; README "apply"). The saved plan grouped the
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
 *   its drain evicts this apply (DESIGN §7 "Stopping"; src/domain/waves.ts selfLast);
 * - wave k takes as many nodes as the saved plan's wave k, the last wave all that are
 *   left: the number of waves stays the plan's and a wave is never larger than the plan
 *   made it (at most the budget); the budget is enforced again at each cordon
 *   (runBootcWave) whatever the composition.
 */
function composeBootcWave(ctx: ApplyContext, pool: PlanPool, k: number, fresh: Plan): string[] {
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
  scheduled.forEach((n, i) => { if (!rank.has(n)) rank.set(n, base + i); });
  if (ctx.selfNode && rank.has(ctx.selfNode)) rank.set(ctx.selfNode, Number.MAX_SAFE_INTEGER);
  const byRank = (a: string, b: string) => (rank.get(a) ?? Number.MAX_SAFE_INTEGER) - (rank.get(b) ?? Number.MAX_SAFE_INTEGER);
  const others = remaining.filter((n) => !inFlight.has(n)).sort(byRank);
  const last = k === pool.waves.length;
  const room = last ? others.length : Math.max(0, pool.waves[k - 1].length - inFlight.size);
  return [...inFlight, ...others.slice(0, room)].sort(byRank);
}

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
}

/** No node of the wave may start any more: a node failed, or a health gate did. */
export const holding = (w: WaveRun) => w.failures.length > 0 || w.gateFailure !== null;

/** Budgeted start of the wave's nodes; returns the failures (empty when all succeeded) and a failed afterNode gate. */
async function runBootcWave(ctx: ApplyContext, pool: PlanPool, k: number, names: string[]): Promise<{ failures: NodeFailure[]; gateFailure: GateFailure | null }> {
  const w: WaveRun = { pool, k, budget: pool.controlPlane ? 1 : pool.maxUnavailable.resolved, pending: [...names], running: new Map(), failures: [], fatal: {}, gating: 0, gateFailure: null };
  try {
    return { failures: await waveLoop(ctx, w), gateFailure: w.gateFailure };
  } catch (err) {
    setFatal(w, err);
    return stopWave(ctx, w);
  }
}

async function waveLoop(ctx: ApplyContext, w: WaveRun): Promise<NodeFailure[]> {
  const { pool, k } = w;
  let waitingSince: number | null = null;
  for (;;) {
    if (w.fatal.set) throw w.fatal.err;
    await ctx.lease.assertHeld();
    let started = 0;
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
    const changed = budgetChanged(ctx, pool, signature, remaining, ac.signal)
      .then(() => undefined, (err) => { if (!cancelledByCaller(err, ac.signal)) setFatal(w, err); });
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
async function stopWave(ctx: ApplyContext, w: WaveRun): Promise<never> {
  if (ctx.lease.stopRequested || ctx.lease.isLost) await Promise.allSettled([...w.running.values()]);
  throw w.fatal.err;
}

export function setFatal(w: WaveRun, err: unknown) {
  if (!w.fatal.set) { w.fatal.set = true; w.fatal.err = err; }
}

/**
 * Which pending nodes of the wave start now, on one view of the cluster: those on the
 * target are done, deleted ones gone, a Degraded one fails the wave; the others start
 * while the pool's unavailable count, with them, stays within the budget.
 */
export function decideRound(ctx: ApplyContext, s: ClusterSnapshot, w: WaveRun) {
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
    if (!v) { gone.push(name); continue; }
    const ours = !!rec && !rec.wasCordoned && rec.step !== 'done';
    if (atTarget(pool, v) && (!ours || !v.cordoned)) { done.push(name); continue; }
    if (v.degraded) { failed.push({ node: name, reason: 'Degraded', conditions: v.conditions }); break; }
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
function startNode(ctx: ApplyContext, w: WaveRun, name: string): Promise<void> {
  return runBootcNode(ctx, w.pool, w.k, name).then(
    async (r) => {
      if (!r.ok) w.failures.push(r.failure);
      else await gateNode(ctx, w, name, w.k);
    },
  ).catch((err) => setFatal(w, err)).finally(() => w.running.delete(name));
}

/** The afterNode gate of a node that is back (waves and slots): while it runs, no node of the pool starts. */
export async function gateNode(ctx: ApplyContext, w: WaveRun, name: string, wave: number): Promise<void> {
  w.gating++;
  try {
    const failed = await nodeGate(ctx, w.pool, wave, name);
    if (failed) w.gateFailure ??= failed;
  } finally {
    w.gating--;
  }
}

// ----------------------------------------------------------------- one node

/**
 * The write-ahead entry of a cordon, in memory: cordonNow writes it with the cordon (the
 * budget was checked just before, on the same view). Returns whether the node's entry is new.
 */
export function recordCordonAhead(ctx: ApplyContext, pool: PlanPool, name: string, k: number, v: NodeView): boolean {
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
export async function cordonNow(ctx: ApplyContext, pool: PlanPool, k: number, name: string, v: NodeView, fresh: boolean): Promise<boolean> {
  if (!v.cordoned) {
    await ctx.lease.assertHeld();
    const r = await retry(() => ctx.driver.cordon(name, ctx.plan.id, ctx.book.nodes[name]));
    if (r === 'cordoned') {
      ctx.emit({ type: 'cordon', pool: pool.name, node: name, wave: k });
      return true;
    }
    ctx.emit({ type: 'node-unavailable', pool: pool.name, node: name, message: 'cordoned by someone else just now: not taken, it stays cordoned', conditions: v.conditions });
    return false;
  }
  // Cordoned already (an administrator's, or this update's own from an earlier run): no
  // cordon to write, the new entry goes alone.
  if (fresh) {
    await ctx.book.writeNode(name);
    if (ctx.book.nodes[name]?.wasCordoned) ctx.emit({ type: 'cordon', pool: pool.name, node: name, wave: k, message: 'already cordoned by an administrator; it stays cordoned' });
  }
  return true;
}

export async function runBootcNode(ctx: ApplyContext, pool: PlanPool, k: number, name: string): Promise<NodeOutcome> {
  ctx.inFlight.add(name);
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
        const kind: 'soft' | 'hard' = pool.rebootPolicy === 'AllowSoftReboot' && bn ? 'soft' : 'hard';
        await ctx.lease.assertHeld();
        // No write-ahead entry: the BootcNode's desiredImageState is the record of the request
        // (views.ts rebootRequested); the entry's step, time and kind go to the Node with the
        // uncordon (marked done).
        ctx.book.setNode(name, { step: 'reboot', rebootKind: kind, rebootAt: isoOf(ctx.now()) });
        await retry(() => ctx.driver.setDesiredImageState(name, 'Booted'));
        ctx.emit({ type: 'reboot', pool: pool.name, node: name, wave: k, kind });
      }
      const r = await ctx.driver.waitFor((s): RebootEnd | null => {
        const x = viewIn(s, name);
        if (!x) return { gone: true, conditions: [] };
        if (x.degraded) return { failed: true, conditions: x.conditions };
        const idle = conditionOf(bootcNodeIn(s, name), 'Idle');
        if (atTarget(pool, x) && idle?.status === 'True' && x.ready) return { ok: true as const };
        return null;
      }, { timeoutSeconds: ctx.timeouts.nodeSeconds, description: `${name} booted into the target` });
      if (!r) {
        const x = await peek(ctx.driver, (s) => viewIn(s, name));
        return fail(`not back on the target within ${Math.round(ctx.timeouts.nodeSeconds / 60)}m`, x?.conditions ?? []);
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
async function uncordonOurs(ctx: ApplyContext, pool: PlanPool, k: number, name: string): Promise<boolean> {
  // A rollback that continues an unfinished one (docs/apply.md "Continuing a rollback") undoes
  // the cordons that one marked with its own plan id.
  const entry = ctx.book.nodes[name];
  const by = entry && ctx.plan.rollback?.continues?.includes(entry.planId) ? entry.planId : ctx.plan.id;
  const r = await retry(() => ctx.driver.uncordon(name, by, ctx.book.doneEntry(name)));
  if (r === 'uncordoned') ctx.emit({ type: 'uncordon', pool: pool.name, node: name, wave: k });
  else if (r === 'not-ours') {
    const v = await peek(ctx.driver, (s) => viewIn(s, name));
    if (v?.cordoned) ctx.emit({ type: 'node-unavailable', pool: pool.name, node: name, message: 'cordoned by someone else while bootcplan updated it (no bootcplan.dev/cordoned-by mark of this plan): left cordoned', conditions: v.conditions });
  }
  return r !== 'not-ours';
}
