/**
 * docs/design.md §7 "Pools and waves": nodes the bootc-operator's daemon cannot act on are held back,
 * and a paused pool gets no new image. Upstream facts (bootc-dev/bootc-operator):
 * config/daemon/daemon.yaml (the daemon's nodeSelector `bootc.dev/managed: ""`),
 * api/v1alpha1/bootcnode_types.go (BootcNodeStatus is written by the daemon; BootEntryStatus
 * `incompatible`: local mutations bootc cannot manage, e.g. rpm-ostree layering), and
 * docs/ARCHITECTURE.md "Rollback, Pause, Cancel" (a pause stops reboot approvals only; nodes
 * stage whatever the pool's image is).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../support/cluster.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';
import { machineConfigPoolObject } from '../../src/sim/node-objects.ts';
import { BOOTC_MANAGED_LABEL } from '../../src/domain/labels.ts';
import { renderText } from '../../src/render/text.ts';
import { parsePlanFile } from '../../src/plan/saved/reader.ts';

const s = suite('seed-gaps');
const QUICK = { stage: 100, drain: 10, reboot: 50, softReboot: 10, ready: 0 };

s('a node without the bootc.dev/managed label (no daemon runs there) is held back: not-managed, with the remedy', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3));
  delete b.object('Node', 'w-01').metadata.labels![BOOTC_MANAGED_LABEL];
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), b.snapshot());
  const p = plan.pools[0];
  assert.is(p.nodes.find((n) => n.name === 'w-01')!.blockedBy, 'not-managed');
  assert.not.ok(p.waves.flat().includes('w-01'), 'not scheduled');
  assert.equal(p.waves.flat().sort(), ['w-00', 'w-02']);
  const d = plan.diagnostics.find((x) => x.code === 'node-not-managed')!;
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d.severity, 'warning');
  assert.is(d.path, 'spec.pools[0].name');
  assert.match(d.message, /w-01/);
  assert.match(d.message, /bootc\.dev\/managed/);
  assert.match(d.hint!, /oc label node w-01 bootc\.dev\/managed=/);
});

s('a BootcNode without a status (its daemon has not reported) is held back: no-bootcnode-status, with the remedy', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3));
  delete b.object('BootcNode', 'w-02').status;
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), b.snapshot());
  const p = plan.pools[0];
  assert.is(p.nodes.find((n) => n.name === 'w-02')!.blockedBy, 'no-bootcnode-status');
  assert.not.ok(p.waves.flat().includes('w-02'));
  const d = plan.diagnostics.find((x) => x.code === 'bootcnode-without-status')!;
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.match(d.message, /w-02/);
  assert.match(d.hint!, /daemon pod/);
  // The plan file with the new reasons is valid (src/plan/plan-schema.ts enumerates BLOCKED_BY).
  const read = parsePlanFile(JSON.stringify(plan), 'plan.json');
  assert.equal(read.diagnostics, []);
  assert.ok(read.plan);
  assert.match(renderText(plan, { color: false }), /not scheduled \(no-bootcnode-status\)/);
});

s('a node whose booted entry is incompatible (rpm-ostree layering) is held back: incompatible, with both remedies', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3));
  b.object('BootcNode', 'w-01').status!.booted!.incompatible = true;
  const snap = b.snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), snap);
  const p = plan.pools[0];
  assert.is(p.nodes.find((n) => n.name === 'w-01')!.blockedBy, 'incompatible');
  assert.equal(p.waves.flat().sort(), ['w-00', 'w-02']);
  const d = plan.diagnostics.find((x) => x.code === 'bootcnode-incompatible')!;
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d.severity, 'warning');
  assert.is(d.path, 'spec.pools[0].name');
  assert.match(d.message, /1 node\(s\).*w-01/);
  assert.match(d.message, /rpm-ostree/);
  assert.match(d.hint!, /rpm-ostree reset/);
  assert.match(d.hint!, /take the node out of the pool/);
  // The field survives the snapshot's shape check, and the plan file with the reason is valid.
  assert.is(snap.bootcNodes.find((x) => x.metadata.name === 'w-01')!.status!.booted!.incompatible, true);
  const read = parsePlanFile(JSON.stringify(plan), 'plan.json');
  assert.equal(read.diagnostics, []);
  assert.match(renderText(plan, { color: false }), /not scheduled \(incompatible\)/);
});

s('a staged or rollback entry that is incompatible does not hold the node back: only the booted one is what bootc refuses to move from', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 2));
  b.object('BootcNode', 'w-00').status!.rollback = {
    image: 'quay.io/x/os@sha256:' + '1'.repeat(64),
    imageDigest: 'sha256:' + '1'.repeat(64),
    incompatible: true,
  };
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), b.snapshot());
  assert.equal(plan.pools[0].waves.flat().sort(), ['w-00', 'w-01']);
  assert.not.ok(plan.diagnostics.some((x) => x.code === 'bootcnode-incompatible'));
});

s('apply: a node whose BootcNode has no status is left alone, and the pool does not halt waiting for it to stage', async () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 2));
  delete b.object('BootcNode', 'w-01').status;
  const snap = b.snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap, QUICK as any);
  const sim = newSim(snap, { durations: QUICK });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String((r.error as Error)?.message));
  assert.equal(r.result!.blocked, ['worker/w-01']);
  assert.not.ok(sim.reboots.some((x) => x.node === 'w-01'));
});

s('spec paused: true on a bootc pool: no new image is written (nothing stages), and the plan says the pool is held', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 3)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, paused: true }]), snap, QUICK as any);
  const bnp = plan.changes.find((c) => c.kind === 'BootcNodePool');
  assert.not.ok(
    bnp?.patch.some((op) => op.path.startsWith('/spec/image') && op.op !== 'test'),
    JSON.stringify(bnp?.patch),
  );
  assert.ok(plan.pools[0].nodes.every((n) => n.blockedBy === 'pool-paused'));
  const d = plan.diagnostics.find((x) => x.code === 'pool-held-paused')!;
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d.path, 'spec.pools[0].paused');
  assert.match(d.message, /held: pool paused, nothing stages/);
  assert.match(renderText(plan, { color: false }), /held: pool paused, nothing stages/);
  // Applied: the BootcNodes never ask for the new image, so no daemon pulls it.
  const sim = newSim(snap, { durations: QUICK });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String((r.error as Error)?.message));
  for (const n of ['w-00', 'w-01', 'w-02']) {
    const bn = sim.get('BootcNode', n)!;
    assert.is.not(bn.spec!.desiredImage, NEW, `${n} was not handed the new image`);
    assert.is(bn.status!.staged ?? null, null, `${n} staged nothing`);
  }
  assert.not.ok(r.events.some((e) => e.type === 'stage-start'));
});

s("an administrator's pause of the MachineConfigPool next to a bootc pool: the BootcNodePool gets no new image either", () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3));
  b.add(machineConfigPoolObject('worker', 1, 'rendered-worker-0001', { 'node-role.kubernetes.io/worker': '' }, true));
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), b.snapshot());
  const bnp = plan.changes.find((c) => c.kind === 'BootcNodePool');
  assert.not.ok(
    bnp?.patch.some((op) => op.path.startsWith('/spec/image') && op.op !== 'test'),
    JSON.stringify(bnp?.patch),
  );
  assert.match(plan.diagnostics.find((d) => d.code === 'pool-paused-by-administrator')!.message, /gets no new image \(nothing stages\)/);
});

s('spec paused: true on an MCO-only pool: no osImageURL MachineConfig (the MCO would roll it whole on unpause)', () => {
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 3)).snapshot();
  const plan = planFor(specYaml([{ name: 'infra', image: NEW, paused: true }]), snap);
  assert.not.ok(
    plan.changes.some((c) => c.kind === 'MachineConfig'),
    JSON.stringify(plan.changes.map((c) => c.address)),
  );
  assert.ok(plan.diagnostics.some((d) => d.code === 'pool-held-paused'));
});

s.run();
