/** Label, annotation and condition names of the upstream systems, in one place. */

/** Well-known topology label (kubernetes.io API, "topology.kubernetes.io/zone"). */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const ROLE_LABEL_PREFIX = 'node-role.kubernetes.io/';

/** machine-config-operator node annotations (pkg/daemon/constants). */
export const MCO_CURRENT_CONFIG = 'machineconfiguration.openshift.io/currentConfig';
export const MCO_DESIRED_CONFIG = 'machineconfiguration.openshift.io/desiredConfig';
export const MCO_STATE = 'machineconfiguration.openshift.io/state';
export const MCO_REASON = 'machineconfiguration.openshift.io/reason';
/** Set by the MCO when the node runs an image built by on-cluster layering. */
export const MCO_CURRENT_IMAGE = 'machineconfiguration.openshift.io/currentImage';
export const MCO_ROLE_LABEL = 'machineconfiguration.openshift.io/role';

/** bootc-operator markers (bootc-dev/bootc-operator api/v1alpha1/constants.go). */
export const BOOTC_MANAGED_LABEL = 'bootc.dev/managed';
export const BOOTC_IN_REBOOT_SLOT = 'bootc.dev/in-reboot-slot';

/** bootcplan's own markers. */
export const BOOTCPLAN_MANAGED_BY = 'bootcplan.dev/managed-by';
/** On a Node bootcplan cordoned (value: the plan id); its uncordon needs it (src/domain/cordons.ts). */
export const BOOTCPLAN_CORDONED_BY = 'bootcplan.dev/cordoned-by';
/** On a MachineConfigPool or BootcNodePool bootcplan paused (value: the plan id): a pause without it is someone else's. */
export const BOOTCPLAN_PAUSED_BY = 'bootcplan.dev/paused-by';
/** On a Node bootcplan updates: its progress entry, JSON (src/cluster/progress.ts). */
export { BOOTCPLAN_PROGRESS } from '../cluster/progress.ts';
/** On the lock Lease: the lock id (`unlock` needs it) and the plan being applied. */
export const BOOTCPLAN_LOCK_ID = 'bootcplan.dev/lock-id';
export const BOOTCPLAN_LOCK_PLAN_ID = 'bootcplan.dev/plan-id';
