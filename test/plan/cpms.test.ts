/**
 * ControlPlaneMachineSet: boot-image effect, replacement classification by version, strategy
 * and state, strategy changes, and the cpms-replacement-not-allowed guard (docs/design.md §7).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { plan, fullPlan, MS, CP, OLD_AMI, NEW_AMI, codes, gcpProviderSpec, azureProviderSpec } from '../support/bootimages.ts';

const s = suite('bootimages: ControlPlaneMachineSet');
const optIn = (extra: Record<string, unknown> = {}) => ({ managedBootImages: { machineManagers: [MS('All'), CP('All')] }, ...extra });

// version x observed strategy x state -> replacement (CPMS opted in, AMI changes)
const TABLE: [string, string, string, boolean, RegExp][] = [
  ['4.22.3', 'RollingUpdate', 'Active', false, /the CPMS operator ignores from OpenShift 4.21 on: no machine is replaced/],
  ['4.21.0', 'RollingUpdate', 'Active', false, /the CPMS operator ignores from OpenShift 4.21 on: no machine is replaced/],
  ['4.20.8', 'RollingUpdate', 'Active', true, /before 4.21\) strategy RollingUpdate replaces every control-plane machine, one at a time/],
  ['4.19.3', 'RollingUpdate', 'Active', true, /one at a time/],
  ['4.20.8', 'OnDelete', 'Active', false, /strategy OnDelete: new control-plane machines boot from it once a machine is deleted/],
  ['4.22.3', 'OnDelete', 'Active', false, /strategy OnDelete/],
  ['4.20.8', 'RollingUpdate', 'Inactive', false, /spec.state is Inactive/],
];
for (const [version, strategy, state, replacement, why] of TABLE) {
  s(`opted in, AMI changes, ${version} ${strategy} ${state}: ${replacement ? 'replacement' : 'no replacement'}`, () => {
    const gates = ['ManagedBootImagesCPMS', 'BootImageSkewEnforcement'];
    const r = plan(optIn(), { version, gates, cpms: { strategy, state }, machineManagers: [MS('All'), CP('None')] });
    const cp = r.bootImages.controlPlaneMachineSet!;
    assert.equal([cp.from, cp.to, cp.replacement], [OLD_AMI, NEW_AMI, replacement]);
    assert.match(cp.why, why);
    assert.equal(codes(r.diagnostics, 'error'), replacement ? ['cpms-replacement-not-allowed'] : []);
    const mcChange = r.changes.find((c) => c.kind === 'MachineConfiguration')!;
    assert.equal(mcChange.risk, replacement ? 'replacement' : 'none');
    // allowReplacement: true accepts the same plan
    const ok = plan(optIn({ controlPlaneMachineSet: { allowReplacement: true } }), {
      version,
      gates,
      cpms: { strategy, state },
      machineManagers: [MS('All'), CP('None')],
    });
    assert.equal(codes(ok.diagnostics, 'error'), []);
    assert.equal(ok.bootImages.controlPlaneMachineSet!.replacement, replacement);
  });
}

s('the error: wording, hint with both ways out, and where it points', () => {
  const r = plan(optIn(), { version: '4.20.8', cpms: {}, machineManagers: [MS('All')] });
  const d = r.diagnostics.find((x) => x.code === 'cpms-replacement-not-allowed')!;
  assert.match(d.message, /^this plan replaces control-plane machines: /);
  assert.match(d.hint!, /allowReplacement: true/);
  assert.match(d.hint!, /OnDelete/);
  assert.equal(d.path, 'spec.managedBootImages.machineManagers[1].selection.mode');
  const f = plan(optIn({ controlPlaneMachineSet: { allowReplacement: false } }), { version: '4.20.8', machineManagers: [MS('All')] });
  assert.equal(f.diagnostics.find((x) => x.code === 'cpms-replacement-not-allowed')!.path, 'spec.controlPlaneMachineSet.allowReplacement');
});

s('not opted in, gate off, platform vSphere: the boot image is kept and nothing is replaced', () => {
  const none = plan({ managedBootImages: { machineManagers: [MS('All'), CP('None')] } }, { version: '4.20.8' }).bootImages.controlPlaneMachineSet!;
  assert.equal([none.to, none.replacement], [null, false]);
  assert.match(none.why, /not opted in to boot image updates \(controlplanemachinesets mode None\)/);
  const noGate = plan({}, { version: '4.20.8', gates: ['BootImageSkewEnforcement'], machineManagers: [MS('All')] }).bootImages.controlPlaneMachineSet!;
  assert.match(noGate.why, /FeatureGate ManagedBootImagesCPMS is not enabled/);
  const vs = plan({}, { platform: 'VSphere', machineManagers: [MS('All')] }).bootImages.controlPlaneMachineSet!;
  assert.match(vs.why, /not managed on platform VSphere/);
  // default for the CPMS is None even where MachineSets default to All (sync.go)
  const dflt = plan({}, { machineManagers: null, statusManagers: null }).bootImages.controlPlaneMachineSet!;
  assert.match(dflt.why, /mode None, default/);
});

s('CPMS with owner references is left alone', () => {
  const r = plan(optIn(), { version: '4.20.8', cpms: { ownerReferences: [{ apiVersion: 'x/v1', kind: 'Owner', name: 'o' }] } });
  assert.equal(r.bootImages.controlPlaneMachineSet!.replacement, false);
  assert.match(r.bootImages.controlPlaneMachineSet!.why, /has owner references/);
});

s('GCP and Azure control planes get their platform image', () => {
  const g = plan(optIn(), { platform: 'GCP', cpms: { providerSpec: gcpProviderSpec('projects/rhcos-cloud/global/images/old') } }).bootImages
    .controlPlaneMachineSet!;
  assert.equal(g.to, 'projects/rhcos-cloud/global/images/rhcos-9-6-20261020-0-gcp-x86-64');
  const a = plan(optIn(), {
    platform: 'Azure',
    cpms: { providerSpec: azureProviderSpec({ publisher: 'azureopenshift', offer: 'aro4', sku: '419-v2', version: '1', type: 'MarketplaceNoPlan' }) },
  }).bootImages.controlPlaneMachineSet!;
  assert.equal(a.to, 'azureopenshift:aro4:422-v2:422.96.20261020');
});

// spec.controlPlaneMachineSet.strategy changes
s('strategy change is planned with reason cpms-strategy and a test of the old value', () => {
  const r = plan({ controlPlaneMachineSet: { strategy: 'OnDelete' } }, {});
  const c = r.changes.find((x) => x.reason === 'cpms-strategy')!;
  assert.equal(c.address, 'ControlPlaneMachineSet/openshift-machine-api/cluster');
  assert.equal(c.patch, [
    { op: 'test', path: '/spec/strategy/type', value: 'RollingUpdate' },
    { op: 'replace', path: '/spec/strategy/type', value: 'OnDelete' },
  ]);
  assert.equal(c.risk, 'none');
  assert.equal(
    plan({ controlPlaneMachineSet: { strategy: 'RollingUpdate' } }, {}).changes.map((x) => x.action),
    ['noop'],
  );
  // absent strategy is the default RollingUpdate: nothing to write
  assert.equal(plan({ controlPlaneMachineSet: { strategy: 'RollingUpdate' } }, { cpms: { strategy: null } }).changes, []);
});

s('switch to OnDelete before opting the CPMS in: the strategy goes first, no replacement', () => {
  const r = plan(optIn({ controlPlaneMachineSet: { strategy: 'OnDelete' } }), { version: '4.20.8', machineManagers: [MS('All')] });
  assert.equal(
    r.changes.map((c) => c.reason),
    ['cpms-strategy', 'managed-boot-images'],
  );
  assert.equal(r.bootImages.controlPlaneMachineSet!.replacement, false);
  assert.equal(codes(r.diagnostics, 'error'), []);
});

s('switch to RollingUpdate with out-of-date machines replaces them: risk on the strategy change, error at strategy', () => {
  const r = plan({ controlPlaneMachineSet: { strategy: 'RollingUpdate' } }, { cpms: { strategy: 'OnDelete', updatedReplicas: 1 } });
  const cp = r.bootImages.controlPlaneMachineSet!;
  assert.equal(cp.replacement, true);
  assert.match(cp.why, /2 of 3 control-plane machines differ/);
  const c = r.changes.find((x) => x.reason === 'cpms-strategy')!;
  assert.equal(c.risk, 'replacement');
  assert.equal(r.diagnostics.find((d) => d.code === 'cpms-replacement-not-allowed')!.path, 'spec.controlPlaneMachineSet.strategy');
  // all machines up to date: no replacement
  const fine = plan({ controlPlaneMachineSet: { strategy: 'RollingUpdate' } }, { cpms: { strategy: 'OnDelete', updatedReplicas: 3 } });
  assert.equal([fine.bootImages.controlPlaneMachineSet!.replacement, codes(fine.diagnostics)], [false, []]);
});

s('no CPMS in the cluster: a warning for a strategy, no CPMS line', () => {
  const r = plan({ controlPlaneMachineSet: { strategy: 'OnDelete' } }, { cpms: null });
  assert.equal(codes(r.diagnostics), ['cpms-not-found']);
  assert.equal(r.bootImages.controlPlaneMachineSet, null);
  assert.equal(r.changes, []);
});

s('in the whole plan: MachineConfiguration, then CPMS, then pools; the summary counts the error', () => {
  const p = fullPlan(optIn({ controlPlaneMachineSet: { strategy: 'RollingUpdate' } }), { version: '4.20.8', machineManagers: [MS('All')] });
  assert.equal(p.changes.map((c) => c.kind).slice(0, 2), ['MachineConfiguration', 'ControlPlaneMachineSet']);
  assert.ok(p.summary.errors >= 1);
  assert.ok(p.diagnostics.some((d) => d.code === 'cpms-replacement-not-allowed' && d.severity === 'error'));
});

s.run();
