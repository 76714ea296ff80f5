/**
 * A pool's `drain` (docs/apply.md "Drain forecast"): how long one node's drain may take and what
 * happens to a drain that cannot finish: `halt` stops the rollout there (as before), `skip`
 * returns the node to service on its old image and goes on, up to `maxSkippedNodes` (AKS's
 * `undrainableNodeBehavior` and `maxBlockedNodes`). `drainTimeoutSeconds` stays as an alias of
 * `drain.timeoutSeconds`; both set is an error. Static rules only.
 */
import { type Ctx, type ObjectSchema, INT32_MAX, isPlainObject } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';
import { ON_BLOCKED } from './types.ts';

export const drainSchema: ObjectSchema = {
  type: 'object',
  description:
    'What a drain may take and what happens when it cannot finish (a PodDisruptionBudget that never allows the eviction, or the timeout). The plan forecasts each node\u2019s drain from the snapshot\u2019s workloads.',
  fields: {
    timeoutSeconds: {
      type: 'integer',
      min: 0,
      max: INT32_MAX,
      defaultText: 'no limit',
      description:
        'Longest drain of one node (PodDisruptionBudget refusals are retried until then); a drain still blocked then is blocked. Unset or 0: wait without limit. Also written to the BootcNodePool. Same as the pool\u2019s drainTimeoutSeconds (set one of them).',
    },
    onBlocked: {
      type: 'string',
      enum: ON_BLOCKED,
      default: 'halt',
      description:
        'halt: a blocked drain halts the rollout at that node (exit 5). skip: the node goes back into service on its old image, marked bootcplan.dev/skipped: drain-blocked, and the rollout goes on (not yet applied by this version: apply refuses such a plan).',
    },
    maxSkippedNodes: {
      type: 'integer',
      min: 0,
      max: INT32_MAX,
      default: 0,
      description: 'With onBlocked: skip, how many nodes may be skipped; one more halts the rollout (exit 5).',
    },
  },
};

/** `drainTimeoutSeconds` and `drain.timeoutSeconds` are one setting: set both and neither wins. */
export function checkDrainAlias(pool: Record<string, unknown>, path: string, ctx: Ctx): void {
  const drain = pool.drain;
  if (pool.drainTimeoutSeconds === undefined || !isPlainObject(drain) || drain.timeoutSeconds === undefined) return;
  ctx.report({
    code: 'drain-timeout-twice',
    path: joinPath(path, 'drainTimeoutSeconds'),
    message: `drainTimeoutSeconds ${JSON.stringify(pool.drainTimeoutSeconds)} and drain.timeoutSeconds ${JSON.stringify(drain.timeoutSeconds)} set the same limit twice`,
    expected: 'one of drainTimeoutSeconds or drain.timeoutSeconds',
    hint: 'keep drain.timeoutSeconds and remove drainTimeoutSeconds (its older name)',
  });
}

/** maxSkippedNodes counts skipped nodes: without onBlocked: skip no node is ever skipped. */
export function checkSkippedWithoutSkip(pool: Record<string, unknown>, path: string, ctx: Ctx): void {
  const drain = pool.drain;
  if (!isPlainObject(drain) || typeof drain.maxSkippedNodes !== 'number' || drain.maxSkippedNodes === 0 || drain.onBlocked === 'skip') return;
  ctx.report({
    severity: 'warning',
    code: 'max-skipped-without-skip',
    path: joinPath(path, 'drain.maxSkippedNodes'),
    message: `maxSkippedNodes ${drain.maxSkippedNodes} has no effect: onBlocked is ${typeof drain.onBlocked === 'string' ? drain.onBlocked : 'halt'}, so a blocked drain halts and no node is skipped`,
    expected: 'onBlocked: skip with maxSkippedNodes',
    hint: 'set onBlocked: skip, or remove maxSkippedNodes',
  });
}
