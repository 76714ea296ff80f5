/**
 * docs/safety.md rules 9 and 10: boot-image predictions read MachineConfiguration status only
 * when it has observed the current spec (status.observedGeneration == metadata.generation);
 * the explicit selection mode None exists from OpenShift 4.19 (4.16-4.18 keep the legacy
 * `machineManagers: []`, and `mode: None` is an error there); Azure Stack Hub gets no boot
 * image updates at all.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { plan, fullPlan, clusterObjects, MS, CP, codes, errors, NEW_AMI, type ClusterOpts } from '../support/bootimages.ts';
import { newSim } from '../support/apply.ts';
import type { TestObject } from '../support/cluster.ts';

const s = suite('bootimages: status behind, versions and platforms');

/** A cluster whose MachineConfiguration has these generations (null: field absent). */
function withGenerations(o: ClusterOpts, generation: number | null, observed: number | null) {
  const objs: TestObject[] = clusterObjects(o);
  const mc = objs.find((x) => x.kind === 'MachineConfiguration')!;
  if (generation !== null) mc.metadata.generation = generation;
  if (observed !== null) mc.status.observedGeneration = observed;
  return snapshotFromObjects(objs, 'test');
}

/** Azure, with a cloudName; an Azure providerSpec is not needed: nothing may be predicted. */
function azure(cloudName: string, o: ClusterOpts = {}) {
  const objs: TestObject[] = clusterObjects({ platform: 'Azure', ...o });
  const infra = objs.find((x) => x.kind === 'Infrastructure')!;
  infra.status.platformStatus = { type: 'Azure', azure: { cloudName } };
  return snapshotFromObjects(objs, 'test');
}

// ---- rule 9 -----------------------------------------------------------------------------

// The admin just set machinesets None; the MCO has not synced, so status still says All.
const behindOpts: ClusterOpts = { machineManagers: [MS('None')], statusManagers: [MS('All')] };

s('status behind the spec (observedGeneration 2, generation 3): a warning, and the prediction follows the spec', () => {
  const r = plan({}, withGenerations(behindOpts, 3, 2));
  const d = r.diagnostics.find((x) => x.code === 'machineconfiguration-status-behind')!;
  assert.ok(d, JSON.stringify(r.diagnostics));
  assert.is(d.severity, 'warning');
  assert.match(d.message, /observedGeneration 2/);
  assert.match(d.message, /generation 3/);
  const ms = r.bootImages.machineSets[0];
  assert.is(ms.to, null, 'predicted from spec.managedBootImages (None), not the stale status (All)');
  assert.match(ms.skipped!, /not opted in/);
});

s('status that has observed the spec is used as it is; no warning', () => {
  const r = plan({}, withGenerations(behindOpts, 3, 3));
  assert.equal(codes(r.diagnostics), []);
  assert.is(r.bootImages.machineSets[0].to, NEW_AMI, 'the MCO status (All) decides');
});

s('no observedGeneration at all while metadata.generation is set: behind (the MCO never reported on this spec)', () => {
  const r = plan({}, withGenerations(behindOpts, 1, null));
  assert.ok(r.diagnostics.some((x) => x.code === 'machineconfiguration-status-behind'));
  assert.is(r.bootImages.machineSets[0].to, null);
});

s('a snapshot without metadata.generation cannot be judged: the status is used, no warning', () => {
  const r = plan({}, withGenerations(behindOpts, null, null));
  assert.equal(codes(r.diagnostics), []);
  assert.is(r.bootImages.machineSets[0].to, NEW_AMI);
});

s('the simulated MCO reports observedGeneration: behind right after a spec write, current once it synced', async () => {
  const sim = newSim(withGenerations({ machineManagers: [MS('All')] }, 1, 1));
  const d = sim.driver();
  await d.patch({ apiVersion: 'operator.openshift.io/v1', kind: 'MachineConfiguration', name: 'cluster' }, [
    { op: 'replace', path: '/spec/managedBootImages/machineManagers', value: [MS('None')] },
  ]);
  const behind = (r: ReturnType<typeof plan>) => r.diagnostics.some((x) => x.code === 'machineconfiguration-status-behind');
  const now = plan({}, sim.snapshotCopy());
  assert.ok(behind(now));
  assert.is(now.bootImages.machineSets[0].to, null, 'predicted from the new spec (None)');
  sim.advance(10);
  const later = plan({}, sim.snapshotCopy());
  assert.not.ok(behind(later));
  assert.is(later.bootImages.machineSets[0].to, null, 'the status now says None too');
});

// ---- rule 10: versions ------------------------------------------------------------------

s('before 4.19 the legacy `machineManagers: []` is kept: no migration change, and a warning that says why', () => {
  for (const version of ['4.16.12', '4.17.3', '4.18.2']) {
    const r = plan({}, { platform: 'GCP', version, gates: [], machineManagers: [] });
    assert.equal(r.changes, [], version);
    const d = r.diagnostics.find((x) => x.code === 'legacy-empty-machinemanagers-kept')!;
    assert.ok(d, `${version}: ${JSON.stringify(r.diagnostics)}`);
    assert.is(d.severity, 'warning');
    assert.match(d.message, new RegExp(version.replace(/\./g, '\\.')));
    assert.match(d.message, /4\.19/);
  }
  // 4.19 has mode None: migrated (test/plan/bootimages-migration.test.ts has the forms).
  assert.equal(plan({}, { platform: 'GCP', version: '4.19.0', gates: [], machineManagers: [] }).changes[0].reason, 'migrate-legacy-empty-machinemanagers');
});

s('before 4.19, `machineManagers: []` in the spec is written as it is, and the spec warning about the explicit form is replaced', () => {
  const p = fullPlan({ managedBootImages: { machineManagers: [] } }, { version: '4.18.9', gates: [], machineManagers: null });
  const c = p.changes.find((x) => x.kind === 'MachineConfiguration')!;
  assert.equal(c.after, { spec: { managedBootImages: { machineManagers: [] } } });
  assert.equal(codes(p.diagnostics), ['legacy-empty-machinemanagers-kept']);
  const same = fullPlan({ managedBootImages: { machineManagers: [] } }, { version: '4.18.9', gates: [], machineManagers: [] });
  assert.equal(
    same.changes.filter((x) => x.kind === 'MachineConfiguration').map((x) => x.action),
    ['noop'],
  );
});

s('`mode: None` in the spec on a cluster before 4.19 is an error at the field (the enum is All, Partial there)', () => {
  const p = fullPlan(
    { managedBootImages: { machineManagers: [MS('All'), CP('None')] } },
    { version: '4.18.9', gates: ['ManagedBootImagesCPMS'], machineManagers: null },
  );
  const [d] = errors(p.diagnostics).filter((x) => x.code === 'selection-mode-none-unsupported');
  assert.ok(d, JSON.stringify(p.diagnostics));
  assert.equal([d.path, d.line, d.column], ['spec.managedBootImages.machineManagers[1].selection.mode', 15, 17]);
  assert.match(d.message, /Unsupported value: "None": supported values: "All", "Partial"/);
  assert.match(d.hint!, /4\.19/);
  const ok = fullPlan({ managedBootImages: { machineManagers: [MS('None')] } }, { version: '4.19.0', gates: [], machineManagers: null });
  assert.equal(errors(ok.diagnostics), []);
});

// ---- rule 10: Azure Stack Hub ----------------------------------------------------------

s('Azure Stack Hub: no managers written, a warning says why, nothing predicted', () => {
  const spec = { managedBootImages: { machineManagers: [MS('All')] } };
  const r = plan(spec, azure('AzureStackCloud', { machineManagers: null, gates: ['ManagedBootImagesCPMS'] }));
  assert.equal(r.changes, []);
  const d = r.diagnostics.find((x) => x.code === 'boot-images-azure-stack-hub')!;
  assert.ok(d, JSON.stringify(r.diagnostics));
  assert.is(d.severity, 'warning');
  assert.is(d.path, 'spec.managedBootImages');
  assert.match(d.message, /AzureStackCloud/);
  assert.equal(errors(r.diagnostics), []);
  assert.equal(r.bootImages.machineSets, []);
  assert.is(r.bootImages.controlPlaneMachineSet?.to ?? null, null);
  // and the legacy opt-out is not migrated there either
  assert.equal(plan({}, azure('AzureStackCloud', { machineManagers: [] })).changes, []);
  // Azure public cloud: the managers are written
  const pub = plan(spec, azure('AzurePublicCloud', { machineManagers: null }));
  assert.is(pub.changes[0].reason, 'managed-boot-images');
  assert.equal(
    codes(pub.diagnostics).filter((c) => c === 'boot-images-azure-stack-hub'),
    [],
  );
});

s.run();
