/**
 * Static validation of spec.managedBootImages and spec.bootImageSkewEnforcement, with the
 * shape of MachineConfiguration spec (openshift/api operator/v1 types_machineconfiguration.go
 * and the generated CRD operator/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigurations*.crd.yaml).
 * Messages use the API server's own wording (`Unsupported value`, `Required value`,
 * `Duplicate value`, the CEL messages) so that users recognise what `oc apply` would say.
 * Rules that depend on the cluster (feature gates, platform, skew-enforcement status) live in
 * src/domain/bootimages-rules.ts.
 */
import type { Schema, ObjectSchema, Ctx } from '../base/schema.ts';
import { isPlainObject, nearest } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';

const MACHINE_MANAGER_RESOURCES = ['machinesets', 'controlplanemachinesets'] as const;
const MACHINE_MANAGER_API_GROUPS = ['machine.openshift.io'] as const;
const SELECTION_MODES = ['All', 'Partial', 'None'] as const;
const SKEW_MODES = ['Manual', 'None'] as const;
const SKEW_MANUAL_MODES = ['OCPVersion', 'RHCOSVersion'] as const;

/** ClusterBootImageManual.ocpVersion: MinLength=5, MaxLength=10 and this CEL regex. */
const OCP_VERSION_RE = /^[0-9]+\.[0-9]+\.[0-9]+$/;
const OCP_VERSION_MESSAGE = 'ocpVersion must match the OCP semver compatible format of x.y.z';
/** ClusterBootImageManual.rhcosVersion: MinLength=14, MaxLength=21 and this CEL regex. */
const RHCOS_VERSION_RE = /^[0-9]+\.[0-9]+\.([0-9]{8}|[0-9]{12})-[0-9]+$/;
const RHCOS_VERSION_MESSAGE =
  'rhcosVersion must match format [major].[minor].[datestamp(YYYYMMDD)]-[buildnumber] or must match legacy format [major].[minor].[timestamp(YYYYMMDDHHmm)]-[buildnumber]';

/** CEL messages of types_machineconfiguration.go, verbatim. */
const CEL = {
  partial: 'Partial is required when type is partial, and forbidden otherwise',
  cpmsMode: 'Only All or None selection mode is permitted for ControlPlaneMachineSets',
  manual: 'manual is required when mode is Manual, and forbidden otherwise',
  ocpVersion: 'ocpVersion is required when mode is OCPVersion, and forbidden otherwise',
  rhcosVersion: 'rhcosVersion is required when mode is RHCOSVersion, and forbidden otherwise',
} as const;

const quoteList = (vs: readonly string[]) => vs.map((v) => `"${v}"`).join(', ');

/**
 * A string enum reported as the API server reports it:
 * `Unsupported value: "Automatic": supported values: "Manual", "None"`.
 */
function apiEnum(values: readonly string[], hint?: (v: string) => string | undefined): Schema {
  return {
    type: 'string',
    patternText: `one of ${quoteList(values)}`,
    json: { enum: [...values] },
    check(v: string, path, ctx) {
      if (values.includes(v)) return;
      const near = nearest(v, values);
      ctx.report({
        code: 'invalid-enum',
        path,
        message: `Unsupported value: "${v}": supported values: ${quoteList(values)}`,
        expected: `one of ${quoteList(values)}`,
        hint: hint?.(v) ?? (near ? `did you mean "${near}"? (values are case-sensitive)` : undefined),
      });
    },
  };
}

/** `+required` fields, reported with the API's `Required value` wording. */
function requireFields(obj: Record<string, unknown>, path: string, ctx: Ctx, fields: Record<string, string>) {
  for (const [f, expected] of Object.entries(fields)) {
    if (!(f in obj)) {
      ctx.report({ code: 'required-field', path: joinPath(path, f), message: `Required value: "${f}" must be set`, expected });
    }
  }
}

/**
 * A string with the length limits and CEL regex of ClusterBootImageManual (the API reports
 * both a length and a format violation when a value breaks both, so does bootcplan).
 */
function versionString(min: number, max: number, re: RegExp, message: string, example: string): Schema {
  return {
    type: 'string',
    patternText: example,
    json: { minLength: min, maxLength: max, pattern: re.source },
    check(v: string, path, ctx) {
      if (v.length < min) {
        ctx.report({ code: 'too-short', path, message: `Invalid value: "${v}": ${path} in body should be at least ${min} chars long`, expected: example });
      }
      if (v.length > max) {
        ctx.report({ code: 'too-long', path, message: `Too long: may not be more than ${max} bytes`, expected: example });
      }
      if (!re.test(v)) {
        ctx.report({ code: 'invalid-format', path, message: `Invalid value: "string": ${message}`, expected: example });
      }
    },
  };
}

/** JSON Schema: `then` when `field` is one of `values` (the field present), else `otherwise`. */
const when = (field: string, values: readonly string[], then: object, otherwise?: object) => ({
  if: { properties: { [field]: { enum: [...values] } }, required: [field] },
  then,
  ...(otherwise ? { else: otherwise } : {}),
});
const forbid = (field: string) => ({ not: { required: [field] } });

/**
 * A Kubernetes label selector (metav1.LabelSelector) over the labels of `subject`s: the MachineSets
 * of a partial boot-image selection, the clusters of a Fleet override. Its requirements are
 * checked as metav1.LabelSelectorAsSelector checks them (apimachinery labels.NewRequirement).
 */
export function labelSelectorSchema(description: string, subject: string, check?: ObjectSchema['check']): ObjectSchema {
  return {
    type: 'object',
    description,
    fields: {
      matchLabels: { type: 'map', values: { type: 'string' }, description: `Labels ${subject} must have, all of them.` },
      matchExpressions: {
        type: 'array',
        description: 'Label requirements, all of them.',
        items: {
          type: 'object',
          fields: {
            key: { type: 'string', minLength: 1, description: 'The label key.' },
            operator: { ...apiEnum(['In', 'NotIn', 'Exists', 'DoesNotExist']), description: 'How the label is compared with values.' },
            values: { type: 'array', items: { type: 'string' }, description: 'Non-empty for In and NotIn, empty for Exists and DoesNotExist.' },
          },
          json: {
            required: ['key', 'operator'],
            allOf: [
              when('operator', ['In', 'NotIn'], { required: ['values'], properties: { values: { minItems: 1 } } }),
              when('operator', ['Exists', 'DoesNotExist'], { properties: { values: { maxItems: 0 } } }),
            ],
          },
          check(e, path, ctx) {
            requireFields(e, path, ctx, { key: 'a label key', operator: 'one of "In", "NotIn", "Exists", "DoesNotExist"' });
            // metav1.LabelSelectorAsSelector (apimachinery labels.NewRequirement), which the MCO
            // calls on the selector (pkg/controller/bootimage ms_helpers.go) and bootcplan on a
            // Fleet's clusters: the API server accepts these, but the controller fails on them.
            const values = Array.isArray(e.values) ? e.values : [];
            if ((e.operator === 'In' || e.operator === 'NotIn') && values.length === 0) {
              ctx.report({
                code: 'selector-invalid',
                path: joinPath(path, 'values'),
                message: `Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty`,
                expected: 'at least one value',
              });
            }
            if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && values.length > 0) {
              ctx.report({
                code: 'selector-invalid',
                path: joinPath(path, 'values'),
                message: `Invalid value: ${JSON.stringify(values)}: values set must be empty for exists and does not exist`,
                expected: 'no values',
              });
            }
          },
        },
      },
    },
    ...(check ? { check } : {}),
  };
}

/** An empty machineResourceSelector selects every MachineSet: said, since mode All says it plainly. */
const warnEmptyMachineSelector: ObjectSchema['check'] = (sel, path, ctx) => {
  const empty =
    (!isPlainObject(sel.matchLabels) || Object.keys(sel.matchLabels).length === 0) &&
    (!Array.isArray(sel.matchExpressions) || sel.matchExpressions.length === 0);
  if (empty) {
    ctx.report({
      severity: 'warning',
      code: 'selector-matches-everything',
      path,
      message: 'an empty machineResourceSelector selects every MachineSet, the same as mode All',
      hint: 'add matchLabels or matchExpressions, or write mode: All',
    });
  }
};

const selectionSchema: ObjectSchema = {
  type: 'object',
  description: 'Which machine resources of this kind get their boot images updated.',
  json: { required: ['mode'], ...when('mode', ['Partial'], { required: ['partial'] }, forbid('partial')) },
  fields: {
    mode: { ...apiEnum(SELECTION_MODES), description: 'All: every resource of this kind; Partial: those partial.machineResourceSelector selects; None: none.' },
    partial: {
      type: 'object',
      description: 'With mode Partial only: the selector.',
      json: { required: ['machineResourceSelector'] },
      fields: {
        machineResourceSelector: labelSelectorSchema(
          'A label selector over MachineSet labels (matchLabels and/or matchExpressions).',
          'a MachineSet',
          warnEmptyMachineSelector,
        ),
      },
      check(p, path, ctx) {
        requireFields(p, path, ctx, { machineResourceSelector: 'a label selector (matchLabels / matchExpressions) over MachineSet labels' });
      },
    },
  },
  check(sel, path, ctx) {
    requireFields(sel, path, ctx, { mode: `one of ${quoteList(SELECTION_MODES)}` });
    // MachineManagerSelector, CEL:
    // has(self.mode) && self.mode == 'Partial' ?  has(self.partial) : !has(self.partial)
    if (sel.mode !== undefined && !SELECTION_MODES.some((m) => m === sel.mode)) return;
    const partialMode = sel.mode === 'Partial';
    if (partialMode && !('partial' in sel)) {
      ctx.report({
        code: 'partial-selection-invalid',
        path: joinPath(path, 'mode'),
        message: `Invalid value: "object": ${CEL.partial}`,
        expected: 'partial.machineResourceSelector with mode Partial',
        hint: 'add partial: {machineResourceSelector: {matchLabels: {...}}}',
      });
    } else if (!partialMode && 'partial' in sel) {
      ctx.report({
        code: 'partial-selection-invalid',
        path: joinPath(path, 'partial'),
        atKey: true,
        message: `Invalid value: "object": ${CEL.partial}`,
        expected: 'no partial unless mode is Partial',
        hint: 'remove partial, or set mode: Partial',
      });
    }
  },
};

const machineManagerSchema: ObjectSchema = {
  type: 'object',
  json: {
    required: ['resource', 'apiGroup', 'selection'],
    ...when('resource', ['controlplanemachinesets'], { properties: { selection: { properties: { mode: { enum: ['All', 'None'] } } } } }),
  },
  fields: {
    resource: {
      ...apiEnum(MACHINE_MANAGER_RESOURCES),
      description: 'The kind of machine resource: MachineSets or the ControlPlaneMachineSet (mode All or None only).',
    },
    apiGroup: { ...apiEnum(MACHINE_MANAGER_API_GROUPS), description: 'The API group of resource.' },
    selection: selectionSchema,
  },
  check(m, path, ctx) {
    requireFields(m, path, ctx, {
      resource: `one of ${quoteList(MACHINE_MANAGER_RESOURCES)}`,
      apiGroup: `one of ${quoteList(MACHINE_MANAGER_API_GROUPS)}`,
      selection: 'a mapping with mode (All, Partial or None)',
    });
    // MachineManager, CEL (FeatureGateAwareXValidation requiredFeatureGate=ManagedBootImagesCPMS):
    // self.resource != 'controlplanemachinesets' || self.selection.mode == 'All' || self.selection.mode == 'None'
    const mode = isPlainObject(m.selection) ? m.selection.mode : undefined;
    if (m.resource === 'controlplanemachinesets' && typeof mode === 'string' && mode !== 'All' && mode !== 'None' && SELECTION_MODES.some((x) => x === mode)) {
      ctx.report({
        code: 'cpms-partial-selection',
        path: joinPath(joinPath(path, 'selection'), 'mode'),
        message: `Invalid value: "object": ${CEL.cpmsMode}`,
        expected: '"All" or "None"',
        hint: 'there is one ControlPlaneMachineSet per cluster: opt it in (All) or out (None)',
      });
    }
  },
};

/** The list-map key of machineManagers (+listType=map, +listMapKey=resource, +listMapKey=apiGroup). */
function checkListMapKeys(list: unknown[], path: string, ctx: Ctx) {
  const seen = new Map<string, number>();
  list.forEach((m, i) => {
    if (!isPlainObject(m) || typeof m.resource !== 'string' || typeof m.apiGroup !== 'string') return;
    const key = `${m.resource}\u0000${m.apiGroup}`;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, i);
      return;
    }
    // The API server's wording for a duplicate list-map key (field.Duplicate on the item).
    ctx.report({
      code: 'duplicate-machine-manager',
      path: joinPath(path, i),
      atKey: true,
      message: `Duplicate value: map[string]interface {}{"apiGroup":${JSON.stringify(m.apiGroup)}, "resource":${JSON.stringify(m.resource)}}`,
      expected: 'one entry per (resource, apiGroup)',
      hint: `merge it with ${path}[${first}]`,
    });
  });
}

export const managedBootImagesSchema: Schema = {
  type: 'object',
  description:
    'The boot images the MCO keeps up to date, written to MachineConfiguration cluster spec.managedBootImages (same shape); left out: as the cluster has it.',
  fields: {
    machineManagers: {
      type: 'array',
      items: machineManagerSchema,
      maxItems: 5,
      defaultText: 'the platform default',
      description: 'One entry per (resource, apiGroup). An empty list is the legacy opt-out (a warning: write mode None instead).',
      check(list: unknown[], path, ctx) {
        checkListMapKeys(list, path, ctx);
        if (list.length === 0) {
          // pkg/operator/sync.go: a present but empty list is the legacy opt-out ("update
          // nothing"); it does not survive a round trip through structured clients (omitempty).
          ctx.report({
            severity: 'warning',
            code: 'legacy-empty-machinemanagers',
            path,
            message:
              '`machineManagers: []` is the legacy opt-out: it means "update no boot images", but structured clients drop an empty list, which turns it into "platform default"',
            hint: 'bootcplan writes the explicit form instead: machinesets with mode None, plus controlplanemachinesets with mode None where the cluster supports ControlPlaneMachineSet boot images; write that form in the spec to silence this warning',
          });
        }
      },
    },
  },
};

const manualSchema: ObjectSchema = {
  type: 'object',
  description: 'With mode Manual only: the version the boot images were installed from.',
  json: {
    required: ['mode'],
    allOf: [
      when('mode', ['OCPVersion'], { required: ['ocpVersion'] }, forbid('ocpVersion')),
      when('mode', ['RHCOSVersion'], { required: ['rhcosVersion'] }, forbid('rhcosVersion')),
    ],
  },
  fields: {
    mode: { ...apiEnum(SKEW_MANUAL_MODES), description: 'Which version names the boot images: an OpenShift release or an RHCOS build.' },
    ocpVersion: {
      ...versionString(5, 10, OCP_VERSION_RE, OCP_VERSION_MESSAGE, 'an OpenShift version x.y.z, e.g. "4.20.0"'),
      description: 'With mode OCPVersion: x.y.z, e.g. "4.20.0".',
    },
    rhcosVersion: {
      ...versionString(14, 21, RHCOS_VERSION_RE, RHCOS_VERSION_MESSAGE, 'an RHCOS version, e.g. "9.6.20250523-1" or "416.94.202411201433-0"'),
      description: 'With mode RHCOSVersion: e.g. "9.6.20250523-1".',
    },
  },
  check(m, path, ctx) {
    requireFields(m, path, ctx, { mode: `one of ${quoteList(SKEW_MANUAL_MODES)}` });
    if (m.mode !== undefined && !SKEW_MANUAL_MODES.some((x) => x === m.mode)) return;
    // ClusterBootImageManual, CEL:
    // has(self.mode) && (self.mode =='OCPVersion') ?  has(self.ocpVersion) : !has(self.ocpVersion)
    // has(self.mode) && (self.mode =='RHCOSVersion') ?  has(self.rhcosVersion) : !has(self.rhcosVersion)
    for (const [mode, field, msg] of [
      ['OCPVersion', 'ocpVersion', CEL.ocpVersion],
      ['RHCOSVersion', 'rhcosVersion', CEL.rhcosVersion],
    ] as const) {
      if (m.mode === mode && !(field in m)) {
        ctx.report({
          code: 'skew-manual-invalid',
          path: joinPath(path, 'mode'),
          message: `Invalid value: "object": ${msg}`,
          expected: `${field} with mode ${mode}`,
          hint: `add ${field}`,
        });
      } else if (m.mode !== mode && field in m) {
        ctx.report({
          code: 'skew-manual-invalid',
          path: joinPath(path, field),
          atKey: true,
          message: `Invalid value: "object": ${msg}`,
          expected: `no ${field} unless mode is ${mode}`,
          hint: `remove ${field}, or set mode: ${mode}`,
        });
      }
    }
  },
};

export const bootImageSkewEnforcementSchema: Schema = {
  type: 'object',
  description:
    'MachineConfiguration cluster spec.bootImageSkewEnforcement (same shape): how the MCO guards against boot images too old for the cluster; left out: as the cluster has it.',
  json: { required: ['mode'], ...when('mode', ['Manual'], { required: ['manual'] }, forbid('manual')) },
  fields: {
    // Automatic is a status-only value: the API accepts only Manual or None in spec
    // (openshift/api operator/v1 BootImageSkewEnforcementConfig, enum Manual;None).
    mode: {
      ...apiEnum(SKEW_MODES, (v) =>
        v === 'Automatic'
          ? 'Automatic is a status value the MCO chooses on its own; to leave it, pick Manual (with the version your boot images have) or None (no enforcement); to keep it, omit bootImageSkewEnforcement'
          : undefined,
      ),
      description: "Manual: enforce against the version in manual; None: no enforcement (Automatic is the MCO's own status value, not a spec value).",
    },
    manual: manualSchema,
  },
  check(s, path, ctx) {
    requireFields(s, path, ctx, { mode: `one of ${quoteList(SKEW_MODES)}` });
    if (s.mode !== undefined && !SKEW_MODES.some((x) => x === s.mode)) return;
    // BootImageSkewEnforcementConfig, CEL:
    // has(self.mode) && (self.mode =='Manual') ?  has(self.manual) : !has(self.manual)
    if (s.mode === 'Manual' && !('manual' in s)) {
      ctx.report({
        code: 'skew-manual-invalid',
        path: joinPath(path, 'mode'),
        message: `Invalid value: "object": ${CEL.manual}`,
        expected: 'manual: {mode: OCPVersion, ocpVersion: x.y.z} or {mode: RHCOSVersion, rhcosVersion: ...}',
        hint: 'add manual with the version your boot images were installed from',
      });
    } else if (s.mode !== 'Manual' && 'manual' in s) {
      ctx.report({
        code: 'skew-manual-invalid',
        path: joinPath(path, 'manual'),
        atKey: true,
        message: `Invalid value: "object": ${CEL.manual}`,
        expected: 'no manual unless mode is Manual',
        hint: 'remove manual, or set mode: Manual',
      });
    }
  },
};
