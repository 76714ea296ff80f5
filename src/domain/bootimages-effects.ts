/**
 * Boot-image effects: what the MCO boot image controller will write to each MachineSet and to
 * the ControlPlaneMachineSet once the planned settings apply, and whether the CPMS operator
 * then replaces control-plane machines. Rules: openshift/machine-config-operator
 * pkg/controller/bootimage/ (ms_helpers.go, cpms_helpers.go, platform_helpers.go) and
 * openshift/api machine/v1 types_controlplanemachineset.go. Pure.
 */
import type { KObject } from '../cluster/types.ts';
import { selectorMatches } from './nodes.ts';
import { type CoreosStream, RPM_ARCH } from './stream.ts';
import { predictProviderSpec, currentImageOf, type Prediction } from './bootimages-platform.ts';
import { type ClusterFacts, type EffectiveManagers, atLeast, parseVersion } from './bootimages-cluster.ts';
import type { ClusterVersionObject, ControlPlaneMachineSetObject, MachineSetObject } from '../cluster/kinds.ts';

/** MCO constants (pkg/controller/bootimage, pkg/controller/common). */
const OS_ID_LABEL = 'machine.openshift.io/os-id';
const OS_STREAM_LABEL = 'machineconfiguration.openshift.io/osstream';
const SUPPORTED_OS_STREAM = 'rhel-9';
export const ARCH_ANNOTATION = 'capacity.cluster-autoscaler.kubernetes.io/labels';

/**
 * Reasons the MCO leaves a MachineSet (or the CPMS) alone whatever the selection
 * (ms_helpers.go, in the controller's order).
 */
function intrinsicSkip(obj: MachineSetObject | ControlPlaneMachineSetObject, templateLabels: Record<string, string> | null | undefined): string | null {
  const auth = obj.status?.authoritativeAPI;
  if (auth === 'ClusterAPI' || auth === 'Migrating') return `status.authoritativeAPI is ${auth} (managed through Cluster API)`;
  const owners = obj.metadata.ownerReferences ?? [];
  if (owners.length) return `has owner references (${owners.map((o) => `${o.kind}/${o.name}`).join(', ')}): its owner manages the boot image`;
  const stream = obj.metadata.labels?.[OS_STREAM_LABEL];
  if (stream !== undefined && stream !== SUPPORTED_OS_STREAM) return `label ${OS_STREAM_LABEL}=${stream}: another OS stream than ${SUPPORTED_OS_STREAM}`;
  if (templateLabels?.[OS_ID_LABEL] === 'Windows') return `Windows MachineSet (${OS_ID_LABEL}: Windows)`;
  return null;
}

/**
 * Why the MCO's boot image controller "reconcile-skips" an opted-in MAPI MachineSet, or null when
 * it does not (machine-config-operator pkg/controller/bootimage/ms_helpers.go
 * syncMAPIMachineSet, from f617a2c54 "bootimage: add reset cluster bootimage capability"): an
 * owner reference, and a multi-architecture cluster's MachineSet without the architecture
 * annotation (getArchFromMachineSet: "no architecture annotation found"), return
 * reconcileSkipped=true. Another OS stream and Windows are "not counted as skipped" (the MCO
 * excludes them on purpose), nor is a MachineSet out of the MAPI path (Cluster API authority).
 * Platform skips (an unknown current image: platform_helpers.go) count too; they depend on
 * the stream and the providerSpec and are not predicted here.
 */
export function reconcileSkipReason(ms: MachineSetObject, facts: Pick<ClusterFacts, 'multiArch'>): string | null {
  const auth = ms.status?.authoritativeAPI;
  if (auth === 'ClusterAPI' || auth === 'Migrating') return null;
  const owners = ms.metadata.ownerReferences ?? [];
  if (owners.length) return `owner reference ${owners.map((o) => `${o.kind}/${o.name}`).join(', ')}`;
  const stream = ms.metadata.labels?.[OS_STREAM_LABEL];
  if (stream !== undefined && stream !== SUPPORTED_OS_STREAM) return null;
  if (ms.spec?.template?.metadata?.labels?.[OS_ID_LABEL] === 'Windows') return null;
  if (facts.multiArch && ms.metadata.annotations?.[ARCH_ANNOTATION] === undefined) return `no ${ARCH_ANNOTATION} annotation on a multi-architecture cluster`;
  return null;
}

/**
 * The version the MCO writes as the cluster's boot image when it resets the record
 * (pkg/apihelpers GetOCPInstallVersion): the oldest Completed entry of ClusterVersion
 * status.history (else the oldest entry), as major.minor.patch; "0.0.0" for an empty history.
 * Null when the snapshot has no ClusterVersion (unknown).
 */
export function installVersionOf(cv: ClusterVersionObject | null): string | null {
  if (!cv) return null;
  const h = Array.isArray(cv.status?.history) ? cv.status.history : [];
  if (!h.length) return '0.0.0';
  const completed = [...h].reverse().find((e) => e.state === 'Completed');
  const v = parseVersion((completed ?? h[h.length - 1]).version);
  return v ? v.join('.') : '0.0.0';
}

/**
 * The MCO's OCPVersionBootImageSkewLimit (pkg/controller/common/constants.go): a recorded boot
 * image older than this makes the operator report Upgradeable=False (pkg/operator/status.go
 * checkBootImageSkewUpgradeableGuard, reason ClusterBootImageSkewError).
 */
export const OCP_BOOT_IMAGE_SKEW_LIMIT: [number, number, number] = [4, 13, 0];

export function belowSkewLimit(version: string): boolean {
  const v = parseVersion(version) ?? [0, 0, 0];
  for (let i = 0; i < 3; i++) if (v[i] !== OCP_BOOT_IMAGE_SKEW_LIMIT[i]) return v[i] < OCP_BOOT_IMAGE_SKEW_LIMIT[i];
  return false;
}

/** RPM arch of a MachineSet: the autoscaler label annotation, else the control plane's (single-arch clusters). */
function machineSetArch(ms: KObject, facts: ClusterFacts): { arch: string } | { skipped: string } {
  const ann = ms.metadata.annotations?.[ARCH_ANNOTATION];
  const m = ann ? /(?:^|,)\s*kubernetes\.io\/arch=([a-z0-9_]+)/.exec(ann) : null;
  if (m) return { arch: RPM_ARCH[m[1]] ?? m[1] };
  if (facts.multiArch) return { skipped: `no kubernetes.io/arch in annotation ${ARCH_ANNOTATION} on a multi-architecture cluster` };
  return { arch: facts.controlPlaneArch };
}

/** What the MCO does to one MachineSet's boot image: `to` null with the reason it is skipped. */
export interface BootImageMachineSet {
  name: string;
  from: string | null;
  to: string | null;
  skipped: string | null;
}

export interface EffectsContext {
  facts: ClusterFacts;
  managers: EffectiveManagers;
  /** The stream, or why it cannot be read. */
  stream: { ok: true; stream: CoreosStream } | { ok: false; reason: string };
}

function selectionText(m: EffectiveManagers): string {
  const src = m.machineSets.source === 'spec' ? '' : ` (${m.machineSets.source})`;
  return `machinesets selection mode ${m.machineSets.mode}${src}`;
}

/** The machinesets manager selects `ms` (mode All, or Partial with a matching machineResourceSelector). */
export function optedIn(ms: MachineSetObject, m: EffectiveManagers): boolean {
  const sel = m.machineSets;
  return sel.mode === 'All' || (sel.mode === 'Partial' && selectorMatches(sel.selector ?? {}, ms.metadata.labels ?? {}));
}

export function machineSetEffect(ms: MachineSetObject, ctx: EffectsContext): BootImageMachineSet {
  const ps = ms.spec?.template?.spec?.providerSpec?.value;
  const from = currentImageOf(ctx.facts.platform, ps);
  const out = (p: Prediction): BootImageMachineSet => ({ name: ms.metadata.name, from: p.from, to: p.to, skipped: p.skipped });
  const intrinsic = intrinsicSkip(ms, ms.spec?.template?.metadata?.labels);
  if (intrinsic) return out({ from, to: null, skipped: intrinsic });
  const sel = ctx.managers.machineSets;
  const selected = optedIn(ms, ctx.managers);
  const predicted = predictFor(ps, ms, ctx);
  if (!selected) {
    const why = sel.mode === 'Partial' ? 'not matched by the Partial machineResourceSelector' : `not opted in: ${selectionText(ctx.managers)}`;
    const would = !predicted.skipped && predicted.to !== from ? ` (opting in would write ${predicted.to})` : '';
    return out({ from, to: null, skipped: why + would });
  }
  return out(predicted);
}

function predictFor(ps: unknown, obj: MachineSetObject | ControlPlaneMachineSetObject, ctx: EffectsContext, arch?: string): Prediction {
  const from = currentImageOf(ctx.facts.platform, ps);
  if (!ctx.stream.ok) return { from, to: null, skipped: ctx.stream.reason };
  let a = arch;
  if (!a) {
    const r = machineSetArch(obj, ctx.facts);
    if ('skipped' in r) return { from, to: null, skipped: r.skipped };
    a = r.arch;
  }
  return predictProviderSpec(ps, { platform: ctx.facts.platform, stream: ctx.stream.stream, arch: a, infraName: ctx.facts.infraName });
}

export type CpmsStrategy = 'RollingUpdate' | 'OnDelete';

interface CpmsEffect {
  from: string | null;
  to: string | null;
  replacement: boolean;
  why: string;
  /** What causes the replacement, when there is one. */
  cause: 'boot-image' | 'strategy' | null;
  /** The boot image in the template changes. */
  bootImageChange: boolean;
}

/** spec.template.machines_v1beta1_machine_openshift_io.spec.providerSpec.value */
function cpmsProviderSpec(cpms: ControlPlaneMachineSetObject): unknown {
  return cpms.spec?.template?.machines_v1beta1_machine_openshift_io?.spec?.providerSpec?.value;
}

/**
 * The CPMS after the plan. RollingUpdate replaces control-plane machines one at a time
 * whenever the template differs from them (types_controlplanemachineset.go strategy), except
 * boot-image fields, which the CPMS operator ignores from OpenShift 4.21 on (docs/design.md §7; not
 * found in the stored cluster-control-plane-machine-set-operator code, whose providerconfig
 * Equal compares the whole provider config). OnDelete replaces a machine only once someone
 * deletes it; state Inactive takes no action on machines at all.
 */
export function cpmsEffect(cpms: ControlPlaneMachineSetObject, ctx: EffectsContext, strategyBefore: CpmsStrategy, strategyAfter: CpmsStrategy): CpmsEffect {
  const ps = cpmsProviderSpec(cpms);
  const from = currentImageOf(ctx.facts.platform, ps);
  const cp = ctx.managers.controlPlaneMachineSet;
  let to: string | null = null;
  let bootWhy: string;
  const intrinsic = intrinsicSkip(cpms, cpms.spec?.template?.machines_v1beta1_machine_openshift_io?.metadata?.labels);
  if (!cp) {
    bootWhy =
      ctx.facts.cpmsGate === false || ctx.facts.cpmsGate === null
        ? `its boot image is not managed (FeatureGate ManagedBootImagesCPMS is ${ctx.facts.cpmsGate === null ? 'unknown' : 'not enabled'})`
        : `its boot image is not managed on platform ${ctx.facts.platform ?? 'unknown'} (only AWS, GCP, Azure)`;
  } else if (intrinsic) {
    bootWhy = `boot image left alone: ${intrinsic}`;
  } else if (cp.mode !== 'All') {
    bootWhy = `not opted in to boot image updates (controlplanemachinesets mode ${cp.mode}${cp.source === 'spec' ? '' : `, ${cp.source}`})`;
  } else {
    // cpms_helpers.go: the control plane's architecture
    const p = predictFor(ps, cpms, ctx, ctx.facts.controlPlaneArch);
    if (p.skipped) bootWhy = `boot image left alone: ${p.skipped}`;
    else {
      to = p.to;
      bootWhy = to === from ? 'boot image already current' : `the MCO writes boot image ${to} into the template`;
    }
  }
  const bootImageChange = !!to && to !== from;
  const base = { from, to, bootImageChange };
  const state = cpms.spec?.state ?? 'Inactive';
  if (state !== 'Active') {
    return { ...base, replacement: false, cause: null, why: `${bootWhy}; spec.state is ${state}: the CPMS operator takes no action on machines` };
  }
  const replicas = Number(cpms.status?.replicas ?? cpms.spec?.replicas ?? 0);
  const updated = Number(cpms.status?.updatedReplicas ?? replicas);
  const outdated = Math.max(0, replicas - updated);
  if (strategyAfter === 'OnDelete') {
    const tail = bootImageChange
      ? 'new control-plane machines boot from it once a machine is deleted'
      : 'nothing is replaced until a control-plane machine is deleted';
    return { ...base, replacement: false, cause: null, why: `${bootWhy}; strategy OnDelete: ${tail}` };
  }
  if (strategyBefore !== 'RollingUpdate' && outdated > 0) {
    return {
      ...base,
      replacement: true,
      cause: 'strategy',
      why: `${bootWhy}; switching to RollingUpdate while ${outdated} of ${replicas} control-plane machines differ from the template (status.updatedReplicas ${updated}) replaces them, one at a time`,
    };
  }
  if (bootImageChange) {
    if (atLeast(ctx.facts, 4, 21)) {
      return {
        ...base,
        replacement: false,
        cause: null,
        why: `${bootWhy}; boot-image fields only, which the CPMS operator ignores from OpenShift 4.21 on: no machine is replaced, new ones boot from it`,
      };
    }
    return {
      ...base,
      replacement: true,
      cause: 'boot-image',
      why: `${bootWhy}; on OpenShift ${ctx.facts.version} (before 4.21) strategy RollingUpdate replaces every control-plane machine, one at a time`,
    };
  }
  return { ...base, replacement: false, cause: null, why: `${bootWhy}; strategy RollingUpdate: no template change, no machine replaced` };
}
