/**
 * Which run a new run record belongs to (docs/apply.md "Rollback"): a plan whose pools target
 * what the previous record's run targeted continues that run (an `apply -f SPEC` run again
 * re-plans the rest and gets a new plan id; only the first record of the run saw the pools as
 * they were before it, so their origins carry over), anything else starts a new run. Holds carry
 * into every new record until the plan targets another image for the pool. Pure.
 */
import type { Plan, PlanRollback } from '../../plan/types.ts';
import { MAX_CHAIN, type Hold, type PoolOrigin, type ProgressRecord, type RunChain } from '../../cluster/progress.ts';

/** pool -> the digest the plan rolls it to (its image when the target has no digest). */
export function planTargets(plan: Plan): Record<string, string> {
  return Object.fromEntries(plan.pools.map((p) => [p.name, p.targetDigest ?? p.targetImage]));
}

/** The previous record's run, when `plan` continues it: the same target for every pool they share (and one at least). */
function continued(prev: ProgressRecord | null, targets: Record<string, string>): RunChain | null {
  const run = prev?.run;
  if (!run || prev.rollbackOf) return null;
  const shared = Object.keys(targets).filter((p) => Object.hasOwn(run.targets, p));
  return shared.length && shared.every((p) => run.targets[p] === targets[p]) ? run : null;
}

/**
 * The run-level fields of a new record for `plan` (not a resume of the same plan id): its run
 * chain, spec, the pools' origins carried from the run it continues (the others are read from
 * the cluster before the run's first write: progress-book.ts recordOrigins), and the holds that
 * still apply.
 */
export function newRunFields(
  prev: ProgressRecord | null,
  plan: Plan,
): Pick<ProgressRecord, 'run' | 'spec' | 'holds'> & { origins: Record<string, PoolOrigin> } {
  const targets = planTargets(plan);
  const before = continued(prev, targets);
  const run: RunChain = before
    ? { id: before.id, planIds: [...before.planIds.filter((id) => id !== plan.id), plan.id].slice(-MAX_CHAIN), targets: { ...before.targets, ...targets } }
    : { id: plan.id, planIds: [plan.id], targets };
  const kept: Record<string, PoolOrigin> = {};
  if (before)
    for (const p of plan.pools) {
      const origin = prev?.pools[p.name]?.origin;
      if (origin) kept[p.name] = origin;
    }
  const { name, path, sha256, commit } = plan.spec;
  return { run, spec: { name, path, sha256, commit }, holds: carriedHolds(prev?.holds ?? [], targets), origins: kept };
}

/** Holds still in force for a plan with these targets: a pool the plan targets elsewhere is free again. */
export function carriedHolds(holds: readonly Hold[], targets: Record<string, string>): Hold[] {
  return holds.filter((h) => !Object.hasOwn(targets, h.pool) || targets[h.pool] === h.target);
}

/**
 * The run-level fields of a rollback plan's own record: a run of its own (its targets are the
 * origins), `rollbackOf` (what it reverses, with what a continuation needs: docs/apply.md
 * "Continuing a rollback"), and every hold as it was (the rollback adds its own when it ends:
 * holds.ts finishRollback). A plan that continues the unfinished rollback `prev` records
 * continues its run: one rollback, its plan ids in order. `r`: the plan's rollback.
 */
export function rollbackRunFields(prev: ProgressRecord | null, plan: Plan, r: PlanRollback): Pick<ProgressRecord, 'run' | 'spec' | 'holds' | 'rollbackOf'> {
  const { name, path, sha256, commit } = plan.spec;
  const targets = planTargets(plan);
  const before = prev?.rollbackOf && !prev.done && prev.run && r.continues?.includes(prev.planId) ? prev.run : null;
  return {
    run: before
      ? { id: before.id, planIds: [...before.planIds.filter((id) => id !== plan.id), plan.id].slice(-MAX_CHAIN), targets }
      : { id: plan.id, planIds: [plan.id], targets },
    spec: { name, path, sha256, commit },
    holds: [...(prev?.holds ?? [])],
    rollbackOf: {
      planId: r.of.planId,
      scope: r.scope,
      pool: r.pool,
      wave: r.wave,
      trigger: r.trigger,
      origins: r.source.origins,
      startedAt: r.of.startedAt,
      run: { id: r.of.run.id, planIds: [...r.of.run.planIds] },
      targets: r.source.targets,
      order: r.source.order,
      scopeWave: r.source.scopeWave,
    },
  };
}
