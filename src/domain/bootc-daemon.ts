/**
 * Whether the bootc-operator's daemon can act on a node (docs/design.md §7 "Pools and waves"). Pure.
 *
 * bootc-operator (bootc-dev/bootc-operator):
 * - the daemon is a DaemonSet whose pod template has `nodeSelector: {bootc.dev/managed: ""}`
 *   (config/daemon/daemon.yaml); the controller puts that label on a node when it takes the
 *   node into a pool and creates its BootcNode (api/v1alpha1/constants.go `LabelManaged`:
 *   "Its presence triggers the DaemonSet to schedule a daemon pod on the node";
 *   internal/controller/bootcnodepool_controller.go `ensureManagedLabel`). A node without the
 *   label has no daemon: nothing pulls, stages or reboots into the target there;
 * - a BootcNode's status is "written by the daemon; the controller treats it as read-only"
 *   (api/v1alpha1/bootcnode_types.go BootcNodeStatus). A BootcNode without a status has a node
 *   whose daemon has not reported yet (not scheduled, crash-looping, or just created): the
 *   staging gate would wait its whole limit and halt the pool ("never started staging").
 * - a boot entry is `incompatible` when it "has local mutations that bootc cannot manage (e.g.
 *   package layering via rpm-ostree)" (api/v1alpha1/bootcnode_types.go BootEntryStatus; the
 *   daemon copies bootc's own status, internal/daemon/reconciler.go). bootc refuses to switch or
 *   upgrade such a deployment, so a node whose booted entry is incompatible never stages the
 *   target either (`incompatible`).
 * Such a node is held back, never scheduled, with the remedy in the diagnostic.
 */

import { BOOTC_MANAGED_LABEL } from './labels.ts';
import type { BootcNodeObject, NodeObject } from '../cluster/kinds.ts';

export type DaemonGap = 'not-managed' | 'no-bootcnode-status' | 'incompatible';

/** What keeps the daemon from acting on `node` (its BootcNode `bn`), or null when nothing does. */
export function daemonGap(node: NodeObject, bn: BootcNodeObject | undefined): DaemonGap | null {
  if (!bn) return null; // no BootcNode at all is the pool-sharing rule's (`no-bootcnode`)
  if (!Object.hasOwn(node.metadata.labels ?? {}, BOOTC_MANAGED_LABEL)) return 'not-managed';
  const st: unknown = bn.status;
  if (st === undefined || st === null || typeof st !== 'object' || Object.keys(st).length === 0) return 'no-bootcnode-status';
  if (bn.status?.booted?.incompatible === true) return 'incompatible';
  return null;
}

/**
 * What the installed bootc-operator can do beyond staging and rebooting. A soft reboot
 * (a userspace-only restart into the staged deployment) needs the pool's `rebootPolicy:
 * AllowSoftReboot`, a staged entry that is `softRebootCapable`, and a daemon that performs
 * it. The released daemon does not: it always runs `systemctl reboot`
 * (internal/bootc/executor.go `Reboot`, called from internal/daemon/reconciler.go), and the
 * soft-reboot work in bootc-dev/bootc-operator is not merged. So no node is planned as a soft
 * reboot today; `softReboot: true` describes an operator that does.
 */
export interface BootcOperatorAbilities {
  softReboot: boolean;
}
export const INSTALLED_BOOTC_OPERATOR: BootcOperatorAbilities = { softReboot: false };

/** bootcplan's own bound on the wait for a node to come back on the target after its reboot request. */
export const NODE_WAIT_SECONDS = 1800;

/**
 * The bound of a bootc node's reboot wait (docs/apply.md "Reboot timeout"): bootcplan's own
 * (`own`, NODE_WAIT_SECONDS unless an apply sets another) and the BootcNodePool's
 * `spec.rollout.rebootTimeoutSeconds` (`pool`, absent: not set), after which the operator gives
 * the reboot up. The wait ends at the shorter; `words` names both whenever the pool sets one.
 */
export function rebootWait(own: number, pool: number | undefined): { seconds: number; words: string } {
  const span = (s: number): string => (s % 60 === 0 || s >= 600 ? `${Math.round(s / 60)}m` : `${s}s`);
  if (pool === undefined) return { seconds: own, words: span(own) };
  const field = `the BootcNodePool's spec.rollout.rebootTimeoutSeconds (${pool}s)`;
  if (pool === own) return { seconds: own, words: `${span(own)}: bootcplan's own bound and ${field} agree` };
  if (pool < own) return { seconds: pool, words: `${span(pool)}: ${field}, shorter than bootcplan's own bound (${span(own)})` };
  return { seconds: own, words: `${span(own)}: bootcplan's own bound, shorter than ${field}` };
}
