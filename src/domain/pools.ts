/**
 * Pool membership. bootc-operator: a BootcNode is named after its Node and has a controller
 * reference to its BootcNodePool (internal/controller/bootcnodepool_controller.go); without
 * BootcNodes yet, the pool's spec.nodeSelector decides. MCO: a MachineConfigPool selects
 * nodes by spec.nodeSelector; a node in worker and in a custom pool belongs to the custom
 * pool (MCO GetPoolsForNode: custom pools take precedence over worker).
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { ownerOf, selectorMatches } from './nodes.ts';
import { isControlPlaneNode, selectorAsksForControlPlane } from './control-plane.ts';
import type { BootcNodePoolObject, MachineConfigPoolObject } from '../cluster/kinds.ts';

export interface Membership {
  /** pool name -> node names, per backend */
  bootc: Map<string, string[]>;
  mco: Map<string, string[]>;
  /** nodes selected by more than one custom MachineConfigPool: the MCO refuses them */
  mcoConflicts: Map<string, string[]>;
}

export function computeMembership(snap: ClusterSnapshot): Membership {
  const bootc = new Map<string, string[]>();
  for (const p of snap.bootcNodePools) bootc.set(p.metadata.name, []);
  for (const bn of snap.bootcNodes) {
    // The controller reference (metav1.GetControllerOf), as the conflict rules read it too.
    const owner = ownerOf(bn, 'BootcNodePool', true);
    if (owner !== null) bootc.get(owner)?.push(bn.metadata.name);
  }
  // The nodes some pool's BootcNodes claim, built only when a pool has none yet (rare).
  let claimed: Set<string> | null = null;
  for (const p of snap.bootcNodePools) {
    const list = bootc.get(p.metadata.name);
    if (!list || list.length > 0) continue; // the operator already decided membership
    claimed ??= new Set([...bootc.values()].flat());
    for (const n of snap.nodes) {
      if (!claimed.has(n.metadata.name) && selectorMatches(p.spec?.nodeSelector, n.metadata.labels ?? {})) list.push(n.metadata.name);
    }
  }

  const mco = new Map<string, string[]>();
  const mcoConflicts = new Map<string, string[]>();
  for (const p of snap.machineConfigPools) mco.set(p.metadata.name, []);
  for (const n of snap.nodes) {
    const labels = n.metadata.labels ?? {};
    let pools: string[] = [];
    for (const p of snap.machineConfigPools) if (selectorMatches(p.spec?.nodeSelector, labels)) pools.push(p.metadata.name);
    if (pools.length > 1) pools = pools.filter((p) => p !== 'worker');
    if (pools.length > 1) {
      mcoConflicts.set(n.metadata.name, pools);
      continue;
    }
    if (pools.length === 1) mco.get(pools[0])?.push(n.metadata.name);
  }
  for (const list of [...bootc.values(), ...mco.values()]) list.sort();
  return { bootc, mco, mcoConflicts };
}

/**
 * The control-plane pool: MCO's `master` (or a pool named control-plane), a pool whose
 * selector asks for a control-plane role label, or a pool whose nodes are all control-plane
 * nodes (a pool that mixes them with other nodes is an error: src/plan/pool-sharing.ts).
 */
export function isControlPlanePool(
  name: string,
  mcp: MachineConfigPoolObject | undefined,
  bnp: BootcNodePoolObject | undefined,
  memberLabels: readonly Record<string, string>[] = [],
): boolean {
  if (name === 'master' || name === 'control-plane') return true;
  if ([mcp?.spec?.nodeSelector, bnp?.spec?.nodeSelector].some(selectorAsksForControlPlane)) return true;
  return memberLabels.length > 0 && memberLabels.every(isControlPlaneNode);
}

/** docs/design.md §4: pools roll in ascending priority; defaults: custom pools 10, worker 20, master 30. */
export function defaultPriority(name: string, controlPlane: boolean): number {
  if (controlPlane) return 30;
  if (name === 'worker') return 20;
  return 10;
}
