/**
 * A pool of the spec found in the cluster: its BootcNodePool or MachineConfigPool, its member
 * nodes, its resolved maxUnavailable budget (control plane: 1), its target digest (a tag resolved
 * by the BootcNodePool), and the members held back by other controllers and pools
 * (pool-sharing.ts, mco-rollout.ts, bootc-readiness.ts). The first step of src/plan/pool.ts. Pure.
 */
import type { PoolSpec, RebootPolicy } from '../rollout-spec/types.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import type { DrainContext } from './drain.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { viewNode, digestOf, type NodeIndex, type NodeView } from '../domain/nodes.ts';
import { isControlPlanePool, type Membership } from '../domain/pools.ts';
import { parseMaxUnavailable, resolveMaxUnavailable, type ResolvedBudget } from '../domain/budget.ts';
import { controlPlaneBudget, controlPlaneNodesOutOfService, isControlPlaneNode } from '../domain/control-plane.ts';
import { resolvedTag } from '../domain/staging.ts';
import type { PoolRef } from '../domain/pool-sharing.ts';
import { waveSizeFor } from '../domain/waves.ts';
import { poolSharing } from './pool-sharing.ts';
import { mcoRolloutBlocks } from './mco-rollout.ts';
import { daemonGapBlocks } from './bootc-readiness.ts';
import type { BootcOperatorAbilities } from '../domain/bootc-daemon.ts';
import type { BlockedBy, Backend } from './types.ts';
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
  /** What the bootc-operator can do (PlanInput.bootcOperator): whether soft reboots happen at all. */
  bootcOperator: BootcOperatorAbilities;
  /** The snapshot's workloads for the drain forecast (src/plan/drain.ts), or null when it holds none. */
  drain: DrainContext | null;
}

/** A pool of the spec, found in the cluster, with its members and its budget. */
export interface PoolMembers {
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

export function poolMembers(p: PoolSpec, path: string, ctx: PoolPlanContext): PoolMembers | null {
  const { snapshot, idx, membership, report } = ctx;
  const bnp = snapshot.bootcNodePools.find((x) => x.metadata.name === p.name);
  const mcp = snapshot.machineConfigPools.find((x) => x.metadata.name === p.name);
  if (!bnp && !mcp) {
    const known = [...new Set([...snapshot.bootcNodePools, ...snapshot.machineConfigPools].map((x) => x.metadata.name))].sort();
    report({
      code: 'pool-not-found',
      path: joinPath(path, 'name'),
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
  const controlPlane = isControlPlanePool(
    p.name,
    mcp,
    bnp,
    members.map((m) => m.labels),
  );
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
    spec: p,
    path,
    bnp,
    mcp,
    backend,
    controlPlane,
    members,
    budget,
    targetDigest,
    paused: p.paused === true,
    rebootPolicy: p.rebootPolicy ?? 'RebootOnly',
    unavailableNow,
    waveSize: waveSizeFor(budget.resolved, unavailableNow.length, controlPlane),
    pending,
    blocked,
    ownedBy,
    administratorPause,
  };
}

/**
 * A tag reference (allowTags: true; docs/safety.md rule 8). A bootc pool's target is the digest its
 * BootcNodePool resolved (status.targetDigest, src/domain/staging.ts resolvedTag); until then the
 * plan says so and holds the nodes back (`tag-unresolved`). An MCO-only pool has no resolver: the
 * nodes are judged by the image name. Returns the target digest, or null.
 */
function tagTarget(
  p: PoolSpec,
  path: string,
  bnp: BootcNodePoolObject | undefined,
  memberNames: string[],
  blocked: Map<string, BlockedBy>,
  report: (d: DiagnosticInput) => void,
): string | null {
  if (!bnp) {
    report({
      severity: 'warning',
      code: 'image-tag',
      path: joinPath(path, 'image'),
      message: `"${p.image}" is a tag: which nodes already run it is judged by the image name, and the digest is resolved when the nodes pull it`,
      hint: 'pin by digest for a plan that is exact',
    });
    return null;
  }
  const tag = resolvedTag(bnp, p.image);
  if (tag.resolved) {
    report({
      severity: 'warning',
      code: 'image-tag',
      path: joinPath(path, 'image'),
      message: `"${p.image}" is a tag; BootcNodePool ${p.name} resolved it to ${tag.digest} (status.targetDigest): the plan and the staging gate use that digest, and a plan made after the tag moves differs`,
      hint: 'pin by digest for a plan that does not depend on when it is made',
    });
    return tag.digest;
  }
  for (const n of memberNames) if (!blocked.has(n)) blocked.set(n, 'tag-unresolved');
  report({
    severity: 'warning',
    code: 'image-tag-unresolved',
    path: joinPath(path, 'image'),
    message: `"${p.image}" is a tag that BootcNodePool ${p.name} has not resolved to a digest yet (${tag.why}); the nodes of the pool are not scheduled until it is`,
    hint: `apply this plan to set the pool's image (its nodes stage it; none reboots), wait until \`oc get bootcnodepool ${p.name} -o jsonpath='{.status.targetDigest}'\` shows the digest, then plan and apply again; or pin the image by digest`,
  });
  return null;
}

/**
 * The pool's maxUnavailable, resolved (docs/design.md §7). The control-plane pool gets 1 whatever
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
      code: 'control-plane-max-unavailable',
      path: joinPath(path, 'maxUnavailable'),
      message: `pool ${p.name} is the control plane, which never has more than 1 node out of service; maxUnavailable ${asked} would take ${cp.tooMany} control-plane nodes out at once and risk etcd quorum`,
      expected: 'maxUnavailable: 1 (or no maxUnavailable) for the control-plane pool',
      hint: 'remove maxUnavailable from this pool (or set maxUnavailable: 1): bootcplan writes 1 to its MachineConfigPool and BootcNodePool. The MCO does not cap the master pool (it caps only arbiter), and the PodDisruptionBudget openshift-etcd/etcd-quorum-guard (maxUnavailable 1) would block the second drain, leaving that node cordoned mid-update',
    });
  }
  return cp.budget;
}

/**
 * The spec's `paused: true` holds the pool: no node is scheduled and the plan writes no new image
 * (poolChanges), so nothing stages until the pool is unpaused in the spec and planned again.
 */
function reportHeldPaused(p: PoolSpec, path: string, bootc: boolean, pending: number, report: (d: DiagnosticInput) => void) {
  report({
    severity: 'warning',
    code: 'pool-held-paused',
    path: joinPath(path, 'paused'),
    message: `pool ${p.name} held: pool paused, nothing stages: ${pending} node(s) need the new image and are not scheduled, and the plan writes no new image to the ${bootc ? 'BootcNodePool (the bootc-operator hands spec.image.ref to every node of a paused pool too, and each daemon pulls and stages it)' : 'pool (no osImageURL MachineConfig: the MCO would roll it on every node at once when the pool is unpaused)'}`,
    hint: 'remove `paused: true` from this pool when it may roll, then plan again',
  });
}
