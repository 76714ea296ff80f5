/**
 * The fleet planner (docs/fleets.md): each cluster's effective spec planned as a sealed plan that names
 * the Fleet file and the cluster; batches, estimate and a content-hash id; a cluster that could
 * not be read is its own error and the others are still planned.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FleetBuilder, workerCluster, NEW } from '../support/fleet.ts';
import { ClusterBuilder, nodes } from '../support/cluster.ts';
import { fleetPlanIdOf, tamperedFleetId } from '../../src/fleet/plan.ts';
import { planIdOf } from '../../src/plan/planner.ts';

const s = suite('fleet plan');

s('canaries first, then batches of maxConcurrency by label and name; each cluster knows its batch', () => {
  const fp = new FleetBuilder()
    .cluster('can', { labels: { region: 'us' } })
    .cluster('b', { labels: { region: 'us' } })
    .cluster('a', { labels: { region: 'us' } })
    .cluster('eu', { labels: { region: 'eu' } })
    .strategy({ canaries: ['can'], maxConcurrency: 2, batchSoakSeconds: 600 })
    .plan();
  assert.equal(
    fp.batches.map((b) => [b.index, b.kind, b.clusters]),
    [
      [1, 'canary', ['can']],
      [2, 'batch', ['eu', 'a']],
      [3, 'batch', ['b']],
    ],
  );
  assert.equal(
    fp.clusters.map((c) => [c.name, c.batch, c.canary]),
    [
      ['can', 1, true],
      ['b', 3, false],
      ['a', 2, false],
      ['eu', 2, false],
    ],
  );
  const longest = Math.max(...fp.clusters.map((c) => c.plan!.summary.estimatedSeconds));
  assert.ok(longest > 0);
  assert.is(fp.summary.estimatedSeconds, fp.batches.reduce((sum, b) => sum + b.estimatedSeconds, 0) + 2 * 600);
  assert.equal(fp.strategy.maxConcurrency, { value: 2, resolved: 2, rule: 'integer' });
  assert.is(fp.summary.nodes, 12);
});

s('each cluster plan is a normal sealed plan naming the Fleet file and its cluster', () => {
  const fp = new FleetBuilder()
    .cluster('east')
    .cluster('west', { overrides: { pools: [{ name: 'worker', maxUnavailable: 3 }] } })
    .plan();
  for (const c of fp.clusters) {
    assert.is(c.plan!.spec.fleetCluster, c.name);
    assert.is(c.plan!.spec.path, 'fleet.yaml');
    assert.is(planIdOf(c.plan!), c.plan!.id);
  }
  assert.is(fp.clusters[1].plan!.pools[0].waveSize, 3);
  assert.is(fp.clusters[0].plan!.pools[0].waveSize, 1);
});

s('an unreachable cluster is its own error, in no batch; the others are planned', () => {
  const fp = new FleetBuilder()
    .cluster('ok-1')
    .cluster('down', { error: { code: 'unreachable', message: 'connect ECONNREFUSED', hint: 'check it' } })
    .cluster('ok-2')
    .strategy({ maxConcurrency: '100%' })
    .plan();
  const down = fp.clusters.find((c) => c.name === 'down')!;
  assert.equal([down.plan, down.batch, down.error?.code], [null, null, 'unreachable']);
  assert.equal(
    fp.batches.map((b) => b.clusters),
    [['ok-1', 'ok-2']],
  );
  assert.equal([fp.summary.failed, fp.summary.planned, fp.summary.errors], [1, 2, 1]);
});

s('a plan with errors is kept for review, in no batch; a cluster with nothing to change is in no batch', () => {
  const done = new ClusterBuilder().bootcPool('worker', nodes('w', 2, undefined, { current: true }), { image: NEW });
  const noPool = new ClusterBuilder().bootcPool('infra', nodes('i', 2));
  const fp = new FleetBuilder()
    .cluster('done', { cluster: done })
    .cluster('broken', { cluster: noPool })
    .cluster('rolls', { cluster: workerCluster(2) })
    .plan();
  const by = new Map(fp.clusters.map((c) => [c.name, c]));
  assert.equal([by.get('done')!.batch, by.get('done')!.error], [null, null]);
  assert.is(by.get('broken')!.error?.code, 'plan-errors');
  assert.ok(by.get('broken')!.plan!.summary.errors > 0);
  const d = by.get('broken')!.plan!.diagnostics.find((x) => x.severity === 'error')!;
  assert.is(d.file, 'fleet.yaml', 'the planner reports against the Fleet file');
  assert.ok(d.line! > 0);
  assert.equal(
    fp.batches.map((b) => b.clusters),
    [['rolls']],
  );
  assert.equal([fp.summary.withChanges, fp.summary.failed], [1, 1]);
});

s('the fleet plan id is the content hash: the same inputs give the same id, any edit shows', () => {
  const build = () =>
    new FleetBuilder()
      .cluster('a')
      .cluster('b')
      .strategy({ canaries: ['a'] });
  const one = build().plan({ now: Date.UTC(2026, 0, 1) });
  const two = build().plan({ now: Date.UTC(2026, 5, 1) });
  assert.is(one.id, two.id);
  assert.is(fleetPlanIdOf(one), one.id);
  assert.is(tamperedFleetId(one), null);
  const edited = structuredClone(one);
  edited.strategy.batchSoakSeconds = 1;
  assert.ok(tamperedFleetId(edited));
  const roundTrip = JSON.parse(JSON.stringify(one));
  assert.is(tamperedFleetId(roundTrip), null);
});

s('each cluster records the fields its overrides change, the shared value and the override that won; the shared rollout records nothing', () => {
  const OTHER = `quay.io/example/other@sha256:${'a'.repeat(64)}`;
  const fp = new FleetBuilder()
    .withRollout({ pools: [{ name: 'worker', image: NEW, maxUnavailable: '40%' }], maintenanceWindows: [{ schedule: '0 22 * * 1-5', duration: '6h' }] })
    .cluster('plain', { labels: { region: 'us' } })
    .cluster('same', { labels: { region: 'us' }, overrides: { pools: [{ name: 'worker', image: NEW, rollout: 'waves', paused: false }] } })
    .cluster('eu', {
      labels: { region: 'eu' },
      overrides: { pools: [{ name: 'worker', image: OTHER }], maintenanceWindows: [{ schedule: '0 1 * * 0', duration: '8h', timezone: 'UTC' }] },
    })
    .override({
      clusterSelector: { matchLabels: { region: 'eu' } },
      timezone: 'Europe/Berlin',
      pools: [{ name: 'worker', image: `quay.io/example/label@sha256:${'b'.repeat(64)}`, maxUnavailable: 2 }],
    })
    .plan();
  assert.equal(fp.clusters[0].overriddenBy, []);
  assert.equal(fp.clusters[1].overriddenBy, [], 'an override to the shared value (or its default) changes nothing');
  assert.equal(
    fp.clusters[2].overriddenBy,
    [
      { field: 'pools.worker.image', shared: NEW, value: OTHER, by: { path: 'spec.clusters[2].overrides', selector: null } },
      { field: 'pools.worker.maxUnavailable', shared: '40%', value: 2, by: { path: 'spec.overrides[0]', selector: 'region=eu' } },
      {
        field: 'maintenanceWindows',
        shared: '0 22 * * 1-5 for 6h',
        value: '0 1 * * 0 for 8h (UTC)',
        by: { path: 'spec.clusters[2].overrides', selector: null },
      },
    ],
    "the cluster's own image wins over the label's; a time zone that fills no window is not a change",
  );
  assert.is(fp.clusters[2].plan!.pools[0].targetImage, OTHER);
});

s.run();
