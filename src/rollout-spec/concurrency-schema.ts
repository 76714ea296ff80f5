/**
 * The spec's cluster-wide limits for pools that roll at the same time (docs/apply.md "Pools in
 * parallel"): `spec.maxUnavailable`, `spec.spread` and `spec.onPoolFailure`. Static rules only;
 * the rules that need the cluster's nodes (a budget below 1 after rounding, a spread key no node
 * carries) are the planner's (src/plan/concurrency.ts).
 */
import { type Schema, type ObjectSchema, INT32_MAX, countOrPercentSchema } from '../base/schema.ts';
import { parseMaxUnavailable, MAX_UNAVAILABLE_EXPECTED } from '../domain/budget.ts';
import { ON_POOL_FAILURE } from './types.ts';

const clusterMaxUnavailableSchema = countOrPercentSchema({
  expected: MAX_UNAVAILABLE_EXPECTED,
  parse: parseMaxUnavailable,
  defaultText: 'no cluster-wide cap (each pool keeps its own)',
  description:
    "How many nodes may be out of service at once across every pool, those already out of service included: a count, or a percentage of the nodes the rollout touches rounded down (at least 1), as the pools' budgets are. Each pool keeps its own maxUnavailable inside it. Setting it lets pools of equal priority roll at the same time.",
});

const spreadSchema: ObjectSchema = {
  type: 'object',
  required: ['key', 'maxPerValue'],
  description:
    'At most maxPerValue nodes out of service share a value of the node label key (a zone, a rack, a hosted-cluster label), across pools. A node without the label is not limited by it.',
  fields: {
    key: {
      type: 'string',
      minLength: 1,
      maxLength: 317,
      description: 'A node label key, e.g. topology.kubernetes.io/zone.',
    },
    maxPerValue: {
      type: 'integer',
      max: INT32_MAX,
      description: 'Nodes out of service at once that carry one value of the label.',
      // The minimum is the hook's, to say why 0 is refused.
      json: { minimum: 1 },
      check(v: number, path, ctx) {
        if (v >= 1) return;
        ctx.report({
          code: v === 0 ? 'max-per-value-zero' : 'negative-value',
          path,
          message: v === 0 ? '0 would never let a node carrying the label update' : `${v} is negative`,
          expected: 'a whole number >= 1',
          hint: 'to hold pools back, set `paused: true` on them instead',
        });
      },
    },
  },
};

/** The fields of `spec` for pools in parallel, merged into the Rollout schema's spec. */
export const concurrencyFields: Record<string, Schema> = {
  maxUnavailable: clusterMaxUnavailableSchema,
  spread: spreadSchema,
  onPoolFailure: {
    type: 'string',
    enum: ON_POOL_FAILURE,
    default: 'haltAll',
    description:
      'haltAll: a pool that halts (failed node, failed gate, blocked drain) stops the other pools at their next safe point. haltPool: only that pool stops; the others go on.',
  },
};
