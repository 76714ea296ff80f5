/**
 * How the applier reads the cluster: a node index and the pool membership of a snapshot
 * (computed once per snapshot), node views, and the two per-node questions every part
 * asks (is the node on the pool's target, has it passed the staging gate).
 */
import { controlPlaneNodesOutOfService } from '../../domain/control-plane.ts';
import type { PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import { conditionOf, digestOf, indexSnapshot, viewNode, type NodeIndex, type NodeView } from '../../domain/nodes.ts';
import { resolvedTag, stagingProgress, type StagingProgress } from '../../domain/staging.ts';
import { computeMembership } from '../../domain/pools.ts';
import type { ClusterDriver } from './driver.ts';
import type { BootcNodeObject } from '../../cluster/kinds.ts';
import { bootedPullspec } from '../../domain/rollback.ts';

const idxCache = new WeakMap<ClusterSnapshot, { idx: NodeIndex; members: Map<string, string[]> }>();
export function indexOf(s: ClusterSnapshot) {
  let c = idxCache.get(s);
  if (!c) {
    const m = computeMembership(s);
    const members = new Map<string, string[]>();
    for (const [k, v] of m.mco) members.set(k, v);
    for (const [k, v] of m.bootc) members.set(k, v); // a bootc pool wins over the MCP of the same name
    c = { idx: indexSnapshot(s), members };
    idxCache.set(s, c);
  }
  return c;
}

/** The nodes of a pool in this snapshot. */
export function membersOf(s: ClusterSnapshot, pool: string): string[] {
  return indexOf(s).members.get(pool) ?? [];
}

/**
 * Control-plane nodes out of service anywhere in the cluster, leaving out those `skip` names
 * (the pool's own members, or the nodes bootcplan has in flight): etcd counts members, not pools.
 */
export function controlPlaneOutOfService(s: ClusterSnapshot, skip: (name: string) => boolean): NodeView[] {
  const views = [...indexOf(s).idx.nodes.keys()].filter((n) => !skip(n)).flatMap((n) => viewIn(s, n) ?? []);
  return controlPlaneNodesOutOfService(views);
}

export function viewIn(s: ClusterSnapshot, name: string): NodeView | null {
  const { idx } = indexOf(s);
  const n = idx.nodes.get(name);
  return n ? viewNode(n, idx) : null;
}

export function bootcNodeIn(s: ClusterSnapshot, name: string): BootcNodeObject | undefined {
  return indexOf(s).idx.bootcNodes.get(name);
}

/**
 * The snapshot for a re-plan: the fingerprint (a hash over the whole cluster) is not
 * needed to compare remaining work, and is costly on big clusters.
 */
export function withoutFingerprint(s: ClusterSnapshot): ClusterSnapshot {
  // Field by field: the simulator's live view computes its fingerprint when it is read.
  return {
    source: s.source,
    nodes: s.nodes,
    machineConfigPools: s.machineConfigPools,
    machineConfigs: s.machineConfigs,
    bootcNodePools: s.bootcNodePools,
    bootcNodes: s.bootcNodes,
    machineSets: s.machineSets,
    machineConfiguration: s.machineConfiguration,
    controlPlaneMachineSet: s.controlPlaneMachineSet,
    bootImagesConfigMap: s.bootImagesConfigMap,
    featureGate: s.featureGate,
    infrastructure: s.infrastructure,
    clusterVersion: s.clusterVersion,
    kubeSystemNamespace: s.kubeSystemNamespace,
    server: s.server,
    lock: s.lock,
    progress: s.progress,
    fingerprint: 'sha256:replan',
  };
}

export function atTarget(pool: PlanPool, v: NodeView): boolean {
  return pool.targetDigest ? v.bootedDigest === pool.targetDigest : v.bootedImage === pool.targetImage;
}

/**
 * The node's reboot into the pool's target was requested already: its BootcNode asks for the
 * target with `desiredImageState: Booted`, or the daemon is rebooting (Idle=False/Rebooting).
 * The BootcNode is the record of the request: the bootc-operator resets desiredImageState to
 * Staged whenever desiredImage changes (bootc-dev/bootc-operator internal/controller
 * `syncBootcNodeSpec`), and the daemon reboots once into the staged target however often it
 * is asked. So the reboot request needs no progress entry of its own.
 */
export function rebootRequested(s: ClusterSnapshot, pool: PlanPool, name: string): boolean {
  const bn = bootcNodeIn(s, name);
  if (!bn) return false;
  if (conditionOf(bn, 'Idle')?.reason === 'Rebooting') return true;
  const desired: unknown = bn.spec?.desiredImage;
  const onTarget = pool.targetDigest ? digestOf(typeof desired === 'string' ? desired : null) === pool.targetDigest : desired === pool.targetImage;
  return onTarget && bn.spec?.desiredImageState === 'Booted';
}

/** The staging gate (docs/safety.md rule 8): the node's BootcNode asks for the target and has staged it. */
export function pastStagingGate(s: ClusterSnapshot, pool: PlanPool, v: NodeView): boolean {
  return stagingOf(s, pool, v.name).state === 'passed';
}

/**
 * Where a node of a bootc pool is on the way to the staging gate (src/domain/staging.ts). With a
 * tag reference the target is the digest the pool resolved (the plan's targetDigest), and the
 * BootcNodePool must still resolve the tag to it.
 */
export function stagingOf(s: ClusterSnapshot, pool: PlanPool, name: string): StagingProgress {
  if (!pool.targetDigest) return { state: 'not-started', why: `the target ${pool.targetImage} is not resolved to a digest` };
  if (!digestOf(pool.targetImage)) {
    const tag = resolvedTag(
      s.bootcNodePools.find((p) => p.metadata.name === pool.name),
      pool.targetImage,
    );
    if (!tag.resolved) return { state: 'not-started', why: tag.why };
    if (tag.digest !== pool.targetDigest)
      return {
        state: 'not-started',
        why: `the tag ${pool.targetImage} now resolves to ${tag.digest} (BootcNodePool status.targetDigest), not the plan's ${pool.targetDigest}: plan again`,
      };
  }
  return stagingProgress(bootcNodeIn(s, name), pool.targetDigest);
}

/** Reads the cluster without waiting (the predicate is evaluated at once). */
export async function peek<T>(driver: ClusterDriver, fn: (s: ClusterSnapshot) => T): Promise<T> {
  const r = await driver.waitFor((s) => ({ v: fn(s) }), { timeoutSeconds: 0, description: 'read' });
  // The predicate holds at once: waitFor answers it without a timeout.
  if (!r) throw new Error('internal: a read of the cluster (waitFor with a predicate that always holds) timed out');
  return r.v;
}

/**
 * A node's `from` for the entry written with its cordon: the pullspec it boots now, read from the
 * same view the budget decision used (not the plan's, which is a digest and may be older).
 */
export function bootedFrom(v: NodeView): { from?: string } {
  const from = bootedPullspec(v.bootedImage, v.bootedDigest);
  return from ? { from } : {};
}
