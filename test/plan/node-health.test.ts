/**
 * docs/safety.md rule 7: node health as the MCO sees it (machine-config-operator
 * pkg/controller/common/layered_node_state.go, LayeredNodeState.CheckNodeReady): Ready not
 * True, DiskPressure not False, NetworkUnavailable not False, or spec.unschedulable make a
 * node unavailable. It uses budget (wave size = resolved maxUnavailable - unavailable now)
 * and is not scheduled; the MCO-only prediction does not put it in a wave. MemoryPressure
 * and PIDPressure are not part of the MCO's rule.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../support/cluster.ts';
import { newSim, planWith, runApply } from '../support/apply.ts';
import { viewNode, indexSnapshot } from '../../src/domain/nodes.ts';
import type { Plan } from '../../src/plan/types.ts';

const s = suite('node health as the MCO sees it');

const nodeOf = (plan: Plan, name: string) => plan.pools.flatMap((p) => p.nodes).find((n) => n.name === name)!;

s('bootc pool: DiskPressure and NetworkUnavailable nodes use budget and are not scheduled; MemoryPressure and PIDPressure nodes are', () => {
  const ws = nodes('w', 8);
  ws[0].conditions = { DiskPressure: 'True' };
  ws[1].conditions = { NetworkUnavailable: 'True' };
  ws[2].conditions = { MemoryPressure: 'True' };
  ws[3].conditions = { PIDPressure: 'True' };
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }]), new ClusterBuilder().bootcPool('worker', ws).snapshot());
  const pool = plan.pools[0];
  assert.equal(pool.unavailableNow, ['w-00', 'w-01']);
  assert.is(pool.waveSize, 1, 'maxUnavailable 3 minus 2 unavailable');
  assert.is(nodeOf(plan, 'w-00').blockedBy, 'not-ready');
  assert.is(nodeOf(plan, 'w-01').blockedBy, 'not-ready');
  // The reviewer sees why: the failing condition is listed with the blocked node.
  assert.ok(
    nodeOf(plan, 'w-00').conditions?.some((c) => c.type === 'DiskPressure' && c.status === 'True'),
    JSON.stringify(nodeOf(plan, 'w-00')),
  );
  assert.ok(nodeOf(plan, 'w-01').conditions?.some((c) => c.type === 'NetworkUnavailable' && c.status === 'True'));
  assert.equal(pool.waves.flat().sort(), ['w-02', 'w-03', 'w-04', 'w-05', 'w-06', 'w-07']);
  const warn = plan.diagnostics.find((d) => d.code === 'nodes-blocked');
  assert.match(warn!.message, /w-00 \(not-ready\)/);
});

s('MCO-only pool: the prediction leaves DiskPressure, NetworkUnavailable and unschedulable nodes out of every wave', () => {
  // Oldest first in one zone (the MCO's order): i-00 and i-01 would come first if they were healthy.
  const is = nodes('i', 6, ['us-east-1a']).map((n, i) => ({ ...n, createdAt: `2026-01-0${i + 1}T00:00:00Z` }));
  is[0].conditions = { DiskPressure: 'True' };
  is[1].conditions = { NetworkUnavailable: 'True' };
  is[2].cordoned = true;
  const plan = planFor(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 4 }]), new ClusterBuilder().mcoPool('infra', is).snapshot());
  const pool = plan.pools[0];
  assert.equal(pool.unavailableNow, ['i-00', 'i-01', 'i-02']);
  assert.is(pool.waveSize, 1);
  assert.equal(pool.waves, [['i-03'], ['i-04'], ['i-05']]);
  assert.equal(
    ['i-00', 'i-01', 'i-02'].map((n) => nodeOf(plan, n).blockedBy),
    ['not-ready', 'not-ready', 'cordoned'],
  );
});

s('a condition that is absent passes, Unknown fails (the MCO loops over the conditions present)', () => {
  const snap = new ClusterBuilder()
    .bootcPool('worker', [
      { name: 'w-00', conditions: { DiskPressure: 'Unknown' } },
      { name: 'w-01', conditions: { NetworkUnavailable: 'Unknown' } },
      { name: 'w-02', conditions: { NetworkUnavailable: 'False' } },
      { name: 'w-03' }, // no NetworkUnavailable condition at all (the builder's default)
    ])
    .snapshot();
  const idx = indexSnapshot(snap);
  assert.equal(
    ['w-00', 'w-01', 'w-02', 'w-03'].map((n) => viewNode(idx.nodes.get(n)!, idx).unavailable),
    ['not-ready', 'not-ready', null, null],
  );
});

s('all unavailable: the budget is used up, no wave, a warning says so', () => {
  const ws = nodes('w', 3);
  ws[0].conditions = { DiskPressure: 'True' };
  ws[1].conditions = { NetworkUnavailable: 'True' };
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), new ClusterBuilder().bootcPool('worker', ws).snapshot());
  assert.is(plan.pools[0].waveSize, 0);
  assert.equal(plan.pools[0].waves, []);
  assert.is(nodeOf(plan, 'w-02').blockedBy, 'no-budget');
  assert.ok(plan.diagnostics.some((d) => d.code === 'budget-exhausted'));
});

s('rehearsal: an MCO-only pool with a DiskPressure node: the MCO (simulated) and bootcplan never touch it, and the budget holds', async () => {
  const D = { stage: 100, drain: 10, reboot: 50, softReboot: 5, ready: 3 };
  const is = nodes('i', 5, ['us-east-1a']).map((n, i) => ({ ...n, createdAt: `2026-01-0${i + 1}T00:00:00Z` }));
  is[0].conditions = { DiskPressure: 'True' };
  const snap = new ClusterBuilder().mcoPool('infra', is, { maxUnavailable: 2 }).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 2 }]), snap, D);
  assert.equal(plan.pools[0].waves, [['i-01'], ['i-02'], ['i-03'], ['i-04']]);
  const sim = newSim(snap, { durations: D });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String((r.error as Error)?.stack));
  assert.not.ok(sim.reboots.some((x) => x.node === 'i-00'));
  assert.not.ok(r.events.some((e) => 'node' in e && e.node === 'i-00' && (e.type === 'cordon' || e.type === 'reboot')));
  assert.equal(sim.reboots.map((x) => x.node).sort(), ['i-01', 'i-02', 'i-03', 'i-04']);
});

s.run();
