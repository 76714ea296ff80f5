/**
 * The planner: (spec, snapshot) -> Plan. Pure and synchronous: no fs, no network, no clock.
 */
import { createHash } from 'node:crypto';
import type { RolloutSpec, PoolSpec } from '../spec/types.ts';
import { type Diagnostic, type SourceMap, diagnosticAt, sortDiagnostics, joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { indexSnapshot, viewNode, digestOf, type NodeView } from '../domain/nodes.ts';
import { computeMembership, isControlPlanePool, defaultPriority } from '../domain/pools.ts';
import { parseMaxUnavailable, resolveMaxUnavailable } from '../domain/budget.ts';
import { orderNodesForRollout, orderNodesLikeMco, planWaves, waveSizeFor } from '../domain/waves.ts';
import { DEFAULT_DURATIONS, estimatePoolSeconds } from '../domain/timing.ts';
import { MCO_ROLE_LABEL, BOOTCPLAN_MANAGED_BY } from '../domain/labels.ts';
import { planBootImages } from './bootimages.ts';
import { planSchedule } from '../domain/schedule.ts';
import type { SpecChanges } from './specdiff.ts';
import { type DraftChange, updateChange } from './changes.ts';
import {
  PLAN_FORMAT_VERSION, type Plan, type PlanChange, type PlanPool, type PlanNode, type PlanSpecInfo,
  type PhaseDurations, type ChangeReason, type Risk, type RebootKind, type BlockedBy,
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
}

/** The MachineConfig that carries a pool's OS image for MCO-only pools. */
export function osImageMachineConfigName(pool: string): string {
  // MCO merges MachineConfigs sorted by name and the last osImageURL wins
  // (pkg/controller/common MergeMachineConfigs), so the name sorts after the
  // generated 99-<pool>-* configs.
  return `99-${pool}-zz-bootcplan-os-image`;
}

export function buildPlan(input: PlanInput): Plan {
  const { spec, specMap, snapshot } = input;
  const durations = input.durations ?? DEFAULT_DURATIONS;
  const diagnostics: Diagnostic[] = (input.specDiagnostics ?? []).filter((d) => d.severity !== 'error');
  const report = (d: Parameters<typeof diagnosticAt>[1]) => diagnostics.push(diagnosticAt(specMap, d));

  const boot = planBootImages({ spec, specMap, snapshot });
  diagnostics.push(...boot.diagnostics);
  const drafts: DraftChange[] = [...boot.changes];

  const idx = indexSnapshot(snapshot);
  const membership = computeMembership(snapshot);
  for (const [node, pools] of membership.mcoConflicts) {
    report({ severity: 'warning', code: 'node-in-several-pools', message: `node ${node} is selected by several custom MachineConfigPools (${pools.join(', ')}); the MCO will not update it and bootcplan leaves it out` });
  }

  const poolSpecs = (spec.spec.pools ?? []).map((p, i) => ({ p, i }));
  const plannedPools: { plan: PlanPool; drafts: DraftChange[] }[] = [];
  for (const { p, i } of poolSpecs) {
    const result = planPool(p, joinPath('spec.pools', i), snapshot, idx, membership, durations, report);
    if (result) plannedPools.push(result);
  }
  plannedPools.sort((a, b) => a.plan.priority - b.plan.priority || a.plan.name.localeCompare(b.plan.name));

  // bootc pools stage in parallel as soon as their target is set; the applier sets every
  // bootc pool's target first, so staging is paid once for the whole rollout.
  // Pools run one after another; `elapsed` is when this one starts (src/domain/timing.ts).
  let elapsed = 0;
  for (const { plan: pool } of plannedPools) {
    const needsStaging = pool.backend === 'bootc' && pool.nodes.some((n) => n.wave !== null && !n.staged);
    pool.estimatedSeconds = estimatePoolSeconds(durations, {
      backend: pool.backend,
      soakSeconds: pool.soakSeconds,
      needsStaging,
      waves: wavesWithReboots(pool),
    }, elapsed);
    elapsed += pool.estimatedSeconds;
  }
  for (const p of plannedPools) drafts.push(...p.drafts);

  const changes: PlanChange[] = drafts.map((c, i) => ({ ...c, order: i + 1 }));
  const pools = plannedPools.map((x) => x.plan);
  const sorted = sortDiagnostics(diagnostics);
  const count = (a: string) => changes.filter((c) => c.action === a).length;
  const scheduled = pools.flatMap((p) => p.nodes.filter((n) => n.wave !== null));
  const summary = {
    create: count('create'),
    update: count('update'),
    delete: count('delete'),
    nodes: scheduled.length,
    waves: pools.reduce((s, p) => s + p.waves.length, 0),
    softReboots: scheduled.filter((n) => n.reboot === 'soft').length,
    hardReboots: scheduled.filter((n) => n.reboot !== 'soft').length,
    blocked: pools.reduce((s, p) => s + p.nodes.filter((n) => n.blockedBy).length, 0),
    estimatedSeconds: pools.reduce((s, p) => s + p.estimatedSeconds, 0),
    errors: sorted.filter((d) => d.severity === 'error').length,
    warnings: sorted.filter((d) => d.severity === 'warning').length,
  };

  const body: Omit<Plan, 'id'> = {
    formatVersion: PLAN_FORMAT_VERSION,
    spec: input.specInfo,
    cluster: {
      source: snapshot.source,
      fingerprint: snapshot.fingerprint,
      version: snapshot.clusterVersion?.status?.desired?.version ?? null,
      platform: snapshot.infrastructure?.status?.platformStatus?.type ?? null,
    },
    changes,
    bootImages: boot.bootImages,
    pools,
    diagnostics: sorted,
    durations,
    summary,
  };
  const { formatVersion, ...rest } = body;
  const plan: Plan = { formatVersion, id: planIdOf(body), ...rest };
  if (input.specChanges) plan.specChanges = input.specChanges;
  const windows = spec.spec.maintenanceWindows ?? [];
  if (windows.length && input.now !== undefined) plan.schedule = planSchedule(windows, pools, durations, input.now);
  return plan;
}

/**
 * Content hash of the plan: the same inputs give the same id on any machine. The planner
 * builds every object with a fixed key order, so plain JSON.stringify is canonical here;
 * a plan read back from a file is re-hashed with the same function and keeps its id.
 */
export function planIdOf(body: Omit<Plan, 'id'> | Plan): string {
  const { id: _ignored, schedule: _clockDependent, formatVersion, ...rest } = body as Plan;
  return createHash('sha256').update(JSON.stringify({ formatVersion, ...rest })).digest('hex').slice(0, 16);
}

function planPool(
  p: PoolSpec,
  path: string,
  snapshot: ClusterSnapshot,
  idx: ReturnType<typeof indexSnapshot>,
  membership: ReturnType<typeof computeMembership>,
  durations: PhaseDurations,
  report: (d: Parameters<typeof diagnosticAt>[1]) => void,
): { plan: PlanPool; drafts: DraftChange[] } | null {
  const bnp = snapshot.bootcNodePools.find((x) => x.metadata.name === p.name);
  const mcp = snapshot.machineConfigPools.find((x) => x.metadata.name === p.name);
  if (!bnp && !mcp) {
    const known = [...new Set([...snapshot.bootcNodePools, ...snapshot.machineConfigPools].map((x) => x.metadata.name))].sort();
    report({
      code: 'pool-not-found', path: joinPath(path, 'name'),
      message: `no BootcNodePool or MachineConfigPool named "${p.name}" in the cluster`,
      expected: known.length ? `one of: ${known.join(', ')}` : 'a pool that exists in the cluster',
      hint: 'create the pool first (bootcplan changes pools, it does not create them)',
    });
    return null;
  }
  const backend = bnp ? 'bootc' : 'mco';
  const controlPlane = isControlPlanePool(p.name, mcp, bnp);
  const memberNames = (bnp ? membership.bootc.get(p.name) : membership.mco.get(p.name)) ?? [];
  const members: NodeView[] = memberNames.flatMap((n) => {
    const node = idx.nodes.get(n);
    return node ? [viewNode(node, idx)] : [];
  });

  const parsedMu = p.maxUnavailable === undefined ? { ok: true as const, value: { kind: 'count' as const, value: 1 } } : parseMaxUnavailable(p.maxUnavailable);
  const mu = parsedMu.ok ? parsedMu.value : { kind: 'count' as const, value: 1 };
  const budget = resolveMaxUnavailable(mu, members.length);
  if (p.maxUnavailable === undefined) budget.rule = 'default 1 (the MCO and bootc-operator default)';
  if (controlPlane && budget.resolved > 1) {
    report({
      severity: 'warning', code: 'control-plane-one-at-a-time', path: joinPath(path, 'maxUnavailable'),
      message: `the control-plane pool rolls one node at a time to keep etcd quorum; maxUnavailable ${budget.resolved} is written to the pool but waves hold 1 node`,
    });
  }

  const targetDigest = digestOf(p.image);
  if (!targetDigest) {
    report({
      severity: 'warning', code: 'image-tag', path: joinPath(path, 'image'),
      message: `"${p.image}" is a tag: which nodes already run it is judged by the image name, and the digest is resolved when the nodes pull it`,
      hint: 'pin by digest for a plan that is exact',
    });
  }
  const isCurrent = (n: NodeView) => (targetDigest ? n.bootedDigest === targetDigest : n.bootedImage === p.image);
  const isStaged = (n: NodeView) => backend === 'bootc' && !!targetDigest && n.stagedDigest === targetDigest;

  const paused = p.paused === true;
  const rebootPolicy = p.rebootPolicy ?? 'RebootOnly';
  const unavailableNow = members.filter((n) => n.unavailable !== null);
  const waveSize = waveSizeFor(budget.resolved, unavailableNow.length, controlPlane);
  const pending = members.filter((n) => !isCurrent(n));

  const predictReboot = (n: NodeView): RebootKind => {
    if (backend === 'mco') return 'hard';
    if (rebootPolicy !== 'AllowSoftReboot') return 'hard';
    // bootc: a soft reboot is possible only when the staged deployment says so
    // (BootcNode status.staged.softRebootCapable); before staging it cannot be known.
    if (!isStaged(n)) return 'unknown';
    return n.stagedSoftRebootCapable ? 'soft' : 'hard';
  };

  const blockedOf = (n: NodeView): BlockedBy | null => {
    if (n.unavailable) return n.unavailable;
    if (paused) return 'pool-paused';
    if (waveSize < 1) return 'no-budget';
    return null;
  };

  const schedulable = pending.filter((n) => blockedOf(n) === null).map((n) => ({ ...n, staged: isStaged(n), softReboot: predictReboot(n) === 'soft' }));
  // bootc pools: bootcplan picks the nodes (staged first, soft reboots together, zones
  // round-robin). MCO-only pools: the MCO's node controller picks them, so the plan
  // predicts its order (src/domain/waves.ts orderNodesLikeMco).
  const ordered = backend === 'bootc' ? orderNodesForRollout(schedulable) : orderNodesLikeMco(schedulable);
  const waves = waveSize >= 1 && ordered.length ? planWaves(ordered.map((n) => n.name), waveSize) : [];
  const waveOf = new Map<string, number>();
  waves.forEach((w, i) => w.forEach((name) => waveOf.set(name, i + 1)));

  const nodes: PlanNode[] = pending.map((n) => {
    const blockedBy = blockedOf(n);
    const out: PlanNode = {
      name: n.name, zone: n.zone, from: n.bootedDigest ?? n.bootedImage, to: targetDigest ?? p.image,
      reboot: predictReboot(n), wave: waveOf.get(n.name) ?? null, staged: isStaged(n), blockedBy,
    };
    if (blockedBy && n.conditions.length) out.conditions = n.conditions;
    return out;
  });
  // Scheduled nodes in rollout order (wave, then position in the wave), blocked ones last by name.
  const position = new Map<string, number>();
  waves.forEach((w) => w.forEach((name, i) => position.set(name, i)));
  nodes.sort((a, b) => (a.wave ?? Infinity) - (b.wave ?? Infinity) || (position.get(a.name) ?? Infinity) - (position.get(b.name) ?? Infinity) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const blocked = nodes.filter((n) => n.blockedBy && n.blockedBy !== 'pool-paused' && n.blockedBy !== 'no-budget');
  if (blocked.length) {
    report({
      severity: 'warning', code: 'nodes-blocked', path: joinPath(path, 'name'),
      message: `${blocked.length} node(s) of pool ${p.name} need the new image but are out of service and are not scheduled: ${blocked.map((n) => `${n.name} (${n.blockedBy})`).join(', ')}`,
      hint: 'they use up maxUnavailable budget; bring them back (or uncordon them) and plan again',
    });
  }
  if (waveSize < 1 && pending.length && !paused) {
    report({
      severity: 'warning', code: 'budget-exhausted', path: joinPath(path, 'maxUnavailable'),
      message: `${unavailableNow.length} node(s) of pool ${p.name} are already out of service, which uses up maxUnavailable ${budget.resolved}: no node can be scheduled`,
      hint: 'bring the unavailable nodes back, or raise maxUnavailable',
    });
  }

  const drafts: DraftChange[] = [];
  const risk: Risk = pending.length ? 'disruptive' : 'none';
  if (mcp) {
    const after: Record<string, unknown> = { spec: { maxUnavailable: budget.resolved } };
    // For MCO-only pools bootcplan drives the MCO through the pool's pause switch; for
    // bootc pools the MCP (if any) only gets the same budget.
    if (!bnp) (after.spec as any).paused = paused;
    drafts.push(updateChange(mcp, after, p.name, 'none', (changed) =>
      changed.length === 1 && changed[0] === 'spec.maxUnavailable' ? 'pool-max-unavailable' : 'pool-rollout-settings',
      `MachineConfigPool ${p.name}: maxUnavailable resolved to ${budget.resolved}`));
  }
  if (bnp) {
    const rollout: Record<string, unknown> = { maxUnavailable: budget.resolved, paused: true };
    if (p.drainTimeoutSeconds !== undefined) rollout.drainTimeoutSeconds = p.drainTimeoutSeconds;
    const after = { spec: { image: { ref: p.image }, rollout, disruption: { rebootPolicy } } };
    drafts.push(updateChange(bnp, after, p.name, risk, (changed) =>
      changed.includes('spec.image.ref') ? 'pool-image' : changed.length === 1 && changed[0] === 'spec.rollout.maxUnavailable' ? 'pool-max-unavailable' : 'pool-rollout-settings',
      // bootc-operator hands out reboot slots only while the pool is not paused; bootcplan
      // keeps it paused and takes the nodes through cordon, drain and reboot itself.
      `BootcNodePool ${p.name}: target image, resolved budget; kept paused so bootcplan drives the waves`));
  } else {
    const name = osImageMachineConfigName(p.name);
    const mc = snapshot.machineConfigs.find((m) => m.metadata.name === name);
    if (mc) {
      drafts.push(updateChange(mc, { spec: { osImageURL: p.image } }, p.name, risk, () => 'pool-os-image-machineconfig', `MachineConfig ${name} carries the OS image for pool ${p.name}`));
    } else {
      const object = {
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfig',
        metadata: { name, labels: { [MCO_ROLE_LABEL]: p.name, [BOOTCPLAN_MANAGED_BY]: 'bootcplan' } },
        spec: { osImageURL: p.image },
      };
      drafts.push({
        address: `MachineConfig/${name}`, apiVersion: object.apiVersion, kind: 'MachineConfig', namespace: null, name,
        action: 'create', reason: 'pool-os-image-machineconfig', patch: [], before: null,
        after: { metadata: { labels: object.metadata.labels }, spec: object.spec }, object, risk,
        pool: p.name, description: `MachineConfig ${name} carries the OS image for pool ${p.name}`,
      });
    }
  }

  const plan: PlanPool = {
    name: p.name, backend, targetImage: p.image, targetDigest, controlPlane,
    priority: p.priority ?? defaultPriority(p.name, controlPlane), paused, rebootPolicy,
    drainTimeoutSeconds: p.drainTimeoutSeconds ?? null, soakSeconds: p.soakSeconds ?? 0,
    maxUnavailable: budget, nodeCount: members.length, upToDate: members.length - pending.length,
    unavailableNow: unavailableNow.map((n) => n.name), waveSize, nodes, waves, estimatedSeconds: 0,
  };
  void durations;
  return { plan, drafts };
}

function wavesWithReboots(pool: PlanPool): { reboot: RebootKind; staged: boolean }[][] {
  const byName = new Map(pool.nodes.map((n) => [n.name, n]));
  return pool.waves.map((w) => w.map((name) => ({ reboot: byName.get(name)!.reboot, staged: byName.get(name)!.staged })));
}
