/**
 * Boot images: the MachineConfiguration `cluster` settings spec.managedBootImages and
 * spec.bootImageSkewEnforcement, the ControlPlaneMachineSet strategy, and what the Machine
 * Config Operator then does to MachineSets and the ControlPlaneMachineSet (DESIGN §7).
 *
 * Upstream: openshift/api operator/v1 types_machineconfiguration.go (fields, CEL rules),
 * machine/v1 types_controlplanemachineset.go; openshift/machine-config-operator
 * pkg/operator/sync.go (defaults, legacy opt-out) and pkg/controller/bootimage/ (effects).
 * Static field rules are in src/spec/bootimages-schema.ts; the rules here need the cluster.
 * Pure: no I/O.
 */
import type { RolloutSpec, MachineManager, BootImageSkewEnforcement } from '../spec/types.ts';
import { type Diagnostic, type DiagnosticInput, type SourceMap, diagnosticAt, joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import type { BootImagesPlan, ChangeReason, Risk } from '../plan/types.ts';
import { type DraftChange, updateChange } from '../plan/planner.ts';
import { buildPatch, pickPaths } from '../plan/patch.ts';
import { deepEqual } from '../base/equal.ts';
import { isPlainObject } from '../base/schema.ts';
import { readStream } from './stream.ts';
import { BOOT_IMAGE_PLATFORMS, CPMS_BOOT_IMAGE_PLATFORMS } from './bootimages-platform.ts';
import {
  type ClusterFacts, clusterFacts, effectiveManagers, explicitOptOut, describeManagers, MAPI_GROUP, GATE_CPMS, GATE_SKEW,
} from './bootimages-cluster.ts';
import { type EffectsContext, type CpmsStrategy, machineSetEffect, cpmsEffect } from './bootimages-effects.ts';

export interface BootImagesInput { spec: RolloutSpec; specMap: SourceMap | null; snapshot: ClusterSnapshot }
export interface BootImagesResult { changes: DraftChange[]; bootImages: BootImagesPlan; diagnostics: Diagnostic[] }

const MBI = 'spec.managedBootImages';
const MANAGERS = `${MBI}.machineManagers`;
const SKEW = 'spec.bootImageSkewEnforcement';
const CPMS = 'spec.controlPlaneMachineSet';

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

export function planBootImages(input: BootImagesInput): BootImagesResult {
  const { spec, specMap, snapshot } = input;
  const diagnostics: Diagnostic[] = [];
  const report = (d: DiagnosticInput) => diagnostics.push(diagnosticAt(specMap, d));
  const facts = clusterFacts(snapshot);
  const s = spec.spec;
  const mc = snapshot.machineConfiguration;
  const specList = s.managedBootImages?.machineManagers;
  const skew = s.bootImageSkewEnforcement;
  const cpSpec = s.controlPlaneMachineSet;

  checkClusterRules(spec, facts, report);

  // ---- desired machine managers -------------------------------------------------------
  const observedList: MachineManager[] | undefined = Array.isArray(mc?.spec?.managedBootImages?.machineManagers)
    ? mc!.spec.managedBootImages.machineManagers : undefined;
  const observedLegacy = Array.isArray(observedList) && observedList.length === 0;
  let desiredList: MachineManager[] | undefined;
  let managersReason: ChangeReason = 'managed-boot-images';
  if (specList !== undefined) {
    // `[]` in the spec: the schema warned (legacy-empty-machinemanagers); write the explicit form.
    desiredList = specList.length === 0 ? explicitOptOut(facts) : specList;
    if (observedLegacy) managersReason = 'migrate-legacy-empty-machinemanagers';
  } else if (observedLegacy && facts.bootImagesSupported !== false) {
    // No opinion in the spec, legacy opt-out in the cluster: make it explicit (DESIGN §7).
    desiredList = explicitOptOut(facts);
    managersReason = 'migrate-legacy-empty-machinemanagers';
    if (facts.bootImagesSupported === null) {
      report({
        severity: 'warning', code: 'cluster-platform-unknown', path: null,
        message: 'the snapshot has no Infrastructure/cluster: the legacy `machineManagers: []` is migrated to machinesets None only, without a controlplanemachinesets entry',
        hint: 'take the snapshot with `bootcplan snapshot` so that it includes config.openshift.io Infrastructure and FeatureGate',
      });
    }
  }
  // A list-map: the order of entries carries no meaning, so an equal set is no change.
  if (desiredList && observedList && sameManagers(desiredList, observedList)) desiredList = observedList;

  if ((desiredList || skew) && !mc) {
    report({
      code: 'machineconfiguration-not-found', path: desiredList ? MBI : SKEW,
      message: 'the cluster has no MachineConfiguration named "cluster" (operator.openshift.io/v1)',
      expected: 'an OpenShift cluster whose Machine Config Operator created MachineConfiguration/cluster',
      hint: 'boot image settings exist only on OpenShift 4.16 and later; remove managedBootImages and bootImageSkewEnforcement for other clusters',
    });
  }

  // ---- MachineConfiguration changes ---------------------------------------------------
  let skewChange: DraftChange | null = null;
  let managersChange: DraftChange | null = null;
  if (mc && skew) {
    skewChange = fieldChange(mc, ['spec', 'bootImageSkewEnforcement'], skew, 'boot-image-skew-enforcement', `boot image skew enforcement: ${describeSkew(skew)}`);
  }
  if (mc && desiredList) {
    const description = managersReason === 'migrate-legacy-empty-machinemanagers'
      ? `legacy opt-out \`machineManagers: []\` made explicit (${describeManagers(desiredList)}): the same "update nothing", but it survives structured clients`
      : `managed boot images: ${describeManagers(desiredList)}`;
    managersChange = fieldChange(mc, ['spec', 'managedBootImages', 'machineManagers'], desiredList, managersReason, description);
  }

  // ---- skew enforcement ordering (the Automatic-status object rules) -------------------
  if (mc && facts.skewStatusMode === 'Automatic') {
    const writes = [skewChange, managersChange].some((c) => c?.action === 'update');
    // Rule 4 looks at status only: while it is broken, every write to the object is rejected.
    const statusList = mc.status?.managedBootImagesStatus?.machineManagers;
    if (writes && Array.isArray(statusList) && !statusList.some((m: any) => m?.resource === 'machinesets' && m?.apiGroup === MAPI_GROUP && m?.selection?.mode === 'All')) {
      report({
        code: 'skew-enforcement-status-invalid', path: desiredList ? MANAGERS : SKEW,
        message: `MachineConfiguration/cluster: Invalid value: "object": ${AUTOMATIC_RULES.statusAll}`,
        hint: 'the cluster object itself breaks this rule, so the API server rejects every update of it; check the machine-config ClusterOperator',
      });
    }
    const violation = managersChange?.action === 'update' ? automaticRuleViolation(desiredList) : null;
    if (violation) {
      const choices = 'set spec.bootImageSkewEnforcement first: `mode: Manual` with `manual: {mode: OCPVersion, ocpVersion: <the version your boot images come from>}` (or RHCOSVersion), or `mode: None` to turn enforcement off; bootcplan then writes it, waits until the status leaves Automatic, and writes the managers';
      const at = specList === undefined ? SKEW
        : violation.index === null ? MANAGERS : joinPath(joinPath(joinPath(MANAGERS, violation.index), 'selection'), 'mode');
      if (skewChange?.action === 'update') {
        skewChange.waitAfter = {
          kind: 'skew-enforcement-not-automatic',
          description: 'MachineConfiguration/cluster status.bootImageSkewEnforcementStatus.mode is no longer Automatic (the API server rejects opting MachineSets out while it is)',
        };
      } else if (skewChange) {
        report({
          code: 'skew-enforcement-status-pending', path: SKEW,
          message: `spec.bootImageSkewEnforcement is already ${skew!.mode} in the cluster, but status.bootImageSkewEnforcementStatus.mode is still Automatic; while it is, the API server rejects the new managers: ${violation.message}`,
          hint: 'the Machine Config Operator has not synced the status yet; plan again once it shows the new mode',
        });
      } else {
        report({
          code: 'skew-enforcement-choice-required', path: at,
          message: `boot image skew enforcement is Automatic in the cluster, and the API server rejects these managers: "${violation.message}"`,
          expected: 'a spec.bootImageSkewEnforcement choice (Manual with a version, or None)',
          hint: choices,
        });
      }
    }
  }

  // ---- effects on MachineSets and the ControlPlaneMachineSet ------------------------------
  const statusList: MachineManager[] | undefined = Array.isArray(mc?.status?.managedBootImagesStatus?.machineManagers)
    ? mc!.status.managedBootImagesStatus.machineManagers : undefined;
  const afterList = managersChange?.action === 'update' ? desiredList : statusList ?? observedList;
  const managers = effectiveManagers(afterList, facts);
  const stream = readStream(snapshot.bootImagesConfigMap);
  const ctx: EffectsContext = { facts, managers, stream: stream.ok ? { ok: true, stream: stream.stream } : stream };
  const bootImages: BootImagesPlan = { machineSets: [], controlPlaneMachineSet: null };
  if (facts.bootImagesSupported) {
    bootImages.machineSets = snapshot.machineSets.map((ms) => machineSetEffect(ms, ctx));
    const selected = bootImages.machineSets.some((m) => !m.skipped) || managers.machineSets.mode !== 'None';
    if (!stream.ok && selected) {
      report({ severity: 'warning', code: 'boot-images-stream-unavailable', path: null, message: `boot image effects cannot be predicted: ${stream.reason}`, hint: 'include the coreos-bootimages ConfigMap in the snapshot' });
    }
  }

  // ---- ControlPlaneMachineSet ---------------------------------------------------------
  const cpms = snapshot.controlPlaneMachineSet;
  let cpmsChange: DraftChange | null = null;
  if (cpSpec?.strategy && !cpms) {
    report({ severity: 'warning', code: 'cpms-not-found', path: joinPath(CPMS, 'strategy'), message: 'the cluster has no ControlPlaneMachineSet openshift-machine-api/cluster; the strategy is not written', hint: 'remove controlPlaneMachineSet from the spec for clusters without one' });
  }
  if (cpms) {
    const observedStrategy: string | undefined = cpms.spec?.strategy?.type;
    const before: CpmsStrategy = observedStrategy === 'OnDelete' ? 'OnDelete' : 'RollingUpdate';
    const after: CpmsStrategy = cpSpec?.strategy ?? before;
    // spec.strategy.type defaults to RollingUpdate: an absent field already means it.
    if (cpSpec?.strategy && !(observedStrategy === undefined && cpSpec.strategy === 'RollingUpdate')) {
      cpmsChange = updateChange(cpms, { spec: { strategy: { type: cpSpec.strategy } } }, null, 'none', () => 'cpms-strategy',
        `ControlPlaneMachineSet strategy ${cpSpec.strategy}${cpSpec.strategy === 'OnDelete' ? ': control-plane machines are replaced only when deleted' : ': control-plane machines are replaced one at a time when they differ from the template'}`);
    }
    const eff = cpmsEffect(cpms, ctx, before, after);
    bootImages.controlPlaneMachineSet = { from: eff.from, to: eff.to, replacement: eff.replacement, why: eff.why };
    if (eff.replacement) {
      const causeChange = eff.cause === 'strategy' ? cpmsChange : managersChange;
      if (causeChange && causeChange.action === 'update') causeChange.risk = 'replacement' satisfies Risk;
      if (cpSpec?.allowReplacement !== true) {
        const cpPath = managersPathOf(specList, 'controlplanemachinesets');
        report({
          code: 'cpms-replacement-not-allowed',
          path: cpSpec?.allowReplacement !== undefined ? joinPath(CPMS, 'allowReplacement')
            : eff.cause === 'strategy' && cpSpec?.strategy ? joinPath(CPMS, 'strategy')
            : cpPath ?? CPMS,
          message: `this plan replaces control-plane machines: ${eff.why}`,
          expected: 'controlPlaneMachineSet.allowReplacement: true to accept a control-plane replacement',
          hint: 'set spec.controlPlaneMachineSet.allowReplacement: true to accept it, or set spec.controlPlaneMachineSet.strategy: OnDelete (machines are then replaced only when you delete them), or keep controlplanemachinesets at mode None',
        });
      }
    }
  }

  // ---- order: a switch to OnDelete goes first, so that no template change meets
  // RollingUpdate; then the MachineConfiguration steps; then any other strategy change.
  const changes: DraftChange[] = [];
  const toOnDelete = cpmsChange?.action === 'update' && cpSpec?.strategy === 'OnDelete';
  if (toOnDelete) changes.push(cpmsChange!);
  if (skewChange) changes.push(skewChange);
  if (managersChange) changes.push(managersChange);
  if (cpmsChange && !toOnDelete) changes.push(cpmsChange);
  return { changes, bootImages, diagnostics };
}

/** Rules that need the cluster: platform, feature gates (DESIGN §7). */
function checkClusterRules(spec: RolloutSpec, facts: ClusterFacts, report: (d: DiagnosticInput) => void) {
  const s = spec.spec;
  const list = s.managedBootImages?.machineManagers;
  if (s.managedBootImages !== undefined) {
    if (facts.bootImagesSupported === false) {
      // MCO ValidatingAdmissionPolicy managed-bootimages-platform-check (wording of the
      // enhancement's policy; the platform list of the current MCO).
      report({
        code: 'managed-boot-images-unsupported-platform', path: MBI,
        message: `This feature is only supported on these platforms: ${BOOT_IMAGE_PLATFORMS.join(', ')} (this cluster: ${facts.platform})`,
        expected: `a cluster on ${BOOT_IMAGE_PLATFORMS.join(', ')}`,
        hint: 'remove managedBootImages: the MCO does not manage boot images on this platform',
      });
    } else if (facts.bootImagesSupported === null) {
      report({ severity: 'warning', code: 'cluster-platform-unknown', path: MBI, message: 'the snapshot has no Infrastructure/cluster: the platform rules for managedBootImages are not checked', hint: 'take the snapshot with `bootcplan snapshot`' });
    }
  }
  (list ?? []).forEach((m, i) => {
    if (m.resource !== 'controlplanemachinesets') return;
    const at = joinPath(joinPath(MANAGERS, i), 'resource');
    if (facts.cpmsGate === false) {
      // FeatureGateAwareEnum: without ManagedBootImagesCPMS the enum is machinesets only.
      report({
        code: 'cpms-feature-gate-disabled', path: at,
        message: 'Unsupported value: "controlplanemachinesets": supported values: "machinesets"',
        expected: '"machinesets" (controlplanemachinesets needs FeatureGate ManagedBootImagesCPMS)',
        hint: `the FeatureGate ${GATE_CPMS} is not enabled on this cluster${facts.version ? ` (OpenShift ${facts.version})` : ''}; it is on by default from 4.22 and in TechPreviewNoUpgrade before; remove this entry`,
      });
    } else if (facts.cpmsGate === null) {
      report({ severity: 'warning', code: 'feature-gates-unknown', path: at, message: `the snapshot has no FeatureGate/cluster: whether ${GATE_CPMS} is enabled is not checked`, hint: 'take the snapshot with `bootcplan snapshot`' });
    }
    if (facts.bootImagesSupported && facts.platform && !(CPMS_BOOT_IMAGE_PLATFORMS as readonly string[]).includes(facts.platform)) {
      report({
        code: 'cpms-boot-images-unsupported-platform', path: at,
        message: `ControlPlaneMachineSet boot images are only supported on these platforms: ${CPMS_BOOT_IMAGE_PLATFORMS.join(', ')} (this cluster: ${facts.platform})`,
        expected: `a cluster on ${CPMS_BOOT_IMAGE_PLATFORMS.join(', ')}`,
        hint: 'remove this entry: the MCO ignores it on this platform',
      });
    }
  });
  if (s.bootImageSkewEnforcement !== undefined && facts.skewGate === false) {
    // The field is gated (+openshift:enable:FeatureGate=BootImageSkewEnforcement): without
    // the gate the CRD has no such field and strict field validation rejects it.
    report({
      code: 'skew-enforcement-feature-gate-disabled', path: SKEW,
      message: 'unknown field "spec.bootImageSkewEnforcement"',
      expected: `a cluster with FeatureGate ${GATE_SKEW} enabled`,
      hint: `the FeatureGate ${GATE_SKEW} is not enabled on this cluster; remove bootImageSkewEnforcement`,
    });
  }
}

function managersPathOf(list: readonly MachineManager[] | undefined, resource: string): string | null {
  const i = list?.findIndex((m) => m.resource === resource && m.apiGroup === MAPI_GROUP) ?? -1;
  return i >= 0 ? joinPath(joinPath(joinPath(MANAGERS, i), 'selection'), 'mode') : null;
}

const keyOf = (m: MachineManager) => `${m.resource}\u0000${m.apiGroup}`;

function sameManagers(a: readonly MachineManager[], b: readonly MachineManager[]): boolean {
  if (a.length !== b.length) return false;
  const byKey = new Map(b.map((m) => [keyOf(m), m]));
  return a.every((m) => deepEqual(m, byKey.get(keyOf(m))));
}

function describeSkew(s: BootImageSkewEnforcement): string {
  if (s.mode !== 'Manual' || !s.manual) return s.mode;
  return `Manual (${s.manual.mode} ${s.manual.ocpVersion ?? s.manual.rhcosVersion ?? ''})`.replace(/ \)$/, ')');
}

/**
 * An update of one field of `obj`, replaced as a whole (lists and unions such as
 * bootImageSkewEnforcement must not be merged field by field: a stale `manual` next to
 * `mode: None` breaks the CEL rule). The patch tests the old value first; when the field
 * or its parents are missing, it adds the first missing parent (never a whole `spec`).
 */
export function fieldChange(obj: KObject, path: string[], value: unknown, reason: ChangeReason, description: string): DraftChange {
  const after: Record<string, unknown> = {};
  let cur = after;
  path.forEach((k, i) => {
    if (i === path.length - 1) cur[k] = value;
    else cur = (cur[k] = {}) as Record<string, unknown>;
  });
  const draft = updateChange(obj, after, null, 'none', () => reason, description);
  // The live object's existing parents, so that buildPatch adds below them.
  const skeleton: Record<string, unknown> = pickPaths(obj, [path]);
  let src: unknown = obj;
  let dst = skeleton;
  for (const k of path.slice(0, -1)) {
    src = isPlainObject(src) ? src[k] : undefined;
    if (!isPlainObject(src)) break;
    dst = (dst[k] ??= {}) as Record<string, unknown>;
  }
  const oldValue = pickPaths(obj, [path]);
  const leafBefore = path.reduce<unknown>((o, k) => (isPlainObject(o) ? o[k] : undefined), oldValue);
  const patch = leafBefore !== undefined && !deepEqual(leafBefore, value)
    ? [{ op: 'test' as const, path: pointer(path), value: leafBefore }, { op: 'replace' as const, path: pointer(path), value }]
    : buildPatch(skeleton, after);
  draft.patch = patch;
  draft.action = patch.length ? 'update' : 'noop';
  draft.risk = 'none';
  return draft;
}

const pointer = (path: string[]) => '/' + path.map((k) => k.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
