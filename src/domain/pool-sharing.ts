/**
 * Pools that share nodes, and pools another controller owns (docs/safety.md rules 3 and 4; docs/design.md
 * §7 "Sharing the cluster"). Pure.
 *
 * A node belongs to one pool. Upstream:
 * - bootc-operator (bootc-dev/bootc-operator internal/controller/bootcnodepool_controller.go
 *   `syncMembership`): a BootcNodePool selects Nodes with spec.nodeSelector and owns one
 *   BootcNode per Node (controller reference, `createBootcNode`). A Node whose BootcNode is
 *   controlled by another pool is skipped and the pool reports Degraded=True with reason
 *   NodeConflict, "Node selector overlaps with pool(s): …" (`setConflictCondition`).
 * - MCO: a MachineConfigPool renders the MachineConfigs its spec.machineConfigSelector selects
 *   (pkg/controller/render render_controller.go, `getMachineConfigsForPool`), the last
 *   osImageURL by name wins (pkg/controller/common `MergeMachineConfigs`), and the node
 *   controller rolls the rendered config onto every node of the pool. So a MachineConfig with
 *   spec.osImageURL for a pool makes the MCO roll that image onto its nodes; if a BootcNodePool
 *   of another name rolls them too, two controllers reboot the same machines into two images.
 *   Which MachineConfigPool a node is in is the MCO's `GetPoolsForNode` (src/domain/pools.ts).
 *
 * A BootcNodePool owned by a MachineConfigPool (controller reference) is the MCO's to write.
 * No upstream controller does this today (neither the MCO nor openshift/api mentions
 * BootcNodePool); bootc-operator docs/PRD.md "Relationship to the MCO" and docs/ARCHITECTURE.md
 * principle 5 describe it as the intended integration ("driven by a higher-level operator"),
 * the MCO writing spec.image.ref from the rendered osImageURL. bootcplan assumes that and
 * never writes such a pool.
 */
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { conditionOf, ownerOf, selectorMatches } from './nodes.ts';
import { MCO_ROLE_LABEL } from './labels.ts';
import type { Membership } from './pools.ts';
import type { BootcNodeObject, BootcNodePoolObject, MachineConfigObject, MachineConfigPoolObject } from '../cluster/kinds.ts';

type PoolKind = 'BootcNodePool' | 'MachineConfigPool';
export interface PoolRef {
  kind: PoolKind;
  name: string;
}

export const poolRefText = (r: PoolRef) => `${r.kind}/${r.name}`;

/** The controller reference of a kind, if any (metav1.GetControllerOf). */
function controllerOf(obj: KObject, kind: string): string | null {
  return ownerOf(obj, kind, true);
}

/** A MachineConfig the render controller generated (controlled by its pool): not an admin's choice. */
function isRendered(mc: MachineConfigObject): boolean {
  return controllerOf(mc, 'MachineConfigPool') !== null;
}

/**
 * The MachineConfigs that set an OS image (spec.osImageURL) for a MachineConfigPool: those its
 * machineConfigSelector selects, or, without one, those whose role label is the pool's name.
 */
export function osImageMachineConfigsOf(mcp: MachineConfigPoolObject, machineConfigs: readonly MachineConfigObject[]): string[] {
  const sel = mcp.spec?.machineConfigSelector;
  return machineConfigs
    .filter((mc) => typeof mc.spec?.osImageURL === 'string' && mc.spec.osImageURL !== '' && !isRendered(mc))
    .filter((mc) => {
      const labels = mc.metadata.labels ?? {};
      return sel ? selectorMatches(sel, labels) : labels[MCO_ROLE_LABEL] === mcp.metadata.name;
    })
    .map((mc) => mc.metadata.name)
    .sort();
}

/**
 * Nodes that two pools would each roll: claimed by two BootcNodePools (a BootcNode
 * controlled by one, or a nodeSelector that matches), or by a BootcNodePool and a
 * MachineConfigPool of another name that rolls an OS image: it has an osImageURL
 * MachineConfig (osImageMachineConfigsOf), or the plan gives it one (`rolledByPlan`: the
 * MCO-only pools of the spec). node -> the pools (two or more), in a stable order.
 */
export function findPoolConflicts(snap: ClusterSnapshot, membership: Membership, rolledByPlan: ReadonlySet<string> = new Set()): Map<string, PoolRef[]> {
  // node -> the BootcNodePool that claims it, or the pools when several do (a 10,000-node
  // cluster has 10,000 claims and almost no second one: no list is built for a single claim).
  const bootcClaims = new Map<string, string | string[]>();
  const claim = (node: string, pool: string) => {
    const had = bootcClaims.get(node);
    if (had === undefined) bootcClaims.set(node, pool);
    else if (typeof had === 'string') {
      if (had !== pool) bootcClaims.set(node, [had, pool]);
    } else if (!had.includes(pool)) had.push(pool);
  };
  const pools = new Set(snap.bootcNodePools.map((p) => p.metadata.name));
  for (const bn of snap.bootcNodes) {
    const owner = controllerOf(bn, 'BootcNodePool') ?? ownerOf(bn, 'BootcNodePool', false);
    if (owner && pools.has(owner)) claim(bn.metadata.name, owner);
  }
  for (const n of snap.nodes) {
    const labels = n.metadata.labels ?? {};
    for (const p of snap.bootcNodePools) if (selectorMatches(p.spec?.nodeSelector, labels)) claim(n.metadata.name, p.metadata.name);
  }

  const rollingMcoPoolOf = new Map<string, string>();
  for (const mcp of snap.machineConfigPools) {
    if (!rolledByPlan.has(mcp.metadata.name) && !osImageMachineConfigsOf(mcp, snap.machineConfigs).length) continue;
    for (const node of membership.mco.get(mcp.metadata.name) ?? []) rollingMcoPoolOf.set(node, mcp.metadata.name);
  }

  // Only nodes with two claims, sorted.
  const contested: [string, string[], string | undefined][] = [];
  for (const [node, claimed] of bootcClaims) {
    const mcp = rollingMcoPoolOf.get(node);
    if (typeof claimed === 'string') {
      if (mcp && mcp !== claimed) contested.push([node, [claimed], mcp]);
      continue;
    }
    contested.push([node, claimed, mcp && !claimed.includes(mcp) ? mcp : undefined]);
  }
  const out = new Map<string, PoolRef[]>();
  for (const [node, bnps, mcp] of contested.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const refs: PoolRef[] = [...bnps].sort().map((name) => ({ kind: 'BootcNodePool', name }));
    if (mcp) refs.push({ kind: 'MachineConfigPool', name: mcp });
    out.set(node, refs);
  }
  return out;
}

/** Nodes a BootcNodePool's selector matches that have no BootcNode: the operator has not taken them, so nothing updates them. */
export function nodesWithoutBootcNode(snap: ClusterSnapshot, bnp: BootcNodePoolObject, bootcNodes: ReadonlyMap<string, BootcNodeObject>): string[] {
  return snap.nodes
    .filter((n) => !bootcNodes.has(n.metadata.name) && selectorMatches(bnp.spec?.nodeSelector, n.metadata.labels ?? {}))
    .map((n) => n.metadata.name)
    .sort();
}

/** The message of a BootcNodePool's Degraded=True condition with reason NodeConflict, or null. */
export function nodeConflictCondition(bnp: BootcNodePoolObject): string | null {
  const c = conditionOf(bnp, 'Degraded');
  return c?.status === 'True' && c.reason === 'NodeConflict' ? c.message || 'Node selector overlaps with another pool' : null;
}

/** The MachineConfigPool that controls a BootcNodePool (ownerReference with controller: true), or null. */
export function owningMachineConfigPool(bnp: KObject): string | null {
  const ref = bnp.metadata.ownerReferences?.find(
    (r) => r.controller === true && r.kind === 'MachineConfigPool' && (r.apiVersion ?? '').startsWith('machineconfiguration.openshift.io/'),
  );
  return ref?.name ?? null;
}
