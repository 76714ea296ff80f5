/**
 * One pool of the spec -> its PlanPool and its change drafts, in three steps: the members and
 * the maxUnavailable budget, the node scheduling into waves, and the change drafts for the
 * BootcNodePool, MachineConfigPool and OS-image MachineConfig. The rules are in src/domain/
 * (nodes, pools, budget, waves; DESIGN §7 "Pools and waves"). Pure.
 */
import type { PoolSpec, RebootPolicy } from '../spec/types.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { viewNode, digestOf, type NodeIndex, type NodeView } from '../domain/nodes.ts';
import { isControlPlanePool, defaultPriority, type Membership } from '../domain/pools.ts';
import { parseMaxUnavailable, resolveMaxUnavailable, type ResolvedBudget } from '../domain/budget.ts';
import { controlPlaneBudget, controlPlaneNodesOutOfService, isControlPlaneNode } from '../domain/control-plane.ts';
import { resolvedTag } from '../domain/staging.ts';
import type { PoolRef } from '../domain/pool-sharing.ts';
import { poolSharing } from './pool-sharing.ts';
import { mcoRolloutBlocks } from './mco-rollout.ts';
import { daemonGapBlocks } from './bootc-readiness.ts';
import { orderNodesForRollout, orderNodesLikeMco, planWaves, selfLast, waveSizeFor } from '../domain/waves.ts';
import { MCO_ROLE_LABEL, BOOTCPLAN_MANAGED_BY } from '../domain/labels.ts';
import { isLabelValue } from '../domain/kube-names.ts';
import { type DraftChange, updateChange } from './changes.ts';
import type { PlanPool, PlanNode, Risk, RebootKind, BlockedBy, Backend } from './types.ts';
import type { BootcNodePoolObject, MachineConfigPoolObject } from '../cluster/kinds.ts';

/** What planning a pool reads of the cluster, and where its findings go. */
export interface PoolPlanContext {
  snapshot: ClusterSnapshot;
  idx: NodeIndex;
  membership: Membership;
  /** node -> the pools that each would roll it (src/domain/pool-sharing.ts findPoolConflicts) */
  conflicts: ReadonlyMap<string, PoolRef[]>;
  report: (d: DiagnosticInput) => void;
  /** The node running bootcplan's own pod (PlanInput.selfNode): last in its bootc pool. */
  selfNode: string | null;
}

export interface PlannedPool { plan: PlanPool; drafts: DraftChange[] }

/** The MachineConfig that carries a pool's OS image for MCO-only pools. */
export function osImageMachineConfigName(pool: string): string {
  // MCO merges MachineConfigs sorted by name and the last osImageURL wins
  // (pkg/controller/common MergeMachineConfigs), so the name sorts after the
  // generated 99-<pool>-* configs.
  return `99-${pool}-zz-bootcplan-os-image`;
}

/** A pool of the spec, found in the cluster, with its members and its budget. */
interface PoolMembers {
  spec: PoolSpec;
  /** Field path of the pool in the spec, e.g. `spec.pools[0]`. */
  path: string;
  bnp: BootcNodePoolObject | undefined;
  mcp: MachineConfigPoolObject | undefined;
  backend: Backend;
  controlPlane: boolean;
  members: NodeView[];
  budget: ResolvedBudget;
  targetDigest: string | null;
  paused: boolean;
  rebootPolicy: RebootPolicy;
  unavailableNow: NodeView[];
  waveSize: number;
  /** Members not on the target image yet. */
  pending: NodeView[];
  /** Members held back because another controller or pool has a claim on them (pool-sharing.ts). */
  blocked: Map<string, BlockedBy>;
  /** The MachineConfigPool that owns the BootcNodePool: bootcplan writes nothing to the BootcNodePool. */
  ownedBy: string | null;
  /** Someone else paused the MachineConfigPool: kept paused, or lifted by the spec's `paused: false` (rule 6). */
  administratorPause: 'kept' | 'lifted' | null;
}

export function planPool(p: PoolSpec, path: string, ctx: PoolPlanContext): PlannedPool | null {
  const pool = poolMembers(p, path, ctx);
  if (!pool) return null;
  const { nodes, waves } = scheduleNodes(pool, ctx.report, ctx.selfNode);
  const drafts = poolChanges(pool, ctx.snapshot);
  if (drafts.some((d) => d.action === 'create' && d.kind === 'MachineConfig') && !isLabelValue(p.name)) {
    // The MachineConfig carries the pool's name as its role label: the API server refuses a
    // label value over 63 characters (k8s.io/apimachinery IsValidLabelValue).
    ctx.report({
      code: 'pool-name-not-a-label-value', path: joinPath(path, 'name'),
      message: `pool ${p.name}: bootcplan's MachineConfig for this MCO pool would carry the label ${MCO_ROLE_LABEL}: ${p.name}, and a label value has at most 63 characters (letters, digits, "-", "_", ".")`,
      expected: 'an MCO pool whose name is a label value (at most 63 characters)',
      hint: 'the MCO selects a pool\'s MachineConfigs by this role label too; roll this pool through a BootcNodePool, or give it a shorter name',
    });
  }
  const { backend, targetDigest, controlPlane, paused, rebootPolicy, budget, members, pending, unavailableNow, waveSize } = pool;
  const plan: PlanPool = {
    name: p.name, backend, targetImage: p.image, targetDigest, controlPlane,
    priority: p.priority ?? defaultPriority(p.name, controlPlane), paused, rebootPolicy,
    drainTimeoutSeconds: p.drainTimeoutSeconds ?? null, soakSeconds: p.soakSeconds ?? 0,
    maxUnavailable: budget, nodeCount: members.length, upToDate: members.length - pending.length,
    unavailableNow: unavailableNow.map((n) => n.name), waveSize, nodes, waves, estimatedSeconds: 0,
  };
  if (rolloutOf(pool, ctx.report) === 'slots') plan.rollout = 'slots';
  if (p.stagingTimeoutSeconds !== undefined) plan.stagingTimeoutSeconds = p.stagingTimeoutSeconds;
  return { plan, drafts };
}

/**
 * `rollout: slots` (docs/spec.md "Slots"): bootc pools only. An MCO-only pool is rolled by the MCO's node
 * controller, which refills its own slots (maxUnavailable) and admits nodes itself: bootcplan
 * could not check windows, staleness or a failed node before each admission, so slots are
 * refused there with a plan error (README "Slots"). The admission order and batches are the
 * waves' (same order, same eligibility and blocking rules).
 */
function rolloutOf(pool: PoolMembers, report: (d: DiagnosticInput) => void): 'waves' | 'slots' {
  if (pool.spec.rollout !== 'slots') return 'waves';
  if (pool.backend === 'bootc') return 'slots';
  report({
    code: 'slots-mco-pool', path: joinPath(pool.path, 'rollout'),
    message: `pool ${pool.spec.name} is an MCO pool (no BootcNodePool): the MCO admits its nodes itself, refilling maxUnavailable as nodes finish, so bootcplan cannot check maintenance windows, staleness and failed nodes before each admission`,
    expected: 'rollout: waves (or no rollout) for a MachineConfigPool without a BootcNodePool',
    hint: 'remove rollout: slots from this pool; bootcplan rolls MCO pools in waves, pausing the pool between them',
  });
  return 'waves';
}

// ---- members and budget ---------------------------------------------------------------
function poolMembers(p: PoolSpec, path: string, ctx: PoolPlanContext): PoolMembers | null {
  const { snapshot, idx, membership, report } = ctx;
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
  const memberNames = (bnp ? membership.bootc.get(p.name) : membership.mco.get(p.name)) ?? [];
  const members: NodeView[] = [];
  for (const n of memberNames) {
    const node = idx.nodes.get(n);
    if (node) members.push(viewNode(node, idx));
  }
  const controlPlane = isControlPlanePool(p.name, mcp, bnp, members.map((m) => m.labels));
  const budget = poolBudget(p, path, members.length, controlPlane, report);
  const { blocked, ownedBy, administratorPause } = poolSharing({ spec: p, path, bnp, mcp, controlPlane, members }, ctx);

  const targetDigest = digestOf(p.image) ?? tagTarget(p, path, bnp, memberNames, blocked, report);
  const isCurrent = (n: NodeView) => (targetDigest ? n.bootedDigest === targetDigest : n.bootedImage === p.image);

  const unavailableNow = members.filter((n) => n.unavailable !== null);
  if (controlPlane) {
    // One node of the control plane at a time across the cluster, not per pool (rule 2).
    // Only control-plane nodes can spend this budget: the others are not viewed at all
    // (a cluster has thousands of workers and three masters).
    const names = new Set(memberNames);
    const outside: NodeView[] = [];
    for (const n of idx.nodes.values()) if (!names.has(n.metadata.name) && isControlPlaneNode(n.metadata.labels)) outside.push(viewNode(n, idx));
    unavailableNow.push(...controlPlaneNodesOutOfService(outside));
  }
  const pending = members.filter((n) => !isCurrent(n));
  // Rule 5: nodes whose MachineConfigPool the MCO is rolling are held back (mco-rollout.ts).
  for (const [n, why] of mcoRolloutBlocks({ spec: p, path, backend, pending }, ctx)) if (!blocked.has(n)) blocked.set(n, why);
  // Nodes the bootc-operator's daemon cannot act on (no bootc.dev/managed label, no BootcNode status).
  if (bnp && !ownedBy) for (const [n, why] of daemonGapBlocks({ spec: p, path, pending, blocked }, idx, report)) blocked.set(n, why);
  if (p.paused === true && pending.length) reportHeldPaused(p, path, !!bnp, pending.length, report);
  return {
    spec: p, path, bnp, mcp, backend, controlPlane, members, budget, targetDigest,
    paused: p.paused === true,
    rebootPolicy: p.rebootPolicy ?? 'RebootOnly',
    unavailableNow,
    waveSize: waveSizeFor(budget.resolved, unavailableNow.length, controlPlane),
    pending, blocked, ownedBy, administratorPause,
  };
}

/**
 * A tag reference (allowTags: true; docs/safety.md rule 8). A bootc pool's target is the digest its
 * BootcNodePool resolved (status.targetDigest, src/domain/staging.ts resolvedTag); until then the
 * plan says so and holds the nodes back (`tag-unresolved`). An MCO-only pool has no resolver: the
 * nodes are judged by the image name. Returns the target digest, or null.
 */
function tagTarget(p: PoolSpec, path: string, bnp: BootcNodePoolObject | undefined, memberNames: string[], blocked: Map<string, BlockedBy>, report: (d: DiagnosticInput) => void): string | null {
  if (!bnp) {
    report({
      severity: 'warning', code: 'image-tag', path: joinPath(path, 'image'),
      message: `"${p.image}" is a tag: which nodes already run it is judged by the image name, and the digest is resolved when the nodes pull it`,
      hint: 'pin by digest for a plan that is exact',
    });
    return null;
  }
  const tag = resolvedTag(bnp, p.image);
  if (tag.resolved) {
    report({
      severity: 'warning', code: 'image-tag', path: joinPath(path, 'image'),
      message: `"${p.image}" is a tag; BootcNodePool ${p.name} resolved it to ${tag.digest} (status.targetDigest): the plan and the staging gate use that digest, and a plan made after the tag moves differs`,
      hint: 'pin by digest for a plan that does not depend on when it is made',
    });
    return tag.digest;
  }
  for (const n of memberNames) if (!blocked.has(n)) blocked.set(n, 'tag-unresolved');
  report({
    severity: 'warning', code: 'image-tag-unresolved', path: joinPath(path, 'image'),
    message: `"${p.image}" is a tag that BootcNodePool ${p.name} has not resolved to a digest yet (${tag.why}); the nodes of the pool are not scheduled until it is`,
    hint: `apply this plan to set the pool's image (its nodes stage it; none reboots), wait until \`oc get bootcnodepool ${p.name} -o jsonpath='{.status.targetDigest}'\` shows the digest, then plan and apply again; or pin the image by digest`,
  });
  return null;
}

/**
 * The pool's maxUnavailable, resolved (DESIGN §7). The control-plane pool gets 1 whatever
 * the spec says, and a spec asking for more is an error (src/domain/control-plane.ts).
 */
function poolBudget(p: PoolSpec, path: string, poolSize: number, controlPlane: boolean, report: (d: DiagnosticInput) => void): ResolvedBudget {
  const parsedMu = p.maxUnavailable === undefined ? { ok: true as const, value: { kind: 'count' as const, value: 1 } } : parseMaxUnavailable(p.maxUnavailable);
  const mu = parsedMu.ok ? parsedMu.value : { kind: 'count' as const, value: 1 };
  const budget = resolveMaxUnavailable(mu, poolSize);
  if (p.maxUnavailable === undefined) budget.rule = 'default 1 (the MCO and bootc-operator default)';
  if (!controlPlane) return budget;
  const cp = controlPlaneBudget(budget);
  if (cp.tooMany !== null) {
    const asked = typeof p.maxUnavailable === 'string' ? `${p.maxUnavailable} (resolves to ${cp.tooMany} of ${poolSize} nodes)` : String(p.maxUnavailable);
    report({
      code: 'control-plane-max-unavailable', path: joinPath(path, 'maxUnavailable'),
      message: `pool ${p.name} is the control plane, which never has more than 1 node out of service; maxUnavailable ${asked} would take ${cp.tooMany} control-plane nodes out at once and risk etcd quorum`,
      expected: 'maxUnavailable: 1 (or no maxUnavailable) for the control-plane pool',
      hint: 'remove maxUnavailable from this pool (or set maxUnavailable: 1): bootcplan writes 1 to its MachineConfigPool and BootcNodePool. The MCO does not cap the master pool (it caps only arbiter), and the PodDisruptionBudget openshift-etcd/etcd-quorum-guard (maxUnavailable 1) would block the second drain, leaving that node cordoned mid-update',
    });
  }
  return cp.budget;
}

// ---- node scheduling ------------------------------------------------------------------
function scheduleNodes(pool: PoolMembers, report: (d: DiagnosticInput) => void, selfNode: string | null): { nodes: PlanNode[]; waves: string[][] } {
  const { spec: p, path, backend, targetDigest, paused, rebootPolicy, waveSize, pending, unavailableNow, budget } = pool;
  const isStaged = (n: NodeView) => backend === 'bootc' && !!targetDigest && n.stagedDigest === targetDigest;

  const predictReboot = (n: NodeView): RebootKind => {
    if (backend === 'mco') return 'hard';
    if (rebootPolicy !== 'AllowSoftReboot') return 'hard';
    // bootc: a soft reboot is possible only when the staged deployment says so
    // (BootcNode status.staged.softRebootCapable); before staging it cannot be known.
    if (!isStaged(n)) return 'unknown';
    return n.stagedSoftRebootCapable ? 'soft' : 'hard';
  };

  const blockedOf = (n: NodeView): BlockedBy | null => {
    const held = pool.blocked.get(n.name);
    if (held) return held;
    if (n.unavailable) return n.unavailable;
    if (paused) return 'pool-paused';
    if (waveSize < 1) return 'no-budget';
    return null;
  };

  // Each pending node judged once: what blocks it, whether it is staged, its reboot.
  const judged = pending.map((n) => ({ view: n, blockedBy: blockedOf(n), staged: isStaged(n), reboot: predictReboot(n) }));
  // What the orderings read of a node (not a copy of the whole view: pools have thousands).
  const schedulable = [];
  for (const j of judged) {
    if (j.blockedBy === null) schedulable.push({ name: j.view.name, zone: j.view.zone, createdAt: j.view.createdAt, staged: j.staged, softReboot: j.reboot === 'soft' });
  }
  // bootc pools: bootcplan picks the nodes (staged first, soft reboots together, zones
  // round-robin), the node running bootcplan itself last. MCO-only pools: the MCO's node
  // controller picks them, so the plan predicts its order (src/domain/waves.ts orderNodesLikeMco).
  const ordered = backend === 'bootc' ? selfLast(orderNodesForRollout(schedulable), selfNode, (n) => n.name) : orderNodesLikeMco(schedulable);
  const waves = waveSize >= 1 && ordered.length ? planWaves(ordered.map((n) => n.name), waveSize) : [];
  const waveOf = new Map<string, number>();
  waves.forEach((w, i) => w.forEach((name) => waveOf.set(name, i + 1)));

  const byName = new Map<string, PlanNode>();
  const unscheduled: PlanNode[] = [];
  for (const { view: n, blockedBy, staged, reboot } of judged) {
    const out: PlanNode = {
      name: n.name, zone: n.zone, from: n.bootedDigest ?? n.bootedImage, to: targetDigest ?? p.image,
      reboot, wave: waveOf.get(n.name) ?? null, staged, blockedBy,
    };
    if (blockedBy && n.conditions.length) out.conditions = n.conditions;
    if (backend === 'bootc' && out.wave !== null && n.name === selfNode) out.runsBootcplan = true;
    if (out.wave === null) unscheduled.push(out);
    else byName.set(n.name, out);
  }
  // Scheduled nodes in rollout order (wave, then position in the wave), the others last by name.
  const nodes: PlanNode[] = [];
  for (const w of waves) {
    for (const name of w) {
      const n = byName.get(name);
      if (n) nodes.push(n); // every node of a wave was given its entry above
    }
  }
  unscheduled.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const n of unscheduled) nodes.push(n);

  const blocked = nodes.filter((n) => n.blockedBy && n.blockedBy !== 'pool-paused' && n.blockedBy !== 'no-budget' && !pool.blocked.has(n.name));
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
  return { nodes, waves };
}

/**
 * The spec's `paused: true` holds the pool: no node is scheduled and the plan writes no new image
 * (poolChanges), so nothing stages until the pool is unpaused in the spec and planned again.
 */
function reportHeldPaused(p: PoolSpec, path: string, bootc: boolean, pending: number, report: (d: DiagnosticInput) => void) {
  report({
    severity: 'warning', code: 'pool-held-paused', path: joinPath(path, 'paused'),
    message: `pool ${p.name} held: pool paused, nothing stages: ${pending} node(s) need the new image and are not scheduled, and the plan writes no new image to the ${bootc ? 'BootcNodePool (the bootc-operator hands spec.image.ref to every node of a paused pool too, and each daemon pulls and stages it)' : 'pool (no osImageURL MachineConfig: the MCO would roll it on every node at once when the pool is unpaused)'}`,
    hint: 'remove `paused: true` from this pool when it may roll, then plan again',
  });
}

// ---- change drafts --------------------------------------------------------------------
function poolChanges(pool: PoolMembers, snapshot: ClusterSnapshot): DraftChange[] {
  const { spec: p, bnp, mcp, budget, paused, rebootPolicy, pending, ownedBy, administratorPause } = pool;
  const drafts: DraftChange[] = [];
  const risk: Risk = pending.length ? 'disruptive' : 'none';
  if (mcp) {
    const spec: Record<string, unknown> = { maxUnavailable: budget.resolved };
    // For MCO-only pools bootcplan drives the MCO through the pool's pause switch; for
    // bootc pools the MCP (if any) only gets the same budget. An administrator's pause is
    // left alone, unless the spec lifts it (rule 6, pool-sharing.ts): a disruptive change.
    if (administratorPause === 'lifted') spec.paused = false;
    else if (!bnp && administratorPause !== 'kept') spec.paused = paused;
    drafts.push(updateChange(mcp, { spec }, p.name, administratorPause === 'lifted' ? 'disruptive' : 'none', (changed) =>
      changed.length === 1 && changed[0] === 'spec.maxUnavailable' ? 'pool-max-unavailable' : 'pool-rollout-settings',
      `MachineConfigPool ${p.name}: maxUnavailable resolved to ${budget.resolved}`));
  }
  // A BootcNodePool a MachineConfigPool owns is the MCO's to write (rule 4, pool-sharing.ts).
  if (bnp && ownedBy) return drafts;
  if (bnp) {
    const rollout: Record<string, unknown> = { maxUnavailable: budget.resolved, paused: true };
    if (p.drainTimeoutSeconds !== undefined) rollout.drainTimeoutSeconds = p.drainTimeoutSeconds;
    // A paused pool (the spec's paused: true, or an administrator's pause kept) gets no new image:
    // the bootc-operator's pause only stops reboot approvals, while every BootcNode's
    // spec.desiredImage follows spec.image.ref and each daemon stages it (bootc-dev/bootc-operator
    // docs/ARCHITECTURE.md "Rollback, Pause, Cancel": "Nodes already mid-staging complete their
    // staging. Tag resolution continues"; internal/controller syncBootcNodeSpec).
    const held = paused || administratorPause === 'kept';
    const after = { spec: { ...(held ? {} : { image: { ref: p.image } }), rollout, disruption: { rebootPolicy } } };
    drafts.push(updateChange(bnp, after, p.name, held ? 'none' : risk, (changed) =>
      changed.includes('spec.image.ref') ? 'pool-image' : changed.length === 1 && changed[0] === 'spec.rollout.maxUnavailable' ? 'pool-max-unavailable' : 'pool-rollout-settings',
      // bootc-operator hands out reboot slots only while the pool is not paused; bootcplan
      // keeps it paused and takes the nodes through cordon, drain and reboot itself.
      `BootcNodePool ${p.name}: target image, resolved budget; kept paused so bootcplan drives the waves`));
  } else if (administratorPause !== 'kept' && !paused) {
    // Not while a pause holds the pool (an administrator's, or the spec's paused: true): the MCO
    // would roll the new image on every node at once when the pool is unpaused, outside
    // bootcplan's waves and windows.
    drafts.push(osImageMachineConfigChange(p, snapshot, risk));
  }
  return drafts;
}

/** MCO-only pools: the MachineConfig that carries the OS image, updated or created. */
function osImageMachineConfigChange(p: PoolSpec, snapshot: ClusterSnapshot, risk: Risk): DraftChange {
  const name = osImageMachineConfigName(p.name);
  const mc = snapshot.machineConfigs.find((m) => m.metadata.name === name);
  if (mc) {
    return updateChange(mc, { spec: { osImageURL: p.image } }, p.name, risk, () => 'pool-os-image-machineconfig', `MachineConfig ${name} carries the OS image for pool ${p.name}`);
  }
  const object = {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: { name, labels: { [MCO_ROLE_LABEL]: p.name, [BOOTCPLAN_MANAGED_BY]: 'bootcplan' } },
    spec: { osImageURL: p.image },
  };
  return {
    address: `MachineConfig/${name}`, apiVersion: object.apiVersion, kind: 'MachineConfig', namespace: null, name,
    action: 'create', reason: 'pool-os-image-machineconfig', patch: [], before: null,
    after: { metadata: { labels: object.metadata.labels }, spec: object.spec }, object, risk,
    pool: p.name, description: `MachineConfig ${name} carries the OS image for pool ${p.name}`,
  };
}
