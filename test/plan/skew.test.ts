/**
 * Skew enforcement ordering: while status.bootImageSkewEnforcementStatus.mode is Automatic the
 * API server rejects an empty list and any MAPI machinesets entry whose mode is not All
 * (types_machineconfiguration.go object-level CEL rules).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { plan, fullPlan, MS, CP, codes, clusterObjects, REGION, OLD_AMI } from '../support/bootimages.ts';
import { machineSetObject } from '../../src/sim/cluster-objects.ts';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { installVersionOf } from '../../src/domain/bootimages-effects.ts';
import { automaticRuleViolation, AUTOMATIC_RULES } from '../../src/domain/bootimages.ts';

const s = suite('bootimages: skew enforcement ordering');
const AUTO = { mode: 'Automatic', automatic: { ocpVersion: '4.19.0' } };
const MANUAL_STATUS = { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.19.0' } };
const MANUAL = { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } };
const sel = { machineResourceSelector: { matchLabels: { 'boot-images': 'managed' } } };

// The object rules on their own (rules 2 and 3), accepted and rejected lists.
const RULES: [string, unknown[] | undefined, string | null][] = [
  ['absent list', undefined, null],
  ['machinesets All', [MS('All')], null],
  ['machinesets All + CPMS None', [MS('All'), CP('None')], null],
  ['CPMS only (no MAPI machinesets entry)', [CP('None')], null],
  ['empty list', [], AUTOMATIC_RULES.notEmpty],
  ['machinesets None', [MS('None')], AUTOMATIC_RULES.machineSetsAll],
  ['machinesets Partial', [MS('Partial', sel)], AUTOMATIC_RULES.machineSetsAll],
];
for (const [name, list, msg] of RULES) {
  s(`Automatic-status rule on ${name}: ${msg ? 'rejected' : 'accepted'}`, () => {
    assert.equal(automaticRuleViolation(list as any)?.message ?? null, msg);
  });
}

// status mode x desired managers x skew choice -> outcome
interface Case {
  name: string;
  status: unknown;
  managers: unknown[];
  skew?: unknown;
  observedSkew?: unknown;
  expect: string;
}
const CASES: Case[] = [
  { name: 'Automatic, opt-out None, skew Manual', status: AUTO, managers: [MS('None')], skew: MANUAL, expect: 'two-steps' },
  { name: 'Automatic, opt-out Partial, skew None', status: AUTO, managers: [MS('Partial', sel)], skew: { mode: 'None' }, expect: 'two-steps' },
  { name: 'Automatic, opt-out [] (explicit None), skew None', status: AUTO, managers: [], skew: { mode: 'None' }, expect: 'two-steps' },
  { name: 'Automatic, opt-out None, no skew choice', status: AUTO, managers: [MS('None')], expect: 'skew-enforcement-choice-required' },
  { name: 'Automatic, opt-out Partial, no skew choice', status: AUTO, managers: [MS('Partial', sel)], expect: 'skew-enforcement-choice-required' },
  { name: 'Automatic, managers All, no skew choice', status: AUTO, managers: [MS('All'), CP('All')], expect: 'one-step' },
  { name: 'Automatic, CPMS only, no skew choice', status: AUTO, managers: [CP('None')], expect: 'one-step' },
  {
    name: 'Automatic, spec skew already Manual but status not synced',
    status: AUTO,
    managers: [MS('None')],
    skew: MANUAL,
    observedSkew: MANUAL,
    expect: 'skew-enforcement-status-pending',
  },
  { name: 'Manual status, opt-out None, no skew choice', status: MANUAL_STATUS, managers: [MS('None')], expect: 'one-step' },
  { name: 'None status, opt-out Partial, no skew choice', status: { mode: 'None' }, managers: [MS('Partial', sel)], expect: 'one-step' },
  { name: 'Manual status, opt-out None, skew None', status: MANUAL_STATUS, managers: [MS('None')], skew: { mode: 'None' }, expect: 'one-step' },
];
for (const c of CASES) {
  s(`${c.name}: ${c.expect}`, () => {
    const spec: Record<string, unknown> = { managedBootImages: { machineManagers: c.managers } };
    if (c.skew) spec.bootImageSkewEnforcement = c.skew;
    const r = plan(spec, { skewStatus: c.status, machineManagers: [MS('All')], specSkew: c.observedSkew });
    const errs = codes(r.diagnostics, 'error');
    const updates = r.changes.filter((x) => x.action === 'update');
    if (c.expect === 'two-steps') {
      assert.equal(errs, []);
      assert.equal(
        updates.map((x) => x.reason),
        ['boot-image-skew-enforcement', 'managed-boot-images'],
      );
      assert.equal(updates[0].waitAfter?.kind, 'skew-enforcement-not-automatic');
      assert.ok(!updates[1].waitAfter);
    } else if (c.expect === 'one-step') {
      assert.equal(errs, []);
      assert.ok(updates.every((x) => !x.waitAfter));
      assert.equal(updates.at(-1)!.reason, 'managed-boot-images');
    } else {
      assert.equal(errs, [c.expect]);
    }
  });
}

s('the plan error explains both choices and points at the offending mode', () => {
  const r = plan({ managedBootImages: { machineManagers: [CP('None'), MS('None')] } }, { skewStatus: AUTO, machineManagers: [MS('All')] });
  const d = r.diagnostics.find((x) => x.code === 'skew-enforcement-choice-required')!;
  assert.equal(d.path, 'spec.managedBootImages.machineManagers[1].selection.mode');
  assert.ok(d.line && d.column);
  assert.ok(d.message.includes(AUTOMATIC_RULES.machineSetsAll));
  assert.match(d.hint!, /mode: Manual/);
  assert.match(d.hint!, /mode: None/);
  assert.match(d.hint!, /ocpVersion/);
});

s('two steps in the whole plan: orders 1 and 2, the wait on the first, before any pool change', () => {
  const p = fullPlan(
    { managedBootImages: { machineManagers: [MS('None')] }, bootImageSkewEnforcement: MANUAL },
    { skewStatus: AUTO, machineManagers: [MS('All')] },
  );
  assert.equal(
    p.changes.slice(0, 2).map((c) => [c.order, c.reason]),
    [
      [1, 'boot-image-skew-enforcement'],
      [2, 'managed-boot-images'],
    ],
  );
  assert.match(p.changes[0].waitAfter!.description, /no longer Automatic/);
  assert.equal(p.summary.errors, 0);
});

s('migration under Automatic without a skew choice: a plan error at spec.bootImageSkewEnforcement', () => {
  const r = plan({}, { skewStatus: AUTO, machineManagers: [] });
  const d = r.diagnostics.find((x) => x.code === 'skew-enforcement-choice-required')!;
  assert.equal(d.path, 'spec.bootImageSkewEnforcement');
});

s('rule 4: a status without MAPI All rejects every write while Automatic', () => {
  const r = plan({ bootImageSkewEnforcement: { mode: 'None' } }, { skewStatus: AUTO, machineManagers: [MS('All')], statusManagers: [MS('None')] });
  assert.equal(codes(r.diagnostics, 'error'), ['skew-enforcement-status-invalid']);
  assert.ok(r.diagnostics[0].message.includes(AUTOMATIC_RULES.statusAll));
  // no write, no error
  assert.equal(codes(plan({}, { skewStatus: AUTO, machineManagers: [MS('All')], statusManagers: [MS('None')] }).diagnostics), []);
});

s('the skew change replaces the whole union (no stale manual next to mode None), with a test first', () => {
  const r = plan({ bootImageSkewEnforcement: { mode: 'None' } }, { specSkew: MANUAL });
  assert.equal(r.changes[0].patch, [
    { op: 'test', path: '/spec/bootImageSkewEnforcement', value: MANUAL },
    { op: 'replace', path: '/spec/bootImageSkewEnforcement', value: { mode: 'None' } },
  ]);
  const add = plan({ bootImageSkewEnforcement: MANUAL }, {});
  assert.equal(add.changes[0].patch, [{ op: 'add', path: '/spec/bootImageSkewEnforcement', value: MANUAL }]);
  assert.equal(plan({ bootImageSkewEnforcement: MANUAL }, { specSkew: MANUAL }).changes[0].action, 'noop');
});

// machine-config-operator f617a2c54 (ms_helpers.go syncMAPIMachineSets): under Automatic, a
// reconcile-skipped opted-in MachineSet makes the MCO reset the cluster's boot image record to
// the install version; below 4.13.0 that is Upgradeable=False (pkg/operator/status.go).
function skewCluster(o: { multiArch?: boolean; installVersion?: string; managers?: unknown[]; skewStatus?: unknown } = {}) {
  const owned = machineSetObject('w-owned', 'us-east-1b', REGION, OLD_AMI) as any;
  owned.metadata.ownerReferences = [{ apiVersion: 'hive.openshift.io/v1', kind: 'MachinePool', name: 'pool-a' }];
  const plain = machineSetObject('w-plain', 'us-east-1a', REGION, OLD_AMI) as any;
  const objs = clusterObjects({
    skewStatus: o.skewStatus ?? AUTO,
    machineManagers: o.managers ?? [MS('All')],
    multiArch: o.multiArch,
    machineSets: [plain, owned],
  }) as any[];
  if (o.installVersion) objs.find((x) => x.kind === 'ClusterVersion').status.history.push({ state: 'Completed', version: o.installVersion });
  return snapshotFromObjects(objs, 'test');
}

s('Automatic + machinesets All + a MachineSet with an owner reference: a warning naming it, the install version, the remedies', () => {
  const r = plan({ managedBootImages: { machineManagers: [MS('All')] } }, skewCluster());
  const d = r.diagnostics.find((x) => x.code === 'boot-image-skew-record-reset')!;
  assert.ok(d, JSON.stringify(r.diagnostics.map((x) => x.code)));
  assert.is(d.severity, 'warning');
  assert.match(d.message, /w-owned \(owner reference MachinePool\/pool-a\)/);
  assert.not.match(d.message, /w-plain/);
  assert.match(d.message, /install version \(4\.22\.0\)/);
  assert.not.match(d.message, /Upgradeable=False/, '4.22.0 is not below the skew limit');
  assert.match(d.hint!, /remove the owner reference/);
  assert.match(d.hint!, /capacity\.cluster-autoscaler\.kubernetes\.io\/labels/);
  assert.match(d.hint!, /Manual/);
});

s('an install version before 4.13.0: the warning says Upgradeable=False', () => {
  const r = plan({ managedBootImages: { machineManagers: [MS('All')] } }, skewCluster({ installVersion: '4.12.9' }));
  const d = r.diagnostics.find((x) => x.code === 'boot-image-skew-record-reset')!;
  assert.match(d.message, /install version \(4\.12\.9\).*Upgradeable=False \(ClusterBootImageSkewError\)/);
});

s('a multi-architecture cluster: a MachineSet without the arch annotation is skipped too', () => {
  const snap = skewCluster({ multiArch: true });
  const plain = snap.machineSets.find((m) => m.metadata.name === 'w-plain')!;
  delete plain.metadata.annotations?.['capacity.cluster-autoscaler.kubernetes.io/labels'];
  const r = plan({ managedBootImages: { machineManagers: [MS('All')] } }, snap);
  const d = r.diagnostics.find((x) => x.code === 'boot-image-skew-record-reset')!;
  assert.match(d.message, /2 opted-in MachineSet\(s\)/);
  assert.match(d.message, /w-plain \(no capacity\.cluster-autoscaler\.kubernetes\.io\/labels annotation on a multi-architecture cluster\)/);
  // The same MachineSet with the annotation is reconciled.
  plain.metadata.annotations = { ...plain.metadata.annotations, 'capacity.cluster-autoscaler.kubernetes.io/labels': 'kubernetes.io/arch=amd64' };
  const r2 = plan({ managedBootImages: { machineManagers: [MS('All')] } }, snap);
  assert.match(r2.diagnostics.find((x) => x.code === 'boot-image-skew-record-reset')!.message, /1 opted-in MachineSet\(s\)[^]*w-owned/);
});

s('no warning when skew enforcement leaves Automatic, or no MachineSet is skipped', () => {
  const manual = plan(
    { bootImageSkewEnforcement: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } }, managedBootImages: { machineManagers: [MS('All')] } },
    skewCluster(),
  );
  assert.not.ok(manual.diagnostics.some((x) => x.code === 'boot-image-skew-record-reset'));
  const none = plan({ managedBootImages: { machineManagers: [MS('All')] } }, skewCluster({ skewStatus: { mode: 'None' } }));
  assert.not.ok(none.diagnostics.some((x) => x.code === 'boot-image-skew-record-reset'));
  const clean = plan({ managedBootImages: { machineManagers: [MS('All')] } }, { skewStatus: AUTO, machineManagers: [MS('All')] });
  assert.not.ok(clean.diagnostics.some((x) => x.code === 'boot-image-skew-record-reset'));
});

s('the install version is the oldest Completed entry of ClusterVersion history (the MCO GetOCPInstallVersion)', () => {
  const cv = (history: unknown[]) =>
    ({ apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' }, status: { history } }) as any;
  assert.is(
    installVersionOf(
      cv([
        { state: 'Completed', version: '4.20.1' },
        { state: 'Partial', version: '4.19.2' },
        { state: 'Completed', version: '4.18.3' },
        { state: 'Partial', version: '4.18.0-rc.1' },
      ]),
    ),
    '4.18.3',
  );
  assert.is(installVersionOf(cv([{ state: 'Partial', version: '4.19.2' }])), '4.19.2');
  assert.is(installVersionOf(cv([])), '0.0.0');
  assert.is(installVersionOf(null), null);
});

s.run();
