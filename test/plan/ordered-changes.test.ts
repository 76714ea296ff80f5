/**
 * Issue "Never fight another controller", rule 1: several changes to one object (the skew
 * step, then the managers step after its waitAfter) are planned, compared for staleness and
 * applied as separate, ordered changes.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { MS, cluster, clusterObjects } from '../support/bootimages.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { remainingWorkDifference } from '../../src/plan/saved/remaining-work.ts';
import { cli } from '../support/cli.ts';

const s = suite('ordered changes to one object');

const AUTO = { mode: 'Automatic' };
const spec = stringify({
  apiVersion: 'bootcplan.dev/v1alpha1',
  kind: 'Rollout',
  metadata: { name: 'skew' },
  spec: {
    managedBootImages: { machineManagers: [MS('None')] },
    bootImageSkewEnforcement: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } },
  },
});

s('the skew opt-out flow: two changes to MachineConfiguration/cluster, planned in order', () => {
  const { plan } = planWith(spec, cluster({ skewStatus: AUTO, machineManagers: [MS('All')] }));
  const mc = plan.changes.filter((c) => c.address === 'MachineConfiguration/cluster' && c.action !== 'noop');
  assert.equal(
    mc.map((c) => c.reason),
    ['boot-image-skew-enforcement', 'managed-boot-images'],
  );
  assert.ok(mc[0].order < mc[1].order);
  assert.is(mc[0].waitAfter?.kind, 'skew-enforcement-not-automatic');
});

s('a plan with both steps is not stale against the cluster it was made from', () => {
  const snap = cluster({ skewStatus: AUTO, machineManagers: [MS('All')] });
  const { plan, replan } = planWith(spec, snap);
  assert.equal(remainingWorkDifference(plan, replan(snap), snap), []);
});

s('a rehearsal of the skew opt-out completes: skew first, wait until the status leaves Automatic, then the managers', async () => {
  const snap = snapshotFromObjects(clusterObjects({ skewStatus: AUTO, machineManagers: [MS('All')] }), 'test');
  const { plan, replan } = planWith(spec, snap);
  const sim = newSim(snap);
  const r = await runApply(sim, plan, replan);
  assert.is(r.error, null, String(r.error));
  assert.is(r.result?.outcome, 'done');
  const steps = r.events.filter((e) => e.type === 'change' || e.type === 'wait').map((e) => `${e.type} ${'address' in e ? e.address : ''}`);
  assert.equal(steps, ['change MachineConfiguration/cluster', 'wait MachineConfiguration/cluster', 'change MachineConfiguration/cluster']);
  const live = await r.driver.snapshot();
  const mc = live.machineConfiguration!;
  assert.equal(mc.spec!.bootImageSkewEnforcement!.mode, 'Manual');
  assert.equal(mc.spec!.managedBootImages!.machineManagers, [MS('None')]);
  assert.is.not(mc.status!.bootImageSkewEnforcementStatus!.mode, 'Automatic');
});

s('after the first step is in the cluster, the rest of the plan is still the managers step (resume)', () => {
  const snap = cluster({ skewStatus: AUTO, machineManagers: [MS('All')] });
  const { plan, replan } = planWith(spec, snap);
  // The skew step applied and observed: spec Manual, status Manual.
  const after = cluster({
    skewStatus: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } },
    specSkew: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } },
    machineManagers: [MS('All')],
  });
  assert.equal(remainingWorkDifference(plan, replan(after), after), []);
});

s('a saved plan whose managers step lost its waitAfter differs from the fresh plan (sealed plans, cluster moved)', async () => {
  const { pendingChangeDifference } = await import('../../src/plan/saved/compare.ts');
  const snap = cluster({ skewStatus: AUTO, machineManagers: [MS('All')] });
  const { plan, replan } = planWith(spec, snap);
  const edited = structuredClone(plan);
  edited.changes.find((c) => c.waitAfter)!.waitAfter = null;
  assert.equal(pendingChangeDifference(plan, replan(snap)), []);
  const diff = pendingChangeDifference(edited, replan(snap));
  assert.is(diff.length, 1);
  assert.match(diff[0], /^~ MachineConfiguration\/cluster: waitAfter is null in the plan file, \{"kind":"skew-enforcement-not-automatic"/);
});

s('bootcplan rehearse of the skew opt-out: exit 0, and the event stream shows skew, wait, managers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-skew-'));
  writeFileSync(join(dir, 'spec.yaml'), spec);
  writeFileSync(
    join(dir, 'cluster.yaml'),
    stringify({ apiVersion: 'v1', kind: 'List', items: clusterObjects({ skewStatus: AUTO, machineManagers: [MS('All')] }) }),
  );
  const { code, out, err } = await cli(['rehearse', '-f', join(dir, 'spec.yaml'), '--cluster', join(dir, 'cluster.yaml'), '-o', 'json']);
  assert.is(code, 0, err);
  const r = JSON.parse(out);
  assert.is(r.halted, false);
  const steps = r.events.filter((e: { type: string }) => e.type === 'change' || e.type === 'wait').map((e: { type: string; message: string }) => e.type);
  assert.equal(steps, ['change', 'wait', 'change']);
});

s.run();
