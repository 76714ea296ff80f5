/**
 * A rollback in the simulator, end to end (docs/apply.md "Rollback"): a run updates some nodes,
 * `plan --rollback` (planRollback from the run record and the cluster) returns exactly those to
 * the image each booted before, through the same applier (budget, cordon, drain, staging gate),
 * and the pools are held for the run's image afterwards.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { stepOnce, rollbackOf } from '../../support/rollback.ts';
import { HeldTargetError } from '../../../src/base/errors.ts';
import { nodeProgressOf } from '../../../src/cluster/progress.ts';
import { MCO_CURRENT_CONFIG } from '../../../src/domain/labels.ts';
import { imageRef } from '../../../src/sim/fake-ids.ts';
import { renderText } from '../../../src/render/text.ts';
import { nodeObject, mcoAnnotations } from '../../../src/sim/node-objects.ts';
import { isoOf } from '../../../src/apply/ports/driver.ts';
import { planRollback } from '../../../src/plan/rollback-planner.ts';

const t = suite('rollback: plan --rollback and its apply (sim)');
const OLD_DIGEST = OLD.slice(OLD.indexOf('@') + 1);

/** Six bootc workers, maxUnavailable 2: wave 1 of the run updated (w-00, w-01 by the plan's order). */
async function afterWaveOne() {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]);
  const fwd = planWith(spec, snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  const updated = fwd.plan.pools[0].waves[0];
  for (const n of updated) assert.is(sim.get('BootcNode', n)!.status?.booted?.imageDigest, NEW_DIGEST);
  return { sim, fwd, updated, rest: fwd.plan.pools[0].waves.slice(1).flat() };
}

t('bootc: the plan takes back exactly the nodes the run updated, through the pool image, within the budget', async () => {
  const { sim, updated, rest } = await afterWaveOne();
  const { plan } = await rollbackOf(sim);
  assert.is(plan.formatVersion, '1.2');
  assert.is(plan.diagnostics.filter((d) => d.severity === 'error').length, 0, JSON.stringify(plan.diagnostics));
  const [pool] = plan.pools;
  assert.equal(pool.nodes.map((n) => n.name).sort(), [...updated].sort());
  assert.ok(pool.nodes.every((n) => n.from === NEW_DIGEST && n.to === OLD_DIGEST));
  assert.equal(
    pool.waves.map((w) => w.length),
    [2],
  );
  assert.equal(pool.rollback, { available: true, to: OLD, via: 'BootcNodePool/worker spec.image.ref', download: false, why: null });
  assert.equal(
    plan.changes.map((c) => [c.address, c.action, c.reason]),
    [['BootcNodePool/worker', 'update', 'pool-image-rollback']],
  );
  assert.equal(plan.changes[0].patch, [
    { op: 'test', path: '/spec/image/ref', value: NEW },
    { op: 'replace', path: '/spec/image/ref', value: OLD },
  ]);
  // The nodes of later waves staged the run's image before the first wave: they are listed.
  assert.equal(plan.rollback!.leftovers.map((l) => l.node).sort(), [...rest].sort());
  assert.ok(plan.diagnostics.some((d) => d.code === 'rollback-target-still-staged'));
});

t('bootc: applying it returns those nodes to the image each booted, reboots no other node, and holds the pool', async () => {
  const { sim, fwd, updated, rest } = await afterWaveOne();
  const { plan, replan } = await rollbackOf(sim);
  const cordonsBefore = sim.cordons.length;
  const r = await runApply(sim, plan, replan);
  assert.is(r.error, null, String((r.error as Error)?.stack ?? r.error));
  for (const n of updated) {
    const bn = sim.get('BootcNode', n)!;
    assert.is(bn.status?.booted?.image, OLD, n);
    assert.is(bn.status?.rollback?.imageDigest, NEW_DIGEST, `${n}: bootc keeps the run's image as the rollback deployment`);
    assert.is(nodeProgressOf(sim.get('Node', n))?.from, NEW, `${n}: the rollback's own entry records what it went back from`);
  }
  const rolled = sim.cordons.slice(cordonsBefore);
  assert.equal(rolled.map((c) => c.node).sort(), [...updated].sort(), 'only the updated nodes were cordoned');
  for (const c of rolled) assert.ok(c.unavailableAfter <= 2, `${c.node}: ${c.unavailableAfter} out of service`);
  for (const n of rest) assert.is(sim.rebootCounts().get(n) ?? 0, 0, n);
  for (const [n, k] of sim.rebootCounts()) assert.ok(k <= 2, `${n} rebooted ${k} times`);
  assert.is(sim.get('BootcNodePool', 'worker')!.spec?.image?.ref, OLD);
  const types = r.events.map((e) => e.type);
  assert.ok(types.indexOf('rollback-start') < types.indexOf('cordon') && types.includes('rollback-done'));
  assert.ok(r.events.filter((e) => e.type === 'cordon').every((e) => 'rollback' in e && e.rollback === true));
  const rec = (await sim.driver().readProgress()).run!;
  assert.equal(rec.rollbackOf?.planId, fwd.plan.id);
  assert.equal(
    rec.holds?.map((h) => [h.pool, h.target, h.action]),
    [['worker', NEW_DIGEST, 'rolled-back']],
  );

  // The forward plan again (a CronJob): held, exit 5, nothing written.
  const writes = sim.writes.length;
  const again = await runApply(sim, fwd.plan, fwd.replan, { step: true });
  assert.instance(again.error, HeldTargetError);
  assert.is(again.code, 5);
  assert.match((again.error as Error).message, /pool worker is held back from this image: nothing was written/);
  assert.equal(
    sim.writes.slice(writes).map((w) => w.op),
    ['lock', 'unlock'],
  );
  // A fresh plan of the same image is held too; --retry lifts the hold and rolls forward.
  const fresh = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), sim.snapshotCopy());
  assert.is((await runApply(sim, fresh.plan, fresh.replan)).code, 5);
  const retried = await runApply(sim, fresh.plan, fresh.replan, { retry: true });
  assert.is(retried.error, null, String(retried.error));
  assert.ok(retried.events.some((e) => e.type === 'holds-cleared'));
  assert.equal((await sim.driver().readProgress()).run!.holds, []);
});

t('a plan of another image is not held: the hold ends with the target', async () => {
  const { sim } = await afterWaveOne();
  const { plan, replan } = await rollbackOf(sim);
  assert.is((await runApply(sim, plan, replan)).error, null);
  const other = OLD.replace(/@sha256:.*/, '@sha256:' + 'e'.repeat(64));
  const p = planWith(specYaml([{ name: 'worker', image: other, maxUnavailable: 2 }]), sim.snapshotCopy());
  const r = await runApply(sim, p.plan, p.replan, { step: true });
  assert.not.instance(r.error, HeldTargetError, String(r.error));
  assert.equal((await sim.driver().readProgress()).run!.holds, []);
});

t("MCO: the run created the osImage MachineConfig: the rollback deletes it, the pool renders its pre-run config, only the run's nodes move", async () => {
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 4)).snapshot();
  const fwd = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  const moved = fwd.plan.pools[0].waves[0];
  const { plan, replan } = await rollbackOf(sim);
  assert.equal(
    plan.changes.map((c) => [c.address, c.action, c.reason, c.waitAfter?.kind]),
    [['MachineConfig/99-infra-zz-bootcplan-os-image', 'delete', 'pool-os-image-rollback', 'pool-rendered']],
  );
  assert.equal(plan.pools[0].nodes.map((n) => n.name).sort(), [...moved].sort());
  assert.equal(plan.pools[0].rollback?.download, true);
  const reboots = new Map(sim.rebootCounts());
  const r = await runApply(sim, plan, replan);
  assert.is(r.error, null, String((r.error as Error)?.stack ?? r.error));
  assert.is(sim.get('MachineConfig', '99-infra-zz-bootcplan-os-image'), undefined);
  const mcp = sim.get('MachineConfigPool', 'infra')!;
  assert.is(mcp.spec?.configuration?.name, 'rendered-infra-0001');
  assert.is(mcp.spec?.paused, false, 'left as the spec wants it');
  for (const n of nodes('i', 4))
    assert.is(sim.get('Node', n.name)!.metadata.annotations!['machineconfiguration.openshift.io/currentConfig'], 'rendered-infra-0001', n.name);
  for (const [n, k] of sim.rebootCounts()) assert.is(k - (reboots.get(n) ?? 0), moved.includes(n) ? 1 : 0, n);
});

t(
  'MCO: the osImage MachineConfig existed before the run: the rollback puts its osImageURL back, the pool renders its old config, only the moved nodes reboot',
  async () => {
    // The second rollout of a pool: a first run to NEW created bootcplan's MachineConfig.
    const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 4)).snapshot();
    const first = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 2 }]), snap);
    const sim = newSim(snap);
    assert.is((await runApply(sim, first.plan, first.replan)).error, null);
    const mcName = '99-infra-zz-bootcplan-os-image';
    const rendered = () => sim.get('MachineConfigPool', 'infra')!.spec?.configuration?.name;
    const onNew = rendered();
    assert.is(sim.get('MachineConfig', mcName)!.spec?.osImageURL, NEW);
    // The second run, to THIRD: one wave of two.
    const THIRD = imageRef('test-third');
    const fwd = planWith(specYaml([{ name: 'infra', image: THIRD, maxUnavailable: 2 }]), sim.snapshotCopy());
    assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
    const moved = fwd.plan.pools[0].waves[0];
    assert.is(moved.length, 2);
    assert.is.not(rendered(), onNew);
    const { plan, replan } = await rollbackOf(sim);
    assert.is(plan.diagnostics.filter((d) => d.severity === 'error').length, 0, JSON.stringify(plan.diagnostics));
    assert.equal(
      plan.changes.map((c) => [c.address, c.action, c.reason, c.waitAfter?.kind]),
      [[`MachineConfig/${mcName}`, 'update', 'pool-os-image-rollback', 'pool-rendered']],
    );
    assert.equal(plan.changes[0].patch, [
      { op: 'test', path: '/spec/osImageURL', value: THIRD },
      { op: 'replace', path: '/spec/osImageURL', value: NEW },
    ]);
    assert.equal(plan.pools[0].nodes.map((n) => n.name).sort(), [...moved].sort());
    assert.is(plan.pools[0].rollback?.to, NEW);
    // What a reviewer of `plan --rollback` reads: the lever and the osImageURL it goes back to.
    const text = renderText(plan, {});
    assert.match(text, new RegExp(`pool infra: back to .* via MachineConfig/${mcName} spec\\.osImageURL \\(${onNew} again\\)`));
    assert.ok(text.includes(`MachineConfig ${mcName}: osImageURL back to ${NEW}`), text);
    assert.ok(text.includes(`+   osImageURL: ${NEW}`), text);
    const reboots = new Map(sim.rebootCounts());
    const r = await runApply(sim, plan, replan);
    assert.is(r.error, null, String((r.error as Error)?.stack ?? r.error));
    assert.is(sim.get('MachineConfig', mcName)?.spec?.osImageURL, NEW, 'patched back, not deleted');
    assert.is(rendered(), onNew, 'the pool renders its pre-run config again, under its name');
    for (const n of nodes('i', 4)) assert.is(sim.get('Node', n.name)!.metadata.annotations![MCO_CURRENT_CONFIG], onNew, n.name);
    for (const n of nodes('i', 4)) assert.is(sim.rebootCounts().get(n.name)! - (reboots.get(n.name) ?? 0), moved.includes(n.name) ? 1 : 0, n.name);
  },
);

t('MCO: a node that joined the pool during the run is on its config: the plan names it, and says the MCO moves it to an image it never booted', async () => {
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 4)).snapshot();
  const fwd = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  const moved = fwd.plan.pools[0].waves[0];
  const runConfig = sim.get('MachineConfigPool', 'infra')!.spec!.configuration!.name!;
  // A machine added to the pool after the run started (a scale-up): the MCO serves it the
  // pool's config, so it boots the run's image first and never booted the pre-run one.
  sim.advance(600);
  const joined = nodeObject({ name: 'i-04', role: 'infra', zone: 'us-east-1b', annotations: mcoAnnotations(runConfig), createdAt: isoOf(sim.now) });
  sim.mutate(({ add }) => add(joined));
  const { plan, input } = await rollbackOf(sim);
  assert.equal(plan.pools[0].nodes.map((n) => n.name).sort(), [...moved, 'i-04'].sort(), 'the MCO moves it: the plan shows it');
  const warnings = plan.diagnostics.filter((d) => d.code === 'rollback-mco-joined-during-run');
  assert.is(warnings.length, 1, JSON.stringify(plan.diagnostics));
  assert.is(warnings[0].severity, 'warning');
  assert.match(warnings[0].message, /\bi-04\b/);
  for (const n of moved) assert.not.match(warnings[0].message, new RegExp(`\\b${n}\\b`), `${n} was in the pool before the run`);
  assert.ok(warnings[0].message.includes(OLD), warnings[0].message);
  assert.match(warnings[0].message, /may never have booted/);
  assert.match(renderText(plan, {}), /warning: .*i-04 joined the pool during the run/);
  // A record of an earlier bootcplan keeps no time with the origin: the run's start stands in.
  const origin = input.source.origins.infra;
  assert.ok(origin.kind === 'mco' && origin.readAt === input.of.startedAt, JSON.stringify(origin));
  const { readAt: _, ...older } = origin;
  const again = planRollback({ ...input, source: { ...input.source, origins: { infra: older } } }, sim.snapshotCopy());
  assert.equal(
    again.diagnostics.filter((d) => d.code === 'rollback-mco-joined-during-run').map((d) => d.message),
    warnings.map((d) => d.message),
  );
});

t(
  'MCO: another MachineConfig of the pool changed since the run: the MCO renders a config no node ran, and the rollback stops before any node moves',
  async () => {
    const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 4)).snapshot();
    const fwd = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 2 }]), snap);
    const sim = newSim(snap);
    assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
    const { plan, replan } = await rollbackOf(sim);
    // Someone adds an osImage MachineConfig of their own that sorts before bootcplan's.
    sim.mutate(({ add }) =>
      add({
        apiVersion: 'machineconfiguration.openshift.io/v1',
        kind: 'MachineConfig',
        metadata: { name: '99-infra-custom-os', labels: { 'machineconfiguration.openshift.io/role': 'infra' } },
        spec: { osImageURL: OLD.replace(/@.*/, '@sha256:' + 'c'.repeat(64)) },
      }),
    );
    const reboots = sim.reboots.length;
    const r = await runApply(sim, plan, replan);
    assert.is(r.code, 5, String(r.error));
    assert.match((r.error as Error).message, /rollback stopped: the MCO rendered rendered-infra-\w+, not the pre-run rendered-infra-0001/);
    assert.is(sim.reboots.length, reboots, 'no node moved');
    assert.is(sim.get('MachineConfigPool', 'infra')?.spec?.paused, true);
  },
);

t('scope wave: only the last wave goes back; nodes of earlier waves stage the origin they booted, and are listed', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
  const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  // Waves as the applier composed them (it may regroup staged nodes): the node entries say.
  const waveOf = (k: number) =>
    nodes('w', 6)
      .map((n) => n.name)
      .filter((n) => nodeProgressOf(sim.get('Node', n))?.wave === k);
  const [w1, w2] = [waveOf(1), waveOf(2)];
  assert.is(w2.length, 2);
  const { plan, replan } = await rollbackOf(sim, 'wave');
  assert.equal(plan.rollback!.source.scopeWave, { planId: fwd.plan.id, pool: 'worker', wave: 2 });
  assert.equal(plan.pools[0].nodes.map((n) => n.name).sort(), [...w2].sort());
  assert.equal(
    plan
      .rollback!.leftovers.filter((l) => l.what === 'stages-origin')
      .map((l) => l.node)
      .sort(),
    [...w1].sort(),
  );
  assert.ok(plan.diagnostics.some((d) => d.code === 'rollback-stages-origin' && d.severity === 'warning'));
  assert.is((await runApply(sim, plan, replan)).error, null);
  for (const n of w2) assert.is(sim.get('BootcNode', n)!.status?.booted?.image, OLD, n);
  for (const n of w1) assert.is(sim.get('BootcNode', n)!.status?.booted?.imageDigest, NEW_DIGEST, `${n} stays on the run's image (staged the origin)`);
});

t.run();
