/**
 * When a node's staging started, as the staging limit counts it (docs/design.md §7 "Pools and waves":
 * "counted from the first time bootcplan saw the node staging, kept in the run record").
 *
 * The BootcNode's own record comes first: the lastTransitionTime of Idle=False/Staging, which the
 * node's daemon wrote (bootc-dev/bootc-operator api/v1alpha1 bootcnode_types.go). It is believed
 * up to now plus the skew allowance (src/domain/clock-skew.ts). When it is absent, or further
 * ahead (a node clock in 2099), the limit runs from the time bootcplan first saw the node staging,
 * which is kept in the run record (PoolProgress.stagingSeen): each `apply --step` is a new process,
 * and a time kept only in memory would restart the limit at every run, so that a node staging
 * forever would never halt the pool. That time too was written by some pod's clock, and is
 * believed only up to the same allowance.
 */
import type { RunContext } from '../engine/context.ts';
import type { PlanPool } from '../../plan/types.ts';
import { isoOf } from '../ports/driver.ts';
import { CLOCK_SKEW_ALLOWANCE_SECONDS, credibleTime, skewText } from '../../domain/clock-skew.ts';

/** The pool's staging limit: the spec's stagingTimeoutSeconds, else the apply's (600 s by default). */
export function stagingLimit(ctx: RunContext, pool: PlanPool): number {
  return pool.stagingTimeoutSeconds ?? ctx.timeouts.stagingSeconds;
}

interface StagingStart {
  /** Epoch seconds the limit runs from. */
  since: number;
  /** A clock-skew report for the user, or null. */
  skew: string | null;
}

/**
 * The start of a node's staging (`clusterSince`: Idle=False/Staging's lastTransitionTime, or
 * null). May add the node to the run record in memory: the caller saves the record before it
 * relies on it in a later run (ctx.book.save()). A skew is also sent as a `wait` event, once per
 * node of `reported` (the caller's set, one per gate).
 */
export function stagingStart(ctx: RunContext, pool: string, node: string, clusterSince: number | null, reported?: Set<string>): StagingStart {
  const now = ctx.now();
  const allowance = skewText(CLOCK_SKEW_ALLOWANCE_SECONDS);
  let skew: string | null = null;
  if (clusterSince !== null) {
    const c = credibleTime(clusterSince, now);
    if (!c.aheadSeconds) return { since: c.at, skew: null };
    skew = `BootcNode ${node}'s Staging time ${isoOf(clusterSince)} is ${skewText(c.aheadSeconds)} ahead of this clock (allowance ${allowance})`;
  }
  let seen = ctx.book.stagingSeen(pool, node);
  if (seen !== null) {
    const r = credibleTime(seen, now);
    if (r.aheadSeconds) {
      skew = `${skew ? `${skew}; ` : ''}the run record's first sight of ${node} staging, ${isoOf(seen)}, is ${skewText(r.aheadSeconds)} ahead of this clock (allowance ${allowance})`;
      seen = null;
    }
  }
  if (seen === null) {
    seen = now;
    ctx.book.seeStaging(pool, node, now);
  }
  const text = skew && `clock skew: ${skew}; staging counted from ${isoOf(seen)}, when bootcplan first saw it staging`;
  if (text && reported && !reported.has(node)) {
    reported.add(node);
    ctx.emit({ type: 'wait', address: `node ${node}`, message: text });
  }
  return { since: seen, skew: text };
}
