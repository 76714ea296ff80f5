/**
 * The fleet planner (docs/design.md §10): a valid Fleet and, per cluster, its snapshot or why there is
 * none -> FleetPlan. Each cluster's effective spec is planned by `buildPlan` (a normal sealed
 * plan whose spec info names the Fleet file and the cluster), then the batches
 * (batches.ts), the fleet estimate and the fleet plan id. Pure and synchronous:
 * the CLI reads the clusters (concurrently) and passes them in.
 */
import { createHash } from 'node:crypto';
import { type Diagnostic, type SourceMap, diagnosticAt } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { FleetCluster, FleetSpec } from './spec-types.ts';
import { deepEqual } from '../base/equal.ts';
import { effectiveSpecs } from './spec-load.ts';
import { overriddenFields } from './effective-spec.ts';
import { parseMaxConcurrency, resolveMaxConcurrency, planFleetBatches, fleetEstimateSeconds, DEFAULT_MAX_CONCURRENCY } from './batches.ts';
import { buildPlan } from '../plan/planner.ts';
import type { Plan, PlanSpecInfo, PhaseDurations } from '../plan/types.ts';
import {
  FLEET_PLAN_FORMAT_VERSION,
  FLEET_PLAN_KIND,
  type FleetPlan,
  type FleetClusterPlan,
  type FleetClusterError,
  type FleetBatch,
  type FleetPlanSummary,
} from './plan-types.ts';

/** What the CLI found for one cluster: its snapshot, or the error that stands for its plan. */
export type FleetClusterInput = { snapshot: ClusterSnapshot; error?: undefined } | { snapshot?: undefined; error: FleetClusterError };

export interface FleetPlanInput {
  fleet: FleetSpec;
  map: SourceMap;
  /** The Fleet file (path, commit, sha256), as a Rollout plan records its spec. */
  info: PlanSpecInfo;
  /** Non-error diagnostics of the Fleet file; they are the fleet plan's own diagnostics. */
  diagnostics?: Diagnostic[];
  /** By cluster name; a cluster missing here counts as unreachable. */
  clusters: ReadonlyMap<string, FleetClusterInput>;
  durations?: PhaseDurations;
  /** Epoch ms at which maintenance windows are evaluated (per cluster plan, not in the ids). */
  now?: number;
}

/** A plan that changes something: an object change or a node to roll (as `plan --detailed-exitcode`). */
export function planHasWork(plan: Plan): boolean {
  return plan.changes.some((c) => c.action !== 'noop') || plan.summary.nodes > 0;
}

/** Canaries that failed (no plan, or a plan with errors): any one makes the fleet plan unapplicable. */
export function failedCanaries(fp: Pick<FleetPlan, 'clusters'>): string[] {
  return fp.clusters.filter((c) => c.canary && c.error).map((c) => c.name);
}

/** The cluster rolls in a batch: it has a plan, without errors, that changes something. */
export function clusterRolls(c: Pick<FleetClusterPlan, 'plan' | 'error'>): boolean {
  return !!c.plan && !c.error && c.plan.summary.errors === 0 && planHasWork(c.plan);
}

export function planFleet(input: FleetPlanInput): FleetPlan {
  const { fleet } = input;
  const specs = effectiveSpecs(fleet, input.map);
  const canaries = fleet.spec.strategy?.canaries ?? [];
  const clusters: FleetClusterPlan[] = fleet.spec.clusters.map((c, i) => {
    const found = input.clusters.get(c.name) ?? { error: { code: 'unreachable' as const, message: 'the cluster was not read', hint: 'plan the fleet again' } };
    let plan: Plan | null = null;
    let error: FleetClusterError | null = found.error ?? null;
    if (found.snapshot) {
      plan = buildPlan({
        spec: specs[i].spec,
        specMap: specs[i].map,
        specInfo: { ...input.info, fleetCluster: c.name },
        snapshot: found.snapshot,
        durations: input.durations,
        now: input.now,
      });
      error = planErrorsOf(plan) ?? error;
    }
    return { ...clusterEntry(c, canaries, fleet, i), plan, error };
  });
  return assembleFleetPlan(input.info, fleet, clusters, [...(input.diagnostics ?? []), ...sharedIdentities(clusters, input.map)]);
}

/**
 * Clusters of the Fleet whose plans record the same identity (src/cluster/identity.ts): two
 * entries reaching one cluster, or clusters cloned with their identity, whose plans apply would
 * not tell apart (each plan runs only where its identity is found). A warning on each later entry.
 */
function sharedIdentities(clusters: readonly FleetClusterPlan[], map: SourceMap): Diagnostic[] {
  const first = new Map<string, string>();
  const out: Diagnostic[] = [];
  clusters.forEach((c, i) => {
    const identity = c.plan?.cluster.identity;
    if (!identity) return;
    const key = `${identity.kind} ${identity.id}`;
    const earlier = first.get(key);
    if (earlier === undefined) {
      first.set(key, c.name);
      return;
    }
    out.push(
      diagnosticAt(map, {
        severity: 'warning',
        code: 'fleet-shared-identity',
        path: `spec.clusters[${i}]`,
        message: `clusters ${earlier} and ${c.name} are the same cluster as far as bootcplan can tell (${key}): two entries reach one cluster, or the clusters were cloned with their identity`,
        hint: "give each entry the context or snapshot of a cluster of its own; a plan runs only where its identity is found, so cloned clusters can run each other's plans",
      }),
    );
  });
  return out;
}

/** What the Fleet alone says of one cluster (batch: set by assembleFleetPlan). */
function clusterEntry(c: FleetCluster, canaries: readonly string[], fleet: FleetSpec, index: number): Omit<FleetClusterPlan, 'plan' | 'error'> {
  return {
    name: c.name,
    labels: { ...(c.labels ?? {}) },
    source: { context: c.context ?? null, kubeconfig: c.kubeconfig ?? null, snapshot: c.snapshot ?? null },
    destination: { name: c.destination?.name ?? (c.destination?.server ? null : c.name), server: c.destination?.server ?? null },
    canary: canaries.includes(c.name),
    overriddenBy: overriddenFields(fleet, index),
    batch: null,
  };
}

function planErrorsOf(plan: Plan): FleetClusterError | null {
  if (!plan.summary.errors) return null;
  return {
    code: 'plan-errors',
    message: `the plan has ${plan.summary.errors} error${plan.summary.errors === 1 ? '' : 's'}`,
    hint: "see the cluster's diagnostics; fix the Fleet (or the cluster) and plan again",
  };
}

/**
 * The fleet plan `saved` as the (verified) Fleet re-derives it (docs/fleets.md "The fleet plan
 * file"): every cluster's name, labels, source, destination and canary flag from the Fleet, its
 * plan (and, without a plan, its error) from `saved`, then the strategy, batches and summary as
 * assembleFleetPlan makes them. A fleet plan file is trusted for nothing else: its id is a
 * content hash anyone can recompute after an edit.
 */
export function rederiveFleetPlan(fleet: FleetSpec, saved: FleetPlan): FleetPlan {
  const canaries = fleet.spec.strategy?.canaries ?? [];
  const byName = new Map(saved.clusters.map((c) => [c.name, c]));
  const clusters: FleetClusterPlan[] = fleet.spec.clusters.map((c, i) => {
    const s = byName.get(c.name);
    const plan = s?.plan ?? null;
    const error = plan ? planErrorsOf(plan) : (s?.error ?? { code: 'unreachable' as const, message: 'the cluster was not read', hint: 'plan the fleet again' });
    return { ...clusterEntry(c, canaries, fleet, i), plan, error };
  });
  return assembleFleetPlan(saved.fleet, fleet, clusters, saved.diagnostics);
}

/**
 * Where `saved` differs from `derived` (rederiveFleetPlan): the fleet's name, strategy, batches,
 * summary, the list of clusters, and per cluster the fields the Fleet gives (and whether its plan
 * was made for it from this Fleet file). Empty: the file says what the Fleet says.
 */
export function fleetPlanDifferences(saved: FleetPlan, derived: FleetPlan): string[] {
  const out: string[] = [];
  if (saved.fleet.name !== derived.fleet.name) out.push(`fleet name ${JSON.stringify(saved.fleet.name)} (the Fleet: ${JSON.stringify(derived.fleet.name)})`);
  if (!deepEqual(saved.strategy, derived.strategy)) out.push('strategy');
  if (!deepEqual(saved.batches, derived.batches)) out.push(`batches (${describeBatches(saved)}; the Fleet gives ${describeBatches(derived)})`);
  const names = (fp: FleetPlan) => fp.clusters.map((c) => c.name);
  if (!deepEqual(names(saved), names(derived))) out.push(`clusters (${names(saved).join(', ')}; the Fleet lists ${names(derived).join(', ')})`);
  const byName = new Map(saved.clusters.map((c) => [c.name, c]));
  for (const d of derived.clusters) {
    const s = byName.get(d.name);
    if (!s) continue;
    const fields: string[] = (['labels', 'source', 'destination', 'canary', 'overriddenBy', 'batch', 'error'] as const).filter((f) => !deepEqual(s[f], d[f]));
    const p = s.plan?.spec;
    if (
      p &&
      (p.fleetCluster !== d.name ||
        p.path !== saved.fleet.path ||
        p.sha256 !== saved.fleet.sha256 ||
        p.commit !== saved.fleet.commit ||
        p.ref !== saved.fleet.ref)
    )
      fields.push('plan');
    if (fields.length) out.push(`cluster ${d.name}: ${fields.join(', ')}`);
  }
  if (!out.length && !deepEqual(saved.summary, derived.summary)) out.push('summary');
  return out;
}

function describeBatches(fp: FleetPlan): string {
  return fp.batches.length ? fp.batches.map((b) => `${b.index} ${b.kind}: ${b.clusters.join(' ')}`).join(' | ') : 'no batch';
}

/** Batches, strategy, summary and id around the planned clusters. */
export function assembleFleetPlan(info: PlanSpecInfo, fleet: FleetSpec, clusters: FleetClusterPlan[], diagnostics: Diagnostic[]): FleetPlan {
  const strategy = fleet.spec.strategy ?? {};
  const canaries = strategy.canaries ?? [];
  const candidates = clusters.map((c) => ({ name: c.name, labels: c.labels, rolls: clusterRolls(c) }));
  const others = candidates.filter((c) => c.rolls && !canaries.includes(c.name)).length;
  const parsed = parseMaxConcurrency(strategy.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY);
  const maxConcurrency = resolveMaxConcurrency(parsed.ok ? parsed.value : { kind: 'count', value: DEFAULT_MAX_CONCURRENCY }, others);
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const batches: FleetBatch[] = planFleetBatches(canaries, candidates, maxConcurrency.resolved).map((b, i) => {
    const seconds: number[] = [];
    for (const name of b.clusters) {
      const c = byName.get(name);
      if (!c?.plan) throw new Error(`internal: batch ${i + 1} holds ${name}, which has no plan`); // batches hold clusters that roll
      c.batch = i + 1;
      seconds.push(c.plan.summary.estimatedSeconds);
    }
    return { index: i + 1, kind: b.kind, clusters: b.clusters, estimatedSeconds: Math.max(0, ...seconds) };
  });
  const soak = strategy.batchSoakSeconds ?? 0;
  const body: Omit<FleetPlan, 'id'> = {
    formatVersion: FLEET_PLAN_FORMAT_VERSION,
    kind: FLEET_PLAN_KIND,
    fleet: { ...info, name: fleet.metadata.name },
    strategy: {
      canaries: [...canaries],
      maxConcurrency,
      batchSoakSeconds: soak,
      batchTimeoutSeconds: strategy.batchTimeoutSeconds ?? null,
      batchTimeoutAction: strategy.batchTimeoutAction ?? 'abort',
    },
    batches,
    clusters,
    diagnostics: diagnostics.filter((d) => d.severity !== 'error'),
    summary: summarize(clusters, batches, soak),
  };
  const { formatVersion, kind, ...rest } = body;
  return { formatVersion, kind, id: fleetPlanIdOf(body), ...rest };
}

function summarize(clusters: readonly FleetClusterPlan[], batches: readonly FleetBatch[], soak: number): FleetPlanSummary {
  const plans = clusters.map((c) => c.plan).filter((p): p is Plan => p !== null);
  return {
    clusters: clusters.length,
    planned: clusters.filter((c) => c.plan && !c.error).length,
    withChanges: plans.filter(planHasWork).length,
    failed: clusters.filter((c) => c.error).length,
    nodes: plans.reduce((s, p) => s + p.summary.nodes, 0),
    batches: batches.length,
    estimatedSeconds: fleetEstimateSeconds(
      batches.map((b) => b.estimatedSeconds),
      soak,
    ),
    errors: plans.reduce((s, p) => s + p.summary.errors, 0) + clusters.filter((c) => c.error && !c.plan).length,
    warnings: plans.reduce((s, p) => s + p.summary.warnings, 0),
  };
}

/**
 * Content hash of the fleet plan without its id, as planIdOf hashes a plan (fixed key order,
 * JSON.stringify): the same Fleet and clusters give the same id on any machine. Each cluster
 * plan's `schedule` (clock-dependent, outside the plan's own id too) is left out.
 */
export function fleetPlanIdOf(body: Omit<FleetPlan, 'id'> & { id?: string }): string {
  const { id: _ignored, formatVersion, kind, ...rest } = body;
  const clusters = rest.clusters.map((c) => {
    if (!c.plan || c.plan.schedule === undefined) return c;
    const { schedule: _clockDependent, ...plan } = c.plan;
    return { ...c, plan };
  });
  return createHash('sha256')
    .update(JSON.stringify({ formatVersion, kind, ...rest, clusters }))
    .digest('hex')
    .slice(0, 16);
}

/** The id the content of a fleet plan hashes to, when it is not the id it carries. */
export function tamperedFleetId(fp: FleetPlan): string | null {
  const actual = fleetPlanIdOf(fp);
  return actual === fp.id ? null : actual;
}
