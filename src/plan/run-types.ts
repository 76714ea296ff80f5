/**
 * Plan JSON shapes of formatVersion "1.3" (docs/design.md §6): pools that roll at the same time
 * under one cluster-wide budget, a pool's drain policy, and each node's drain forecast
 * (docs/apply.md "Drain forecast"). Re-exported by src/plan/types.ts.
 */
import type { DrainClass, DrainFinding, PodEffect } from '../domain/drain-forecast.ts';

/**
 * "1.3": a plan whose pools roll concurrently (Plan.concurrency) or with a drain policy
 * (PlanPool.drain). A 1.2 reader would roll such pools one after another without the cluster
 * budget, or skip no blocked drain, so those plans say 1.3 and an older bootcplan refuses them.
 */
export const PLAN_FORMAT_VERSION_CONCURRENT = '1.3';
export const PLAN_FORMAT_VERSION_DRAIN = PLAN_FORMAT_VERSION_CONCURRENT;

/** One node's share of its wave's drain forecast. Explanatory, except as PlanPool.drain says. */
export interface PlanDrainForecast {
  class: DrainClass;
  /** Rounds the drain waits for replacements (1 when nothing waits). */
  rounds: number;
  findings: DrainFinding[];
  effects: PodEffect[];
}

/** What the applier does with a drain that cannot finish (spec `drain`, formatVersion "1.3"). */
export interface PlanPoolDrain {
  timeoutSeconds: number | null;
  onBlocked: 'halt' | 'skip';
  maxSkippedNodes: number;
}

export const POOL_FAILURE_POLICIES = ['haltAll', 'haltPool'] as const;
export type PoolFailurePolicy = (typeof POOL_FAILURE_POLICIES)[number];

/**
 * Pools in parallel (formatVersion "1.3"): the pools of one group (equal priority) roll at the
 * same time under one cluster-wide budget and spread rule; groups run in order. Present only
 * when a group holds two or more pools with nodes to roll.
 */
export interface PlanConcurrency {
  /** Nodes out of service at once across every pool (those already out included); null: no cap. */
  maxUnavailable: { value: string | number; resolved: number; rule: string } | null;
  /** At most maxPerValue nodes out of service share a value of label `key`, across pools. */
  spread: { key: string; maxPerValue: number } | null;
  onPoolFailure: PoolFailurePolicy;
  /** Pool names per group, in rollout order. */
  groups: string[][];
}
