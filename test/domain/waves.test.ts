import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { orderNodesForRollout, orderNodesLikeMco, planWaves } from '../../src/domain/waves.ts';
import { ClusterBuilder, specYaml, planFor, NEW, nodes, type TestNode } from '../support/cluster.ts';

/** A bootc-operator whose daemon performs soft reboots (the installed one does not: src/domain/bootc-daemon.ts). */
const SOFT_OPERATOR = { softReboot: true };

const s = suite('waves and node plan');

s('round-robin across zones, then by name; staged nodes first', () => {
  const ns = [
    { name: 'a-2', zone: 'a', staged: false },
    { name: 'a-1', zone: 'a', staged: false },
    { name: 'a-3', zone: 'a', staged: false },
    { name: 'b-1', zone: 'b', staged: false },
    { name: 'b-2', zone: 'b', staged: true },
    { name: 'c-1', zone: 'c', staged: false },
  ];
  assert.equal(
    orderNodesForRollout(ns).map((n) => n.name),
    ['b-2', 'a-1', 'b-1', 'c-1', 'a-2', 'a-3'],
  );
  assert.equal(planWaves(['a', 'b', 'c', 'd', 'e'], 2), [['a', 'b'], ['c', 'd'], ['e']]);
  assert.throws(() => planWaves(['a'], 0));
});

s('no wave of a zone-spread pool holds two nodes of one zone while another zone has nodes left', () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 12)).snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }]), snap);
  const pool = plan.pools[0];
  assert.is(pool.waves.length, 4);
  for (const w of pool.waves) {
    const zones = w.map((n) => pool.nodes.find((x) => x.name === n)!.zone);
    assert.is(new Set(zones).size, 3, `wave ${w.join(',')}`);
  }
});

s('budget: nodes already unavailable use up maxUnavailable, and are reported as blocked', () => {
  const ns = nodes('w', 9);
  ns[0].cordoned = true;
  ns[1].notReady = true;
  ns[2].degraded = true;
  const snap = new ClusterBuilder().bootcPool('worker', ns).snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 4 }]), snap);
  const pool = plan.pools[0];
  assert.is(pool.waveSize, 1);
  assert.equal(pool.unavailableNow.sort(), ['w-00', 'w-01', 'w-02']);
  assert.equal(
    pool.nodes
      .filter((n) => n.blockedBy)
      .map((n) => `${n.name}:${n.blockedBy}`)
      .sort(),
    ['w-00:cordoned', 'w-01:not-ready', 'w-02:degraded'],
  );
  assert.is(pool.waves.length, 6);
  assert.ok(pool.waves.every((w) => w.length === 1));
  assert.ok(plan.diagnostics.some((d) => d.code === 'nodes-blocked'));
  const blocked = pool.nodes.find((n) => n.name === 'w-02')!;
  assert.ok(
    blocked.conditions!.some((c) => c.type === 'Degraded' && c.status === 'True'),
    'conditions of a blocked node are shown',
  );
});

s('an up-to-date node that is unavailable uses budget too', () => {
  const ns = nodes('w', 4);
  ns[0].current = true;
  ns[0].notReady = true;
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), new ClusterBuilder().bootcPool('worker', ns).snapshot());
  assert.is(plan.pools[0].waveSize, 1);
  assert.is(plan.pools[0].nodes.length, 3);
});

s('budget used up: nothing scheduled, a warning says why', () => {
  const ns = nodes('w', 4);
  ns[0].cordoned = true;
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), new ClusterBuilder().bootcPool('worker', ns).snapshot());
  assert.is(plan.pools[0].waves.length, 0);
  assert.ok(plan.pools[0].nodes.filter((n) => !n.blockedBy || n.blockedBy === 'no-budget').every((n) => n.blockedBy === 'no-budget'));
  assert.ok(plan.diagnostics.some((d) => d.code === 'budget-exhausted' && d.severity === 'warning'));
  assert.is(plan.summary.nodes, 0);
});

s('control-plane pool: one node per wave, 1 written, and a spec asking for more is an error (issue 12 rule 2)', () => {
  const snap = new ClusterBuilder().mcoPool('master', nodes('m', 3)).snapshot();
  const plan = planFor(specYaml([{ name: 'master', image: NEW, maxUnavailable: 3 }]), snap);
  const pool = plan.pools[0];
  assert.ok(pool.controlPlane);
  assert.equal(pool.waves, [['m-00'], ['m-01'], ['m-02']]);
  assert.is(pool.priority, 30);
  assert.is(pool.maxUnavailable.resolved, 1);
  assert.ok(plan.diagnostics.some((d) => d.code === 'control-plane-max-unavailable' && d.severity === 'error'));
});

s('pools roll in priority order: custom 10, worker 20, master 30, or as set', () => {
  const snap = new ClusterBuilder().mcoPool('master', nodes('m', 3)).bootcPool('worker', nodes('w', 3)).bootcPool('infra', nodes('i', 3)).snapshot();
  const plan = planFor(
    specYaml([
      { name: 'master', image: NEW },
      { name: 'worker', image: NEW },
      { name: 'infra', image: NEW },
    ]),
    snap,
  );
  assert.equal(
    plan.pools.map((p) => p.name),
    ['infra', 'worker', 'master'],
  );
  const plan2 = planFor(
    specYaml([
      { name: 'worker', image: NEW, priority: 1 },
      { name: 'infra', image: NEW },
    ]),
    snap,
  );
  assert.equal(
    plan2.pools.map((p) => p.name),
    ['worker', 'infra'],
  );
  const orders = plan.changes.map((c) => c.pool);
  assert.ok(orders.lastIndexOf('infra') < orders.indexOf('worker') && orders.lastIndexOf('worker') < orders.indexOf('master'), 'changes follow pool order');
});

s('reboot prediction: soft only when allowed and the staged entry is capable; unknown before staging', () => {
  const ns = [
    { name: 'w-1', zone: 'a', staged: true, softRebootCapable: true },
    { name: 'w-2', zone: 'b', staged: true, softRebootCapable: false },
    { name: 'w-3', zone: 'c' },
  ];
  const snap = new ClusterBuilder().bootcPool('worker', ns).snapshot();
  const allow = planFor(specYaml([{ name: 'worker', image: NEW, rebootPolicy: 'AllowSoftReboot', maxUnavailable: 3 }]), snap, SOFT_OPERATOR).pools[0];
  assert.equal(
    allow.nodes.map((n) => `${n.name}:${n.reboot}:${n.staged}`),
    ['w-1:soft:true', 'w-2:hard:true', 'w-3:unknown:false'],
  );
  const only = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }]), snap).pools[0];
  assert.ok(only.nodes.every((n) => n.reboot === 'hard'));
  const mco = planFor(
    specYaml([{ name: 'worker', image: NEW, rebootPolicy: 'AllowSoftReboot' }]),
    new ClusterBuilder().mcoPool('worker', nodes('w', 2)).snapshot(),
  ).pools[0];
  assert.ok(
    mco.nodes.every((n) => n.reboot === 'hard'),
    'the MCO always reboots for an OS image change',
  );
});

s('a paused pool schedules nothing and says so per node', () => {
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, paused: true }]), new ClusterBuilder().bootcPool('worker', nodes('w', 3)).snapshot());
  assert.ok(plan.pools[0].nodes.every((n) => n.blockedBy === 'pool-paused'));
  assert.is(plan.summary.waves, 0);
});

s('staged nodes that will soft-reboot come first, so that soft reboots share waves', () => {
  const ns = [
    { name: 'a-1', zone: 'a', staged: true, softReboot: false },
    { name: 'a-2', zone: 'a', staged: true, softReboot: true },
    { name: 'b-1', zone: 'b', staged: true, softReboot: true },
    { name: 'b-2', zone: 'b', staged: false },
    { name: 'c-1', zone: 'c', staged: true, softReboot: false },
    { name: 'c-2', zone: 'c', staged: true, softReboot: true },
  ];
  assert.equal(
    orderNodesForRollout(ns).map((n) => n.name),
    ['a-2', 'b-1', 'c-2', 'a-1', 'c-1', 'b-2'],
  );
  // Planner: soft only under AllowSoftReboot; with RebootOnly the staged ones stay one group.
  const tn: TestNode[] = [
    { name: 'w-00', zone: 'us-east-1a', staged: true, softRebootCapable: false },
    { name: 'w-01', zone: 'us-east-1b', staged: true, softRebootCapable: false },
    { name: 'w-02', zone: 'us-east-1c', staged: true, softRebootCapable: true },
    { name: 'w-03', zone: 'us-east-1a', staged: true, softRebootCapable: true },
    { name: 'w-04', zone: 'us-east-1b' },
    { name: 'w-05', zone: 'us-east-1c' },
  ];
  const snap = new ClusterBuilder().bootcPool('worker', tn).snapshot();
  const allow = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, rebootPolicy: 'AllowSoftReboot' }]), snap, SOFT_OPERATOR).pools[0];
  assert.equal(allow.waves, [
    ['w-03', 'w-02'],
    ['w-00', 'w-01'],
    ['w-04', 'w-05'],
  ]);
  const only = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap).pools[0];
  assert.equal(only.waves, [
    ['w-00', 'w-01'],
    ['w-02', 'w-03'],
    ['w-04', 'w-05'],
  ]);
});

s('MCO-only pools: the MCO order (zone by zone, oldest first, nodes without a zone last); bootc pools keep round-robin', () => {
  const ns = [
    { name: 'n-1', zone: 'b', createdAt: '2026-01-01T00:00:00Z' },
    { name: 'n-2', zone: 'a', createdAt: '2026-03-01T00:00:00Z' },
    { name: 'n-3', zone: null, createdAt: '2025-01-01T00:00:00Z' },
    { name: 'n-4', zone: 'a', createdAt: '2026-02-01T00:00:00Z' },
    { name: 'n-5', zone: 'b', createdAt: '2026-01-01T00:00:00Z' },
    { name: 'n-0', zone: null, createdAt: '2026-05-01T00:00:00Z' },
  ];
  assert.equal(
    orderNodesLikeMco(ns).map((n) => n.name),
    ['n-4', 'n-2', 'n-1', 'n-5', 'n-3', 'n-0'],
  );

  const build = (pool: 'mco' | 'bootc') => {
    const b = new ClusterBuilder();
    const tn = nodes('w', 6); // zones a, b, c, a, b, c
    if (pool === 'mco') b.mcoPool('worker', tn);
    else b.bootcPool('worker', tn);
    // the younger node of each zone has the smaller name
    for (const o of b.objects.filter((x) => x.kind === 'Node'))
      o.metadata.creationTimestamp = Number(o.metadata.name.slice(2)) < 3 ? '2026-06-01T00:00:00Z' : '2026-01-01T00:00:00Z';
    return planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), b.snapshot()).pools[0];
  };
  assert.equal(build('mco').waves, [
    ['w-03', 'w-00'],
    ['w-04', 'w-01'],
    ['w-05', 'w-02'],
  ]);
  assert.equal(build('bootc').waves, [
    ['w-00', 'w-01'],
    ['w-02', 'w-03'],
    ['w-04', 'w-05'],
  ]);
});

s.run();
