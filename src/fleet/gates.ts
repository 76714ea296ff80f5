/**
 * The canary batch gate (docs/design.md §10, §11; docs/fleets.md "Health gates"): a canary cluster's own
 * apply ran its gates, and once its batch has soaked (batchSoakSeconds), the fleet measures that
 * canary's afterWave checks once more, a fresh evaluation with their interval, successes, failure
 * limit and timeout, before the next batch starts. A failure stops the fleet (a canary failure
 * always does) with exit 5. Non-canary batches are not batch-gated: their own applies gate them.
 */
import type { Plan, PlanHealthCheck } from '../plan/types.ts';
import { evaluateGate, type GateFailure, type GateOutcome } from '../apply/gates/health-gates.ts';
import { HealthCheckFailedError, RolledBackError, messageOf } from '../base/errors.ts';
import type { Clock } from '../apply/ports/driver.ts';
import type { HealthSource } from '../apply/ports/health.ts';
import type { ApplyEvent } from '../apply/ports/events.ts';
import type { FleetBatch, FleetClusterPlan, FleetPlan } from './plan-types.ts';
import type { UnstampedFleetEvent } from './run-events.ts';

/** The checks of a canary's batch gate: every check of its plan whose `when` has afterWave, each entry once. */
export function batchGateChecks(plan: Pick<Plan, 'healthChecks'> | null | undefined): PlanHealthCheck[] {
  return (plan?.healthChecks ?? []).filter((c) => c.when.includes('afterWave'));
}

/** What the batch gate needs of a cluster's session (FleetClusterSession.verify). */
export type VerifyCluster = (checks: readonly PlanHealthCheck[], signal: AbortSignal, onEvent: (e: ApplyEvent) => void) => Promise<GateOutcome>;

/**
 * A session's batch gate (FleetClusterSession.verify) on `clock` with a fresh source from
 * `health`, closed after the gate; its events go to `onEvent` stamped with seconds since it began.
 */
export function sessionVerifier(clock: Clock, health: () => HealthSource): VerifyCluster {
  return async (checks, signal, onEvent) => {
    const source = health();
    const t0 = clock.now();
    try {
      return await evaluateGate({
        source,
        clock,
        checks,
        signal,
        position: { point: 'batch', pool: null, wave: null, node: null },
        emit: (e) => onEvent({ t: Math.round((clock.now() - t0) * 1000) / 1000, ...e }),
      });
    } finally {
      source.close?.();
    }
  };
}

/** What the batch gate needs of a cluster's session to carry a failure out (FleetClusterSession.onGateFailure). */
export type ActOnFailure = (failure: GateFailure, signal: AbortSignal, onEvent: (e: ApplyEvent) => void) => Promise<never>;

export interface BatchGateFailure {
  cluster: string;
  message: string;
}

export interface BatchGateRun {
  plan: FleetPlan;
  batch: FleetBatch;
  signal: AbortSignal;
  /** The canary's session's verify, or null when its session cannot measure health checks. */
  verifier: (c: FleetClusterPlan) => Promise<{ verify: VerifyCluster | null; act?: ActOnFailure | null; close?: () => void }>;
  /** Whether the cluster finished its apply (a failed one stopped the fleet already). */
  finished: (name: string) => boolean;
  emit: (e: UnstampedFleetEvent) => void;
}

/**
 * Runs the batch gate of each canary of a canary batch that finished; the first failure, or null.
 * A stop rejects (the runner records it as interrupted).
 */
export async function runBatchGates(o: BatchGateRun): Promise<BatchGateFailure | null> {
  if (o.batch.kind !== 'canary') return null;
  for (const name of o.batch.clusters) {
    const c = o.plan.clusters.find((x) => x.name === name);
    const checks = batchGateChecks(c?.plan);
    if (!c || !checks.length || !o.finished(name)) continue;
    const session = await o.verifier(c);
    try {
      if (!session.verify) return { cluster: name, message: `canary ${name} has health checks and no health source to measure them for its batch gate` };
      const out = await session.verify(checks, o.signal, (event) => o.emit({ type: 'fleet-cluster-event', cluster: name, event }));
      o.emit({
        type: 'fleet-batch-gate',
        batch: o.batch.index,
        cluster: name,
        result: out.passed ? 'passed' : 'failed',
        check: out.passed ? null : out.failure.check.name,
        observed: out.passed ? null : out.failure.observed,
        seconds: out.passed ? out.seconds : out.failure.seconds,
      });
      if (!out.passed) return { cluster: name, message: await carryOut(o, c, session.act ?? null, out.failure) };
    } finally {
      session.close?.();
    }
  }
  return null;
}

/**
 * Carries the failing check's onFailure out on the canary (its session's act: the canary's own
 * apply, under its lock) and says what was done, never more: "rolled back N node(s)", "held",
 * or that nothing was, with the command that rolls it back. A stop rejects.
 */
async function carryOut(o: BatchGateRun, c: FleetClusterPlan, act: ActOnFailure | null, f: GateFailure): Promise<string> {
  const head = `canary ${c.name} failed its batch gate: health check ${f.check.name} failed: ${f.observed}`;
  const command = rollbackCommand(c, f.check.scope);
  const byHand = command ? `; to roll it back: ${command}` : '';
  if (!act) return `${head}; nothing was held or rolled back (on failure: ${f.check.onFailure}; this run cannot act on the cluster)${byHand}`;
  try {
    return await act(f, o.signal, (event) => o.emit({ type: 'fleet-cluster-event', cluster: c.name, event }));
  } catch (err) {
    if (o.signal.aborted) throw err;
    if (err instanceof RolledBackError)
      return `${head}; rolled back ${err.nodes.length} node(s) of canary ${c.name} to the image each booted before (scope ${f.check.scope})`;
    if (err instanceof HealthCheckFailedError) return `${head}; canary ${c.name} held: ${err.message}${byHand}`;
    return `${head}; nothing was held or rolled back (on failure: ${f.check.onFailure}): ${messageOf(err)}${byHand}`;
  }
}

/**
 * The commands that plan and apply the canary's rollback by hand (docs/apply.md "Rollback"), or
 * null for a snapshot file (a rehearsal: nothing was written to a cluster).
 */
export function rollbackCommand(c: FleetClusterPlan, scope: string): string | null {
  if (!c.source.context) return null;
  const where = `${c.source.kubeconfig ? ` --kubeconfig ${c.source.kubeconfig}` : ''} --context ${c.source.context}`;
  const file = `rollback-${c.name}.json`;
  return `bootcplan plan --rollback --scope ${scope}${where} --out ${file}, then bootcplan apply ${file}${where}`;
}
