/**
 * The planner: (spec, snapshot) -> Plan. Pure and synchronous: no fs, no network, no clock.
 */
import { createHash } from 'node:crypto';
import type { RolloutSpec } from '../rollout-spec/types.ts';
import { type Diagnostic, type DiagnosticInput, type SourceMap, diagnosticAt, sortDiagnostics, joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { clusterIdentityOf } from '../cluster/identity.ts';
import { indexSnapshot, type NodeIndex } from '../domain/nodes.ts';
import { computeMembership, type Membership } from '../domain/pools.ts';
import { findPoolConflicts } from '../domain/pool-sharing.ts';
import { DEFAULT_DURATIONS, estimatePoolSeconds, estimateSlotsSeconds } from '../domain/timing.ts';
import { planSchedule } from '../domain/schedule.ts';
import { INSTALLED_BOOTC_OPERATOR, type BootcOperatorAbilities } from '../domain/bootc-daemon.ts';
import type { SpecChanges } from './specdiff.ts';
import type { DraftChange } from './changes.ts';
import { planBootImages } from './bootimages.ts';
import { planPool, type PlannedPool } from './pool.ts';
import { planHealth, gateCount } from './health.ts';
import { planSilences } from './silences.ts';
import { forecastRollback } from './rollback-forecast.ts';
import { inheritingPools, planInheritance } from './inherited-pools.ts';
import { planConcurrency } from './concurrency.ts';
import { drainContextOf, drainWaitSeconds, forecastDrains, type DrainContext } from './drain.ts';
import {
  PLAN_FORMAT_VERSION,
  PLAN_FORMAT_VERSION_SLOTS,
  PLAN_FORMAT_VERSION_HEALTH,
  PLAN_FORMAT_VERSION_CONCURRENT,
  PLAN_FORMAT_VERSION_DRAIN,
  type Plan,
  type PlanChange,
  type PlanClusterInfo,
  type PlanPool,
  type PlanSpecInfo,
  type PlanSummary,
  type PhaseDurations,
  type RebootKind,
} from './types.ts';

export interface PlanInput {
  spec: RolloutSpec;
  specMap: SourceMap | null;
  specInfo: PlanSpecInfo;
  snapshot: ClusterSnapshot;
  /** Non-error diagnostics from loading the spec (warnings carry into the plan). */
  specDiagnostics?: Diagnostic[];
  durations?: PhaseDurations;
  /** Epoch ms: the moment at which maintenance windows are evaluated (the CLI passes the clock). */
  now?: number;
  /** With `plan --base REF`: the spec diff, carried into the plan for the renderers. */
  specChanges?: SpecChanges | null;
  /**
   * The node the planning process runs on (the CLI passes NODE_NAME, the downward API's
   * spec.nodeName of the apply Job's pod): last in its bootc pool, marked `runsBootcplan`
   * (docs/design.md §7 "Stopping"; src/domain/waves.ts selfLast).
   */
  selfNode?: string | null;
  /**
   * What the installed bootc-operator can do (src/domain/bootc-daemon.ts); default
   * INSTALLED_BOOTC_OPERATOR, whose daemon performs no soft reboots.
   */
  bootcOperator?: BootcOperatorAbilities;
}

export function buildPlan(input: PlanInput): Plan {
  const { spec, specMap, snapshot } = input;
  const durations = input.durations ?? DEFAULT_DURATIONS;
  const boot = planBootImages({ spec, specMap, snapshot });
  const replaced = new Set(boot.replacesSpecWarnings);
  const diagnostics: Diagnostic[] = (input.specDiagnostics ?? []).filter((d) => d.severity !== 'error' && !replaced.has(d.code));
  const report = (d: DiagnosticInput) => diagnostics.push(diagnosticAt(specMap, d));
  diagnostics.push(...boot.diagnostics);
  // Indexed and grouped once for the pools and their rollback forecasts (10,000 nodes: each a full pass).
  const idx = indexSnapshot(snapshot);
  const membership = computeMembership(snapshot);
  const drain = drainContextOf(snapshot);
  const plannedPools = planPools(spec, { snapshot, idx, membership }, report, input.selfNode ?? null, input.bootcOperator ?? INSTALLED_BOOTC_OPERATOR, drain);
  const pools = plannedPools.map((x) => x.plan);
  // Before the estimates: a serialized drain adds its rounds (src/plan/drain.ts drainWaitSeconds).
  forecastDrains(pools, drain, report);
  const health = planHealth(spec, snapshot, pools, report);
  const silences = planSilences(spec, snapshot, pools, report);
  estimatePools(pools, durations);
  const drafts: DraftChange[] = [...boot.changes, ...plannedPools.flatMap((p) => p.drafts)];

  const changes: PlanChange[] = drafts.map((c, i) => ({ ...c, order: i + 1 }));
  forecastRollbacks(pools, { snapshot, idx, bootcMembers: membership.bootc });
  const concurrency = planConcurrency(spec, snapshot, pools, report);
  const drainVersion = pools.some((p) => p.drain || p.nodes.some((n) => n.drainForecast));
  const sorted = sortDiagnostics(diagnostics);
  const checks = health.checks;
  const body: Omit<Plan, 'id'> = {
    formatVersion: concurrency
      ? PLAN_FORMAT_VERSION_CONCURRENT
      : drainVersion
        ? PLAN_FORMAT_VERSION_DRAIN
        : checks.length || silences.length
          ? PLAN_FORMAT_VERSION_HEALTH
          : pools.some((p) => p.rollout === 'slots')
            ? PLAN_FORMAT_VERSION_SLOTS
            : PLAN_FORMAT_VERSION,
    spec: input.specInfo,
    cluster: clusterInfo(snapshot),
    changes,
    bootImages: boot.bootImages,
    pools,
    // Only with checks: plans without them stay as they were, byte for byte (and keep their ids).
    ...(checks.length ? { healthChecks: checks } : {}),
    // Likewise: a plan without silences keeps its bytes and its id.
    ...(silences.length ? { silences } : {}),
    // Opt-in (src/plan/concurrency.ts): plans of specs without it keep their bytes and ids.
    ...(concurrency ? { concurrency } : {}),
    diagnostics: sorted,
    durations,
    summary: summarize(changes, pools, sorted),
  };
  if (checks.length) {
    body.summary.estimatedSeconds += health.preflightSeconds;
    body.summary.healthChecks = checks.length;
    body.summary.gates = gateCount(body);
  }
  const { formatVersion, ...rest } = body;
  const plan: Plan = { formatVersion, id: planIdOf(body), ...rest };
  if (input.specChanges) plan.specChanges = input.specChanges;
  const windows = spec.spec.maintenanceWindows ?? [];
  if (windows.length && input.now !== undefined) plan.schedule = planSchedule(windows, pools, durations, input.now);
  return plan;
}

/** What the plan records of the cluster; identity and server only when known (PlanClusterInfo). */
export function clusterInfo(snapshot: ClusterSnapshot): PlanClusterInfo {
  const info: PlanClusterInfo = {
    source: snapshot.source,
    fingerprint: snapshot.fingerprint,
    version: snapshot.clusterVersion?.status?.desired?.version ?? null,
    platform: snapshot.infrastructure?.status?.platformStatus?.type ?? null,
  };
  const identity = clusterIdentityOf(snapshot);
  if (identity) info.identity = identity;
  if (snapshot.server) info.server = snapshot.server;
  return info;
}

/** Every pool of the spec that the cluster has, in rollout order (priority, then name). */
function planPools(
  spec: RolloutSpec,
  cluster: { snapshot: ClusterSnapshot; idx: NodeIndex; membership: Membership },
  report: (d: DiagnosticInput) => void,
  selfNode: string | null,
  bootcOperator: BootcOperatorAbilities,
  drain: DrainContext | null,
): PlannedPool[] {
  const { snapshot, idx, membership } = cluster;
  for (const [node, pools] of membership.mcoConflicts) {
    report({
      severity: 'warning',
      code: 'node-in-several-pools',
      message: `node ${node} is selected by several custom MachineConfigPools (${pools.join(', ')}); the MCO will not update it and bootcplan leaves it out`,
    });
  }
  // MCO-only pools of the spec get an osImageURL MachineConfig from this plan: the MCO then rolls them.
  const has = (list: readonly { metadata: { name: string } }[], name: string) => list.some((o) => o.metadata.name === name);
  const rolledByPlan = new Set(
    (spec.spec.pools ?? []).map((p) => p.name).filter((n) => has(snapshot.machineConfigPools, n) && !has(snapshot.bootcNodePools, n)),
  );
  // And the pools that render those MachineConfigs too (custom pools inherit worker's: src/plan/inherited-pools.ts).
  for (const n of [...rolledByPlan]) for (const i of inheritingPools(snapshot, n)) rolledByPlan.add(i);
  const ctx = { snapshot, idx, membership, conflicts: findPoolConflicts(snapshot, membership, rolledByPlan), report, selfNode, bootcOperator, drain };
  const plannedPools: PlannedPool[] = [];
  (spec.spec.pools ?? []).forEach((p, i) => {
    const result = planPool(p, joinPath('spec.pools', i), ctx);
    if (result) plannedPools.push(result);
  });
  planInheritance(spec, snapshot, membership, plannedPools, report);
  return plannedPools.sort((a, b) => a.plan.priority - b.plan.priority || a.plan.name.localeCompare(b.plan.name));
}

/** Each pool's way back (PlanPool.rollback), on the pools this plan updates nodes of. */
function forecastRollbacks(pools: PlanPool[], ctx: { snapshot: ClusterSnapshot; idx: NodeIndex; bootcMembers: ReadonlyMap<string, readonly string[]> }): void {
  for (const pool of pools) {
    const rollback = forecastRollback(pool, ctx);
    if (rollback) pool.rollback = rollback;
  }
}

/** Sets each pool's estimatedSeconds. */
function estimatePools(pools: PlanPool[], durations: PhaseDurations): void {
  // bootc pools stage in parallel as soon as their target is set; the applier sets every
  // bootc pool's target first, so staging is paid once for the whole rollout.
  // Pools run one after another; `elapsed` is when this one starts (src/domain/timing.ts).
  let elapsed = 0;
  for (const pool of pools) {
    const needsStaging = pool.backend === 'bootc' && pool.nodes.some((n) => n.wave !== null && !n.staged);
    const waves = wavesWithReboots(pool);
    const asWaves = estimatePoolSeconds(durations, { backend: pool.backend, soakSeconds: pool.soakSeconds, needsStaging, waves }, elapsed);
    if (pool.rollout === 'slots') {
      // Admission simulated node by node (src/domain/timing.ts); the waves figure shows the gain.
      pool.estimatedSeconds = estimateSlotsSeconds(durations, { backend: pool.backend, order: waves.flat(), slots: pool.waveSize, needsStaging }, elapsed);
      pool.wavesEstimatedSeconds = asWaves;
    } else pool.estimatedSeconds = asWaves;
    const waits = drainWaitSeconds(pool, durations);
    pool.estimatedSeconds += waits;
    if (pool.wavesEstimatedSeconds !== undefined) pool.wavesEstimatedSeconds += waits;
    // The least time its health gates add (src/plan/health.ts): checks measure `successes` times, interval apart.
    const gates = pool.gates?.minSeconds ?? 0;
    pool.estimatedSeconds += gates;
    if (pool.wavesEstimatedSeconds !== undefined) pool.wavesEstimatedSeconds += gates;
    elapsed += pool.estimatedSeconds;
  }
}

export function summarize(changes: readonly PlanChange[], pools: readonly PlanPool[], diagnostics: readonly Diagnostic[]): PlanSummary {
  const count = (a: string) => changes.filter((c) => c.action === a).length;
  const scheduled = pools.flatMap((p) => p.nodes.filter((n) => n.wave !== null));
  return {
    create: count('create'),
    update: count('update'),
    delete: count('delete'),
    nodes: scheduled.length,
    waves: pools.reduce((s, p) => s + p.waves.length, 0),
    softReboots: scheduled.filter((n) => n.reboot === 'soft').length,
    hardReboots: scheduled.filter((n) => n.reboot !== 'soft').length,
    blocked: pools.reduce((s, p) => s + p.nodes.filter((n) => n.blockedBy).length, 0),
    estimatedSeconds: pools.reduce((s, p) => s + p.estimatedSeconds, 0),
    errors: diagnostics.filter((d) => d.severity === 'error').length,
    warnings: diagnostics.filter((d) => d.severity === 'warning').length,
  };
}

/**
 * Content hash of the plan: the same inputs give the same id on any machine. The planner
 * builds every object with a fixed key order, so plain JSON.stringify is canonical here;
 * a plan read back from a file is re-hashed with the same function and keeps its id.
 */
/**
 * The node a plan was made on (PlanInput.selfNode), as its node entries record it: re-planning a
 * saved plan with it gives the reviewed waves again (src/app/saved-plan.ts openSavedPlan).
 */
export function selfNodeOf(plan: Plan): string | null {
  for (const p of plan.pools) for (const n of p.nodes) if (n.runsBootcplan === true) return n.name;
  return null;
}

export function planIdOf(body: Omit<Plan, 'id'> & { id?: string }): string;
/** Of a document read from a plan file that fails the schema (plan/saved/reader.ts): was it edited? */
export function planIdOf(body: Record<string, unknown>): string;
export function planIdOf(body: { id?: unknown; schedule?: unknown; formatVersion?: unknown }): string {
  const { id: _ignored, schedule: _clockDependent, formatVersion, ...rest } = body;
  return createHash('sha256')
    .update(JSON.stringify({ formatVersion, ...rest }))
    .digest('hex')
    .slice(0, 16);
}

function wavesWithReboots(pool: PlanPool): { reboot: RebootKind; staged: boolean }[][] {
  const byName = new Map(pool.nodes.map((n) => [n.name, n]));
  // Every node of a wave has its entry in pool.nodes (poolPlan).
  return pool.waves.map((w) =>
    w.flatMap((name) => {
      const n = byName.get(name);
      return n ? [{ reboot: n.reboot, staged: n.staged }] : [];
    }),
  );
}
