import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, NEW, NEW_DIGEST, nodes, specYaml } from '../support/cluster.ts';
import { newSim, planWith, runApply } from '../support/apply.ts';
import { PreconditionFailedError, ConflictError } from '../../src/apply/ports/driver.ts';
import { conditionOf } from '../../src/domain/nodes.ts';

const s = suite('sim');

const D = { stage: 100, drain: 10, reboot: 50, softReboot: 5, ready: 3 };

s('bootc: a new pool target stages every node in parallel; Booted reboots once; soft when capable and allowed', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  // An operator that performs soft reboots (the installed one does not: the next case).
  const sim = newSim(snap, { durations: D, softRebootCapable: (n) => n === 'w-01', bootcOperator: { softReboot: true } });
  const d = sim.driver();
  await d.patch({ apiVersion: 'node.bootc.dev/v1alpha1', kind: 'BootcNodePool', name: 'worker' }, [
    { op: 'replace', path: '/spec/image/ref', value: NEW },
    { op: 'replace', path: '/spec/disruption/rebootPolicy', value: 'AllowSoftReboot' },
  ]);
  assert.is(conditionOf(sim.get('BootcNode', 'w-00'), 'Idle')!.reason, 'Staging');
  const t0 = d.clock.now();
  const staged = await d.waitFor((v) => v.bootcNodes.every((b) => conditionOf(b, 'Idle')?.reason === 'Staged'), { timeoutSeconds: 1000 });
  assert.ok(staged);
  assert.is(d.clock.now() - t0, 100);
  await d.cordon('w-00', 'test');
  await d.cordon('w-01', 'test');
  await d.drain('w-00', { timeoutSeconds: null });
  assert.is(d.clock.now() - t0, 110);
  await d.setDesiredImageState('w-00', 'Booted');
  await d.setDesiredImageState('w-01', 'Booted');
  await d.setDesiredImageState('w-01', 'Booted'); // idempotent: no second reboot
  assert.is(sim.get('Node', 'w-00')!.status!.conditions!.find((c: any) => c.type === 'Ready')!.status, 'Unknown');
  await d.waitFor((v) => v.nodes.every((n) => n.status!.conditions!.find((c: any) => c.type === 'Ready')!.status === 'True'), { timeoutSeconds: 1000 });
  assert.is(d.clock.now() - t0, 163);
  assert.equal(
    sim.reboots.map((r) => `${r.node}:${r.kind}`),
    ['w-00:hard', 'w-01:soft'],
  );
  assert.is(sim.get('BootcNode', 'w-00')!.status!.booted!.imageDigest, NEW_DIGEST);
  assert.is(sim.peakUnavailable.get('worker'), 2);
});

s('bootc: the installed operator reboots fully even when the staged image is soft-capable and the pool allows it', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 1)).snapshot();
  const sim = newSim(snap, { durations: D, softRebootCapable: () => true });
  const d = sim.driver();
  await d.patch({ apiVersion: 'node.bootc.dev/v1alpha1', kind: 'BootcNodePool', name: 'worker' }, [
    { op: 'replace', path: '/spec/image/ref', value: NEW },
    { op: 'replace', path: '/spec/disruption/rebootPolicy', value: 'AllowSoftReboot' },
  ]);
  await d.waitFor((v) => v.bootcNodes.every((b) => conditionOf(b, 'Idle')?.reason === 'Staged'), { timeoutSeconds: 1000 });
  assert.is(sim.get('BootcNode', 'w-00')!.status!.staged!.softRebootCapable, true);
  await d.setDesiredImageState('w-00', 'Booted');
  assert.equal(
    sim.reboots.map((r) => `${r.node}:${r.kind}`),
    ['w-00:hard'],
  );
});

s('a failing JSON-patch test is a precondition failure; nothing is written', async () => {
  const sim = newSim(new ClusterBuilder().bootcPool('worker', nodes('w', 1)).snapshot());
  const d = sim.driver();
  try {
    await d.patch({ apiVersion: 'node.bootc.dev/v1alpha1', kind: 'BootcNodePool', name: 'worker' }, [
      { op: 'test', path: '/spec/image/ref', value: 'quay.io/x/other@sha256:' + '0'.repeat(64) },
      { op: 'replace', path: '/spec/image/ref', value: NEW },
    ]);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, PreconditionFailedError);
  }
  assert.is.not(sim.get('BootcNodePool', 'worker')!.spec!.image!.ref, NEW);
});

s('faults are reproducible from the seed; conflicts are transient and retried by the applier', async () => {
  const runOnce = async (seed: number) => {
    const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 12)).snapshot();
    const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }]), snap);
    const sim = newSim(snap, { faults: { seed, rebootFailRate: 0.15, flapsPerHour: 10, conflictRate: 0.2 } });
    const r = await runApply(sim, plan, replan);
    return JSON.stringify({ code: r.code, events: r.events, reboots: sim.reboots });
  };
  assert.is(await runOnce(42), await runOnce(42));
  assert.is.not(await runOnce(42), await runOnce(43));
  const sim = newSim(new ClusterBuilder().bootcPool('worker', nodes('w', 1)).snapshot(), { faults: { seed: 1, conflictRate: 1 } });
  try {
    await sim.driver().cordon('w-00', 'test');
    assert.unreachable();
  } catch (err) {
    assert.instance(err, ConflictError);
  }
});

s('a node flaps NotReady on its own and comes back', async () => {
  const sim = newSim(new ClusterBuilder().bootcPool('worker', nodes('w', 5)).snapshot(), { faults: { seed: 5, flapsPerHour: 60, flapSeconds: [30, 60] } });
  const d = sim.driver();
  const down = await d.waitFor((v) => v.nodes.find((n) => n.status!.conditions!.find((c: any) => c.type === 'Ready')!.status !== 'True')?.metadata.name, {
    timeoutSeconds: 7200,
  });
  assert.ok(down);
  const back = await d.waitFor(
    (v) => v.nodes.find((n) => n.metadata.name === down)!.status!.conditions!.find((c: any) => c.type === 'Ready')!.status === 'True',
    { timeoutSeconds: 120 },
  );
  assert.ok(back);
});

s('MCO: with the pool unpaused a new osImageURL rolls up to maxUnavailable nodes, zone by zone, oldest first', async () => {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('m', 4, ['us-east-1b', 'us-east-1a'])).snapshot();
  const sim = newSim(snap, { durations: D });
  const d = sim.driver();
  await d.patch({ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: 'worker' }, [
    { op: 'replace', path: '/spec/maxUnavailable', value: 2 },
  ]);
  await d.create({
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: { name: '99-worker-os', labels: { 'machineconfiguration.openshift.io/role': 'worker' } },
    spec: { osImageURL: NEW },
  });
  await d.clock.sleep(1);
  const working = sim
    .view()
    .nodes.filter((n) => n.metadata.annotations?.['machineconfiguration.openshift.io/state'] === 'Working')
    .map((n) => n.metadata.name);
  assert.equal(working, ['m-01', 'm-03'], 'zone us-east-1a first');
  await d.waitFor(
    (v) =>
      v.nodes.every(
        (n) =>
          n.metadata.annotations?.['machineconfiguration.openshift.io/state'] === 'Done' &&
          !n.spec!.unschedulable &&
          n.metadata.annotations?.['machineconfiguration.openshift.io/currentConfig'] ===
            n.metadata.annotations?.['machineconfiguration.openshift.io/desiredConfig'],
      ),
    { timeoutSeconds: 10000 },
  );
  assert.is(sim.reboots.length, 4);
  assert.is(sim.peakUnavailable.get('worker'), 2);
});

s.run();
