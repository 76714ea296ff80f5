/**
 * Static rules of spec.managedBootImages and spec.bootImageSkewEnforcement: every rule the API
 * server enforces on these fields (openshift/api operator/v1 types_machineconfiguration.go),
 * each with accepted and rejected cases, and the API's own wording.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { load, MS, CP, codes } from '../support/bootimages.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';

const s = suite('bootimages: spec validation');

const errorsOf = (spec: Record<string, unknown>) => load(spec).diagnostics.filter((d) => d.severity === 'error');
const managers = (...list: unknown[]) => ({ managedBootImages: { machineManagers: list } });
const skew = (v: unknown) => ({ bootImageSkewEnforcement: v });

const ACCEPTED: [string, Record<string, unknown>][] = [
  ['machinesets All', managers(MS('All'))],
  ['machinesets None', managers(MS('None'))],
  ['machinesets Partial with matchLabels', managers(MS('Partial', { machineResourceSelector: { matchLabels: { role: 'infra' } } }))],
  [
    'machinesets Partial with matchExpressions',
    managers(
      MS('Partial', {
        machineResourceSelector: {
          matchExpressions: [
            { key: 'role', operator: 'In', values: ['a', 'b'] },
            { key: 'gpu', operator: 'DoesNotExist' },
          ],
        },
      }),
    ),
  ],
  ['controlplanemachinesets All', managers(CP('All'))],
  ['controlplanemachinesets None', managers(CP('None'))],
  ['both managers', managers(MS('All'), CP('None'))],
  ['managedBootImages without machineManagers', { managedBootImages: {} }],
  ['skew None', skew({ mode: 'None' })],
  ['skew Manual OCPVersion', skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } })],
  ['skew Manual OCPVersion, 10 characters', skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.100.1000' } })],
  ['skew Manual RHCOSVersion', skew({ mode: 'Manual', manual: { mode: 'RHCOSVersion', rhcosVersion: '9.6.20250523-1' } })],
  ['skew Manual RHCOSVersion legacy timestamp', skew({ mode: 'Manual', manual: { mode: 'RHCOSVersion', rhcosVersion: '416.94.202411201433-0' } })],
  ['controlPlaneMachineSet', { controlPlaneMachineSet: { strategy: 'OnDelete', allowReplacement: true } }],
];

for (const [name, spec] of ACCEPTED) {
  s(`accepted: ${name}`, () => {
    const l = load(spec);
    assert.equal(
      l.diagnostics.filter((d) => d.severity === 'error'),
      [],
    );
    assert.ok(l.spec);
  });
}

interface Rejected {
  name: string;
  spec: Record<string, unknown>;
  code: string;
  path: string;
  message: string;
}
const P = 'spec.managedBootImages.machineManagers';
const K = 'spec.bootImageSkewEnforcement';
const REJECTED: Rejected[] = [
  {
    name: 'resource enum',
    spec: managers({ ...MS('All'), resource: 'MachineSets' }),
    code: 'invalid-enum',
    path: `${P}[0].resource`,
    message: 'Unsupported value: "MachineSets": supported values: "machinesets", "controlplanemachinesets"',
  },
  {
    name: 'apiGroup enum (CAPI group needs ManagedBootImagesAWSCAPI)',
    spec: managers({ ...MS('All'), apiGroup: 'cluster.x-k8s.io' }),
    code: 'invalid-enum',
    path: `${P}[0].apiGroup`,
    message: 'Unsupported value: "cluster.x-k8s.io": supported values: "machine.openshift.io"',
  },
  {
    name: 'selection.mode enum',
    spec: managers(MS('Some')),
    code: 'invalid-enum',
    path: `${P}[0].selection.mode`,
    message: 'Unsupported value: "Some": supported values: "All", "Partial", "None"',
  },
  {
    name: 'resource required',
    spec: managers({ apiGroup: 'machine.openshift.io', selection: { mode: 'All' } }),
    code: 'required-field',
    path: `${P}[0].resource`,
    message: 'Required value',
  },
  {
    name: 'apiGroup required',
    spec: managers({ resource: 'machinesets', selection: { mode: 'All' } }),
    code: 'required-field',
    path: `${P}[0].apiGroup`,
    message: 'Required value',
  },
  {
    name: 'selection required',
    spec: managers({ resource: 'machinesets', apiGroup: 'machine.openshift.io' }),
    code: 'required-field',
    path: `${P}[0].selection`,
    message: 'Required value',
  },
  {
    name: 'selection.mode required',
    spec: managers({ resource: 'machinesets', apiGroup: 'machine.openshift.io', selection: {} }),
    code: 'required-field',
    path: `${P}[0].selection.mode`,
    message: 'Required value',
  },
  {
    name: 'Partial requires partial',
    spec: managers(MS('Partial')),
    code: 'partial-selection-invalid',
    path: `${P}[0].selection.mode`,
    message: 'Invalid value: "object": Partial is required when type is partial, and forbidden otherwise',
  },
  {
    name: 'All forbids partial',
    spec: managers(MS('All', { machineResourceSelector: { matchLabels: { a: 'b' } } })),
    code: 'partial-selection-invalid',
    path: `${P}[0].selection.partial`,
    message: 'Partial is required when type is partial, and forbidden otherwise',
  },
  {
    name: 'None forbids partial',
    spec: managers(MS('None', { machineResourceSelector: { matchLabels: { a: 'b' } } })),
    code: 'partial-selection-invalid',
    path: `${P}[0].selection.partial`,
    message: 'Partial is required when type is partial, and forbidden otherwise',
  },
  {
    name: 'partial.machineResourceSelector required',
    spec: managers(MS('Partial', {})),
    code: 'required-field',
    path: `${P}[0].selection.partial.machineResourceSelector`,
    message: 'Required value',
  },
  {
    name: 'controlplanemachinesets only All or None',
    spec: managers({ ...CP('Partial'), selection: { mode: 'Partial', partial: { machineResourceSelector: { matchLabels: { a: 'b' } } } } }),
    code: 'cpms-partial-selection',
    path: `${P}[0].selection.mode`,
    message: 'Invalid value: "object": Only All or None selection mode is permitted for ControlPlaneMachineSets',
  },
  {
    name: 'duplicate list-map key',
    spec: managers(MS('All'), CP('None'), MS('None')),
    code: 'duplicate-machine-manager',
    path: `${P}[2]`,
    message: 'Duplicate value: map[string]interface {}{"apiGroup":"machine.openshift.io", "resource":"machinesets"}',
  },
  {
    name: 'maxItems 5',
    spec: managers(MS('All'), CP('None'), MS('None'), MS('None'), MS('None'), MS('None')),
    code: 'too-many-items',
    path: P,
    message: 'Too many: 6: must have at most 5 items',
  },
  {
    name: 'matchExpressions In needs values',
    spec: managers(MS('Partial', { machineResourceSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } })),
    code: 'selector-invalid',
    path: `${P}[0].selection.partial.machineResourceSelector.matchExpressions[0].values`,
    message: "values set can't be empty",
  },
  {
    name: 'matchExpressions Exists takes no values',
    spec: managers(MS('Partial', { machineResourceSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] } })),
    code: 'selector-invalid',
    path: `${P}[0].selection.partial.machineResourceSelector.matchExpressions[0].values`,
    message: 'values set must be empty',
  },
  {
    name: 'matchExpressions operator enum',
    spec: managers(MS('Partial', { machineResourceSelector: { matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] } })),
    code: 'invalid-enum',
    path: `${P}[0].selection.partial.machineResourceSelector.matchExpressions[0].operator`,
    message: 'Unsupported value: "in"',
  },
  {
    name: 'unknown field in a manager',
    spec: managers({ ...MS('All'), selector: {} }),
    code: 'unknown-field',
    path: `${P}[0].selector`,
    message: 'unknown field',
  },
  {
    name: 'skew mode Automatic is status-only',
    spec: skew({ mode: 'Automatic' }),
    code: 'invalid-enum',
    path: `${K}.mode`,
    message: 'Unsupported value: "Automatic": supported values: "Manual", "None"',
  },
  { name: 'skew mode required', spec: skew({}), code: 'required-field', path: `${K}.mode`, message: 'Required value' },
  {
    name: 'Manual requires manual',
    spec: skew({ mode: 'Manual' }),
    code: 'skew-manual-invalid',
    path: `${K}.mode`,
    message: 'manual is required when mode is Manual, and forbidden otherwise',
  },
  {
    name: 'None forbids manual',
    spec: skew({ mode: 'None', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } }),
    code: 'skew-manual-invalid',
    path: `${K}.manual`,
    message: 'manual is required when mode is Manual, and forbidden otherwise',
  },
  {
    name: 'manual.mode required',
    spec: skew({ mode: 'Manual', manual: { ocpVersion: '4.20.0' } }),
    code: 'required-field',
    path: `${K}.manual.mode`,
    message: 'Required value',
  },
  {
    name: 'manual.mode enum',
    spec: skew({ mode: 'Manual', manual: { mode: 'Version', ocpVersion: '4.20.0' } }),
    code: 'invalid-enum',
    path: `${K}.manual.mode`,
    message: 'Unsupported value: "Version": supported values: "OCPVersion", "RHCOSVersion"',
  },
  {
    name: 'OCPVersion requires ocpVersion',
    spec: skew({ mode: 'Manual', manual: { mode: 'OCPVersion' } }),
    code: 'skew-manual-invalid',
    path: `${K}.manual.mode`,
    message: 'ocpVersion is required when mode is OCPVersion, and forbidden otherwise',
  },
  {
    name: 'OCPVersion forbids rhcosVersion',
    spec: skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0', rhcosVersion: '9.6.20250523-1' } }),
    code: 'skew-manual-invalid',
    path: `${K}.manual.rhcosVersion`,
    message: 'rhcosVersion is required when mode is RHCOSVersion, and forbidden otherwise',
  },
  {
    name: 'RHCOSVersion requires rhcosVersion',
    spec: skew({ mode: 'Manual', manual: { mode: 'RHCOSVersion' } }),
    code: 'skew-manual-invalid',
    path: `${K}.manual.mode`,
    message: 'rhcosVersion is required when mode is RHCOSVersion, and forbidden otherwise',
  },
  {
    name: 'RHCOSVersion forbids ocpVersion',
    spec: skew({ mode: 'Manual', manual: { mode: 'RHCOSVersion', rhcosVersion: '9.6.20250523-1', ocpVersion: '4.20.0' } }),
    code: 'skew-manual-invalid',
    path: `${K}.manual.ocpVersion`,
    message: 'ocpVersion is required when mode is OCPVersion, and forbidden otherwise',
  },
  {
    name: 'ocpVersion regex (x.y only)',
    spec: skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20' } }),
    code: 'invalid-format',
    path: `${K}.manual.ocpVersion`,
    message: 'Invalid value: "string": ocpVersion must match the OCP semver compatible format of x.y.z',
  },
  {
    name: 'ocpVersion minLength 5',
    spec: skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.2' } }),
    code: 'too-short',
    path: `${K}.manual.ocpVersion`,
    message: 'should be at least 5 chars long',
  },
  {
    name: 'ocpVersion regex (v prefix)',
    spec: skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: 'v4.20.0' } }),
    code: 'invalid-format',
    path: `${K}.manual.ocpVersion`,
    message: 'ocpVersion must match the OCP semver compatible format of x.y.z',
  },
  {
    name: 'ocpVersion regex (4 parts)',
    spec: skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0.1' } }),
    code: 'invalid-format',
    path: `${K}.manual.ocpVersion`,
    message: 'x.y.z',
  },
  {
    name: 'ocpVersion maxLength 10',
    spec: skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.2000.00000' } }),
    code: 'too-long',
    path: `${K}.manual.ocpVersion`,
    message: 'Too long: may not be more than 10 bytes',
  },
  {
    name: 'rhcosVersion regex (7-digit date)',
    spec: skew({ mode: 'Manual', manual: { mode: 'RHCOSVersion', rhcosVersion: '9.6.2025052-11' } }),
    code: 'invalid-format',
    path: `${K}.manual.rhcosVersion`,
    message:
      'rhcosVersion must match format [major].[minor].[datestamp(YYYYMMDD)]-[buildnumber] or must match legacy format [major].[minor].[timestamp(YYYYMMDDHHmm)]-[buildnumber]',
  },
  {
    name: 'rhcosVersion minLength 14',
    spec: skew({ mode: 'Manual', manual: { mode: 'RHCOSVersion', rhcosVersion: '9.6.20250523' } }),
    code: 'too-short',
    path: `${K}.manual.rhcosVersion`,
    message: 'should be at least 14 chars long',
  },
  {
    name: 'rhcosVersion maxLength 21',
    spec: skew({ mode: 'Manual', manual: { mode: 'RHCOSVersion', rhcosVersion: '4166.9444.202411201433-0' } }),
    code: 'too-long',
    path: `${K}.manual.rhcosVersion`,
    message: 'Too long: may not be more than 21 bytes',
  },
  {
    name: 'controlPlaneMachineSet.strategy enum',
    spec: { controlPlaneMachineSet: { strategy: 'Recreate' } },
    code: 'invalid-enum',
    path: 'spec.controlPlaneMachineSet.strategy',
    message: 'Unsupported value: "Recreate"',
  },
];

for (const r of REJECTED) {
  s(`rejected: ${r.name}`, () => {
    const errs = errorsOf(r.spec);
    const d = errs.find((x) => x.code === r.code && x.path === r.path);
    assert.ok(d, `expected ${r.code} at ${r.path}, got ${JSON.stringify(errs.map((x) => [x.code, x.path, x.message]))}`);
    assert.ok(d!.message.includes(r.message), `message "${d!.message}" lacks "${r.message}"`);
    assert.ok(d!.line! > 0 && d!.column! > 0, 'has a position');
    assert.equal(d!.file, 'bi.yaml');
    assert.equal(load(r.spec).spec, null);
  });
}

s('a value that breaks both a length and the regex is reported twice, as the API does', () => {
  const errs = errorsOf(skew({ mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.2' } }));
  assert.equal(codes(errs), ['invalid-format', 'too-short']);
});

s('positions: file:line:column of the offending field', () => {
  const text = `apiVersion: bootcplan.dev/v1alpha1
kind: Rollout
metadata:
  name: p
spec:
  managedBootImages:
    machineManagers:
      - resource: machinesets
        apiGroup: machine.openshift.io
        selection: {mode: All}
      - resource: controlplanemachinesets
        apiGroup: machine.openshift.io
        selection:
          mode: Partial
          partial: {machineResourceSelector: {matchLabels: {a: b}}}
  bootImageSkewEnforcement:
    mode: Automatic
`;
  const errs = load(text).diagnostics.filter((d) => d.severity === 'error');
  const at = (code: string): Diagnostic => errs.find((d) => d.code === code)!;
  assert.equal([at('cpms-partial-selection').line, at('cpms-partial-selection').column], [14, 17]);
  assert.equal(at('cpms-partial-selection').path, 'spec.managedBootImages.machineManagers[1].selection.mode');
  assert.equal([at('invalid-enum').line, at('invalid-enum').column], [17, 11]);
  assert.match(at('invalid-enum').hint!, /status value/);
});

s('duplicate: points at the second entry and names the first', () => {
  const d = errorsOf(managers(CP('All'), MS('All'), CP('None'))).find((x) => x.code === 'duplicate-machine-manager')!;
  assert.equal(d.path, `${P}[2]`);
  assert.equal(d.message, 'Duplicate value: map[string]interface {}{"apiGroup":"machine.openshift.io", "resource":"controlplanemachinesets"}');
  assert.match(d.hint!, /machineManagers\[0\]/);
});

s('warnings: `machineManagers: []` (legacy opt-out) and an empty selector; the spec stays valid', () => {
  const l = load({ managedBootImages: { machineManagers: [] } });
  assert.ok(l.spec);
  assert.equal(codes(l.diagnostics), ['legacy-empty-machinemanagers']);
  assert.equal(l.diagnostics[0].severity, 'warning');
  assert.match(l.diagnostics[0].hint!, /machinesets with mode None/);
  const e = load(managers(MS('Partial', { machineResourceSelector: {} })));
  assert.ok(e.spec);
  assert.equal(codes(e.diagnostics), ['selector-matches-everything']);
});

s('a wrong-typed discriminator does not also trigger the CEL rules', () => {
  const errs = errorsOf(managers(MS('partial', { machineResourceSelector: { matchLabels: { a: 'b' } } })));
  assert.equal(codes(errs), ['invalid-enum']);
  assert.match(errs[0].hint!, /"Partial"/);
});

s.run();
