/**
 * Whose cordon, whose pause (docs/safety.md rule 6; docs/design.md §7 "Sharing the cluster"). Pure.
 *
 * Kubernetes records no owner of a cordon: `spec.unschedulable` (and the taint
 * node.kubernetes.io/unschedulable that mirrors it, k8s.io/api core/v1 well_known_taints.go
 * TaintNodeUnschedulable) is all there is, and `kubectl cordon` on a node already cordoned
 * writes nothing. Upstream controllers that must not undo someone else's cordon keep a mark:
 * - bootc-operator (bootc-dev/bootc-operator internal/controller/rollout.go `assignRebootSlot`,
 *   `restoreCordonState`) records `bootc.dev/was-cordoned` on the BootcNode before it cordons
 *   and uncordons only when it was "false";
 * - kured (kubereboot/kured cmd/kured/main.go) keeps the node's prior `unschedulable` in its
 *   lock annotation and uncordons only if it was false;
 * - kairos-operator (kairos-io/kairos-operator internal/controller/nodeop_controller.go) writes
 *   `operator.kairos.io/cordoned-by` on the Node only when it cordons itself and uncordons only
 *   on an exact match, clearing a stale mark.
 * bootcplan does as kairos-operator: `bootcplan.dev/cordoned-by: <plan id>` on the Node, written
 * in the same write that flips spec.unschedulable from false to true, and removed in the same
 * write that flips it back; a node without that exact mark is someone else's cordon and stays.
 *
 * Pauses. The MCO's node controller moves no node of a paused MachineConfigPool
 * (openshift/machine-config-operator pkg/controller/node/node_controller.go `updatePools`:
 * `if pool.Spec.Paused { ...; return ctrl.syncStatusOnly(pool) }`), and administrators pause
 * pools to hold updates back (openshift/api machineconfiguration/v1 types.go
 * MachineConfigPoolSpec.Paused). bootcplan pauses MCO pools itself between waves
 * (src/apply/pools/mco-pool.ts) and marks that pause with `bootcplan.dev/paused-by: <plan id>`; a
 * paused MachineConfigPool without the mark was paused by someone else, and bootcplan does
 * not unpause it unless the spec says `paused: false` for that pool.
 */

import { BOOTCPLAN_CORDONED_BY, BOOTCPLAN_PAUSED_BY } from './labels.ts';
import type { BootcNodePoolObject, MachineConfigPoolObject, NodeObject } from '../cluster/kinds.ts';

/** The merge patch of bootcplan's cordon, or null when the node is unschedulable already (not bootcplan's to mark). */
export function cordonPatch(node: NodeObject, by: string): Record<string, unknown> | null {
  if (node.spec?.unschedulable === true) return null;
  const metadata: Record<string, unknown> = { annotations: { [BOOTCPLAN_CORDONED_BY]: by } };
  // The resourceVersion read makes the write conditional (409 when the node moved): a cordon
  // someone else set in between is then seen as theirs on the retry.
  if (node.metadata.resourceVersion) metadata.resourceVersion = node.metadata.resourceVersion;
  return { metadata, spec: { unschedulable: true } };
}

type UncordonDecision = 'uncordon' | 'clear-mark' | 'not-ours';

/** What bootcplan's uncordon may do to a node: only a cordon with its own exact mark is undone. */
export function uncordonDecision(node: NodeObject, by: string): UncordonDecision {
  if (node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY] !== by) return 'not-ours';
  return node.spec?.unschedulable === true ? 'uncordon' : 'clear-mark';
}

/** The merge patch of bootcplan's uncordon (decision 'uncordon' or 'clear-mark'). */
export function uncordonPatch(node: NodeObject, decision: Exclude<UncordonDecision, 'not-ours'>): Record<string, unknown> {
  const metadata: Record<string, unknown> = { annotations: { [BOOTCPLAN_CORDONED_BY]: null } };
  if (node.metadata.resourceVersion) metadata.resourceVersion = node.metadata.resourceVersion;
  return decision === 'uncordon' ? { metadata, spec: { unschedulable: null } } : { metadata };
}

/** The pause switches of both pool kinds: MachineConfigPool spec.paused, BootcNodePool spec.rollout.paused. */
interface PauseSwitches {
  paused?: boolean | null;
  rollout?: { paused?: boolean | null } | null;
}

/**
 * The merge patch of bootcplan's pause or unpause of a pool, the mark going with the switch; null
 * when pausing a pool that is paused already (by bootcplan, or by someone else: then it is
 * theirs, and no mark is added, as for a cordon).
 */
export function pausePatch(pool: MachineConfigPoolObject | BootcNodePoolObject, paused: boolean, by: string): Record<string, unknown> | null {
  const isMcp = pool.kind === 'MachineConfigPool';
  const spec: PauseSwitches | null | undefined = pool.spec;
  const now = isMcp ? spec?.paused === true : spec?.rollout?.paused === true;
  if (paused && now) return null;
  const metadata: Record<string, unknown> = { annotations: { [BOOTCPLAN_PAUSED_BY]: paused ? by : null } };
  if (paused && pool.metadata.resourceVersion) metadata.resourceVersion = pool.metadata.resourceVersion;
  return isMcp ? { metadata, spec: { paused } } : { metadata, spec: { rollout: { paused } } };
}

/**
 * A MachineConfigPool paused by someone other than bootcplan: spec.paused true and no
 * `bootcplan.dev/paused-by` mark. Returns null when it is not paused or bootcplan paused it.
 */
export function administratorPause(mcp: MachineConfigPoolObject | undefined): { pausedBy: 'administrator' } | null {
  if (!mcp || mcp.spec?.paused !== true) return null;
  if (mcp.metadata.annotations?.[BOOTCPLAN_PAUSED_BY]) return null;
  return { pausedBy: 'administrator' };
}
