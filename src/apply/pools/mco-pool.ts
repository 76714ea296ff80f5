/**
 * The MCO pool runner (docs/design.md §7 "Pools and waves"): the Machine Config Operator moves the
 * nodes of a MachineConfigPool; bootcplan sets the pool's maxUnavailable and new
 * configuration with the pool paused, then makes the waves by unpausing it until the MCO
 * has started as many nodes as the wave holds and pausing it again at once (the MCO
 * finishes the nodes it started and takes no more). It reports the MCO's steps per node
 * as it sees them (trackMco).
 */
import type { PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import type { NodeFailure } from '../engine/context.ts';
import type { PoolContext } from './context.ts';
import { applyChange } from '../engine/changes.ts';
import { retry } from '../engine/retry.ts';
import { afterLastWave, afterWave, beforeWave, checkPolicy, checkStale, halt } from '../gates/wave-gates.ts';
import { noticeAvailability } from './observe.ts';
import { administratorPause } from '../../domain/cordons.ts';
import { atTarget, indexOf, membersOf, peek, viewIn } from '../ports/views.ts';
import { rollsTarget } from '../../domain/mco-rollout.ts';
import { overriddenTarget } from '../../domain/mco-render.ts';
import { osImageMachineConfigName } from '../../plan/pool-changes.ts';
import { mcoNodeGates } from '../gates/health-gates.ts';
import { onGateFailure } from '../gates/gate-failure.ts';

export async function runMcoPool(ctx: PoolContext, pool: PlanPool): Promise<'done' | 'stepped'> {
  const pp = ctx.book.pool(pool.name);
  const changes = ctx.plan.changes.filter((c) => c.pool === pool.name).sort((a, b) => a.order - b.order);
  const hasWaves = pool.waves.length > 0 && pp.wavesDone < pool.waves.length;
  if (changes.some((c) => c.action !== 'noop')) {
    if (ctx.step && ctx.wavesRun >= 1) return 'stepped';
    const { fresh } = await checkStale(ctx);
    checkPolicy(ctx, pool, null);
    // maxUnavailable first; pause while the new MachineConfig renders, so that the MCO
    // starts only when the first wave does.
    for (const c of changes.filter((x) => x.kind === 'MachineConfigPool')) await applyChange(ctx, c, fresh, { dropPaused: hasWaves });
    if (hasWaves) await setPaused(ctx, pool.name, true, false);
    // The pools that render this pool's MachineConfig too roll in their own turn: paused first.
    if (changes.some((c) => c.kind === 'MachineConfig' && c.action !== 'noop')) await pauseInheritors(ctx, pool);
    for (const c of changes.filter((x) => x.kind !== 'MachineConfigPool')) await applyChange(ctx, c, fresh);
  }
  // A rollback continued after its stop finds the pool paused by the stopped one, its nodes
  // back already: left as the spec wants it all the same (docs/apply.md "Continuing a rollback").
  if (!pool.waves.length) return ctx.plan.rollback ? leaveAsSpecWants(ctx, pool) : 'done';
  ctx.emit({
    type: 'pool-start',
    pool: pool.name,
    waves: pool.waves.length,
    message: `${pool.waves.flat().length} node(s), maxUnavailable ${pool.maxUnavailable.resolved}; the MCO moves the nodes`,
  });
  for (let k = 1; k <= pool.waves.length; k++) {
    if (ctx.book.waveDone(pool.name, k)) continue;
    if (!(await beforeWave(ctx, pool, k))) return 'stepped';
    ctx.emit({ type: 'wave-start', pool: pool.name, wave: k, waves: pool.waves.length, nodes: pool.waves[k - 1] });
    // The MCO takes the wave's nodes out of service itself: each is silenced before the unpause.
    for (const n of pool.waves[k - 1]) await ctx.silences?.begin(pool.name, n, k);
    await runMcoWave(ctx, pool, k);
    await afterWave(ctx, pool, k);
  }
  if ((await afterLastWave(ctx, pool)) === 'stepped') return 'stepped';
  return leaveAsSpecWants(ctx, pool);
}

/**
 * The plan's pools that inherit this pool's OS-image MachineConfig (PlanPool.inheritedBy) and
 * have waves left are paused before it is written, as bootcplan pauses a pool of its own, so that
 * the MCO does not roll them at once; their own turn unpauses them wave by wave. A pool already
 * paused (by an administrator, or before) is left as it is (docs/safety.md rule 6).
 */
/**
 * bootcplan's pause or unpause of a MachineConfigPool, marked with the plan id, retried on a
 * conflict; `gated`: behind the lock's gate (Lease.write), as a disruptive step is. The pause
 * again on a wave's way out is not gated: it must happen when a stop was asked for too.
 */
function setPaused(ctx: PoolContext, name: string, paused: boolean, gated = true): Promise<void> {
  const write = () => ctx.driver.setPoolPaused('MachineConfigPool', name, paused, ctx.plan.id);
  return gated ? ctx.lease.write(write) : retry(write);
}

async function pauseInheritors(ctx: PoolContext, pool: PlanPool): Promise<void> {
  for (const name of pool.inheritedBy ?? []) {
    const other = ctx.plan.pools.find((p) => p.name === name);
    if (!other || other.waves.every((_, i) => ctx.book.waveDone(name, i + 1))) continue;
    const paused = await peek(ctx.driver, (s) => s.machineConfigPools.find((p) => p.metadata.name === name)?.spec?.paused === true);
    if (paused) continue;
    await setPaused(ctx, name, true);
  }
}

async function leaveAsSpecWants(ctx: PoolContext, pool: PlanPool): Promise<'done'> {
  // bootcplan paused the pool between waves; leave it as the spec wants it, unless someone
  // else paused it meanwhile (no bootcplan.dev/paused-by mark: docs/safety.md rule 6).
  const theirs = await peek(ctx.driver, (s) => administratorPause(s.machineConfigPools.find((p) => p.metadata.name === pool.name)) !== null);
  if (!pool.paused && !theirs) {
    await setPaused(ctx, pool.name, false);
  }
  return 'done';
}

/**
 * On start (a resume): every MCO pool an earlier apply unpaused and did not pause again (it
 * died or was stopped in between; PoolProgress.mcoUnpaused) is paused again before anything
 * else, so that the MCO does not roll the rest of the pool on its own.
 */
export async function repauseLeftovers(ctx: PoolContext): Promise<void> {
  const left = Object.entries(ctx.book.record.pools).filter(([, pp]) => pp.mcoUnpaused);
  for (const [name, pp] of left) {
    await setPaused(ctx, name, true);
    delete pp.mcoUnpaused;
  }
  for (const pp of Object.values(ctx.book.record.pools)) delete pp.interrupted;
  if (left.length) await ctx.book.save();
}

function desiredConfigOf(s: ClusterSnapshot, node: string): string | undefined {
  return indexOf(s).idx.nodes.get(node)?.metadata.annotations?.['machineconfiguration.openshift.io/desiredConfig'];
}

/**
 * The rendered config of bootcplan's own rollout: the pool's spec.configuration.name when it
 * carries the plan's target image (src/domain/mco-rollout.ts rollsTarget), else null (not
 * rendered yet). Nodes the MCO moves to another config are not this pool's waves (docs/safety.md
 * rule 5: they were unavailable when planned and only use budget).
 */
function mcoTarget(s: ClusterSnapshot, pool: PlanPool): string | null {
  const mcp = s.machineConfigPools.find((p) => p.metadata.name === pool.name);
  const name: string | null = mcp?.spec?.configuration?.name ?? mcp?.status?.configuration?.name ?? null;
  if (!name) return null;
  const osImageURL = indexOf(s).idx.machineConfigs.get(name)?.spec?.osImageURL;
  return typeof osImageURL === 'string' && rollsTarget({ pool: pool.name, rendered: name, rolledOut: null, updating: false, osImageURL }, pool.targetImage)
    ? name
    : null;
}

/** The pool's nodes the MCO is updating, those that failed, and how many scheduled ones are left. */
function waveState(ctx: PoolContext, s: ClusterSnapshot, pool: PlanPool, k: number, scheduled: Set<string>) {
  trackMco(ctx, s, pool, k);
  const target = mcoTarget(s, pool);
  noteRenderedTarget(ctx, pool, target);
  // Not rendered with the target yet: another MachineConfig may win the merge (src/domain/mco-render.ts).
  const mcp = target === null ? s.machineConfigPools.find((p) => p.metadata.name === pool.name) : undefined;
  const overridden = mcp ? overriddenTarget(mcp, s.machineConfigs, osImageMachineConfigName(pool.name), pool.targetImage) : null;
  const inFlight: string[] = [];
  const failed: NodeFailure[] = [];
  let remaining = 0;
  for (const m of membersOf(s, pool.name)) {
    const v = viewIn(s, m);
    if (!v) continue;
    if (v.degraded && (v.updating || scheduled.has(m))) failed.push({ node: m, reason: 'Degraded during its update', conditions: v.conditions });
    // In this wave: the MCO moves it to the pool's rendered config. Other MCO work in flight
    // (docs/safety.md rule 5) was unavailable when planned, is not scheduled, and only uses budget.
    else if (v.updating && target !== null && desiredConfigOf(s, m) === target) inFlight.push(m);
    else if (scheduled.has(m) && !atTarget(pool, v)) remaining++;
  }
  return { inFlight, failed, remaining, overridden };
}

/**
 * The rendered config this run made the MCO roll, kept with the pool's origin when first seen:
 * a rollback moves exactly the nodes on it (src/domain/rollback.ts inMcoRollback). Saved with
 * the wave's end.
 */
function noteRenderedTarget(ctx: PoolContext, pool: PlanPool, target: string | null): void {
  const o = ctx.book.record.pools[pool.name]?.origin;
  if (target && o?.kind === 'mco' && o.renderedTarget === null && target !== o.rendered) o.renderedTarget = target;
}

/** A wave's state that stops the pool: a failed node, or another MachineConfig winning the merge. */
async function haltOn(ctx: PoolContext, pool: PlanPool, st: { failed: NodeFailure[]; overridden: string | null }): Promise<void> {
  if (st.failed.length) await halt(ctx, pool, st.failed);
  if (st.overridden) await halt(ctx, pool, [], st.overridden);
}

async function runMcoWave(ctx: PoolContext, pool: PlanPool, k: number) {
  const scheduled = new Set(pool.nodes.filter((n) => n.wave !== null).map((n) => n.name));
  const state = (s: ClusterSnapshot) => waveState(ctx, s, pool, k, scheduled);
  const before = await peek(ctx.driver, state);
  await haltOn(ctx, pool, before);
  const want = Math.min(pool.waves[k - 1].length, before.remaining + before.inFlight.length);
  let picked = before.inFlight;
  if (before.inFlight.length < want) {
    // Recorded before the unpause: a stopped apply, or any rerun, pauses the pool again.
    const pp = ctx.book.pool(pool.name);
    await ctx.lease.assertHeld();
    pp.mcoUnpaused = true;
    await ctx.book.save();
    await setPaused(ctx, pool.name, false);
    const pauseAgain = async () => {
      await setPaused(ctx, pool.name, true, false);
      delete pp.mcoUnpaused; // saved with the wave's end (a rerun that still sees it pauses a paused pool: harmless)
    };
    let got;
    try {
      got = await ctx.driver.waitFor(
        (s) => {
          const st = state(s);
          return st.failed.length || st.overridden || st.inFlight.length >= want || (st.remaining === 0 && st.inFlight.length === 0) ? st : null;
        },
        { timeoutSeconds: ctx.timeouts.mcoStartSeconds, description: `the MCO starts updating pool ${pool.name}` },
      );
    } catch (err) {
      // Stopped here (a stop request, a lost lock, an API error): the pool it unpaused for this
      // wave is paused again first, even without the lock: pausing is the safe side.
      await pauseAgain().catch(() => undefined);
      throw err;
    }
    // Paused again at once: the MCO finishes the nodes it started and takes no more.
    await pauseAgain();
    const st = got ?? (await peek(ctx.driver, state));
    await haltOn(ctx, pool, st);
    if (!st.inFlight.length && st.remaining)
      await halt(
        ctx,
        pool,
        [],
        `the MCO did not start updating pool ${pool.name} within ${Math.round(ctx.timeouts.mcoStartSeconds / 60)}m after it was unpaused`,
      );
    picked = st.inFlight;
  }
  // The wave is over when each node it took runs the target, is Ready and schedulable; each
  // node's afterNode gate starts as it is seen back.
  const gates = mcoNodeGates(ctx, pool, k);
  const done = await ctx.driver.waitFor(
    (s) => {
      const st = state(s);
      if (st.failed.length) return st;
      return picked
        .map((n) => {
          const v = viewIn(s, n);
          const back = !v || (atTarget(pool, v) && v.ready && !v.cordoned);
          if (back && v) gates.see(n);
          return back;
        })
        .every(Boolean)
        ? st
        : null;
    },
    { timeoutSeconds: ctx.timeouts.nodeSeconds, description: `wave ${k} of pool ${pool.name}` },
  );
  if (!done) {
    const views = await peek(ctx.driver, (s) => picked.map((n) => ({ node: n, v: viewIn(s, n) })));
    await halt(
      ctx,
      pool,
      views
        .filter(({ v }) => !v || !atTarget(pool, v) || !v.ready)
        .map(({ node, v }) => ({ node, reason: `not updated within ${Math.round(ctx.timeouts.nodeSeconds / 60)}m`, conditions: v?.conditions ?? [] })),
    );
  } else if (done.failed.length) await halt(ctx, pool, done.failed);
  const failed = await gates.settle();
  if (failed) await onGateFailure(ctx, pool, failed);
}

/** The MCO's steps of a node as bootcplan sees them, in order: phase p (1..5) is MCO_STEPS[p - 1]. */
const MCO_STEPS = ['cordon', 'drain-done', 'reboot', 'booted', 'uncordon'] as const;

/** The MCO moves the nodes of MCO pools: report its steps as bootcplan sees them. */
function trackMco(ctx: PoolContext, s: ClusterSnapshot, pool: PlanPool, k: number) {
  const target = mcoTarget(s, pool);
  noticeAvailability(
    ctx,
    s,
    pool,
    (m) => (indexOf(s).idx.nodes.get(m)?.metadata.annotations ?? {})['machineconfiguration.openshift.io/desiredConfig'] === target,
  );
  if (!target) return;
  for (const m of membersOf(s, pool.name)) {
    const n = indexOf(s).idx.nodes.get(m);
    const v = viewIn(s, m);
    if (!n || !v) continue;
    const ann = n.metadata.annotations ?? {};
    if (ann['machineconfiguration.openshift.io/desiredConfig'] !== target) continue;
    const state = ann['machineconfiguration.openshift.io/state'];
    const phase = atTarget(pool, v)
      ? v.ready
        ? v.cordoned
          ? 4
          : 5
        : 3
      : state === 'Rebooting' || !v.ready
        ? 3
        : ann['machineconfiguration.openshift.io/lastAppliedDrain'] === `drain-${target}`
          ? 2
          : v.cordoned
            ? 1
            : 0;
    // A node on the target config when first seen is not one this apply moves (the MCO names a
    // config by its content: a node can be on it already): no steps are reported for it.
    const before = ctx.mcoPhase.get(m) ?? (atTarget(pool, v) ? 5 : 0);
    if (phase <= before) continue;
    ctx.mcoPhase.set(m, phase);
    for (let i = before + 1; i <= phase; i++) {
      const type = MCO_STEPS[i - 1];
      if (type === 'reboot') ctx.emit({ type, pool: pool.name, node: m, wave: k, kind: 'hard' });
      else ctx.emit({ type, pool: pool.name, node: m, wave: k });
    }
  }
}
