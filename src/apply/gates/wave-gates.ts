/**
 * The gates around the waves of both backends (docs/design.md §7 "Pools and waves"): before any
 * write and before each wave the cluster is planned again and must still need the saved
 * plan's remaining work (exit 3 otherwise), the maintenance-window policy must let the
 * wave start (exit 6), and the pool's soak time must have passed; after a wave its end is
 * recorded; a failed node halts the pool (paused, exit 5); a bootc node waits for budget
 * while the pool's availability stays as it is.
 */
import type { Plan, PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import type { NodeView } from '../../domain/nodes.ts';
import { NamedError, OutsideWindowError, RolloutHaltedError, StalePlanError } from '../../base/errors.ts';
import { isoMsOf } from '../ports/driver.ts';
import type { NodeFailure } from '../engine/context.ts';
import type { GateContext } from './context.ts';
import type { PolicyRefusal } from '../ports/policy.ts';
import type { StepWaitReason } from '../engine/result.ts';
import { retry } from '../engine/retry.ts';
import { remainingWorkDifference } from '../../plan/saved/remaining-work.ts';
import { controlPlaneOutOfService, membersOf, peek, viewIn, withoutFingerprint } from '../ports/views.ts';
import { dueWaveGate, finalGate, finalGateDue } from './health-gates.ts';
import { onGateFailure } from './gate-failure.ts';

/**
 * apply --step: nothing may be done now (the wave's nodes are still staging within their
 * limit); the applier turns it into the outcome `waiting` (exit 0). Never seen outside --step.
 */
export class StepWait extends NamedError {
  constructor(
    readonly reason: StepWaitReason,
    readonly pool: string,
    message: string,
  ) {
    super(message);
  }
}

/** Plans again from the cluster as it is and compares the remaining work (exit 3). */
export async function checkStale(ctx: GateContext): Promise<{ fresh: Plan }> {
  await ctx.lease.assertHeld();
  const { fresh, diff } = await peek(ctx.driver, (s) => {
    const fresh = ctx.replan(withoutFingerprint(s));
    return { fresh, diff: remainingWorkDifference(ctx.plan, fresh, s) };
  });
  const errors = newErrors(ctx.plan, fresh);
  if (diff.length || errors.length) throw new StalePlanError(`the cluster changed since plan ${ctx.plan.id} was made`, [...diff, ...errors]);
  return { fresh };
}

/**
 * Errors the plan of the cluster as it is now has and the saved plan had not (a node now
 * claimed by two pools, a control-plane node in another pool, ...): the remaining work may
 * be the same, but the cluster no longer allows it. One line each, for the StalePlanError.
 */
function newErrors(saved: Plan, fresh: Plan): string[] {
  const known = new Set(saved.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.code}\u0000${d.path}`));
  return fresh.diagnostics
    .filter((d) => d.severity === 'error' && !known.has(`${d.code}\u0000${d.path}`))
    .map((d) => `! ${d.code}${d.path ? ` (${d.path})` : ''}: ${d.message}`);
}

export function checkPolicy(ctx: GateContext, pool: PlanPool | null, wave: number | null) {
  const r = ctx.policy?.(ctx.now(), pool, wave);
  if (r) throw refusalError(r);
}

/** The error of a policy refusal: exit 6, with the next window when there is one. */
export function refusalError(r: string | PolicyRefusal): OutsideWindowError {
  const { message, nextWindow } = typeof r === 'string' ? { message: r, nextWindow: null } : r;
  return new OutsideWindowError(message, 'apply again when the next maintenance window opens (a CronJob with --step does this)', nextWindow);
}

/**
 * Soak and gates before wave `k`: the soak after the last wave done, its health gate when it is
 * due (health-gates.ts), staleness, policy. Returns the fresh re-plan, or null when --step must
 * stop here (the soak and the gate after a wave belong to the run that starts the next one).
 */
export async function beforeWave(ctx: GateContext, pool: PlanPool, k: number): Promise<Plan | null> {
  if (ctx.step && ctx.wavesRun >= 1) return null;
  await soak(ctx, pool, k - 1);
  // The soak is over: the silences of the wave's nodes end, and the gate judges them as they are.
  await ctx.silences?.soakOver(pool.name, k - 1);
  const failed = await dueWaveGate(ctx, pool, k);
  if (failed) await onGateFailure(ctx, pool, failed);
  const { fresh } = await checkStale(ctx);
  checkPolicy(ctx, pool, k);
  if (pool.controlPlane) await controlPlaneInService(ctx, pool);
  return fresh;
}

/**
 * Before a control-plane wave: every other control-plane node of the cluster is in service
 * (etcd counts members, not pools; for an MCO pool the MCO would count only its own pool).
 * Nodes bootcplan itself has in flight do not count. Waits up to the budget wait, then halts.
 */
async function controlPlaneInService(ctx: GateContext, pool: PlanPool): Promise<void> {
  const outOfService = (s: ClusterSnapshot) => controlPlaneOutOfService(s, (n) => !!ctx.book.nodes[n]);
  const ok = await ctx.driver.waitFor((s) => (outOfService(s).length === 0 ? true : null), {
    timeoutSeconds: ctx.timeouts.budgetSeconds,
    description: 'the rest of the control plane in service',
  });
  if (ok) return;
  const out = await peek(ctx.driver, outOfService);
  await halt(
    ctx,
    pool,
    out.map((v) => ({
      node: v.name,
      reason: `control-plane node out of service (${v.unavailable}) for ${Math.round(ctx.timeouts.budgetSeconds / 60)}m: the control plane rolls one node at a time across the cluster`,
      conditions: v.conditions,
    })),
  );
}

/** What is left of the pool's soak after its last wave done (`wave`, for the event). */
async function soak(ctx: GateContext, pool: PlanPool, wave: number): Promise<void> {
  const pp = ctx.book.pool(pool.name);
  if (!(pp.wavesDone > 0 && pool.soakSeconds > 0 && pp.lastWaveEnd)) return;
  const until = Date.parse(pp.lastWaveEnd) / 1000 + pool.soakSeconds;
  if (until <= ctx.now()) return;
  ctx.emit({ type: 'soak', pool: pool.name, wave, seconds: Math.round(until - ctx.now()) });
  await ctx.driver.clock.sleep(until - ctx.now());
}

/**
 * After the pool's last wave: with afterWave health checks, its soak and then its last gate (a
 * pool without them has no soak after its last wave). 'stepped' when apply --step advanced a wave
 * already: the gate belongs to the next run, as a wave's soak does.
 */
export async function afterLastWave(ctx: GateContext, pool: PlanPool): Promise<'done' | 'stepped'> {
  if (!finalGateDue(ctx, pool)) return 'done';
  if (ctx.step && ctx.wavesRun >= 1) return 'stepped';
  if (pool.rollout !== 'slots') await soak(ctx, pool, pool.waves.length);
  await ctx.silences?.poolDone(pool.name);
  const failed = await finalGate(ctx, pool);
  if (failed) await onGateFailure(ctx, pool, failed);
  return 'done';
}

export async function afterWave(ctx: GateContext, pool: PlanPool, k: number) {
  const pp = ctx.book.pool(pool.name);
  ctx.book.finishWave(pool.name, k);
  pp.lastWaveEnd = isoMsOf(ctx.now()); // the soak counts from it: to the millisecond
  ctx.wavesRun++;
  await ctx.book.save();
  ctx.emit({ type: 'wave-end', pool: pool.name, wave: k, waves: pool.waves.length });
}

/** Pauses the pool, records and reports the failures, and stops the apply (exit 5). */
export async function halt(ctx: GateContext, pool: PlanPool, failures: NodeFailure[], extra?: string): Promise<never> {
  try {
    if (pool.backend === 'mco') await retry(() => ctx.driver.setPoolPaused('MachineConfigPool', pool.name, true, ctx.plan.id));
    else await retry(() => ctx.driver.setPoolPaused('BootcNodePool', pool.name, true, ctx.plan.id));
  } catch {
    // reported below; the pool may already be paused
  }
  const first = failures[0];
  const reason = extra ?? (first ? `node ${first.node} failed: ${first.reason}` : 'halted');
  ctx.book.pool(pool.name).halted = { node: first?.node ?? null, reason };
  for (const f of failures) {
    if (!ctx.book.nodes[f.node]) continue;
    ctx.book.setNode(f.node, { step: 'failed' });
    try {
      await ctx.book.writeNode(f.node);
    } catch {
      // a deleted node has no entry to mark; the halt is recorded in the run record
    }
  }
  await ctx.book.save();
  for (const f of failures) ctx.emit({ type: 'node-failed', pool: pool.name, node: f.node, message: f.reason, conditions: f.conditions });
  ctx.emit({ type: 'halt', pool: pool.name, node: first?.node, message: reason });
  throw new RolloutHaltedError(`pool ${pool.name}: ${reason}`, haltReport(ctx, pool, failures));
}

function haltReport(ctx: GateContext, pool: PlanPool, failures: NodeFailure[]): string[] {
  const left = pool.waves.map((_, i) => i + 1).filter((w) => !ctx.book.waveDone(pool.name, w));
  const report: string[] = [];
  for (const f of failures) {
    report.push(`node ${f.node}: ${f.reason}`);
    for (const c of f.conditions) report.push(`  ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${c.message}` : ''}`);
  }
  report.push(
    `pool ${pool.name} is paused; ${left.length ? `waves ${ranges(left)} of ${pool.waves.length} were not finished` : 'all its waves had run'}; other pools were not started`,
  );
  report.push('fix the node(s), then run apply again: it resumes with the unfinished wave');
  return report;
}

/** [9,10,11,14] -> "9-11, 14": a halt in wave 9 of 250 names the rest in one range. */
function ranges(waves: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < waves.length;) {
    let j = i;
    while (j + 1 < waves.length && waves[j + 1] === waves[j] + 1) j++;
    out.push(j > i ? `${waves[i]}-${waves[j]}` : String(waves[i]));
    i = j + 1;
  }
  return out.join(', ');
}

// ----------------------------------------------------------------- budget waits (bootc)

/** One letter per member of the pool: available, unavailable but Ready, not Ready, gone. */
export function availabilitySignature(s: ClusterSnapshot, pool: PlanPool): string {
  let sig = '';
  for (const m of membersOf(s, pool.name)) {
    const v = viewIn(s, m);
    sig += v ? (v.unavailable ? (v.ready ? 'u' : 'n') : 'a') : '-';
  }
  return sig;
}

/**
 * Nodes wait for budget or readiness: resolves once the pool's availability differs from
 * `signature`, or after `seconds` (null).
 */
export function budgetChanged(ctx: GateContext, pool: PlanPool, signature: string, seconds: number, signal: AbortSignal): Promise<boolean | null> {
  return ctx.driver.waitFor((s) => availabilitySignature(s, pool) !== signature, {
    timeoutSeconds: seconds,
    signal,
    description: `budget in pool ${pool.name}`,
  });
}

/**
 * The budget wait ran out (waves and slots alike): every node still pending fails, saying why
 * as the cluster shows it now, and none is left pending.
 */
export async function failPendingAfterBudgetWait(ctx: GateContext, run: { pending: string[]; failures: NodeFailure[] }): Promise<void> {
  const views = await peek(ctx.driver, (snap) => run.pending.map((n) => ({ node: n, v: viewIn(snap, n) })));
  run.failures.push(...budgetTimeoutFailures(ctx, views));
  run.pending.length = 0;
}

/** The failures of nodes that waited for budget or readiness longer than the limit. */
function budgetTimeoutFailures(ctx: GateContext, views: { node: string; v: NodeView | null }[]): NodeFailure[] {
  const minutes = Math.round(ctx.timeouts.budgetSeconds / 60);
  return views.map(({ node, v }) => ({
    node,
    reason: v?.unavailable
      ? `out of service on its own (${v.unavailable}) for ${minutes}m: bootcplan does not take a node someone else took out of service`
      : `no maxUnavailable budget for ${minutes}m (other nodes of the pool are out of service)`,
    conditions: v?.conditions ?? [],
  }));
}
