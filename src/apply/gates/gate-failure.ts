/**
 * What a failed health gate does (docs/apply.md "Health gates"): by then no further node has
 * started (every gate sits before a start) and the nodes in flight have finished; the failing
 * check's `onFailure` decides the rest. `halt`: the pool is paused as a failed node pauses it,
 * the run record says which check halted it, apply exits 5 (HealthCheckFailedError), and the
 * status, the Event and the notification name the check and the value it saw. `pause`: the
 * same, but the pool's hold says so, and `apply PLANFILE --retry` of this plan goes on past the
 * failed gate instead of measuring it again (holds.ts checkHolds). `rollback`:
 * rollbackAfterGate (gate-rollback.ts). A failed preflight gate writes nothing and never rolls
 * back: nothing was updated, the cluster was unhealthy before bootcplan touched it.
 */
import type { PlanPool } from '../../plan/types.ts';
import { HealthCheckFailedError, InputError } from '../../base/errors.ts';
import type { GateContext } from './context.ts';
import { retry } from '../engine/retry.ts';
import { gateWhere, type GateFailure } from './health-gates.ts';
import { rollbackAfterGate } from './gate-rollback.ts';
import { addHold } from './holds.ts';

/** Carries out the failing check's onFailure; never returns. */
export async function onGateFailure(ctx: GateContext, pool: PlanPool | null, f: GateFailure): Promise<never> {
  if (pool && f.check.onFailure === 'rollback') return rollbackAfterGate(ctx, pool, f, haltForGate);
  return haltForGate(ctx, pool, f);
}

/** The failure in one line: "health check X failed after wave 1/4 of pool worker: <what it saw>". */
function gateFailureText(f: GateFailure, waves?: number): string {
  const why = f.reason === 'timeout' ? '' : f.reason === 'error' ? ' (could not measure)' : '';
  return `health check ${f.check.name} failed ${gateWhere(f.position, waves)}${why}: ${f.observed}`;
}

/**
 * Halts for a failed gate: pauses the pool (a preflight failure has none and writes nothing),
 * records the halt with the check, reports it, and throws HealthCheckFailedError (exit 5).
 * `extra`: why instead of a rollback, when a rollback was asked for and could not run.
 */
async function haltForGate(ctx: GateContext, pool: PlanPool | null, f: GateFailure, extra?: string): Promise<never> {
  const text = gateFailureText(f, pool?.waves.length);
  if (!pool) {
    throw new HealthCheckFailedError(
      `preflight: ${text}`,
      [
        'nothing was written: the cluster was not healthy before the rollout started',
        `fix what the check reports (or the check), then run apply again: the preflight gate runs again first`,
      ],
      f.check.name,
      f.observed,
    );
  }
  const reason = extra ? `${text}; ${extra}` : text;
  await holdPool(ctx, pool, f, reason);
  const left = pool.waves.map((_, i) => i + 1).filter((w) => !ctx.book.waveDone(pool.name, w));
  throw new HealthCheckFailedError(
    reason,
    [
      `no further node was started; the nodes in flight finished their update`,
      `pool ${pool.name} is paused; ${left.length ? `${left.length} of ${pool.waves.length} waves were not finished` : 'all its waves had run'}; other pools were not started`,
      ...(extra ? [extra] : []),
      f.check.onFailure === 'pause'
        ? `look at what the check reports; apply PLANFILE --retry (the same plan) continues past this gate without measuring it again (onFailure: pause): the pool is held for this image until then (docs/apply.md "Holds")`
        : 'fix what the check reports (or the check), then run apply --retry: the pool is held for this image until then (docs/apply.md "Holds"), and the apply runs the due gate again before anything else',
    ],
    f.check.name,
    f.observed,
  );
}

/**
 * Pauses `pool` as a failed node pauses it, records the halt with the check, holds the pool for
 * this image (docs/apply.md "Holds": a later apply of it exits 5 before writing, until the spec
 * targets another image or apply --retry), saves, and reports it (the `halt` event: the status,
 * the pool's Event).
 */
async function holdPool(ctx: GateContext, pool: PlanPool, f: GateFailure, reason: string): Promise<void> {
  try {
    await retry(() => ctx.driver.setPoolPaused(pool.backend === 'mco' ? 'MachineConfigPool' : 'BootcNodePool', pool.name, true, ctx.plan.id));
  } catch {
    // reported with the halt; the pool may already be paused
  }
  ctx.book.pool(pool.name).halted = { node: f.position.node, reason, check: f.check.name };
  addHold(ctx, {
    pool: pool.name,
    target: pool.targetDigest ?? pool.targetImage,
    action: f.check.onFailure === 'pause' ? 'paused' : 'halted',
    check: f.check.name,
    observed: f.observed,
    planId: ctx.plan.id,
  });
  await ctx.book.save();
  ctx.emit({ type: 'halt', pool: pool.name, ...(f.position.node ? { node: f.position.node } : {}), message: reason, check: f.check.name });
}

/**
 * A fleet canary's batch gate failed (docs/fleets.md "Health gates"): the canary's apply of this
 * plan finished and soaked, then the fleet measured its afterWave checks again. The check's
 * onFailure is carried out as after the run's last wave: `rollback` rolls back the run (the
 * rollback runner, with the pool and wave where a finished run stopped: the last pool it rolled
 * and that pool's last wave, as `plan --rollback` reads a finished run, so `scope: wave` takes
 * back that wave only); `halt`, or a rollback refused, holds every pool the run rolled nodes in.
 * A run record that is not this plan's finished one is left alone (another apply ran since).
 */
export async function onBatchGateFailure(ctx: GateContext, f: GateFailure): Promise<never> {
  await ctx.book.load();
  const rec = ctx.book.record;
  if (!ctx.book.resumed || !rec.done) {
    throw new InputError(
      `the run record is not plan ${ctx.plan.id}'s finished run (${ctx.book.previous ? `it is plan ${ctx.book.previous.planId}'s` : 'there is none'}): nothing was held or rolled back`,
      [],
      "look at the cluster (bootcplan status) before deciding: another apply ran after the canary's",
    );
  }
  const rolled = ctx.pools.filter((p) => p.nodes.some((n) => n.wave !== null) || ctx.book.pool(p.name).wavesDone > 0);
  const last = [...rolled].reverse().find((p) => ctx.book.pool(p.name).wavesDone > 0) ?? rolled[rolled.length - 1];
  if (!last) throw new InputError(`plan ${ctx.plan.id} rolled no node: nothing to hold or roll back`);
  const at: GateFailure = { ...f, position: { ...f.position, pool: last.name, wave: ctx.book.pool(last.name).wavesDone || null } };
  const holdAll = async (why?: string): Promise<never> => {
    const text = gateFailureText(f);
    for (const p of rolled) await holdPool(ctx, p, f, why ? `${text}; ${why}` : text);
    const pools = `${rolled.length === 1 ? 'pool' : 'pools'} ${rolled.map((p) => p.name).join(', ')}`;
    throw new HealthCheckFailedError(
      `${why ? `${why}; ` : ''}${pools} paused and held for this image`,
      [
        `${text}`,
        `${pools} ${rolled.length === 1 ? 'is' : 'are'} paused and held for plan ${ctx.plan.id}'s image: a later apply of it exits 5 until apply --retry (docs/apply.md "Holds")`,
      ],
      f.check.name,
      f.observed,
    );
  };
  if (f.check.onFailure === 'rollback') return rollbackAfterGate(ctx, last, at, (_ctx, _pool, _f, why) => holdAll(why));
  return holdAll();
}
