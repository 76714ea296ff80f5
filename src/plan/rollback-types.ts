/**
 * The Plan JSON's rollback shapes (docs/apply.md "Rollback"): a forward plan's way back per pool,
 * and a rollback plan's own section. Re-exported by src/plan/types.ts.
 */
/**
 * Why a forward plan's pool would have no way back (docs/apply.md "Rollback"): the rollback
 * planner's refusal codes where they apply before the run (src/plan/rollback-bootc-pool.ts), and
 * `rollback-origin-unknown`: the cluster shows no single image the pool runs now (no booted digest
 * reported, or an MCO pool without a rendered config carrying an osImageURL).
 */
export const ROLLBACK_REFUSED_BY = ['rollback-mixed-origins', 'rollback-would-stage-unbooted', 'rollback-origin-unknown'] as const;
export type RollbackRefusedBy = (typeof ROLLBACK_REFUSED_BY)[number];

/**
 * Where a rollback takes a pool, and how. In a rollback plan: the way being taken
 * (src/plan/rollback-planner.ts). In a forward plan: where a rollback of this run would take the
 * pool, forecast from the cluster as planned (src/plan/rollback-forecast.ts), on every pool with a
 * node scheduled. Explanatory: the applier keeps the origins it reads before its first write
 * (src/plan/rollback-origins.ts), never these; so no formatVersion of its own (docs/apply.md
 * "Rollback": a 1.0 or 1.1 reader ignores it and applies the plan exactly as it would without).
 */
export interface PlanPoolRollback {
  available: boolean;
  /** The image the pool's nodes go back to. */
  to: string | null;
  /** The lever, in words: "BootcNodePool/worker spec.image.ref", "MachineConfig/99-… deleted". */
  via: string;
  /** The nodes download the image again (MCO: the rollback deployment is gone); bootc: stored. */
  download: boolean;
  why: string | null;
  /** Set exactly when `available` is false in a forward plan: the refusal a rollback would meet. */
  refusedBy?: RollbackRefusedBy;
}

export type { RollbackTrigger, PoolOrigin } from '../cluster/progress.ts';
import type { RollbackTrigger, PoolOrigin } from '../cluster/progress.ts';
import type { RollbackScope } from '../rollout-spec/types.ts';

/**
 * A rollback plan's own section (formatVersion "1.2"; docs/apply.md "Rollback"). Sealed: `source`
 * is all a re-plan needs besides the cluster (the nodes' entries are on the nodes).
 */
export interface PlanRollback {
  /** The run it reverses: its latest plan, when that started, and every plan id of the run. */
  of: { planId: string; startedAt: string; run: { id: string; planIds: string[] } };
  scope: RollbackScope;
  /** The pool and wave where the run stopped (scope wave: the wave taken back). */
  pool: string | null;
  wave: number | null;
  trigger: RollbackTrigger;
  source: {
    origins: Record<string, PoolOrigin>;
    /** pool -> the run's target digest (the image the nodes go back from). */
    targets: Record<string, string>;
    /** The pools in rollback order: where the run stopped first, the others in reverse. */
    order: string[];
    /** scope wave: the entries taken back are this plan's, of this wave, in this pool. */
    scopeWave: { planId: string; pool: string; wave: number } | null;
  };
  /**
   * Nodes left with something of the run (listed, not driven); `kept-on-target`: a node of another
   * pool of the run that scope wave leaves on the run's image (its pool is held).
   */
  leftovers: { node: string; pool: string; what: 'target-still-staged' | 'stages-origin' | 'kept-on-target' }[];
  /** Nodes the run updated that the rollback leaves to a human. */
  excluded: { node: string; pool: string; why: 'degraded' | 'not-ready' | 'cordoned' | 'updating' }[];
  /**
   * Only when it continues an unfinished rollback (docs/apply.md "Continuing a rollback"): the
   * plan ids of that rollback's plans; their node entries mark its nodes in flight.
   */
  continues?: string[];
}
