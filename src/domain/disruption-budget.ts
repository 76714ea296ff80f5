/**
 * PodDisruptionBudget arithmetic as Kubernetes does it (docs/apply.md "Drain forecast"), pure:
 * what the disruption controller computes for a budget (kubernetes pkg/controller/disruption,
 * getExpectedPodCount, countHealthyPods, updatePdbStatus) and what the Eviction API asks of it
 * for one pod (pkg/registry/core/pod/storage/eviction.go: canIgnorePDB, the unhealthy-pod
 * policy, checkAndDecrement). The drain forecast builds on these, so the plan refuses exactly
 * what the API server would refuse.
 */

import type { Budget, BudgetPod, IntOrPercent } from '../cluster/workloads.ts';

/**
 * intstr.GetScaledValueFromIntOrPercent(v, total, roundUp): a count as is, "N%" of total,
 * rounded up or down; null for a string that is not a percentage (the API server's
 * validation refuses those, a hand-written snapshot may not).
 */
export function scaledValue(v: IntOrPercent, total: number, roundUp: boolean): number | null {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? v : null;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return null;
  const raw = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(raw) : Math.floor(raw);
}

interface BudgetNeed {
  /** The pods the budget counts (a count minAvailable), or the scale of their controllers. */
  expectedPods: number;
  desiredHealthy: number;
}

/**
 * The budget's expected pods and desired healthy count, as the disruption controller computes
 * them: maxUnavailable (count or percentage, rounded up) and a percentage minAvailable (rounded
 * up) take the sum of the pods' controller scales; a count minAvailable is the desired count
 * itself against the pods it matches. null for a value that is not a count or a percentage.
 */
export function budgetNeed(b: Pick<Budget, 'minAvailable' | 'maxUnavailable'>, matchedPods: number, controllerScale: number): BudgetNeed | null {
  if (b.maxUnavailable !== null) {
    const max = scaledValue(b.maxUnavailable, controllerScale, true);
    if (max === null) return null;
    return { expectedPods: controllerScale, desiredHealthy: Math.max(0, controllerScale - max) };
  }
  if (b.minAvailable !== null) {
    if (typeof b.minAvailable === 'number') {
      const min = scaledValue(b.minAvailable, matchedPods, true);
      return min === null ? null : { expectedPods: matchedPods, desiredHealthy: min };
    }
    const min = scaledValue(b.minAvailable, controllerScale, true);
    return min === null ? null : { expectedPods: controllerScale, desiredHealthy: min };
  }
  return null;
}

/** updatePdbStatus: disruptions allowed are the healthy pods above the desired count, never below 0. */
export function disruptionsAllowed(currentHealthy: number, desiredHealthy: number, expectedPods: number): number {
  const allowed = currentHealthy - desiredHealthy;
  return expectedPods <= 0 || allowed <= 0 ? 0 : allowed;
}

/**
 * What evicting this pod asks of its one budget:
 * - `free`: evicted without touching the budget: a Pending, Succeeded or Failed pod, or one
 *   already being deleted (canIgnorePDB); an unready pod under `AlwaysAllow`, or under
 *   IfHealthyBudget while the budget has its desired healthy pods (currentHealthy >=
 *   desiredHealthy > 0);
 * - `budget`: one of the budget's disruptions (checkAndDecrement), refused (429) when none is
 *   left.
 */
export function evictionNeed(pod: BudgetPod, b: Pick<Budget, 'unhealthyPodEvictionPolicy' | 'status'>): 'free' | 'budget' {
  if (pod.phase === 'Pending' || pod.phase === 'Succeeded' || pod.phase === 'Failed' || pod.deleting) return 'free';
  if (!pod.ready) {
    if (b.unhealthyPodEvictionPolicy === 'AlwaysAllow') return 'free';
    if (b.status.currentHealthy >= b.status.desiredHealthy && b.status.desiredHealthy > 0) return 'free';
  }
  return 'budget';
}

/** Does the pod count as healthy for its budgets (countHealthyPods: Ready and not being deleted)? */
export function countsHealthy(pod: BudgetPod): boolean {
  return pod.ready && !pod.deleting;
}

/**
 * Why a budget can never allow a disruption, whatever the drain waits for; null when it can.
 * - `max-unavailable-zero`: maxUnavailable resolves to 0 (0, or a percentage that rounds up
 *   to 0 only for 0%): desiredHealthy is every expected pod.
 * - `min-available-all`: minAvailable asks for every expected pod (or more).
 * A replacement pod only comes after an eviction, so neither ever frees up by waiting.
 */
export function neverAllows(b: Pick<Budget, 'minAvailable' | 'maxUnavailable'>, need: BudgetNeed): 'max-unavailable-zero' | 'min-available-all' | null {
  if (need.expectedPods <= 0) return null;
  if (b.maxUnavailable !== null) return need.desiredHealthy >= need.expectedPods ? 'max-unavailable-zero' : null;
  if (b.minAvailable !== null) return need.desiredHealthy >= need.expectedPods ? 'min-available-all' : null;
  return null;
}
