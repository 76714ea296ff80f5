/**
 * The boot-image planner: the MachineConfiguration `cluster` settings spec.managedBootImages
 * and spec.bootImageSkewEnforcement, the ControlPlaneMachineSet strategy, and the predicted
 * effects on MachineSets and the ControlPlaneMachineSet, as plan changes (docs/design.md §7).
 *
 * The upstream rules it applies are in src/domain/bootimages*.ts (openshift/api operator/v1
 * types_machineconfiguration.go, machine/v1 types_controlplanemachineset.go;
 * openshift/machine-config-operator pkg/operator/sync.go and pkg/controller/bootimage/).
 * Pure: no I/O.
 */
import type { RolloutSpec } from '../rollout-spec/types.ts';
import type { MachineManager, BootImageSkewEnforcement } from '../base/api-types.ts';
import { type Diagnostic, type DiagnosticInput, type SourceMap, diagnosticAt, joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { readStream } from '../domain/stream.ts';
import { type ClusterFacts, clusterFacts, effectiveManagers, explicitOptOut, describeManagers } from '../domain/bootimages-cluster.ts';
import {
  type EffectsContext,
  type CpmsStrategy,
  machineSetEffect,
  cpmsEffect,
  optedIn,
  reconcileSkipReason,
  installVersionOf,
  belowSkewLimit,
  ARCH_ANNOTATION,
  OCP_BOOT_IMAGE_SKEW_LIMIT,
} from '../domain/bootimages-effects.ts';
import {
  AUTOMATIC_RULES,
  automaticRuleViolation,
  automaticStatusRuleBroken,
  checkClusterRules,
  managersPathOf,
  sameManagers,
  MBI_PATH,
  MANAGERS_PATH,
  SKEW_PATH,
  CPMS_PATH,
} from '../domain/bootimages.ts';
import { type DraftChange, updateChange, fieldChange } from './changes.ts';
import type { BootImagesPlan, ChangeReason, Risk } from './types.ts';
import type { MachineConfigurationObject } from '../cluster/kinds.ts';

interface BootImagesInput {
  spec: RolloutSpec;
  specMap: SourceMap | null;
  snapshot: ClusterSnapshot;
}
export interface BootImagesResult {
  changes: DraftChange[];
  bootImages: BootImagesPlan;
  diagnostics: Diagnostic[];
  /** Codes of spec warnings this planner replaced with its own, truer for this cluster (the planner drops them). */
  replacesSpecWarnings: string[];
}

/** What every step reads: the spec, the cluster and where findings go. */
interface BootImagesStep {
  spec: RolloutSpec['spec'];
  snapshot: ClusterSnapshot;
  facts: ClusterFacts;
  /** MachineConfiguration/cluster, when the cluster has one. */
  mc: MachineConfigurationObject | null;
  report: (d: DiagnosticInput) => void;
}

/** The machine managers to write (undefined: leave them), next to the ones observed. */
interface DesiredManagers {
  observedList: MachineManager[] | undefined;
  desiredList: MachineManager[] | undefined;
  reason: ChangeReason;
}

/** The two MachineConfiguration changes; null when the spec has no opinion. */
interface MachineConfigurationChanges {
  skewChange: DraftChange | null;
  managersChange: DraftChange | null;
}

export function planBootImages(input: BootImagesInput): BootImagesResult {
  const { spec, specMap, snapshot } = input;
  const diagnostics: Diagnostic[] = [];
  const step: BootImagesStep = {
    spec: spec.spec,
    snapshot,
    facts: clusterFacts(snapshot),
    mc: snapshot.machineConfiguration,
    report: (d) => diagnostics.push(diagnosticAt(specMap, d)),
  };
  const specList = spec.spec.managedBootImages?.machineManagers;

  checkClusterRules(spec, step.facts, step.report);
  const desired = desiredManagers(step);
  const mcChanges = machineConfigurationChanges(step, desired);
  orderSkewEnforcement(step, desired, mcChanges);
  const { bootImages, ctx } = predictEffects(step, desired, mcChanges);
  warnSkewRecordReset(step, ctx);
  const cpmsChange = planControlPlaneMachineSet(step, ctx, mcChanges, bootImages);
  const changes = orderChanges(step, mcChanges, cpmsChange);
  // Before 4.19 the spec's `[]` is kept, so the spec warning that promises the explicit form does not hold.
  const replacesSpecWarnings = Array.isArray(specList) && specList.length === 0 && !step.facts.explicitNoneSupported ? ['legacy-empty-machinemanagers'] : [];
  return { changes, bootImages, diagnostics, replacesSpecWarnings };
}

// ---- desired machine managers -------------------------------------------------------
function desiredManagers({ spec: s, facts, mc, report }: BootImagesStep): DesiredManagers {
  const specList = s.managedBootImages?.machineManagers;
  const observedList: MachineManager[] | undefined = mc?.spec?.managedBootImages?.machineManagers ?? undefined;
  const observedLegacy = Array.isArray(observedList) && observedList.length === 0;
  let desiredList: MachineManager[] | undefined;
  let reason: ChangeReason = 'managed-boot-images';
  // Azure Stack Hub: the MCO updates no boot images there; checkClusterRules says so.
  if (facts.azureStackHub) return { observedList, desiredList, reason };
  const specEmpty = Array.isArray(specList) && specList.length === 0;
  const keepsLegacy = specEmpty || (specList === undefined && observedLegacy);
  if (keepsLegacy && !facts.explicitNoneSupported && facts.bootImagesSupported !== false) {
    // Before 4.19 there is no mode None to migrate to (EXPLICIT_NONE_SINCE): `[]` stays the opt-out.
    report({
      severity: 'warning',
      code: 'legacy-empty-machinemanagers-kept',
      path: specList !== undefined ? MANAGERS_PATH : null,
      message: `\`machineManagers: []\` is kept as it is: OpenShift ${facts.version} is before 4.19, which added the selection mode None, so the explicit form does not exist on this cluster. The empty list still means "update no boot images", but structured clients drop it, which turns it into "no opinion"`,
      hint: 'after the upgrade to 4.19, plan again: bootcplan then writes the explicit form (machinesets with mode None)',
    });
    if (specEmpty) desiredList = specList;
  } else if (specList !== undefined) {
    // `[]` in the spec: the schema warned (legacy-empty-machinemanagers); write the explicit form.
    desiredList = specList.length === 0 ? explicitOptOut(facts) : specList;
    if (observedLegacy) reason = 'migrate-legacy-empty-machinemanagers';
  } else if (observedLegacy && facts.bootImagesSupported !== false) {
    // No opinion in the spec, legacy opt-out in the cluster: make it explicit (docs/design.md §7).
    desiredList = explicitOptOut(facts);
    reason = 'migrate-legacy-empty-machinemanagers';
    if (facts.bootImagesSupported === null) {
      report({
        severity: 'warning',
        code: 'cluster-platform-unknown',
        path: null,
        message:
          'the snapshot has no Infrastructure/cluster: the legacy `machineManagers: []` is migrated to machinesets None only, without a controlplanemachinesets entry',
        hint: 'take the snapshot with `bootcplan snapshot` so that it includes config.openshift.io Infrastructure and FeatureGate',
      });
    }
  }
  // A list-map: the order of entries carries no meaning, so an equal set is no change.
  if (desiredList && observedList && sameManagers(desiredList, observedList)) desiredList = observedList;
  return { observedList, desiredList, reason };
}

// ---- MachineConfiguration changes ---------------------------------------------------
function machineConfigurationChanges({ spec: s, mc, report }: BootImagesStep, { desiredList, reason }: DesiredManagers): MachineConfigurationChanges {
  const skew = s.bootImageSkewEnforcement;
  if ((desiredList || skew) && !mc) {
    report({
      code: 'machineconfiguration-not-found',
      path: desiredList ? MBI_PATH : SKEW_PATH,
      message: 'the cluster has no MachineConfiguration named "cluster" (operator.openshift.io/v1)',
      expected: 'an OpenShift cluster whose Machine Config Operator created MachineConfiguration/cluster',
      hint: 'boot image settings exist only on OpenShift 4.16 and later; remove managedBootImages and bootImageSkewEnforcement for other clusters',
    });
  }
  let skewChange: DraftChange | null = null;
  let managersChange: DraftChange | null = null;
  if (mc && skew) {
    skewChange = fieldChange(
      mc,
      ['spec', 'bootImageSkewEnforcement'],
      skew,
      'boot-image-skew-enforcement',
      `boot image skew enforcement: ${describeSkew(skew)}`,
    );
  }
  if (mc && desiredList) {
    const description =
      reason === 'migrate-legacy-empty-machinemanagers'
        ? `legacy opt-out \`machineManagers: []\` made explicit (${describeManagers(desiredList)}): the same "update nothing", but it survives structured clients`
        : `managed boot images: ${describeManagers(desiredList)}`;
    managersChange = fieldChange(mc, ['spec', 'managedBootImages', 'machineManagers'], desiredList, reason, description);
  }
  return { skewChange, managersChange };
}

function describeSkew(s: BootImageSkewEnforcement): string {
  if (s.mode !== 'Manual' || !s.manual) return s.mode;
  return `Manual (${s.manual.mode} ${s.manual.ocpVersion ?? s.manual.rhcosVersion ?? ''})`.replace(/ \)$/, ')');
}

// ---- skew enforcement ordering (the Automatic-status object rules) -------------------
function orderSkewEnforcement(
  { spec: s, facts, mc, report }: BootImagesStep,
  { desiredList }: DesiredManagers,
  { skewChange, managersChange }: MachineConfigurationChanges,
): void {
  if (!mc || facts.skewStatusMode !== 'Automatic') return;
  const specList = s.managedBootImages?.machineManagers;
  const skew = s.bootImageSkewEnforcement;
  const writes = [skewChange, managersChange].some((c) => c?.action === 'update');
  // Rule 4 looks at status only: while it is broken, every write to the object is rejected.
  if (writes && automaticStatusRuleBroken(mc.status?.managedBootImagesStatus?.machineManagers)) {
    report({
      code: 'skew-enforcement-status-invalid',
      path: desiredList ? MANAGERS_PATH : SKEW_PATH,
      message: `MachineConfiguration/cluster: Invalid value: "object": ${AUTOMATIC_RULES.statusAll}`,
      hint: 'the cluster object itself breaks this rule, so the API server rejects every update of it; check the machine-config ClusterOperator',
    });
  }
  const violation = managersChange?.action === 'update' ? automaticRuleViolation(desiredList) : null;
  if (!violation) return;
  const choices =
    'set spec.bootImageSkewEnforcement first: `mode: Manual` with `manual: {mode: OCPVersion, ocpVersion: <the version your boot images come from>}` (or RHCOSVersion), or `mode: None` to turn enforcement off; bootcplan then writes it, waits until the status leaves Automatic, and writes the managers';
  const at =
    specList === undefined
      ? SKEW_PATH
      : violation.index === null
        ? MANAGERS_PATH
        : joinPath(joinPath(joinPath(MANAGERS_PATH, violation.index), 'selection'), 'mode');
  if (skewChange?.action === 'update') {
    skewChange.waitAfter = {
      kind: 'skew-enforcement-not-automatic',
      description:
        'MachineConfiguration/cluster status.bootImageSkewEnforcementStatus.mode is no longer Automatic (the API server rejects opting MachineSets out while it is)',
    };
  } else if (skewChange) {
    report({
      code: 'skew-enforcement-status-pending',
      path: SKEW_PATH,
      message: `spec.bootImageSkewEnforcement is already ${skew?.mode} in the cluster, but status.bootImageSkewEnforcementStatus.mode is still Automatic; while it is, the API server rejects the new managers: ${violation.message}`,
      hint: 'the Machine Config Operator has not synced the status yet; plan again once it shows the new mode',
    });
  } else {
    report({
      code: 'skew-enforcement-choice-required',
      path: at,
      message: `boot image skew enforcement is Automatic in the cluster, and the API server rejects these managers: "${violation.message}"`,
      expected: 'a spec.bootImageSkewEnforcement choice (Manual with a version, or None)',
      hint: choices,
    });
  }
}

// ---- effects on MachineSets and the ControlPlaneMachineSet ------------------------------
function predictEffects(
  { snapshot, facts, mc, report }: BootImagesStep,
  { observedList, desiredList }: DesiredManagers,
  { managersChange }: MachineConfigurationChanges,
): { bootImages: BootImagesPlan; ctx: EffectsContext } {
  const statusList = observedStatusList({ snapshot, facts, mc, report });
  const afterList = managersChange?.action === 'update' ? desiredList : (statusList ?? observedList);
  const managers = effectiveManagers(afterList, facts);
  const stream = readStream(snapshot.bootImagesConfigMap);
  const ctx: EffectsContext = { facts, managers, stream: stream.ok ? { ok: true, stream: stream.stream } : stream };
  const bootImages: BootImagesPlan = { machineSets: [], controlPlaneMachineSet: null };
  if (facts.bootImagesSupported) {
    bootImages.machineSets = snapshot.machineSets.map((ms) => machineSetEffect(ms, ctx));
    const selected = bootImages.machineSets.some((m) => !m.skipped) || managers.machineSets.mode !== 'None';
    if (!stream.ok && selected) {
      report({
        severity: 'warning',
        code: 'boot-images-stream-unavailable',
        path: null,
        message: `boot image effects cannot be predicted: ${stream.reason}`,
        hint: 'include the coreos-bootimages ConfigMap in the snapshot',
      });
    }
  }
  return { bootImages, ctx };
}

/**
 * Under skew enforcement Automatic, the MCO records the cluster's boot image version only when
 * every opted-in MachineSet reconciled; when one is reconcile-skipped (owner reference, no
 * architecture annotation on a multi-architecture cluster) it resets the record to the
 * cluster's install version instead (machine-config-operator f617a2c54, ms_helpers.go
 * syncMAPIMachineSets `resetClusterBootImage`), and a record older than the skew limit makes
 * the operator Upgradeable=False (pkg/operator/status.go checkBootImageSkewUpgradeableGuard).
 * A warning naming the MachineSets and the remedies; nothing is blocked (the plan writes no
 * MachineSet).
 */
function warnSkewRecordReset({ spec: s, snapshot, facts, report }: BootImagesStep, ctx: EffectsContext): void {
  if (!facts.bootImagesSupported || facts.skewGate === false) return;
  const modeAfter = s.bootImageSkewEnforcement?.mode ?? facts.skewStatusMode;
  if (modeAfter !== 'Automatic') return;
  const skipped: string[] = [];
  for (const ms of snapshot.machineSets) {
    if (!optedIn(ms, ctx.managers)) continue;
    const why = reconcileSkipReason(ms, facts);
    if (why) skipped.push(`${ms.metadata.name} (${why})`);
  }
  if (!skipped.length) return;
  const install = installVersionOf(snapshot.clusterVersion);
  const upgradeable =
    install === null
      ? `; if that version is before ${OCP_SKEW_LIMIT_TEXT} the machine-config ClusterOperator reports Upgradeable=False (ClusterBootImageSkewError)`
      : belowSkewLimit(install)
        ? `; ${install} is before the skew limit ${OCP_SKEW_LIMIT_TEXT}, so the machine-config ClusterOperator reports Upgradeable=False (ClusterBootImageSkewError) and cluster upgrades are blocked`
        : '';
  report({
    severity: 'warning',
    code: 'boot-image-skew-record-reset',
    path: s.managedBootImages?.machineManagers !== undefined ? MANAGERS_PATH : s.bootImageSkewEnforcement ? SKEW_PATH : null,
    message: `boot image skew enforcement is Automatic and ${skipped.length} opted-in MachineSet(s) are skipped by the MCO's boot image controller: ${skipped.join(', ')}. While one is skipped the MCO does not record the new boot image version: it resets the cluster's boot image record to the install version (${install ?? 'unknown: the snapshot has no ClusterVersion'})${upgradeable}`,
    hint: `for each MachineSet: remove the owner reference if nothing should manage it, or add the annotation ${ARCH_ANNOTATION}: kubernetes.io/arch=<amd64|arm64|s390x|ppc64le>; or leave those MachineSets out (machinesets mode Partial needs skew enforcement Manual or None first), or set spec.bootImageSkewEnforcement to Manual with the version your oldest boot image comes from`,
  });
}
const OCP_SKEW_LIMIT_TEXT = OCP_BOOT_IMAGE_SKEW_LIMIT.join('.');

/**
 * status.managedBootImagesStatus, when the status has observed the current spec
 * (bootimages-cluster.ts statusObservation); otherwise undefined, so that the prediction
 * follows the spec, with a warning.
 */
function observedStatusList({ facts, mc, report }: Pick<BootImagesStep, 'snapshot' | 'facts' | 'mc' | 'report'>): MachineManager[] | undefined {
  const list: MachineManager[] | undefined = mc?.status?.managedBootImagesStatus?.machineManagers ?? undefined;
  const seen = facts.statusObserved;
  if (!mc || seen.current || facts.bootImagesSupported === false) return list;
  report({
    severity: 'warning',
    code: 'machineconfiguration-status-behind',
    path: null,
    message: `MachineConfiguration/cluster status is behind its spec (status.observedGeneration ${seen.observedGeneration ?? 'not set'}, metadata.generation ${seen.generation}): the Machine Config Operator has not synced the last spec change, so status.managedBootImagesStatus and the skew enforcement status may be out of date; boot image effects are predicted from the spec`,
    hint: 'check the machine-config ClusterOperator; plan again once status.observedGeneration equals metadata.generation',
  });
  return undefined;
}

// ---- ControlPlaneMachineSet ---------------------------------------------------------
/** The strategy change (if any); fills bootImages.controlPlaneMachineSet and marks the change that causes a replacement. */
function planControlPlaneMachineSet(
  { spec: s, snapshot, report }: BootImagesStep,
  ctx: EffectsContext,
  { managersChange }: MachineConfigurationChanges,
  bootImages: BootImagesPlan,
): DraftChange | null {
  const cpSpec = s.controlPlaneMachineSet;
  const cpms = snapshot.controlPlaneMachineSet;
  let cpmsChange: DraftChange | null = null;
  if (cpSpec?.strategy && !cpms) {
    report({
      severity: 'warning',
      code: 'cpms-not-found',
      path: joinPath(CPMS_PATH, 'strategy'),
      message: 'the cluster has no ControlPlaneMachineSet openshift-machine-api/cluster; the strategy is not written',
      hint: 'remove controlPlaneMachineSet from the spec for clusters without one',
    });
  }
  if (!cpms) return cpmsChange;
  const observedStrategy = cpms.spec?.strategy?.type ?? undefined;
  const before: CpmsStrategy = observedStrategy === 'OnDelete' ? 'OnDelete' : 'RollingUpdate';
  const after: CpmsStrategy = cpSpec?.strategy ?? before;
  // spec.strategy.type defaults to RollingUpdate: an absent field already means it.
  if (cpSpec?.strategy && !(observedStrategy === undefined && cpSpec.strategy === 'RollingUpdate')) {
    cpmsChange = updateChange(
      cpms,
      { spec: { strategy: { type: cpSpec.strategy } } },
      null,
      'none',
      () => 'cpms-strategy',
      `ControlPlaneMachineSet strategy ${cpSpec.strategy}${cpSpec.strategy === 'OnDelete' ? ': control-plane machines are replaced only when deleted' : ': control-plane machines are replaced one at a time when they differ from the template'}`,
    );
  }
  const eff = cpmsEffect(cpms, ctx, before, after);
  bootImages.controlPlaneMachineSet = { from: eff.from, to: eff.to, replacement: eff.replacement, why: eff.why };
  if (eff.replacement) {
    const causeChange = eff.cause === 'strategy' ? cpmsChange : managersChange;
    if (causeChange && causeChange.action === 'update') causeChange.risk = 'replacement' satisfies Risk;
    if (cpSpec?.allowReplacement !== true) {
      const cpPath = managersPathOf(s.managedBootImages?.machineManagers, 'controlplanemachinesets');
      report({
        code: 'cpms-replacement-not-allowed',
        path:
          cpSpec?.allowReplacement !== undefined
            ? joinPath(CPMS_PATH, 'allowReplacement')
            : eff.cause === 'strategy' && cpSpec?.strategy
              ? joinPath(CPMS_PATH, 'strategy')
              : (cpPath ?? CPMS_PATH),
        message: `this plan replaces control-plane machines: ${eff.why}`,
        expected: 'controlPlaneMachineSet.allowReplacement: true to accept a control-plane replacement',
        hint: 'set spec.controlPlaneMachineSet.allowReplacement: true to accept it, or set spec.controlPlaneMachineSet.strategy: OnDelete (machines are then replaced only when you delete them), or keep controlplanemachinesets at mode None',
      });
    }
  }
  return cpmsChange;
}

// ---- order: a switch to OnDelete goes first, so that no template change meets
// RollingUpdate; then the MachineConfiguration steps; then any other strategy change.
function orderChanges({ spec: s }: BootImagesStep, { skewChange, managersChange }: MachineConfigurationChanges, cpmsChange: DraftChange | null): DraftChange[] {
  const changes: DraftChange[] = [];
  const toOnDelete = cpmsChange?.action === 'update' && s.controlPlaneMachineSet?.strategy === 'OnDelete';
  if (cpmsChange && toOnDelete) changes.push(cpmsChange);
  if (skewChange) changes.push(skewChange);
  if (managersChange) changes.push(managersChange);
  if (cpmsChange && !toOnDelete) changes.push(cpmsChange);
  return changes;
}
