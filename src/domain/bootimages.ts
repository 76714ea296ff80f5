/**
 * Boot images: the MachineConfiguration `cluster` settings spec.managedBootImages and
 * spec.bootImageSkewEnforcement, the ControlPlaneMachineSet strategy, and what the Machine
 * Config Operator then does to MachineSets and the ControlPlaneMachineSet (docs/design.md §7).
 *
 * Upstream: openshift/api operator/v1 types_machineconfiguration.go (fields, CEL rules),
 * machine/v1 types_controlplanemachineset.go; openshift/machine-config-operator
 * pkg/operator/sync.go (defaults, legacy opt-out) and pkg/controller/bootimage/ (effects).
 * Static field rules are in src/rollout-spec/bootimages-schema.ts; the rules here need the cluster.
 * The planner that turns them into plan changes is src/plan/bootimages.ts. Pure: no I/O.
 */
import type { MachineManager, ManagedBootImages, BootImageSkewEnforcement } from '../base/api-types.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import { deepEqual } from '../base/equal.ts';
import { isPlainObject } from '../base/schema.ts';
import { BOOT_IMAGE_PLATFORMS, CPMS_BOOT_IMAGE_PLATFORMS } from './bootimages-platform.ts';
import { type ClusterFacts, MAPI_GROUP, GATE_CPMS, GATE_SKEW, AZURE_STACK_CLOUD } from './bootimages-cluster.ts';

/** The spec fields the boot-image findings point at. */
export const MBI_PATH = 'spec.managedBootImages';
export const MANAGERS_PATH = `${MBI_PATH}.machineManagers`;
export const SKEW_PATH = 'spec.bootImageSkewEnforcement';
export const CPMS_PATH = 'spec.controlPlaneMachineSet';

/**
 * The four object-level CEL rules of MachineConfiguration that apply while
 * status.bootImageSkewEnforcementStatus.mode is Automatic (types_machineconfiguration.go,
 * FeatureGateAwareXValidation featureGate=BootImageSkewEnforcement), verbatim.
 */
export const AUTOMATIC_RULES = {
  configurationRequired: 'when skew enforcement is in Automatic mode, a boot image configuration is required',
  notEmpty: 'when skew enforcement is in Automatic mode, managedBootImages.machineManagers must not be an empty list',
  machineSetsAll: "when skew enforcement is in Automatic mode, any MachineAPI MachineSet MachineManager must use selection mode 'All'",
  statusAll: 'when skew enforcement is in Automatic mode, managedBootImagesStatus must contain a MachineManager opting in all MachineAPI MachineSets',
} as const;

/** Rules 2 and 3 on a spec list: the message of the first one broken, and the offending index. */
export function automaticRuleViolation(list: readonly MachineManager[] | undefined): { message: string; index: number | null } | null {
  if (list === undefined) return null;
  if (list.length === 0) return { message: AUTOMATIC_RULES.notEmpty, index: null };
  const ms = list.filter((m) => m.resource === 'machinesets' && m.apiGroup === MAPI_GROUP);
  if (ms.length && !ms.some((m) => m.selection?.mode === 'All')) {
    return { message: AUTOMATIC_RULES.machineSetsAll, index: list.indexOf(ms[0]) };
  }
  return null;
}

/**
 * Rule 4 on the observed status list: broken when the list is there but opts no MachineAPI
 * MachineSets in with mode All. It looks at status only, so while it is broken the API server
 * rejects every write to the object.
 */
export function automaticStatusRuleBroken(statusList: unknown): boolean {
  return (
    Array.isArray(statusList) &&
    !statusList.some(
      (m) => isPlainObject(m) && m.resource === 'machinesets' && m.apiGroup === MAPI_GROUP && isPlainObject(m.selection) && m.selection.mode === 'All',
    )
  );
}

type Report = (d: DiagnosticInput) => void;

/** Rules that need the cluster: platform, feature gates (docs/design.md §7). */
export function checkClusterRules(
  spec: { spec: { managedBootImages?: ManagedBootImages; bootImageSkewEnforcement?: BootImageSkewEnforcement } },
  facts: ClusterFacts,
  report: Report,
) {
  const s = spec.spec;
  if (s.managedBootImages !== undefined) checkPlatform(facts, report);
  (s.managedBootImages?.machineManagers ?? []).forEach((m, i) => checkManager(m, i, facts, report));
  if (s.bootImageSkewEnforcement !== undefined && facts.skewGate === false) {
    // The field is gated (+openshift:enable:FeatureGate=BootImageSkewEnforcement): without
    // the gate the CRD has no such field and strict field validation rejects it.
    report({
      code: 'skew-enforcement-feature-gate-disabled',
      path: SKEW_PATH,
      message: 'unknown field "spec.bootImageSkewEnforcement"',
      expected: `a cluster with FeatureGate ${GATE_SKEW} enabled`,
      hint: `the FeatureGate ${GATE_SKEW} is not enabled on this cluster; remove bootImageSkewEnforcement`,
    });
  }
}

/** Whether the cluster's platform lets the MCO manage boot images at all (managedBootImages is set). */
function checkPlatform(facts: ClusterFacts, report: Report) {
  if (facts.azureStackHub) {
    // bootimages-cluster.ts isAzureStackHub: the MCO's boot image controller is off there,
    // so the managers would change nothing; they are not written (plan/bootimages.ts).
    report({
      severity: 'warning',
      code: 'boot-images-azure-stack-hub',
      path: MBI_PATH,
      message: `this cluster is on Azure Stack Hub (Infrastructure status.platformStatus.azure.cloudName ${AZURE_STACK_CLOUD}), where the Machine Config Operator does not update boot images (its boot images are defined at install time): managedBootImages is not written and no boot image change is predicted`,
      hint: 'remove managedBootImages for this cluster (e.g. with a per-cluster override in a Fleet spec)',
    });
  } else if (facts.bootImagesSupported === false) {
    // MCO ValidatingAdmissionPolicy managed-bootimages-platform-check (wording of the
    // enhancement's policy; the platform list of the current MCO).
    report({
      code: 'managed-boot-images-unsupported-platform',
      path: MBI_PATH,
      message: `This feature is only supported on these platforms: ${BOOT_IMAGE_PLATFORMS.join(', ')} (this cluster: ${facts.platform})`,
      expected: `a cluster on ${BOOT_IMAGE_PLATFORMS.join(', ')}`,
      hint: 'remove managedBootImages: the MCO does not manage boot images on this platform',
    });
  } else if (facts.bootImagesSupported === null) {
    report({
      severity: 'warning',
      code: 'cluster-platform-unknown',
      path: MBI_PATH,
      message: 'the snapshot has no Infrastructure/cluster: the platform rules for managedBootImages are not checked',
      hint: 'take the snapshot with `bootcplan snapshot`',
    });
  }
}

/** The rules on one entry of spec.managedBootImages.machineManagers, at index `i`. */
function checkManager(m: MachineManager, i: number, facts: ClusterFacts, report: Report) {
  if (m.selection?.mode === 'None' && !facts.explicitNoneSupported) {
    // EXPLICIT_NONE_SINCE: the API server of 4.16-4.18 rejects the value (enum All;Partial).
    report({
      code: 'selection-mode-none-unsupported',
      path: joinPath(joinPath(joinPath(MANAGERS_PATH, i), 'selection'), 'mode'),
      message: `Unsupported value: "None": supported values: "All", "Partial" (OpenShift ${facts.version} is before 4.19, which added the selection mode None)`,
      expected: '"All" or "Partial" on OpenShift 4.16 to 4.18',
      hint: 'before 4.19 a resource is opted out by leaving its entry out (an omitted entry updates no boot images), or all of them with the legacy `machineManagers: []`; mode None can be used once the cluster runs 4.19',
    });
  }
  if (m.resource !== 'controlplanemachinesets') return;
  const at = joinPath(joinPath(MANAGERS_PATH, i), 'resource');
  if (facts.cpmsGate === false) {
    // FeatureGateAwareEnum: without ManagedBootImagesCPMS the enum is machinesets only.
    report({
      code: 'cpms-feature-gate-disabled',
      path: at,
      message: 'Unsupported value: "controlplanemachinesets": supported values: "machinesets"',
      expected: '"machinesets" (controlplanemachinesets needs FeatureGate ManagedBootImagesCPMS)',
      hint: `the FeatureGate ${GATE_CPMS} is not enabled on this cluster${facts.version ? ` (OpenShift ${facts.version})` : ''}; it is on by default from 4.22 and in TechPreviewNoUpgrade before; remove this entry`,
    });
  } else if (facts.cpmsGate === null) {
    report({
      severity: 'warning',
      code: 'feature-gates-unknown',
      path: at,
      message: `the snapshot has no FeatureGate/cluster: whether ${GATE_CPMS} is enabled is not checked`,
      hint: 'take the snapshot with `bootcplan snapshot`',
    });
  }
  if (facts.bootImagesSupported && facts.platform && !CPMS_BOOT_IMAGE_PLATFORMS.some((p) => p === facts.platform)) {
    report({
      code: 'cpms-boot-images-unsupported-platform',
      path: at,
      message: `ControlPlaneMachineSet boot images are only supported on these platforms: ${CPMS_BOOT_IMAGE_PLATFORMS.join(', ')} (this cluster: ${facts.platform})`,
      expected: `a cluster on ${CPMS_BOOT_IMAGE_PLATFORMS.join(', ')}`,
      hint: 'remove this entry: the MCO ignores it on this platform',
    });
  }
}

/** Where a spec manager's selection mode is, for a finding about that manager. */
export function managersPathOf(list: readonly MachineManager[] | undefined, resource: string): string | null {
  const i = list?.findIndex((m) => m.resource === resource && m.apiGroup === MAPI_GROUP) ?? -1;
  return i >= 0 ? joinPath(joinPath(joinPath(MANAGERS_PATH, i), 'selection'), 'mode') : null;
}

const keyOf = (m: MachineManager) => `${m.resource}\u0000${m.apiGroup}`;

/** machineManagers is a list-map keyed by resource and apiGroup: the order of entries carries no meaning. */
export function sameManagers(a: readonly MachineManager[], b: readonly MachineManager[]): boolean {
  if (a.length !== b.length) return false;
  const byKey = new Map(b.map((m) => [keyOf(m), m]));
  return a.every((m) => deepEqual(m, byKey.get(keyOf(m))));
}
