/**
 * What planning a pool must respect of the other controllers (docs/safety.md rules 2, 3 and 4;
 * docs/design.md §7 "Sharing the cluster"): nodes another pool also rolls (conflicts, never
 * scheduled), control-plane nodes in a pool that is not the control plane, nodes without a
 * BootcNode, the bootc-operator's own NodeConflict report, and a BootcNodePool that a
 * MachineConfigPool owns, and an administrator's pause of the MachineConfigPool (rule 6). Reports diagnostics at the spec's pool entry and returns the nodes
 * it holds back, with why. The rules are in src/domain/pool-sharing.ts and control-plane.ts.
 * Pure.
 */
import type { PoolSpec } from '../rollout-spec/types.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { type NodeIndex, type NodeView, selectorMatches } from '../domain/nodes.ts';
import { isControlPlaneNode } from '../domain/control-plane.ts';
import {
  type PoolRef,
  poolRefText,
  nodesWithoutBootcNode,
  nodeConflictCondition,
  owningMachineConfigPool,
  osImageMachineConfigsOf,
} from '../domain/pool-sharing.ts';
import { administratorPause } from '../domain/cordons.ts';
import { BOOTCPLAN_PAUSED_BY } from '../domain/labels.ts';
import type { BlockedBy } from './types.ts';
import type { BootcNodePoolObject, MachineConfigPoolObject } from '../cluster/kinds.ts';

interface SharingInput {
  spec: PoolSpec;
  /** Field path of the pool in the spec, e.g. `spec.pools[0]`. */
  path: string;
  bnp: BootcNodePoolObject | undefined;
  mcp: MachineConfigPoolObject | undefined;
  controlPlane: boolean;
  members: NodeView[];
}

interface SharingContext {
  snapshot: ClusterSnapshot;
  idx: NodeIndex;
  /** node -> the pools that each would roll it (src/domain/pool-sharing.ts findPoolConflicts) */
  conflicts: ReadonlyMap<string, PoolRef[]>;
  report: (d: DiagnosticInput) => void;
}

interface Sharing {
  /** Members held back, and why (they are never scheduled). */
  blocked: Map<string, BlockedBy>;
  /** A MachineConfigPool controls the BootcNodePool: bootcplan writes nothing to it. */
  ownedBy: string | null;
  /**
   * The pool's MachineConfigPool is paused by someone else (rule 6): 'kept' (it stays paused,
   * the nodes are held back), 'lifted' (the spec says `paused: false`: the plan unpauses it, a
   * disruptive change), or null (not paused, or paused by bootcplan).
   */
  administratorPause: 'kept' | 'lifted' | null;
}

export function poolSharing(pool: SharingInput, ctx: SharingContext): Sharing {
  const blocked = new Map<string, BlockedBy>();
  const memberNames = new Set(pool.members.map((m) => m.name));
  const hold = (names: Iterable<string>, why: BlockedBy) => {
    for (const n of names) if (memberNames.has(n) && !blocked.has(n)) blocked.set(n, why);
  };

  hold(poolConflicts(pool, ctx), 'pool-conflict');
  hold(controlPlaneNodesOutside(pool, ctx), 'pool-conflict');
  if (pool.bnp) hold(withoutBootcNode(pool, pool.bnp, ctx), 'no-bootcnode');
  const ownedBy = pool.bnp ? ownership(pool, pool.bnp, ctx.report) : null;
  if (ownedBy) hold(memberNames, 'pool-owned');
  const administratorPause = pausedByAdministrator(
    pool,
    [...memberNames].filter((n) => !blocked.has(n)),
    ctx.report,
  );
  if (administratorPause === 'kept') hold(memberNames, 'pool-paused');
  return { blocked, ownedBy, administratorPause };
}

/**
 * Rule 6: a MachineConfigPool paused by someone else (no bootcplan.dev/paused-by mark:
 * src/domain/cordons.ts administratorPause) stays paused and holds back the pool of its name,
 * MCO-only or bootc, unless the spec says `paused: false` for the pool.
 */
function pausedByAdministrator(pool: SharingInput, held: string[], report: (d: DiagnosticInput) => void): 'kept' | 'lifted' | null {
  if (!administratorPause(pool.mcp)) return null;
  const name = pool.spec.name;
  const who = `MachineConfigPool ${name} is paused (spec.paused: true), not by bootcplan (no ${BOOTCPLAN_PAUSED_BY} annotation): an administrator holds its updates back`;
  if (pool.spec.paused === false) {
    report({
      severity: 'warning',
      code: 'pool-pause-lifted',
      path: joinPath(pool.path, 'paused'),
      message: `${who}; the spec says paused: false for this pool, so the plan unpauses it (a disruptive change: the Machine Config Operator also rolls any rendered config the pause held back)`,
      hint: 'make sure whoever paused the pool agrees; remove `paused: false` from the spec to leave the pause in place',
    });
    return 'lifted';
  }
  const what = pool.bnp
    ? `BootcNodePool ${name} is held back too and gets no new image (nothing stages)`
    : 'bootcplan leaves it paused and writes no new image';
  report({
    severity: 'warning',
    code: 'pool-paused-by-administrator',
    path: pool.path,
    message: `${who}; ${what}: ${held.length} node(s) are not scheduled${held.length ? ` (${held.join(', ')})` : ''}`,
    hint: `ask whoever paused it; when the pause is over, unpause it (\`oc patch mcp ${name} --type merge -p '{"spec":{"paused":false}}'\`) and plan again, or set \`paused: false\` for this pool in the spec to have bootcplan unpause it`,
  });
  return 'kept';
}

/** Rule 3: nodes this pool and another would both roll. An error at the pool's name; returns the nodes. */
function poolConflicts(pool: SharingInput, { conflicts, snapshot, report }: SharingContext): string[] {
  const self: PoolRef = pool.bnp ? { kind: 'BootcNodePool', name: pool.spec.name } : { kind: 'MachineConfigPool', name: pool.spec.name };
  const mine = [...conflicts].filter(([, refs]) => refs.some((r) => r.kind === self.kind && r.name === self.name));
  const reported = pool.bnp ? nodeConflictCondition(pool.bnp) : null;
  const operatorSays = reported ? `BootcNodePool/${pool.spec.name} reports Degraded=True (NodeConflict): "${reported}"` : null;
  if (!mine.length) {
    if (operatorSays) {
      report({
        code: 'bootc-pool-node-conflict',
        path: joinPath(pool.path, 'name'),
        message: `${operatorSays}, but no node of this snapshot is claimed by two pools: the bootc-operator and this snapshot disagree about the pool's nodes`,
        hint: 'check the nodeSelectors of the BootcNodePools and the labels of their nodes; plan again once the bootc-operator clears the condition',
      });
    }
    return [];
  }
  // One line per set of pools: "BootcNodePool/gpu and BootcNodePool/worker: w-01, w-02".
  const groups = new Map<string, string[]>();
  for (const [node, refs] of mine) {
    const key = refs.map(poolRefText).join(' and ');
    groups.set(key, [...(groups.get(key) ?? []), node]);
  }
  const lines = [...groups].map(([pools, ns]) => `${pools}: ${ns.join(', ')}`);
  // What makes each MachineConfigPool roll an image: its osImageURL MachineConfigs, or this spec.
  const mcps = [...new Set(mine.flatMap(([, refs]) => refs.filter((r) => r.kind === 'MachineConfigPool').map((r) => r.name)))].sort();
  const rolling = mcps.map((name) => {
    const mcp = snapshot.machineConfigPools.find((p) => p.metadata.name === name);
    const mcs = mcp ? osImageMachineConfigsOf(mcp, snapshot.machineConfigs) : [];
    return mcs.length
      ? mcs.map((mc) => `MachineConfig/${mc}`).join(', ')
      : `the spec's pool entry "${name}" (bootcplan would give MachineConfigPool ${name} an osImageURL MachineConfig)`;
  });
  report({
    code: 'pool-node-conflict',
    path: joinPath(pool.path, 'name'),
    message: `${mine.length} node(s) belong to more than one pool, and each pool would roll them: ${lines.join('; ')}. They are not scheduled in any pool${operatorSays ? `; ${operatorSays}` : ''}`,
    expected: 'each node in exactly one pool that rolls its OS image',
    hint: `make the pools disjoint: change a nodeSelector or the nodes' labels${rolling.length ? `, or remove what makes the MachineConfigPool roll an image: ${rolling.join('; ')}` : ''}; then plan again`,
  });
  return mine.map(([node]) => node);
}

/** Rule 2: control-plane nodes in (or selected by) a pool that is not the control plane. An error; returns them. */
function controlPlaneNodesOutside(pool: SharingInput, { idx, snapshot, report }: SharingContext): string[] {
  if (pool.controlPlane) return [];
  const found = new Set(pool.members.filter((m) => isControlPlaneNode(m.labels)).map((m) => m.name));
  // A BootcNodePool takes what its selector matches (bootc-operator syncMembership); a
  // MachineConfigPool only what the MCO gives it (masters stay in master on compact clusters).
  if (pool.bnp) {
    for (const n of snapshot.nodes) {
      if (isControlPlaneNode(n.metadata.labels) && selectorMatches(pool.bnp.spec?.nodeSelector, n.metadata.labels ?? {})) found.add(n.metadata.name);
    }
  }
  if (!found.size) return [];
  const names = [...found].filter((n) => idx.nodes.has(n)).sort();
  report({
    code: 'control-plane-node-in-pool',
    path: joinPath(pool.path, 'name'),
    message: `pool ${pool.spec.name} is not the control-plane pool but ${pool.bnp ? 'its nodeSelector matches' : 'it holds'} control-plane node(s) ${names.join(', ')}: it would take them out of service with its own budget, next to the control plane's own rollout`,
    expected: 'no control-plane node (node-role.kubernetes.io/master or control-plane) in a pool other than the control-plane pool',
    hint: 'narrow the nodeSelector so that it excludes control-plane nodes (e.g. a matchExpressions entry `{key: node-role.kubernetes.io/control-plane, operator: DoesNotExist}`), and roll control-plane nodes through the master pool',
  });
  return names;
}

/** Rule 3: nodes the BootcNodePool selects but that have no BootcNode (nothing updates them). A warning; returns them. */
function withoutBootcNode(pool: SharingInput, bnp: BootcNodePoolObject, { snapshot, idx, conflicts, report }: SharingContext): string[] {
  const names = nodesWithoutBootcNode(snapshot, bnp, idx.bootcNodes).filter((n) => !conflicts.has(n) && !isControlPlaneNodeOutside(pool, idx, n));
  if (!names.length) return [];
  report({
    severity: 'warning',
    code: 'node-without-bootcnode',
    path: joinPath(pool.path, 'name'),
    message: `${names.length} node(s) match the nodeSelector of BootcNodePool ${pool.spec.name} but have no BootcNode, so they will not be updated: ${names.join(', ')}`,
    hint: 'the bootc-operator creates a BootcNode for each node it takes into the pool; check that it runs and that the node is not claimed by another pool, then plan again',
  });
  return names;
}

function isControlPlaneNodeOutside(pool: SharingInput, idx: NodeIndex, name: string): boolean {
  return !pool.controlPlane && isControlPlaneNode(idx.nodes.get(name)?.metadata.labels);
}

/**
 * Rule 4: a BootcNodePool controlled by a MachineConfigPool. Writing its spec.image.ref is
 * refused (an error) when the spec's image differs; when it is the same, a warning: the pool
 * is left to its owner. Returns the owner's name, or null.
 */
function ownership(pool: SharingInput, bnp: BootcNodePoolObject, report: (d: DiagnosticInput) => void): string | null {
  const owner = owningMachineConfigPool(bnp);
  if (!owner) return null;
  const current: unknown = bnp.spec?.image?.ref;
  const why = `BootcNodePool ${pool.spec.name} is owned by MachineConfigPool ${owner} (ownerReference with controller: true): the Machine Config Operator writes its spec.image.ref from the pool's rendered osImageURL, and a write by bootcplan would fight it`;
  const hint = `change the image where the owner takes it from, the osImageURL of the MachineConfig that MachineConfigPool ${owner} renders, and let the Machine Config Operator roll the pool; or remove this pool entry from the spec`;
  if (current !== pool.spec.image) {
    report({
      code: 'pool-owned-by-machineconfigpool',
      path: joinPath(pool.path, 'image'),
      message: `${why}; bootcplan does not write it (it has ${typeof current === 'string' ? current : 'no image'}, the spec asks for ${pool.spec.image})`,
      expected: `no pool entry that changes a BootcNodePool owned by MachineConfigPool ${owner}`,
      hint,
    });
  } else {
    report({
      severity: 'warning',
      code: 'pool-left-to-owner',
      path: joinPath(pool.path, 'name'),
      message: `${why}; its image is already the spec's, and bootcplan leaves the pool and its nodes to the owner (no change, no waves)`,
      hint,
    });
  }
  return owner;
}
