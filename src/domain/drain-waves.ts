/**
 * Waves that do not wait on a PodDisruptionBudget (docs/apply.md "Drain forecast"), pure: what
 * each node's drain asks of each budget (the pods the Eviction API counts against it, as
 * src/domain/disruption-budget.ts evictionNeed says), and the split of a pool's ordered nodes
 * into waves of at most `size` such that no wave asks a budget for more disruptions than its
 * status allows (PodDisruptionBudgetStatus.disruptionsAllowed). First fit in the given order:
 * where no budget constrains, the waves are the consecutive slices of src/domain/waves.ts
 * planWaves, unchanged.
 */
import type { DrainBudget, DrainPod } from '../cluster/workloads.ts';
import { evictionNeed, neverAllows } from './disruption-budget.ts';
import { budgetsOf, staysOnDrain } from './drain-forecast.ts';

/** node -> budget (namespace/name) -> pods of the node whose eviction takes one of its disruptions. */
export type BudgetDemand = ReadonlyMap<string, ReadonlyMap<string, number>>;

/**
 * Each node's demand on each budget, and what each budget allows at once. A pod under two or
 * more budgets is never evicted (the Eviction API refuses it), a budget that can never allow a
 * disruption stays blocked whatever the waves: neither constrains the split (the forecast
 * says blocked).
 */
export function budgetDemand(pods: readonly DrainPod[], budgets: readonly DrainBudget[]): { demand: BudgetDemand; allowed: ReadonlyMap<string, number> } {
  const allowed = new Map<string, number>();
  const demand = new Map<string, Map<string, number>>();
  for (const p of pods) {
    if (staysOnDrain(p) || p.phase === 'Succeeded' || p.phase === 'Failed') continue;
    const bs = budgetsOf(p, budgets);
    if (bs.length !== 1 || evictionNeed(p, bs[0]) !== 'budget') continue;
    const b = bs[0];
    const key = `${b.namespace}/${b.name}`;
    if (!allowed.has(key)) {
      const never = neverAllows(b, { expectedPods: b.status.expectedPods, desiredHealthy: b.status.desiredHealthy });
      allowed.set(key, never === null ? Math.max(0, b.status.disruptionsAllowed) : 0);
    }
    let m = demand.get(p.node);
    if (!m) demand.set(p.node, (m = new Map<string, number>()));
    m.set(key, (m.get(key) ?? 0) + 1);
  }
  return { demand, allowed };
}

/** A node whose own pods ask a budget for more disruptions than it allows: no wave helps it. */
interface UnmetBudget {
  node: string;
  budget: string;
  need: number;
  allowed: number;
}

/**
 * Splits `ordered` (size >= 1) into waves of at most `size`, first fit: each node goes into the
 * first wave with room whose other nodes leave enough of each of its budgets' disruptions, else
 * into a new wave. A node that alone asks more than a budget allows goes where no other node
 * asks that budget (and is reported); a budget allowing 0 does not constrain (it blocks every
 * wave alike). `last`: a node that must stay in the last wave (src/domain/waves.ts selfLast).
 */
export function spreadBudgetWaves(
  ordered: readonly string[],
  size: number,
  demand: BudgetDemand,
  allowed: ReadonlyMap<string, number>,
  last: string | null = null,
): { waves: string[][]; unmet: UnmetBudget[] } {
  if (size < 1) throw new RangeError(`wave size must be >= 1, got ${size}`);
  const waves: { names: string[]; used: Map<string, number> }[] = [];
  const unmet: UnmetBudget[] = [];
  for (const name of ordered) {
    const need = [...(demand.get(name) ?? new Map<string, number>())].filter(([b]) => (allowed.get(b) ?? 0) > 0);
    for (const [b, n] of need) {
      const a = allowed.get(b) ?? 0;
      if (n > a) unmet.push({ node: name, budget: b, need: n, allowed: a });
    }
    const fits = (w: { names: string[]; used: Map<string, number> }) =>
      w.names.length < size &&
      need.every(([b, n]) => {
        const used = w.used.get(b) ?? 0;
        return used + n <= (allowed.get(b) ?? 0) || used === 0;
      });
    const from = name === last ? Math.max(0, waves.length - 1) : 0;
    let wave = waves.slice(from).find(fits);
    if (!wave) waves.push((wave = { names: [], used: new Map() }));
    wave.names.push(name);
    for (const [b, n] of need) wave.used.set(b, (wave.used.get(b) ?? 0) + n);
  }
  return { waves: waves.map((w) => w.names), unmet };
}
