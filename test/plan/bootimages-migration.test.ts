/**
 * The legacy opt-out `machineManagers: []` and how the managers are written (docs/design.md §7).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { plan, fullPlan, cluster, MS, CP, codes } from '../support/bootimages.ts';
import jsonpatch from 'fast-json-patch';
const { applyPatch, deepClone } = jsonpatch;

const s = suite('bootimages: legacy migration and managers');
const PTR = '/spec/managedBootImages/machineManagers';

// platform, version, gates -> explicit form written for an observed `[]` with no opinion in the spec
const MIGRATIONS: [string, string, string[], unknown[]][] = [
  ['AWS', '4.22.3', ['ManagedBootImagesCPMS'], [MS('None'), CP('None')]],
  ['GCP', '4.21.0', ['ManagedBootImagesCPMS'], [MS('None'), CP('None')]],
  ['Azure', '4.22.0', ['ManagedBootImagesCPMS'], [MS('None'), CP('None')]],
  ['VSphere', '4.22.0', ['ManagedBootImagesCPMS'], [MS('None')]],
  ['AWS', '4.20.4', [], [MS('None')]],
  ['GCP', '4.19.2', [], [MS('None')]],
  // Before 4.19 there is no mode None: `[]` is kept (test/plan/bootimages-sharing.test.ts).
];
for (const [platform, version, gates, explicit] of MIGRATIONS) {
  s(`observed [] + no opinion on ${platform} ${version} (CPMS gate ${gates.length ? 'on' : 'off'}) -> ${explicit.length} explicit entries`, () => {
    const r = plan({}, { platform, version, gates, machineManagers: [] });
    assert.equal(r.changes.length, 1);
    const c = r.changes[0];
    assert.equal(c.reason, 'migrate-legacy-empty-machinemanagers');
    assert.equal(c.action, 'update');
    assert.equal(c.address, 'MachineConfiguration/cluster');
    assert.equal(c.patch[0], { op: 'test', path: PTR, value: [] });
    assert.equal(c.patch[1], { op: 'replace', path: PTR, value: explicit });
    assert.equal(c.patch.length, 2);
    assert.equal(c.before, { spec: { managedBootImages: { machineManagers: [] } } });
    assert.equal(c.after, { spec: { managedBootImages: { machineManagers: explicit } } });
    assert.equal(c.risk, 'none');
    assert.equal(
      r.diagnostics.filter((d) => d.severity === 'error'),
      [],
    );
  });
}

s('the migration patch applies to the live object and fails if someone changed the list since', () => {
  const snap = cluster({ machineManagers: [] });
  const c = plan({}, snap).changes[0];
  const live = deepClone(snap.machineConfiguration);
  const out = applyPatch(live, c.patch as any, true, false).newDocument;
  assert.equal(out.spec.managedBootImages.machineManagers, [MS('None'), CP('None')]);
  assert.equal(out.spec.logLevel, 'Normal');
  const moved = deepClone(snap.machineConfiguration);
  moved.spec.managedBootImages.machineManagers = [MS('All')];
  assert.throws(() => applyPatch(moved, c.patch as any, true, false));
});

s('not migrated: omitted field (no opinion), a non-empty list, an unsupported platform', () => {
  assert.equal(plan({}, { machineManagers: null }).changes, []);
  assert.equal(plan({}, { machineManagers: [MS('All')] }).changes, []);
  assert.equal(plan({}, { machineManagers: [], platform: 'BareMetal' }).changes, []);
});

s('`[]` in the spec: a warning, and the same explicit form as the migration', () => {
  const p = fullPlan({ managedBootImages: { machineManagers: [] } }, { machineManagers: [] });
  const c = p.changes.find((x) => x.kind === 'MachineConfiguration')!;
  assert.equal(c.reason, 'migrate-legacy-empty-machinemanagers');
  assert.equal(c.patch[1], { op: 'replace', path: PTR, value: [MS('None'), CP('None')] });
  assert.equal(codes(p.diagnostics), ['legacy-empty-machinemanagers']);
  assert.equal(p.diagnostics[0].severity, 'warning');
  // against a cluster without the field, the same explicit form is added
  const r = plan({ managedBootImages: { machineManagers: [] } }, { machineManagers: null });
  assert.equal(r.changes[0].reason, 'managed-boot-images');
  assert.equal(r.changes[0].patch, [{ op: 'add', path: '/spec/managedBootImages', value: { machineManagers: [MS('None'), CP('None')] } }]);
});

s('managers from the spec: update with a test of the old list; same set in another order is a noop', () => {
  const r = plan({ managedBootImages: { machineManagers: [MS('All'), CP('None')] } }, { machineManagers: [MS('None')] });
  assert.equal(r.changes[0].reason, 'managed-boot-images');
  assert.equal(r.changes[0].patch, [
    { op: 'test', path: PTR, value: [MS('None')] },
    { op: 'replace', path: PTR, value: [MS('All'), CP('None')] },
  ]);
  const same = plan({ managedBootImages: { machineManagers: [CP('None'), MS('All')] } }, { machineManagers: [MS('All'), CP('None')] });
  assert.equal(
    same.changes.map((c) => c.action),
    ['noop'],
  );
  assert.equal(same.changes[0].patch, []);
});

s('`managedBootImages: {}` states no opinion on the managers', () => {
  assert.equal(plan({ managedBootImages: {} }, { machineManagers: [MS('All')] }).changes, []);
  assert.equal(plan({ managedBootImages: {} }, { machineManagers: [] }).changes[0].reason, 'migrate-legacy-empty-machinemanagers');
});

s('in the whole plan the MachineConfiguration change comes first, before pool changes', () => {
  const p = fullPlan({ pools: [{ name: 'worker', image: 'quay.io/x/os@sha256:' + 'b'.repeat(64) }] }, { machineManagers: [] });
  // (no worker pool in this cluster: the pool is reported, the migration still comes first)
  assert.equal(p.changes[0].reason, 'migrate-legacy-empty-machinemanagers');
  assert.equal(p.changes[0].order, 1);
});

s.run();
