/**
 * What a failed health gate does (docs/apply.md "Health gates"): by then no further node has
 * started (every gate sits before a start) and the nodes in flight have finished; the failing
 * check's `onFailure` decides the rest. `halt`: the pool is paused as a failed node pauses it,
 * the run record says which check halted it, apply exits 5 (HealthCheckFailedError), and the
 * status, the Event and the notification name the check and the value it saw. `rollback`:
 * rollbackAfterGate (gate-rollback.ts). A failed preflight gate writes nothing and never rolls
 * back: nothing was updated, the cluster was unhealthy before bootcplan touched it.
 */
import type { PlanPool } from '../plan/types.ts';
import { HealthCheckFailedError } from '../base/errors.ts';
import type { ApplyContext } from './context.ts';
import { retry } from './changes.ts';
import { gateWhere, type GateFailure } from './health-gates.ts';
import { rollbackAfterGate } from './gate-rollback.ts';
import { addHold } from './holds.ts';

/** Carries out the failing check's onFailure; never returns. */
export async function onGateFailure(ctx: ApplyContext, pool: PlanPool | null, f: GateFailure): Promise<never> {
  if (pool && f.check.onFailure === 'rollback') return rollbackAfterGate(ctx, pool, f, haltForGate);
  return haltForGate(ctx, pool, f);
}

/** The failure in one line: "health check X failed after wave 1/4 of pool worker: <what it saw>". */
export function gateFailureText(f: GateFailure, waves?: number): string {
  const why = f.reason === 'timeout' ? '' : f.reason === 'error' ? ' (could not measure)' : '';
  return `health check ${f.check.name} failed ${gateWhere(f.position, waves)}${why}: ${f.observed}`;
}

/**
 * Halts for a failed gate: pauses the pool (a preflight failure has none and writes nothing),
 * records the halt with the check, reports it, and throws HealthCheckFailedError (exit 5).
 * `extra`: why instead of a rollback, when a rollback was asked for and could not run.
 */
export async function haltForGate(ctx: ApplyContext, pool: PlanPool | null, f: GateFailure, extra?: string): Promise<never> {
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
  try {
    await retry(() => ctx.driver.setPoolPaused(pool.backend === 'mco' ? 'MachineConfigPool' : 'BootcNodePool', pool.name, true, ctx.plan.id));
  } catch {
    // reported below; the pool may already be paused
  }
  const reason = extra ? `${text}; ${extra}` : text;
  ctx.book.pool(pool.name).halted = { node: f.position.node, reason, check: f.check.name };
  // The pool is held for this image (docs/apply.md "Holds"): a later apply of it exits 5 before
  // writing, until the spec targets another image or apply --retry.
  addHold(ctx, {
    pool: pool.name,
    target: pool.targetDigest ?? pool.targetImage,
    action: 'halted',
    check: f.check.name,
    observed: f.observed,
    planId: ctx.plan.id,
  });
  await ctx.book.save();
  ctx.emit({ type: 'halt', pool: pool.name, ...(f.position.node ? { node: f.position.node } : {}), message: reason, check: f.check.name });
  const left = pool.waves.map((_, i) => i + 1).filter((w) => !ctx.book.waveDone(pool.name, w));
  throw new HealthCheckFailedError(
    reason,
    [
      `no further node was started; the nodes in flight finished their update`,
      `pool ${pool.name} is paused; ${left.length ? `${left.length} of ${pool.waves.length} waves were not finished` : 'all its waves had run'}; other pools were not started`,
      ...(extra ? [extra] : []),
      'fix what the check reports (or the check), then run apply --retry: the pool is held for this image until then (docs/apply.md "Holds"), and the apply runs the due gate again before anything else',
    ],
    f.check.name,
    f.observed,
  );
}
