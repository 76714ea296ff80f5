/**
 * docs/safety.md rule 3: a node belongs to one pool. Nodes two BootcNodePools claim, or a
 * BootcNodePool and a differently named MachineConfigPool that rolls an OS image, are
 * conflicts: never scheduled in any pool, and the plan has an error naming the nodes and
 * the pools. The bootc-operator's own Degraded/NodeConflict report is surfaced; a node the
 * pool selects without a BootcNode is reported.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../support/cluster.ts';
import { newSim, planWith, runApply } from '../support/apply.ts';
import { run } from '../../src/cli/main.ts';
import type { ApplyEvent } from '../../src/apply/ports/events.ts';
import type { Plan } from '../../src/plan/types.ts';
import { io } from '../support/cli.ts';

const s = suite('pool conflicts: a node belongs to one pool');

const GPU = 'example.com/gpu';
const D = { stage: 100, drain: 10, reboot: 50, softReboot: 5, ready: 3 };

/** worker (w-00..w-05) and gpu (g-00, g-01, selected by a label); w-01 carries the gpu label too. */
function overlapping(): ClusterBuilder {
  return new ClusterBuilder()
    .bootcPool('worker', nodes('w', 6))
    .bootcPool('gpu', nodes('g', 2, undefined, { labels: { [GPU]: '' } }), { selector: { matchLabels: { [GPU]: '' } } })
    .labelNode('w-01', { [GPU]: '' });
}
const both = specYaml([
  { name: 'worker', image: NEW, maxUnavailable: 2 },
  { name: 'gpu', image: NEW },
]);

const scheduled = (plan: Plan) => plan.pools.flatMap((p) => p.waves.flat());
const errorsOf = (plan: Plan, code: string) => plan.diagnostics.filter((d) => d.code === code && d.severity === 'error');

s('two BootcNodePools select the same node: an error at each pool entry naming the node and both pools; it is in no wave', () => {
  const plan = planFor(both, overlapping().snapshot());
  const ds = errorsOf(plan, 'pool-node-conflict');
  assert.equal(
    ds.map((d) => [d.path, d.line, d.column]),
    [
      ['spec.pools[0].name', 7, 13],
      ['spec.pools[1].name', 10, 13],
    ],
  );
  for (const d of ds) {
    assert.match(d.message, /BootcNodePool\/gpu and BootcNodePool\/worker: w-01/);
    assert.match(d.message, /not scheduled in any pool/);
    assert.match(d.hint!, /nodeSelector/);
  }
  assert.not.ok(scheduled(plan).includes('w-01'));
  const w01 = plan.pools.find((p) => p.name === 'worker')!.nodes.find((n) => n.name === 'w-01')!;
  assert.is(w01.blockedBy, 'pool-conflict');
  assert.is(w01.wave, null);
  assert.equal(
    plan.pools
      .find((p) => p.name === 'gpu')!
      .waves.flat()
      .sort(),
    ['g-00', 'g-01'],
  );
  assert.ok(plan.summary.errors >= 2);
});

s('no node is ever scheduled in two pools, whatever the overlap', () => {
  const b = overlapping()
    .labelNode('w-02', { [GPU]: '' })
    .labelNode('w-03', { [GPU]: '' });
  const plan = planFor(both, b.snapshot());
  const all = scheduled(plan);
  assert.is(new Set(all).size, all.length);
  assert.not.ok(all.some((n) => ['w-01', 'w-02', 'w-03'].includes(n)));
  assert.match(errorsOf(plan, 'pool-node-conflict')[0].message, /3 node\(s\).*w-01, w-02, w-03/);
});

s('a BootcNodePool and a MachineConfigPool of another name that rolls an OS image (osImageURL MachineConfig) conflict', () => {
  const build = (withImage: boolean) => {
    const b = new ClusterBuilder()
      .mcoPool('worker', [{ name: 'w-00' }])
      .bootcPool('gpu', nodes('g', 2, undefined, { labels: { 'node-role.kubernetes.io/worker': '' } }));
    if (withImage) b.osImageMachineConfig('worker', NEW, '99-worker-custom-os-image');
    return b.snapshot();
  };
  const spec = specYaml([{ name: 'gpu', image: NEW }]);
  const plan = planFor(spec, build(true));
  const [d] = errorsOf(plan, 'pool-node-conflict');
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d.path, 'spec.pools[0].name');
  assert.match(d.message, /BootcNodePool\/gpu and MachineConfigPool\/worker: g-00, g-01/);
  assert.match(d.hint!, /MachineConfig\/99-worker-custom-os-image/);
  assert.equal(plan.pools[0].waves, []);
  assert.ok(plan.pools[0].nodes.every((n) => n.blockedBy === 'pool-conflict'));
  // Without an osImageURL MachineConfig the MCO does not roll an image there: no conflict.
  assert.equal(
    planFor(spec, build(false)).diagnostics.filter((x) => x.severity === 'error'),
    [],
  );
});

s('a BootcNodePool and the MachineConfigPool of the same name are one pool, not a conflict', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3)).mcoPool('worker', []).osImageMachineConfig('worker');
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), b.snapshot());
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  assert.is(plan.pools[0].waves.flat().length, 3);
});

s("the bootc-operator's Degraded/NodeConflict is surfaced: in the conflict error, or as its own error when the snapshot shows no overlap", () => {
  const cond = { type: 'Degraded', status: 'True', reason: 'NodeConflict', message: 'Node selector overlaps with pool(s): worker' };
  const b = overlapping();
  b.object('BootcNodePool', 'gpu').status.conditions = [cond];
  const plan = planFor(both, b.snapshot());
  const gpu = errorsOf(plan, 'pool-node-conflict').find((d) => d.path === 'spec.pools[1].name')!;
  assert.match(gpu.message, /reports Degraded=True \(NodeConflict\): "Node selector overlaps with pool\(s\): worker"/);
  assert.equal(errorsOf(plan, 'bootc-pool-node-conflict'), []);

  const alone = new ClusterBuilder().bootcPool('gpu', nodes('g', 2), { conditions: [cond] });
  const p2 = planFor(specYaml([{ name: 'gpu', image: NEW }]), alone.snapshot());
  const [d] = errorsOf(p2, 'bootc-pool-node-conflict');
  assert.ok(d, JSON.stringify(p2.diagnostics));
  assert.is(d.path, 'spec.pools[0].name');
  assert.match(d.message, /disagree/);
});

s('a node the pool selects without a BootcNode is reported (a warning) and never scheduled', () => {
  const b = new ClusterBuilder().bootcPool('worker', [...nodes('w', 3), { name: 'w-new', zone: 'us-east-1b', noBootcNode: true }]);
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), b.snapshot());
  const d = plan.diagnostics.find((x) => x.code === 'node-without-bootcnode')!;
  assert.is(d.severity, 'warning');
  assert.match(d.message, /w-new/);
  assert.match(d.message, /will not be updated/);
  assert.not.ok(scheduled(plan).includes('w-new'));
  // A pool with no BootcNode at all (membership by selector): its nodes are reported and held back.
  const fresh = new ClusterBuilder().bootcPool('edge', nodes('e', 2, undefined, { noBootcNode: true }));
  const p2 = planFor(specYaml([{ name: 'edge', image: NEW }]), fresh.snapshot());
  assert.equal(p2.pools[0].waves, []);
  assert.ok(p2.pools[0].nodes.every((n) => n.blockedBy === 'no-bootcnode'));
  assert.match(p2.diagnostics.find((x) => x.code === 'node-without-bootcnode')!.message, /e-00, e-01/);
});

// ---- rehearsals --------------------------------------------------------------------------

/** The nodes each pool's waves took, from the event stream. */
function wavesByPool(events: readonly ApplyEvent[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of events) if (e.type === 'wave-start') out.set(e.pool, [...(out.get(e.pool) ?? []), ...e.nodes]);
  return out;
}
const touched = (events: readonly ApplyEvent[]) => new Set(events.flatMap((e) => (e.type === 'cordon' || e.type === 'reboot' ? [e.node] : [])));

s('rehearse of the overlapping pools is refused (exit 1) with the conflict error; nothing is cordoned or rebooted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-conflict-'));
  writeFileSync(join(dir, 'spec.yaml'), both);
  writeFileSync(join(dir, 'cluster.yaml'), overlapping().yaml());
  const o = io();
  assert.is(await run(['rehearse', '-f', join(dir, 'spec.yaml'), '--cluster', join(dir, 'cluster.yaml'), '-o', 'json'], { io: o }), 1);
  assert.match(o.err, /w-01/);
  assert.match(o.err, /BootcNodePool\/gpu and BootcNodePool\/worker/);
  assert.is(o.out, '');
});

s('rehearse: a node labelled into a second pool during the apply is never cordoned or rebooted; apply stops (exit 3) before the next wave', async () => {
  const b = new ClusterBuilder()
    .bootcPool('worker', nodes('w', 6))
    .bootcPool('gpu', nodes('g', 4, undefined, { labels: { [GPU]: '' } }), { selector: { matchLabels: { [GPU]: '' } } });
  const snap = b.snapshot();
  const { plan, replan } = planWith(both, snap, D);
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  assert.equal(
    plan.pools.map((p) => p.name),
    ['gpu', 'worker'],
    'gpu (custom, priority 10) rolls first',
  );
  const sim = newSim(snap, { durations: D });
  let labelled = false;
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      // An administrator labels a worker node for the GPU pool while gpu's first wave runs.
      if (!labelled && e.type === 'wave-end' && e.pool === 'gpu') {
        labelled = true;
        sim.mutate(({ nodes: ns }) => {
          Object.assign(ns.get('w-01')!.metadata.labels!, { [GPU]: '' });
        });
      }
    },
  });
  assert.ok(labelled);
  assert.is(r.code, 3, String(r.error));
  assert.match((r.error as { difference: string[] }).difference.join('\n'), /pool-node-conflict.*w-01/);
  const waves = wavesByPool(r.events);
  const seen = [...waves.values()].flat();
  assert.is(new Set(seen).size, seen.length, "no node in two pools' waves");
  assert.not.ok(touched(r.events).has('w-01'));
  assert.not.ok(sim.cordons.some((c) => c.node === 'w-01'));
  assert.not.ok(sim.reboots.some((x) => x.node === 'w-01'));
  assert.not.ok(waves.has('worker'), 'the worker pool never started');
});

s("rehearse of two disjoint pools: every node in exactly one pool's waves", async () => {
  const b = new ClusterBuilder()
    .bootcPool('worker', nodes('w', 6))
    .bootcPool('gpu', nodes('g', 3, undefined, { labels: { [GPU]: '' } }), { selector: { matchLabels: { [GPU]: '' } } });
  const snap = b.snapshot();
  const { plan, replan } = planWith(both, snap, D);
  const r = await runApply(newSim(snap, { durations: D }), plan, replan);
  assert.is(r.code, 0, String(r.error));
  const waves = wavesByPool(r.events);
  assert.equal(waves.get('gpu')!.sort(), ['g-00', 'g-01', 'g-02']);
  assert.equal(waves.get('worker')!.sort(), ['w-00', 'w-01', 'w-02', 'w-03', 'w-04', 'w-05']);
});

s("membership follows the controller reference: a BootcNode controlled by pool b with another reference to pool a is b's", () => {
  const b = new ClusterBuilder().bootcPool('a', nodes('a', 2)).bootcPool('b', nodes('b', 2));
  const bn = b.object('BootcNode', 'b-00');
  const ctl = bn.metadata.ownerReferences![0];
  bn.metadata.ownerReferences = [{ ...ctl, name: 'a', controller: false }, ctl];
  const plan = planFor(
    specYaml([
      { name: 'a', image: NEW },
      { name: 'b', image: NEW },
    ]),
    b.snapshot(),
  );
  assert.not.ok(
    plan.pools
      .find((p) => p.name === 'a')!
      .waves.flat()
      .includes('b-00'),
    'b-00 scheduled in pool a',
  );
  assert.ok(
    plan.pools
      .find((p) => p.name === 'b')!
      .waves.flat()
      .includes('b-00'),
    'b-00 not scheduled in pool b',
  );
});

s.run();
