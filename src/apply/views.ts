/**
 * How the applier reads the cluster: a node index and the pool membership of a snapshot
 * (computed once per snapshot), node views, and the two per-node questions every part
 * asks (is the node on the pool's target, has it passed the staging gate).
 */
import type { PlanPool } from '../plan/types.ts';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { indexSnapshot, viewNode, type NodeIndex, type NodeView } from '../domain/nodes.ts';
import { computeMembership } from '../domain/pools.ts';
import type { ClusterDriver } from './driver.ts';

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

export function viewIn(s: ClusterSnapshot, name: string): NodeView | null {
  const { idx } = indexOf(s);
  const n = idx.nodes.get(name);
  return n ? viewNode(n, idx) : null;
}

export function bootcNodeIn(s: ClusterSnapshot, name: string): KObject | undefined {
  return indexOf(s).idx.bootcNodes.get(name);
}

/**
 * The snapshot for a re-plan: the fingerprint (a hash over the whole cluster) is not
 * needed to compare remaining work, and is costly on big clusters.
 */
export function withoutFingerprint(s: ClusterSnapshot): ClusterSnapshot {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(s)) if (k !== 'fingerprint') out[k] = (s as unknown as Record<string, unknown>)[k];
  out.fingerprint = 'sha256:replan';
  return out as unknown as ClusterSnapshot;
}

export function atTarget(pool: PlanPool, v: NodeView): boolean {
  return pool.targetDigest ? v.bootedDigest === pool.targetDigest : v.bootedImage === pool.targetImage;
}

export function pastStagingGate(pool: PlanPool, v: NodeView): boolean {
  return !!pool.targetDigest && v.stagedDigest === pool.targetDigest && v.stagedIdle && !v.degraded;
}

/** Reads the cluster without waiting (the predicate is evaluated at once). */
export async function peek<T>(driver: ClusterDriver, fn: (s: ClusterSnapshot) => T): Promise<T> {
  const r = await driver.waitFor((s) => ({ v: fn(s) }), { timeoutSeconds: 0, description: 'read' });
  return r!.v;
}
