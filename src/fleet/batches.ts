/**
 * Fleet batches (docs/design.md §10): which clusters roll together, in which order.
 *
 * Upstream: Red Hat TALM (openshift-kni/cluster-group-upgrades-operator, ClusterGroupUpgrade
 * spec.remediationStrategy `canaries` and `maxConcurrency`, status.computedMaxConcurrency): the
 * canaries are remediated first, each in a batch of its own, then the other clusters in batches
 * of at most maxConcurrency. A percentage (as Azure Kubernetes Fleet update runs and Argo CD's
 * RollingSync `maxUpdate` accept) resolves like a pool's maxUnavailable (domain/budget.ts, the
 * MCO's rule): floor of the percentage of the non-canary clusters, at least 1.
 *
 * Pure; its shapes are its own, so the Fleet schema (spec-schema.ts) and the planner (plan.ts) both use it.
 */
import { describeType, INT32_MAX } from '../base/schema.ts';
import type { MaxUnavailable, ResolvedBudget } from '../domain/budget.ts';

type MaxConcurrency = MaxUnavailable;

type MaxConcurrencyResult =
  | { ok: true; value: MaxConcurrency }
  | { ok: false; code: 'max-concurrency-invalid' | 'max-concurrency-zero'; message: string; expected: string; hint?: string };

export const MAX_CONCURRENCY_EXPECTED = 'an integer >= 1, or a percentage "N%" with 1 <= N <= 100 of the non-canary clusters';
export const DEFAULT_MAX_CONCURRENCY = 1;

/** `strategy.maxConcurrency`, read as strictly as a pool's maxUnavailable (parseMaxUnavailable). */
export function parseMaxConcurrency(raw: unknown): MaxConcurrencyResult {
  const fail = (
    message: string,
    hint?: string,
    code: 'max-concurrency-invalid' | 'max-concurrency-zero' = 'max-concurrency-invalid',
  ): MaxConcurrencyResult => ({
    ok: false,
    code,
    message,
    expected: MAX_CONCURRENCY_EXPECTED,
    hint,
  });
  const zero = () =>
    fail(
      '0 would never roll a cluster after the canaries',
      'use 1 to roll one cluster at a time; leave a cluster out of the Fleet to hold it back',
      'max-concurrency-zero',
    );
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) return fail(`${raw} is not a whole number`, 'use a whole number of clusters, or a percentage such as "25%"');
    if (raw === 0) return zero();
    if (raw < 0) return fail(`${raw} is negative`);
    if (raw > INT32_MAX) return fail(`${raw} is larger than ${INT32_MAX}`, 'use "100%" to roll every cluster after the canaries at once');
    return { ok: true, value: { kind: 'count', value: raw } };
  }
  if (typeof raw === 'string') {
    const m = /^(\d{1,4})%$/.exec(raw);
    if (!m) {
      if (/^\d+$/.test(raw.trim()))
        return fail(`"${raw}" is a string without a % sign`, `write ${raw.trim()} without quotes for a count, or "${raw.trim()}%" for a percentage`);
      return fail(`"${raw}" is not a count or a percentage`, 'write a percentage as digits directly followed by %, e.g. "25%"');
    }
    const pct = Number(m[1]);
    if (pct === 0) return zero();
    if (pct > 100) return fail(`${raw} is more than 100%`);
    return { ok: true, value: { kind: 'percent', value: pct } };
  }
  return fail(`expected a number or a string, got ${describeType(raw)}`);
}

/** The clusters per batch after the canaries; `others` = the non-canary clusters that roll. */
export function resolveMaxConcurrency(mc: MaxConcurrency, others: number): ResolvedBudget {
  if (mc.kind === 'count') return { value: mc.value, resolved: mc.value, rule: 'integer' };
  return { value: `${mc.value}%`, resolved: Math.max(1, Math.floor((mc.value * others) / 100)), rule: 'floor(percent x non-canary clusters), minimum 1' };
}

interface BatchCandidate {
  name: string;
  labels: Readonly<Record<string, string>>;
  /** The cluster has a plan without errors that changes something: only such clusters roll. */
  rolls: boolean;
}

interface PlannedBatch {
  kind: 'canary' | 'batch';
  clusters: string[];
}

/** The sort key of a cluster: its labels as sorted `key=value` pairs joined with ",". */
export function labelKey(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort(codeUnitCompare)
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

/** Plain string order (UTF-16 code units): the same on every machine, whatever the locale. */
function codeUnitCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Each canary that rolls is a batch of its own, in the order listed; then the other clusters
 * that roll, ordered by their labels (labelKey) then by name, cut into batches of
 * `maxConcurrency` (resolved). A cluster that does not roll (nothing to change, an error) sits
 * in no batch.
 */
export function planFleetBatches(canaries: readonly string[], clusters: readonly BatchCandidate[], maxConcurrency: number): PlannedBatch[] {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const canarySet = new Set(canaries);
  const out: PlannedBatch[] = [];
  for (const name of canaries) if (byName.get(name)?.rolls) out.push({ kind: 'canary', clusters: [name] });
  const others = clusters
    .filter((c) => c.rolls && !canarySet.has(c.name))
    .map((c) => ({ name: c.name, key: labelKey(c.labels) }))
    .sort((a, b) => codeUnitCompare(a.key, b.key) || codeUnitCompare(a.name, b.name));
  const size = Math.max(1, Math.floor(maxConcurrency));
  for (let i = 0; i < others.length; i += size) out.push({ kind: 'batch', clusters: others.slice(i, i + size).map((c) => c.name) });
  return out;
}

/** Batches run one after another; a batch takes its longest cluster; the soak sits between batches. */
export function fleetEstimateSeconds(batchSeconds: readonly number[], soakSeconds: number): number {
  if (batchSeconds.length === 0) return 0;
  return batchSeconds.reduce((s, x) => s + x, 0) + soakSeconds * (batchSeconds.length - 1);
}
