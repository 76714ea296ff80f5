/**
 * Plan.concurrency (docs/design.md §13, docs/apply.md "Pools in parallel"): the pools of equal
 * priority as groups, the cluster budget resolved over the nodes the rollout touches, the spread
 * rule with each node's label value, and the diagnostics that need the cluster's nodes. Opt-in:
 * present only when the spec sets spec.maxUnavailable, spec.spread or spec.onPoolFailure, so that
 * every other plan stays as it was, byte for byte.
 */
import type { RolloutSpec } from '../rollout-spec/types.ts';
import type { DiagnosticInput } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { parseMaxUnavailable } from '../domain/budget.ts';
import type { PlanConcurrency, PlanPool } from './types.ts';

type Report = (d: DiagnosticInput) => void;

/** The concurrency section, or undefined when the spec asks for none of it. */
export function planConcurrency(spec: RolloutSpec, snapshot: ClusterSnapshot, pools: readonly PlanPool[], report: Report): PlanConcurrency | undefined {
  const s = spec.spec;
  if (s.maxUnavailable === undefined && s.spread === undefined && s.onPoolFailure === undefined) return undefined;
  const touched = pools.reduce((n, p) => n + p.nodeCount, 0);
  const maxUnavailable = clusterBudget(s.maxUnavailable, touched, report);
  if (maxUnavailable) checkPoolBudgets(spec, pools, maxUnavailable.resolved, report);
  if (s.spread) fillSpread(s.spread.key, snapshot, pools, report);
  return {
    maxUnavailable,
    spread: s.spread ? { key: s.spread.key, maxPerValue: s.spread.maxPerValue } : null,
    onPoolFailure: s.onPoolFailure ?? 'haltAll',
    groups: groupsOf(pools),
  };
}

/** Pool names by equal priority, in rollout order (pools arrive sorted by priority, then name). */
function groupsOf(pools: readonly PlanPool[]): string[][] {
  const groups: { priority: number; names: string[] }[] = [];
  for (const p of pools) {
    const last = groups[groups.length - 1];
    if (last && last.priority === p.priority) last.names.push(p.name);
    else groups.push({ priority: p.priority, names: [p.name] });
  }
  return groups.map((g) => g.names);
}

/**
 * A count as written; a percentage of the touched nodes rounded down as the pools' budgets are
 * (src/domain/budget.ts). A percentage that rounds below 1 node is an error rather than the
 * pools' silent minimum of 1: a cluster-wide cap is a promise about availability.
 */
function clusterBudget(raw: number | string | undefined, touched: number, report: Report): PlanConcurrency['maxUnavailable'] {
  if (raw === undefined) return null;
  const parsed = parseMaxUnavailable(raw);
  if (!parsed.ok) return null; // the schema reported it
  const mu = parsed.value;
  if (mu.kind === 'count') return { value: mu.value, resolved: mu.value, rule: 'integer' };
  const floor = Math.floor((mu.value * touched) / 100);
  if (floor < 1 && touched > 0) {
    report({
      severity: 'error',
      code: 'cluster-budget-below-one',
      path: 'spec.maxUnavailable',
      message: `${mu.value}% of the ${touched} nodes the rollout touches rounds down to ${floor}: no node could ever be out of service`,
      expected: `a count >= 1, or a percentage of at least ${Math.ceil(100 / touched)}% for ${touched} nodes`,
      hint: 'write a count such as 1, or a larger percentage',
    });
  }
  return { value: `${mu.value}%`, resolved: Math.max(1, floor), rule: 'floor(percent x nodes the rollout touches), minimum 1' };
}

/** A pool budget above the cluster budget: a warning, the smaller holds. */
function checkPoolBudgets(spec: RolloutSpec, pools: readonly PlanPool[], cluster: number, report: Report): void {
  const specPools = spec.spec.pools ?? [];
  for (const p of pools) {
    if (p.maxUnavailable.resolved <= cluster) continue;
    const i = specPools.findIndex((sp) => sp.name === p.name);
    const own = i >= 0 && specPools[i].maxUnavailable !== undefined;
    report({
      severity: 'warning',
      code: 'pool-budget-above-cluster',
      path: own ? `spec.pools[${i}].maxUnavailable` : 'spec.maxUnavailable',
      message: `pool ${p.name} may take ${p.maxUnavailable.resolved} nodes out of service at once, more than the cluster budget of ${cluster}: the smaller holds`,
      expected: `a pool budget of at most ${cluster}`,
      hint: `lower the pool's maxUnavailable to ${cluster}, or raise spec.maxUnavailable`,
    });
  }
}

/** Each node's value of the spread label (PlanNode.spreadValue); an error when none carries it. */
function fillSpread(key: string, snapshot: ClusterSnapshot, pools: readonly PlanPool[], report: Report): void {
  const labels = new Map(snapshot.nodes.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
  let carried = 0;
  let total = 0;
  for (const p of pools) {
    for (const node of p.nodes) {
      const v = labels.get(node.name)?.[key];
      node.spreadValue = v ?? null;
      total++;
      if (v !== undefined) carried++;
    }
  }
  if (total > 0 && carried === 0) {
    report({
      severity: 'error',
      code: 'spread-key-absent',
      path: 'spec.spread.key',
      message: `no node of the rollout carries the label ${key}: the spread rule would limit nothing`,
      expected: 'a label key the nodes carry, e.g. topology.kubernetes.io/zone',
      hint: 'check the key with `oc get nodes -L <key>`; label keys are case-sensitive',
    });
  }
}
