/**
 * The rollback planner (docs/apply.md "Rollback"): (what the run record says, the cluster) ->
 * a Plan that returns the nodes the run updated to the image each booted before, in waves of
 * each pool's own budget, with the same drains; sealed and applied like any plan
 * (formatVersion "1.2", Plan.rollback). `plan --rollback` and `onFailure: rollback` use the same
 * function. Pure and synchronous.
 *
 * A rollback plan is re-planned from its sealed `rollback` section (rollbackInputOfPlan) and the
 * cluster, never from the run record again: the record is replaced by the rollback's own once it
 * runs, and the nodes' entries, which decide who goes back, are on the nodes.
 */
import { type Diagnostic, type DiagnosticInput, diagnosticAt, sortDiagnostics } from '../base/diagnostics.ts';
import { type ClusterSnapshot, BOOTCPLAN_NAMESPACE, PROGRESS_NAME } from '../cluster/types.ts';
import { decodeRunRecord } from '../cluster/run-record.ts';
import type { ProgressRecord, RollbackScope, PoolProgress } from '../cluster/progress.ts';
import { MAX_OBSERVED } from '../cluster/progress.ts';
import { indexSnapshot } from '../domain/nodes.ts';
import { computeMembership } from '../domain/pools.ts';
import { DEFAULT_DURATIONS, estimatePoolSeconds } from '../domain/timing.ts';
import { clusterInfo, planIdOf, summarize } from './planner.ts';
import { type RolledPool, type RollbackPoolContext } from './rollback-pools.ts';
import { bootcPoolRollback } from './rollback-bootc-pool.ts';
import { mcoPoolRollback } from './rollback-mco-pool.ts';
import { otherPoolOfScopeWave } from './rollback-scope-wave.ts';
import { PLAN_FORMAT_VERSION_ROLLBACK, type Plan, type PlanChange, type PlanPool, type PlanRollback, type PlanSpecInfo, type PhaseDurations } from './types.ts';

/** Everything a rollback plan is made from besides the cluster. */
export interface RollbackInput {
  spec: PlanSpecInfo;
  of: PlanRollback['of'];
  scope: RollbackScope;
  pool: string | null;
  wave: number | null;
  trigger: PlanRollback['trigger'];
  source: PlanRollback['source'];
  /** The plan ids of the unfinished rollback this one continues (empty: a rollback of its own). */
  continues: string[];
}

/** Why no rollback can be planned from a record (`plan --rollback` exits 1 with it). */
export interface RollbackRefusal {
  refused: string;
  hint: string;
}

/** The input of a rollback of the run `rec` records, or why there is none. */
export function rollbackInputOf(rec: ProgressRecord | null, scope: RollbackScope): RollbackInput | RollbackRefusal {
  if (!rec)
    return {
      refused: 'this cluster has no run record: bootcplan has applied nothing here (or the record was deleted)',
      hint: 'a rollback reverses the last apply; there is none to reverse',
    };
  if (rec.rollbackOf) return continuationOf(rec, rec.rollbackOf);
  const pools = Object.entries(rec.pools);
  const origins = Object.fromEntries(pools.flatMap(([name, p]) => (p.origin ? [[name, p.origin] as const] : [])));
  if (!rec.run || !rec.spec || !Object.keys(origins).length) {
    return {
      refused: `the run record of plan ${rec.planId} keeps no origins: it was written by a bootcplan without rollbacks`,
      hint: 'plan the previous image with a spec (the git history has it) and apply that plan',
    };
  }
  // Where the run stopped: the halted pool, else the last pool a wave of this run finished in.
  const stopped = pools.find(([, p]) => p.halted) ?? [...pools].reverse().find(([, p]) => p.wavesDone > 0) ?? null;
  const pool = stopped?.[0] ?? null;
  const wave = stopped ? lastWave(stopped[1]) : null;
  if (scope === 'wave' && (pool === null || wave === null)) return { refused: `scope wave: no wave of plan ${rec.planId} started`, hint: 'use --scope run' };
  const order = pools.map(([name]) => name).reverse();
  if (pool) {
    order.splice(order.indexOf(pool), 1);
    order.unshift(pool);
  }
  const halted = stopped?.[1].halted ?? null;
  const { name, path, sha256, commit } = rec.spec;
  return {
    spec: { name, path, ref: null, commit, sha256, dirty: null },
    of: { planId: rec.planId, startedAt: rec.startedAt, run: { id: rec.run.id, planIds: [...rec.run.planIds] } },
    scope,
    pool,
    wave,
    trigger: halted?.check
      ? { kind: 'health-check', check: halted.check, observed: halted.reason.slice(0, MAX_OBSERVED), at: rec.updatedAt }
      : { kind: 'manual', check: null, observed: halted?.reason.slice(0, MAX_OBSERVED) ?? null, at: rec.updatedAt },
    source: {
      origins,
      order: order.filter((p) => Object.hasOwn(origins, p)),
      targets: Object.fromEntries(Object.entries(rec.run.targets).filter(([p]) => Object.hasOwn(origins, p))),
      scopeWave: scope === 'wave' && pool !== null && wave !== null ? { planId: rec.planId, pool, wave } : null,
    },
    continues: [],
  };
}

/**
 * The latest run is a rollback. Finished, it is never rolled back: that would send the nodes
 * forward to the image whose failure it reversed. Unfinished (stopped, killed, halted), the new
 * plan continues it (docs/apply.md "Continuing a rollback"): the same run reversed, to the same
 * origins, from the rollback's record and the nodes as they are now; the nodes it already
 * returned boot their origin and are left alone, the ones it left mid-way carry its entries.
 * The scope it was made with is kept (the one asked for now does not apply).
 */
function continuationOf(rec: ProgressRecord, rb: NonNullable<ProgressRecord['rollbackOf']>): RollbackInput | RollbackRefusal {
  if (rec.done)
    return {
      refused: `the latest run is itself a rollback (of plan ${rb.planId}), and it finished: nothing to roll back`,
      hint: 'plan the spec to go forward again (the pools stay held for the image that was rolled back until apply --retry)',
    };
  if (!rb.run || !rb.targets || !rb.order || rb.scopeWave === undefined || !rb.startedAt || !rec.spec || !rec.run) {
    return {
      refused: `the latest run is an unfinished rollback (plan ${rec.planId}) whose record keeps no way to continue it: it was written by an earlier bootcplan`,
      hint: 'apply that rollback plan file again, or finish its nodes by hand (bootcplan status lists the ones in flight)',
    };
  }
  const { name, path, sha256, commit } = rec.spec;
  return {
    spec: { name, path, ref: null, commit, sha256, dirty: null },
    of: { planId: rb.planId, startedAt: rb.startedAt, run: { id: rb.run.id, planIds: [...rb.run.planIds] } },
    scope: rb.scope,
    pool: rb.pool,
    wave: rb.wave,
    trigger: rb.trigger,
    source: { origins: rb.origins, order: [...rb.order], targets: { ...rb.targets }, scopeWave: rb.scopeWave },
    continues: [...rec.run.planIds],
  };
}

/** The input of a rollback of the run a snapshot's run record (ConfigMap bootcplan-progress) records. */
export function rollbackInputOfSnapshot(snapshot: ClusterSnapshot, scope: RollbackScope): RollbackInput | RollbackRefusal {
  const text: unknown = snapshot.progress?.data?.['run.json'];
  if (typeof text !== 'string' || !text) return rollbackInputOf(null, scope);
  const rec = decodeRunRecord(text);
  if (typeof rec === 'string')
    return {
      refused: `ConfigMap ${BOOTCPLAN_NAMESPACE}/${PROGRESS_NAME}: run.json ${rec}`,
      hint: 'bootcplan writes this record; a record edited by hand is not planned from',
    };
  return rollbackInputOf(rec, scope);
}

/** The wave a pool's run stopped in: a halt during a wave (a node), or the last wave it finished (a gate after it). */
function lastWave(p: PoolProgress): number | null {
  const w = p.halted && !p.halted.check ? p.wavesDone + 1 : p.wavesDone;
  return w >= 1 ? w : null;
}

/** The input a rollback plan was made from (its sealed section): apply re-plans from it. */
export function rollbackInputOfPlan(plan: Plan): RollbackInput {
  const r = plan.rollback;
  if (!r) throw new Error(`internal: plan ${plan.id} is not a rollback plan`);
  return { spec: plan.spec, of: r.of, scope: r.scope, pool: r.pool, wave: r.wave, trigger: r.trigger, source: r.source, continues: [...(r.continues ?? [])] };
}

export interface RollbackOptions {
  durations?: PhaseDurations;
  /** On a re-plan while the rollback runs: its own plan id (its entries mark its nodes in flight). */
  ownPlanId?: string | null;
}

export function planRollback(input: RollbackInput, snapshot: ClusterSnapshot, opts: RollbackOptions = {}): Plan {
  const durations = opts.durations ?? DEFAULT_DURATIONS;
  const diagnostics: Diagnostic[] = [];
  const idx = indexSnapshot(snapshot);
  const membership = computeMembership(snapshot);
  const { spec: _spec, continues, ...section } = input;
  // `continues` only on a continuation: a rollback of its own seals as before.
  const rollback: PlanRollback = { ...section, leftovers: [], excluded: [], ...(continues.length ? { continues: [...continues] } : {}) };
  // Whose node entries mark nodes in flight of this rollback: the plans it continues, and itself on a re-plan.
  const own = new Set([...continues, ...(opts.ownPlanId ? [opts.ownPlanId] : [])]);
  const pools: PlanPool[] = [];
  const drafts: Omit<PlanChange, 'order'>[] = [];
  for (const name of input.source.order) {
    const origin = input.source.origins[name];
    const target = input.source.targets[name];
    if (!origin || !target) continue;
    // scope wave: the failed wave's nodes alone (docs/apply.md "Rollback"); an MCO pool, when it is
    // that pool, goes back whole (widened below). Every other pool of the run that was handed the
    // failed image gets its image back when no node of it boots that image yet, else keeps it;
    // either way it is held and its nodes named (rollback-scope-wave.ts).
    const other = !!input.source.scopeWave && name !== input.source.scopeWave.pool;
    const ctx: RollbackPoolContext = {
      snapshot,
      idx,
      members: (origin.kind === 'bootc' ? membership.bootc.get(name) : membership.mco.get(name)) ?? [],
      chain: new Set(input.of.run.planIds),
      own,
      scopeWave: input.source.scopeWave,
      runStartedAt: input.of.startedAt,
      widened: input.scope === 'wave' && origin.kind === 'mco',
      report: (d: DiagnosticInput) => diagnostics.push(diagnosticAt(null, d)),
      leftovers: rollback.leftovers,
      excluded: rollback.excluded,
    };
    const rolled: RolledPool | null = other
      ? otherPoolOfScopeWave(name, origin, target, ctx)
      : origin.kind === 'bootc'
        ? bootcPoolRollback(name, origin, target, ctx)
        : mcoPoolRollback(name, origin, target, ctx);
    if (!rolled) continue;
    rolled.pool.priority = pools.length + 1;
    pools.push(rolled.pool);
    drafts.push(...rolled.changes);
  }
  estimate(pools, durations);
  const changes: PlanChange[] = drafts.map((c, i) => ({ ...c, order: i + 1 }));
  const sorted = sortDiagnostics(diagnostics);
  const body: Omit<Plan, 'id'> = {
    formatVersion: PLAN_FORMAT_VERSION_ROLLBACK,
    spec: input.spec,
    cluster: clusterInfo(snapshot),
    changes,
    bootImages: { machineSets: [], controlPlaneMachineSet: null },
    pools,
    diagnostics: sorted,
    durations,
    summary: summarize(changes, pools, sorted),
    rollback,
  };
  const { formatVersion, ...rest } = body;
  return { formatVersion, id: planIdOf(body), ...rest };
}

/**
 * Each pool's estimate: pools run one after another. bootc nodes stage an image their rollback
 * deployment keeps (no download: a few seconds), MCO nodes download theirs again.
 */
function estimate(pools: PlanPool[], d: PhaseDurations): void {
  let elapsed = 0;
  for (const p of pools) {
    const byName = new Map(p.nodes.map((n) => [n.name, n]));
    const waves = p.waves.map((w) =>
      w.map((name) => {
        const n = byName.get(name);
        if (!n) throw new Error(`internal: wave node ${name} is no node of pool ${p.name}`);
        return { reboot: n.reboot, staged: n.staged };
      }),
    );
    const durations = p.backend === 'bootc' ? { ...d, stage: Math.min(d.stage, STORED_STAGE_SECONDS) } : d;
    p.estimatedSeconds = estimatePoolSeconds(
      durations,
      { backend: p.backend, soakSeconds: 0, needsStaging: p.backend === 'bootc' && p.nodes.some((n) => n.wave !== null && !n.staged), waves },
      elapsed,
    );
    elapsed += p.estimatedSeconds;
  }
}

/** Staging an image bootc still stores (the rollback deployment's): no layer to fetch. */
export const STORED_STAGE_SECONDS = 5;
