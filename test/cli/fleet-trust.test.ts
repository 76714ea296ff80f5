/**
 * What a fleet plan file is trusted for (docs/fleets.md "The fleet plan file"): only what the
 * verified Fleet re-derives from the file's own cluster plans. A fleet plan re-sealed after an
 * edit of its batches, strategy, canaries or destinations is refused (exit 3) before any cluster
 * is reached; a canary planned against a doctored snapshot is confirmed against its live cluster
 * before batch 1; a fleet progress record counts only for its own cluster, plan and fleet.
 * (The reviewer's scenarios F1, F1b, F1c and F2, REVIEW-FLEET.md.)
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fleetPlanIdOf, rederiveFleetPlan, fleetPlanDifferences } from '../../src/fleet/plan.ts';
import { parseFleetSpec } from '../../src/fleet/spec-load.ts';
import { renderFleetJson } from '../../src/fleet/plan-text.ts';
import { writeFleetRecord } from '../../src/fleet/record.ts';
import type { FaultOptions } from '../../src/sim/faults.ts';
import { FleetBuilder, workerCluster } from '../support/fleet.ts';
import { simFleet, type SimFleet } from '../support/fleet-sim.ts';
import { ClusterBuilder, nodes, NEW } from '../support/cluster.ts';
import { cli } from '../support/cli.ts';

const s = suite('fleet plan trust');
const NAMES = ['east', 'west', 'south'] as const;

type Setup = SimFleet;

function setup(o: { faults?: Partial<Record<string, FaultOptions>> } = {}): Setup {
  const b = new FleetBuilder();
  for (const n of NAMES) b.cluster(n, { context: `ctx-${n}`, cluster: workerCluster(3, n), labels: { name: n } });
  b.strategy({ canaries: ['east'], maxConcurrency: 1, batchTimeoutAction: 'abort' });
  return simFleet(b, { faults: o.faults, prefix: 'bootcplan-fleet-trust-' });
}

/** The saved fleet plan, edited by `edit` and sealed again (its id recomputed: anyone can). */
function reseal(st: Setup, edit: (fp: any) => void): void {
  const fp = JSON.parse(readFileSync(st.planFile, 'utf8'));
  edit(fp);
  fp.id = fleetPlanIdOf(fp);
  writeFileSync(st.planFile, JSON.stringify(fp));
}

/** Every cluster in one batch of kind `batch`, no canary, all at once. */
function oneBatch(fp: any): void {
  fp.batches = [
    { index: 1, kind: 'batch', clusters: ['east', 'west', 'south'], estimatedSeconds: Math.max(...fp.batches.map((b: any) => b.estimatedSeconds)) },
  ];
  fp.strategy.canaries = [];
  fp.strategy.maxConcurrency.resolved = 3;
  fp.strategy.batchTimeoutAction = 'continue';
  for (const c of fp.clusters) {
    c.canary = false;
    c.batch = 1;
  }
  fp.summary.batches = 1;
}

s(
  'a fleet plan as fleet plan wrote it re-derives from its Fleet to itself, byte for byte (canaries, a failed cluster, an unchanged one, destinations, percent concurrency)',
  () => {
    const b = new FleetBuilder()
      .cluster('east', { context: 'ctx-east', labels: { tier: 'canary' } })
      .cluster('west', { context: 'ctx-west', destination: { server: 'https://api.west.example:6443' } })
      .cluster('gone', { context: 'ctx-gone', error: { code: 'unreachable', message: 'no answer', hint: 'check it' } })
      .cluster('done', { context: 'ctx-done', cluster: new ClusterBuilder().bootcPool('worker', nodes('d', 2, undefined, { current: true }), { image: NEW }) })
      .cluster('south', { context: 'ctx-south', overrides: { pools: [{ name: 'worker', maxUnavailable: 2 }] } })
      .cluster('north', { context: 'ctx-north', labels: { tier: 'late' } });
    b.strategy({ canaries: ['east', 'done'], maxConcurrency: '50%', batchSoakSeconds: 60, batchTimeoutSeconds: 3600, batchTimeoutAction: 'continue' });
    const fp = b.plan();
    const fleet = parseFleetSpec(b.yaml(), 'fleet.yaml').fleet!;
    const again = rederiveFleetPlan(fleet, fp);
    assert.equal(fleetPlanDifferences(fp, again), []);
    assert.is(JSON.stringify(again), JSON.stringify(fp));
    // The same Fleet with another strategy is a difference.
    const other = parseFleetSpec(b.strategy({ canaries: [], maxConcurrency: 6 }).yaml(), 'fleet.yaml').fleet!;
    const d = fleetPlanDifferences(fp, rederiveFleetPlan(other, fp));
    assert.equal(
      d.slice(0, 2).map((x) => x.split(' ')[0]),
      ['strategy', 'batches'],
    );
    assert.ok(d.includes('cluster east: canary') && d.includes('cluster done: canary'), d.join('\n'));
  },
);

s('F1: a fleet plan re-sealed with its canary batch removed (every cluster in one batch) is refused, exit 3, no cluster reached', async () => {
  const st = setup({ faults: { east: { seed: 1, rebootFailRate: 1 } } });
  reseal(st, oneBatch);
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /not what the Fleet .* gives/);
  assert.match(r.err, /batches/);
  assert.match(r.err, /strategy/);
  assert.equal(st.opened, [], 'no cluster reached');
  for (const n of NAMES) assert.is(st.sims[`ctx-${n}`].writes.length, 0, n);
});

s('F1: fleet rehearse of the same re-sealed fleet plan is refused too (exit 3)', async () => {
  const st = setup();
  reseal(st, oneBatch);
  const r = await cli(['fleet', 'rehearse', st.planFile], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /not what the Fleet .* gives/);
});

s("F1b: a fleet plan re-sealed with a cluster's destination moved: render argocd exits 3 and writes nothing", async () => {
  const st = setup();
  reseal(st, (fp) => {
    fp.clusters.find((c: any) => c.name === 'east').destination = { name: null, server: 'https://api.west.example:6443' };
  });
  const out = join(st.dir, 'argo');
  const r = await cli(
    [
      'fleet',
      'render',
      'argocd',
      st.planFile,
      '--out-dir',
      out,
      '--repo-url',
      'https://git.example/r.git',
      '--image',
      'quay.io/x/bootcplan:1',
      '--path',
      'argo',
    ],
    st.options,
  );
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /cluster east: destination/);
  assert.not.ok(existsSync(out), 'nothing written');
});

s("a cluster's labels or source edited and re-sealed: fleet apply exits 3 naming the field", async () => {
  const st = setup();
  reseal(st, (fp) => {
    fp.clusters.find((c: any) => c.name === 'west').source.context = 'ctx-east';
  });
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /cluster west: source/);
  assert.equal(st.opened, []);
});

s('a fleet plan whose override record was edited and re-sealed (hiding an override from the pull-request comment): fleet apply exits 3', async () => {
  const st = setup();
  reseal(st, (fp) => {
    fp.clusters.find((c: any) => c.name === 'west').overriddenBy = [
      { field: 'pools[worker].image', shared: 'x', value: 'y', by: { path: 'spec.overrides[0]', selector: 'name=west' } },
    ];
  });
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /cluster west: overriddenBy/);
  assert.equal(st.opened, []);
});

s(
  'F1c: the canary planned against a doctored snapshot (already on target) is in no batch: fleet apply confirms it live first, exit 3, no other cluster touched',
  async () => {
    const st = setup({ faults: { east: { seed: 1, rebootFailRate: 1 } } });
    const b2 = new FleetBuilder();
    for (const n of NAMES)
      b2.cluster(n, {
        context: `ctx-${n}`,
        cluster: n === 'east' ? new ClusterBuilder().bootcPool('worker', nodes('east', 3, undefined, { current: true }), { image: NEW }) : workerCluster(3, n),
        labels: { name: n },
      });
    b2.strategy({ canaries: ['east'], maxConcurrency: 1, batchTimeoutAction: 'abort' });
    const fp = b2.plan();
    assert.is(fp.clusters[0].batch, null, 'east has nothing to change in the doctored plan');
    writeFileSync(st.planFile, renderFleetJson(fp));
    const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
    assert.is(r.code, 3, r.err);
    assert.match(r.err, /canary east/);
    assert.equal(st.opened, ['ctx-east'], 'only the canary was read');
    for (const n of NAMES) assert.is(st.sims[`ctx-${n}`].writes.length, 0, n);
  },
);

s(
  "F2: a fleet record in the canary naming another cluster and plan (with this fleet plan's id, outcome done) does not skip it: the canary is applied",
  async () => {
    const st = setup();
    const fp = JSON.parse(readFileSync(st.planFile, 'utf8'));
    await writeFleetRecord(st.sims['ctx-east'].driver('x').records, {
      fleetPlanId: fp.id,
      fleet: 'whatever',
      cluster: 'not-east',
      batch: 99,
      planId: 'ffffffffffffffff',
      outcome: 'done',
      exitCode: 0,
      message: null,
      startedAt: '2026-01-01T00:00:00Z',
      updatedAt: '2026-01-01T00:00:00Z',
      finishedAt: '2026-01-01T00:00:00Z',
    });
    const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
    assert.is(r.code, 0, r.err);
    assert.is(st.sims['ctx-east'].reboots.length, 3, 'the canary rolled');
    assert.not.match(r.out, /already-done/);
  },
);

s('F2: a canary whose own record is right is still applied on a rerun: its apply answers nothing-to-do from its own progress', async () => {
  const st = setup();
  const first = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(first.code, 0, first.err);
  const again = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(again.code, 0, again.err);
  assert.match(again.out, /east \(canary\) +1 +nothing-to-do/, again.out);
  assert.match(again.out, /west +\d +already-done/, again.out);
  assert.is(st.sims['ctx-east'].reboots.length, 3, 'no node rebooted twice');
});

s.run();
