/**
 * Shapes of upstream API fields that the Rollout spec takes as they are and the pure rules read:
 * Kubernetes label selectors and the MachineConfiguration boot-image fields. They sit below both
 * spec/ (which validates them) and domain/ (which applies the upstream rules to them), so neither
 * imports the other for them (docs/architecture.md "The layers").
 */

/** metav1.LabelSelector: matchLabels and matchExpressions. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Same shape as MachineConfiguration spec.managedBootImages.machineManagers[] (openshift/api operator/v1). */
export interface MachineManager {
  resource: string;
  apiGroup: string;
  selection: {
    mode: string;
    partial?: { machineResourceSelector: LabelSelector };
  };
}

/** Same shape as MachineConfiguration spec.managedBootImages. */
export interface ManagedBootImages {
  machineManagers?: MachineManager[];
}

/** Same shape as MachineConfiguration spec.bootImageSkewEnforcement. */
export interface BootImageSkewEnforcement {
  mode: string;
  manual?: { mode: string; ocpVersion?: string; rhcosVersion?: string };
}
