/**
 * Rules that depend on the cluster: platform (AWS, GCP, VSphere, Azure; CPMS only AWS, GCP,
 * Azure), FeatureGate ManagedBootImagesCPMS and BootImageSkewEnforcement, across versions.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { plan, MS, CP, codes, errors } from '../support/bootimages.ts';
import { enabledGates } from '../../src/domain/bootimages-cluster.ts';

const s = suite('bootimages: cluster rules');
const both = { managedBootImages: { machineManagers: [MS('All'), CP('None')] } };
const msOnly = { managedBootImages: { machineManagers: [MS('All')] } };

// platform x (machinesets only | with a CPMS entry) -> expected error codes
const PLATFORMS: [string, string[], string[]][] = [
  ['AWS', [], []],
  ['GCP', [], []],
  ['Azure', [], []],
  ['VSphere', [], ['cpms-boot-images-unsupported-platform']],
  ['BareMetal', ['managed-boot-images-unsupported-platform'], ['managed-boot-images-unsupported-platform']],
  ['OpenStack', ['managed-boot-images-unsupported-platform'], ['managed-boot-images-unsupported-platform']],
  ['Nutanix', ['managed-boot-images-unsupported-platform'], ['managed-boot-images-unsupported-platform']],
  ['None', ['managed-boot-images-unsupported-platform'], ['managed-boot-images-unsupported-platform']],
];
for (const [platform, msErrs, cpErrs] of PLATFORMS) {
  s(`platform ${platform}: machinesets entry ${msErrs.length ? 'rejected' : 'accepted'}, CPMS entry ${cpErrs.length ? 'rejected' : 'accepted'}`, () => {
    assert.equal(codes(errors(plan(msOnly, { platform }).diagnostics)), msErrs);
    assert.equal(codes(errors(plan(both, { platform }).diagnostics)), cpErrs);
  });
}

s('unsupported platform: wording, path and position', () => {
  const d = plan(msOnly, { platform: 'BareMetal' }).diagnostics[0];
  assert.equal(d.message, 'This feature is only supported on these platforms: AWS, GCP, VSphere, Azure (this cluster: BareMetal)');
  assert.equal(d.path, 'spec.managedBootImages');
  assert.ok(d.line && d.file === 'bi.yaml');
  const v = errors(plan(both, { platform: 'VSphere' }).diagnostics)[0];
  assert.equal(v.path, 'spec.managedBootImages.machineManagers[1].resource');
  assert.match(v.message, /only supported on these platforms: AWS, GCP, Azure \(this cluster: VSphere\)/);
});

// FeatureGate ManagedBootImagesCPMS x version: the CPMS entry exists only with the gate.
const GATES: [string, string[] | null, string[], string[]][] = [
  ['4.20.8', ['BootImageSkewEnforcement'], ['cpms-feature-gate-disabled'], []],
  ['4.21.2', ['BootImageSkewEnforcement'], ['cpms-feature-gate-disabled'], []],
  ['4.21.2', ['ManagedBootImagesCPMS', 'BootImageSkewEnforcement'], [], []],
  ['4.22.3', ['ManagedBootImagesCPMS'], [], []],
  ['4.22.3', [], ['cpms-feature-gate-disabled'], []],
  ['4.22.3', null, [], ['feature-gates-unknown']],
];
for (const [version, gates, errs, warns] of GATES) {
  s(`CPMS entry on ${version} with gates ${gates === null ? '(no FeatureGate)' : JSON.stringify(gates)}: ${errs.length ? 'rejected' : 'accepted'}`, () => {
    const r = plan(both, { version, gates });
    assert.equal(codes(r.diagnostics, 'error'), errs);
    assert.equal(codes(r.diagnostics, 'warning'), warns);
    // machinesets alone never needs the gate
    assert.equal(codes(plan(msOnly, { version, gates }).diagnostics, 'error'), []);
  });
}

s('gate disabled: the API enum wording, at the resource field', () => {
  const d = plan(both, { gates: [] }).diagnostics.find((x) => x.code === 'cpms-feature-gate-disabled')!;
  assert.equal(d.message, 'Unsupported value: "controlplanemachinesets": supported values: "machinesets"');
  assert.equal(d.path, 'spec.managedBootImages.machineManagers[1].resource');
  assert.match(d.hint!, /ManagedBootImagesCPMS/);
});

s('FeatureGate: the entry of the desired version is used, else the first', () => {
  const fg = {
    apiVersion: 'config.openshift.io/v1',
    kind: 'FeatureGate',
    metadata: { name: 'cluster' },
    status: {
      featureGates: [
        { version: '4.21.9', enabled: [{ name: 'ManagedBootImagesCPMS' }] },
        { version: '4.22.3', enabled: [{ name: 'Other' }] },
      ],
    },
  };
  assert.equal([...enabledGates(fg, '4.22.3')!], ['Other']);
  assert.equal([...enabledGates(fg, '4.21.9')!], ['ManagedBootImagesCPMS']);
  assert.equal([...enabledGates(fg, '9.9.9')!], ['ManagedBootImagesCPMS']);
  assert.equal(enabledGates(null, '4.22.3'), null);
});

const SKEW = { bootImageSkewEnforcement: { mode: 'None' } };
for (const [gates, errs] of [
  [['BootImageSkewEnforcement'], []],
  [['ManagedBootImagesCPMS'], ['skew-enforcement-feature-gate-disabled']],
  [null, []],
] as const) {
  s(`bootImageSkewEnforcement with gates ${JSON.stringify(gates)}: ${errs.length ? 'rejected' : 'accepted'}`, () => {
    assert.equal(codes(plan(SKEW, { gates: gates as string[] | null }).diagnostics, 'error'), [...errs]);
  });
}

s('no MachineConfiguration in the cluster: an error when the spec has boot image settings, nothing otherwise', () => {
  assert.equal(codes(plan(msOnly, { noMachineConfiguration: true }).diagnostics, 'error'), ['machineconfiguration-not-found']);
  assert.equal(plan({}, { noMachineConfiguration: true }).diagnostics, []);
});

s.run();
