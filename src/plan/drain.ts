/**
 * The plan's drain forecast (docs/apply.md "Drain forecast"), pure: the snapshot's workloads as
 * the forecaster reads them (src/domain/drain-forecast.ts), each planned node's share of its
 * wave's forecast (a slots pool: of its own drain), the waves spread over the budgets
 * (src/domain/drain-waves.ts), and the pool's `drain` policy. A snapshot without workloads gets
 * no forecast.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { NodeObject } from '../cluster/kinds.ts';
import type { DrainNode, Taint } from '../cluster/workloads.ts';
import { parseQuantity } from '../cluster/workload-projection.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import { isPlainObject } from '../base/schema.ts';
import { DRAIN_CLASSES, forecastWaveDrain, type DrainCluster, type DrainClass } from '../domain/drain-forecast.ts';
import { budgetDemand, spreadBudgetWaves, type BudgetDemand } from '../domain/drain-waves.ts';
import type { PoolSpec } from '../rollout-spec/types.ts';
import type { PlanDrainForecast, PlanPool, PlanPoolDrain } from './types.ts';

export interface DrainContext {
  cluster: DrainCluster;
  demand: BudgetDemand;
  allowed: ReadonlyMap<string, number>;
}

/** Room the forecast cannot count on or against: a node whose allocatable the snapshot lacks. */
const UNKNOWN_ROOM = Number.MAX_SAFE_INTEGER;

function taintsOf(v: unknown): Taint[] {
  if (!Array.isArray(v)) return [];
  const out: Taint[] = [];
  const items: unknown[] = v;
  for (const t of items) {
    if (!isPlainObject(t)) continue;
    const { key, value, effect } = t;
    if (typeof key === 'string' && typeof effect === 'string') out.push({ key, effect, ...(typeof value === 'string' ? { value } : {}) });
  }
  return out;
}

function drainNodeOf(o: NodeObject): DrainNode {
  const a = isPlainObject(o.status) && isPlainObject(o.status.allocatable) ? o.status.allocatable : undefined;
  const cpu = parseQuantity(a?.cpu);
  const mem = parseQuantity(a?.memory);
  const pods = parseQuantity(a?.pods);
  return {
    name: o.metadata.name,
    labels: o.metadata.labels ?? {},
    unschedulable: o.spec?.unschedulable === true,
    taints: taintsOf(o.spec?.taints),
    allocatable: {
      cpuMillis: cpu === null ? UNKNOWN_ROOM : Math.floor(cpu * 1000 + 1e-9),
      memoryBytes: mem === null ? UNKNOWN_ROOM : Math.floor(mem),
      pods: pods === null ? UNKNOWN_ROOM : Math.floor(pods),
    },
  };
}

/** The workloads of the snapshot as the forecast reads them; null when it holds none (an older snapshot). */
export function drainContextOf(snapshot: ClusterSnapshot): DrainContext | null {
  const w = snapshot.workloads;
  if (!w) return null;
  const cluster: DrainCluster = { pods: w.pods, budgets: w.budgets, nodes: snapshot.nodes.map(drainNodeOf) };
  return { cluster, ...budgetDemand(w.pods, w.budgets) };
}

/** `drain.timeoutSeconds`, or its older name `drainTimeoutSeconds` (never both: the spec refuses it). */
export function drainTimeoutOf(p: PoolSpec): number | undefined {
  return p.drain?.timeoutSeconds ?? p.drainTimeoutSeconds;
}

/** PlanPool.drain: only when the spec sets the pool's `drain` (formatVersion "1.3"). */
export function drainPolicyOf(p: PoolSpec): PlanPoolDrain | undefined {
  if (!p.drain) return undefined;
  return { timeoutSeconds: drainTimeoutOf(p) ?? null, onBlocked: p.drain.onBlocked ?? 'halt', maxSkippedNodes: p.drain.maxSkippedNodes ?? 0 };
}

/**
 * A bootc pool's ordered nodes in waves of `size` that ask no budget for more disruptions than
 * it allows, with a warning for each node that no wave can help (its own pods ask too much).
 */
export function budgetWaves(
  ordered: readonly string[],
  size: number,
  drain: DrainContext,
  last: string | null,
  where: { pool: string; path: string },
  report: (d: DiagnosticInput) => void,
): string[][] {
  const { waves, unmet } = spreadBudgetWaves(ordered, size, drain.demand, drain.allowed, last);
  for (const u of unmet) {
    report({
      severity: 'warning',
      code: 'drain-waves-cannot-spread',
      path: joinPath(where.path, 'name'),
      message: `pool ${where.pool}: node ${u.node} runs ${u.need} pods of PDB ${u.budget}, which allows ${u.allowed} disruption${u.allowed === 1 ? '' : 's'} at once: no wave can take it without waiting for replacements`,
      hint: `spread the pods of ${u.budget} over more nodes (topologySpreadConstraints or pod anti-affinity), or raise the budget`,
    });
  }
  return waves;
}

/**
 * An MCO pool's waves are the MCO's (src/domain/waves.ts orderNodesLikeMco): bootcplan cannot
 * spread them over the budgets, so it says which wave asks a budget for more than it allows.
 */
export function reportMcoBudgetWaits(
  waves: readonly string[][],
  drain: DrainContext,
  where: { pool: string; path: string },
  report: (d: DiagnosticInput) => void,
): void {
  const over: string[] = [];
  waves.forEach((w, i) => {
    const used = new Map<string, number>();
    for (const n of w) for (const [b, k] of drain.demand.get(n) ?? []) used.set(b, (used.get(b) ?? 0) + k);
    for (const [b, k] of [...used].sort(([x], [y]) => x.localeCompare(y))) {
      const a = drain.allowed.get(b) ?? 0;
      if (a > 0 && k > a) over.push(`wave ${i + 1} asks PDB ${b} for ${k} (it allows ${a})`);
    }
  });
  if (!over.length) return;
  report({
    severity: 'warning',
    code: 'drain-waves-mco-order',
    path: joinPath(where.path, 'maxUnavailable'),
    message: `pool ${where.pool} is rolled by the MCO, which picks its nodes in its own order: ${over.slice(0, 5).join('; ')}${over.length > 5 ? `; and ${over.length - 5} more` : ''}; those drains wait for replacements`,
    hint: 'lower maxUnavailable, spread the pods over more nodes, or raise the budgets',
  });
}

const rank = (c: DrainClass) => DRAIN_CLASSES.indexOf(c);

/** Each scheduled node's share of the forecast of its wave (a slots pool: of its own drain). */
function forecastPoolDrains(pool: PlanPool, drain: DrainContext): void {
  const byName = new Map(pool.nodes.map((n) => [n.name, n]));
  const groups = pool.rollout === 'slots' ? pool.waves.flat().map((n) => [n]) : pool.waves;
  for (const group of groups) {
    const f = forecastWaveDrain(drain.cluster, group);
    for (const name of group) {
      const node = byName.get(name);
      if (!node) continue;
      const findings = f.findings.filter((x) => x.nodes.includes(name));
      const out: PlanDrainForecast = {
        class: findings.reduce<DrainClass>((w, x) => (rank(x.class) > rank(w) ? x.class : w), 'ok'),
        rounds: findings.reduce((r, x) => Math.max(r, x.rounds ?? 1), 1),
        findings,
        effects: f.effects.filter((e) => e.node === name),
      };
      node.drainForecast = out;
    }
  }
}

/**
 * What serialized drains add to the pool's estimate: each wave (a slots pool: each node) waits
 * one more drain per round beyond the first, for the replacements to be Ready.
 */
export function drainWaitSeconds(pool: PlanPool, durations: { drain: number }): number {
  const rounds = new Map(pool.nodes.map((n) => [n.name, n.drainForecast?.rounds ?? 1]));
  const groups = pool.rollout === 'slots' ? pool.waves.flat().map((n) => [n]) : pool.waves;
  let extra = 0;
  for (const g of groups) extra += Math.max(1, ...g.map((n) => rounds.get(n) ?? 1)) - 1;
  return extra * durations.drain;
}

/**
 * The plan's drain forecast over its pools, in plan order; without workloads in the snapshot, a
 * note where the spec sets a pool's `drain` (plans of other specs keep their bytes and ids).
 */
export function forecastDrains(pools: readonly PlanPool[], drain: DrainContext | null, report: (d: DiagnosticInput) => void): void {
  if (drain) {
    for (const pool of pools) forecastPoolDrains(pool, drain);
    return;
  }
  if (!pools.some((p) => p.drain) || !pools.some((p) => p.waves.length > 0)) return;
  report({
    severity: 'warning',
    code: 'no-drain-forecast',
    message: 'no drain forecast: the snapshot holds no workloads (Pods and PodDisruptionBudgets)',
    hint: 'take a snapshot with `bootcplan snapshot` (it reads Pods and PodDisruptionBudgets, which needs list on both), or plan against the live cluster',
  });
}
