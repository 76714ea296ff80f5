/**
 * Cluster facts the boot-image rules depend on, read from the snapshot, and the MCO's
 * effective machine managers (openshift/machine-config-operator pkg/operator/sync.go
 * syncManagedBootImagesStatus). Pure.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { MachineManager, LabelSelector } from '../base/api-types.ts';
import { RPM_ARCH } from './stream.ts';
import { BOOT_IMAGE_PLATFORMS, CPMS_BOOT_IMAGE_PLATFORMS } from './bootimages-platform.ts';
import { ROLE_LABEL_PREFIX } from './labels.ts';
import { isPlainObject } from '../base/schema.ts';
import type { FeatureGateObject, InfrastructureObject, MachineConfigurationObject } from '../cluster/kinds.ts';

export const MAPI_GROUP = 'machine.openshift.io';
export const GATE_CPMS = 'ManagedBootImagesCPMS';
export const GATE_SKEW = 'BootImageSkewEnforcement';

export interface ClusterFacts {
  platform: string | null;
  version: string | null;
  /** [major, minor, patch] of ClusterVersion status.desired.version. */
  semver: [number, number, number] | null;
  /** Enabled feature gates; null when the snapshot has no FeatureGate. */
  gates: Set<string> | null;
  /** FeatureGate ManagedBootImagesCPMS: true / false / null (unknown). */
  cpmsGate: boolean | null;
  skewGate: boolean | null;
  /** MachineConfiguration status.bootImageSkewEnforcementStatus.mode */
  skewStatusMode: string | null;
  /** The platform has managed boot images (null: platform unknown). */
  bootImagesSupported: boolean | null;
  /** The MCO manages the ControlPlaneMachineSet's boot image here: gate on and platform AWS/GCP/Azure. */
  cpmsSupported: boolean;
  /** RPM arch of the control plane (the MCO's default for single-arch clusters). */
  controlPlaneArch: string;
  /** ClusterVersion status.desired.architecture == Multi */
  multiArch: boolean;
  infraName: string | null;
  /** Infrastructure status.platformStatus.azure.cloudName is AzureStackCloud: no boot image updates at all. */
  azureStackHub: boolean;
  /** The selection mode None exists (OpenShift 4.19 and later; unknown versions count as newest). */
  explicitNoneSupported: boolean;
  /** Whether MachineConfiguration status has observed the current spec. */
  statusObserved: StatusObservation;
}

/**
 * Azure Stack Hub: the MCO turns its boot image controller off there
 * (machine-config-operator pkg/controller/common/featuregates.go `CheckBootImagePlatform`,
 * 4.21 and later: `infra.Status.PlatformStatus.Azure.CloudName == configv1.AzureStackCloud`,
 * "AzureStackCloud boot images are defined at install time"; before 4.21 Azure had no boot
 * image updates at all).
 */
export const AZURE_STACK_CLOUD = 'AzureStackCloud';

function isAzureStackHub(infra: InfrastructureObject | null): boolean {
  return infra?.status?.platformStatus?.azure?.cloudName === AZURE_STACK_CLOUD;
}

/**
 * openshift/api operator/v1 types_machineconfiguration.go: the selection mode enum is
 * "All";"Partial" on release-4.16 to release-4.18 and "All";"Partial";"None" from release-4.19.
 */
const EXPLICIT_NONE_SINCE = { major: 4, minor: 19 } as const;

interface StatusObservation {
  /** The status describes the current spec (or the snapshot cannot tell: no metadata.generation). */
  current: boolean;
  generation: number | null;
  observedGeneration: number | null;
}

/**
 * MachineConfiguration status reflects the current spec only once the operator has observed
 * it: machine-config-operator pkg/operator/sync.go `syncMachineConfiguration` writes
 * `status.observedGeneration = mcop.GetGeneration()` with managedBootImagesStatus and the skew
 * enforcement status. The API server sets metadata.generation on every spec change, so
 * observedGeneration != generation means the status is behind. A snapshot written by hand may
 * have no generation at all: then the status is taken as it is.
 */
function statusObservation(mc: MachineConfigurationObject | null): StatusObservation {
  const g = mc?.metadata.generation;
  const o = mc?.status?.observedGeneration;
  const generation = typeof g === 'number' ? g : null;
  const observedGeneration = typeof o === 'number' ? o : null;
  return { current: generation === null || observedGeneration === generation, generation, observedGeneration };
}

export function parseVersion(v: string | null | undefined): [number, number, number] | null {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(v ?? '');
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
}

/** major.minor of the cluster >= major.minor given; unknown versions count as the newest. */
export function atLeast(facts: Pick<ClusterFacts, 'semver'>, major: number, minor: number): boolean {
  const s = facts.semver;
  if (!s) return true;
  return s[0] > major || (s[0] === major && s[1] >= minor);
}

/**
 * FeatureGate status.featureGates[] is a list-map keyed by version (config/v1 types_feature.go):
 * use the entry of the version the cluster is going to (ClusterVersion status.desired.version),
 * else the first one.
 */
export function enabledGates(fg: FeatureGateObject | null, version: string | null): Set<string> | null {
  const list = fg?.status?.featureGates;
  if (!Array.isArray(list) || !list.length) return null;
  const entries = list.filter(isPlainObject);
  const entry = entries.find((e) => e.version === version) ?? (isPlainObject(list[0]) ? list[0] : undefined);
  const enabled = Array.isArray(entry?.enabled) ? entry.enabled : [];
  return new Set(enabled.map((e) => (isPlainObject(e) ? e.name : undefined)).filter((n): n is string => typeof n === 'string'));
}

export function clusterFacts(snap: ClusterSnapshot): ClusterFacts {
  const platform: string | null = snap.infrastructure?.status?.platformStatus?.type ?? snap.infrastructure?.status?.platform ?? null;
  const version: string | null = snap.clusterVersion?.status?.desired?.version ?? null;
  const gates = enabledGates(snap.featureGate, version);
  const cpmsGate = gates ? gates.has(GATE_CPMS) : null;
  const azureStackHub = isAzureStackHub(snap.infrastructure);
  const bootImagesSupported = azureStackHub ? false : platform ? BOOT_IMAGE_PLATFORMS.some((p) => p === platform) : null;
  const master = snap.nodes.find((n) => {
    const l = n.metadata.labels ?? {};
    return `${ROLE_LABEL_PREFIX}master` in l || `${ROLE_LABEL_PREFIX}control-plane` in l;
  });
  const kubeArch = master?.metadata.labels?.['kubernetes.io/arch'] ?? 'amd64';
  const semver = parseVersion(version);
  return {
    platform,
    version,
    semver,
    gates,
    cpmsGate,
    skewGate: gates ? gates.has(GATE_SKEW) : null,
    skewStatusMode: snap.machineConfiguration?.status?.bootImageSkewEnforcementStatus?.mode ?? null,
    bootImagesSupported,
    cpmsSupported: !azureStackHub && cpmsGate === true && !!platform && CPMS_BOOT_IMAGE_PLATFORMS.some((p) => p === platform),
    controlPlaneArch: RPM_ARCH[kubeArch] ?? kubeArch,
    multiArch: snap.clusterVersion?.status?.desired?.architecture === 'Multi',
    infraName: snap.infrastructure?.status?.infrastructureName ?? null,
    azureStackHub,
    explicitNoneSupported: atLeast({ semver }, EXPLICIT_NONE_SINCE.major, EXPLICIT_NONE_SINCE.minor),
    statusObserved: statusObservation(snap.machineConfiguration),
  };
}

/**
 * The platform turns MachineSet boot image updates on by default (sync.go; release notes:
 * GCP and AWS default-on from 4.19, Azure and vSphere from 4.22).
 */
function defaultOnForMachineSets(facts: ClusterFacts): boolean {
  switch (facts.platform) {
    case 'AWS':
    case 'GCP':
      return atLeast(facts, 4, 19);
    case 'Azure':
    case 'VSphere':
      return atLeast(facts, 4, 22);
    default:
      return false;
  }
}

/**
 * What the MCO does per resource: `mode` is All, Partial or None (openshift/api
 * MachineManagerSelector), as the spec (validated) or the cluster's MachineConfiguration
 * (read as it is) writes it.
 */
export interface EffectiveManagers {
  /** The list was present and empty: the legacy "update nothing". */
  legacyEmpty: boolean;
  machineSets: { mode: string; selector: LabelSelector | null; source: 'spec' | 'platform default' | 'legacy []' };
  /** null: the MCO does not manage the CPMS on this cluster (gate off or platform). */
  controlPlaneMachineSet: { mode: string; source: 'spec' | 'default' | 'legacy []' } | null;
}

function findManager(list: readonly MachineManager[] | undefined, resource: string): MachineManager | undefined {
  return list?.find((m) => m.resource === resource && m.apiGroup === MAPI_GROUP);
}

/**
 * What the MCO writes into status.managedBootImagesStatus for a spec list (sync.go):
 * a non-nil empty list is copied as is (legacy opt-out); otherwise the admin's machinesets
 * entry, else All on default-on platforms and None elsewhere; the CPMS entry (gate on and
 * platform supports it) is the admin's, else None (never default-on).
 */
export function effectiveManagers(list: readonly MachineManager[] | undefined, facts: ClusterFacts): EffectiveManagers {
  if (Array.isArray(list) && list.length === 0) {
    return {
      legacyEmpty: true,
      machineSets: { mode: 'None', selector: null, source: 'legacy []' },
      controlPlaneMachineSet: facts.cpmsSupported ? { mode: 'None', source: 'legacy []' } : null,
    };
  }
  const ms = findManager(list, 'machinesets');
  const cp = findManager(list, 'controlplanemachinesets');
  return {
    legacyEmpty: false,
    machineSets: ms
      ? { mode: ms.selection.mode, selector: ms.selection.partial?.machineResourceSelector ?? null, source: 'spec' }
      : { mode: defaultOnForMachineSets(facts) ? 'All' : 'None', selector: null, source: 'platform default' },
    controlPlaneMachineSet: facts.cpmsSupported ? (cp ? { mode: cp.selection.mode, source: 'spec' } : { mode: 'None', source: 'default' }) : null,
  };
}

/** The explicit form of the legacy opt-out: the same behaviour, stated so it survives round trips. */
export function explicitOptOut(facts: ClusterFacts): MachineManager[] {
  const out: MachineManager[] = [{ resource: 'machinesets', apiGroup: MAPI_GROUP, selection: { mode: 'None' } }];
  if (facts.cpmsSupported) out.push({ resource: 'controlplanemachinesets', apiGroup: MAPI_GROUP, selection: { mode: 'None' } });
  return out;
}

export function describeManagers(list: readonly MachineManager[]): string {
  if (!list.length) return '(empty list)';
  return list.map((m) => `${m.resource} ${m.selection?.mode}`).join(', ');
}
