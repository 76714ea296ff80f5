/**
 * `bootcplan fleet apply` (docs/fleets.md) against simulated clusters behind their kubeconfig contexts:
 * the trust boundaries first (a tampered fleet plan, a cluster plan edited inside it, a Fleet file
 * changed since, a context the kubeconfig does not have), then the rollout: canary first, the
 * other clusters in batches, each recorded in itself, a rerun that applies nothing twice, and a
 * failing canary that leaves the others untouched.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { fleetPlanIdOf } from '../../src/fleet/plan.ts';
import { planIdOf } from '../../src/plan/planner.ts';
import type { SimCluster } from '../../src/sim/cluster.ts';
import type { SimDriver } from '../../src/sim/driver.ts';
import type { FaultOptions } from '../../src/sim/faults.ts';
import { confirmSavedPlan } from '../../src/plan/saved/compare.ts';
import { readFleet } from '../../src/app/fleet-inputs.ts';
import { DEFAULT_DURATIONS } from '../../src/domain/timing.ts';
import { readFleetRecord } from '../../src/fleet/record.ts';
import { FleetBuilder, workerCluster } from '../support/fleet.ts';
import { simFleet, type SimFleet } from '../support/fleet-sim.ts';
import { openSavedFleetPlans } from '../../src/app/fleet-saved-plan.ts';
import { nodeInputs } from '../../src/app/inputs.ts';
import { inDir, cli } from '../support/cli.ts';

const s = suite('fleet apply');

const NAMES = ['east', 'west', 'south'] as const;

function fleetOf(strategy: Record<string, unknown> = {}) {
  const b = new FleetBuilder();
  // east's own override: its plan is re-planned from its effective spec, not the shared one.
  for (const n of NAMES)
    b.cluster(n, {
      context: `ctx-${n}`,
      cluster: workerCluster(3, n),
      labels: { name: n },
      overrides: n === 'east' ? { pools: [{ name: 'worker', maxUnavailable: 2 }] } : undefined,
    });
  return b.strategy({ canaries: ['east'], maxConcurrency: 2, ...strategy });
}

type Setup = SimFleet;

function setup(o: { strategy?: Record<string, unknown>; faults?: Partial<Record<string, FaultOptions>>; missing?: string[] } = {}): Setup {
  return simFleet(fleetOf(o.strategy), { faults: o.faults, missing: o.missing, prefix: 'bootcplan-fleet-apply-' });
}

/** Every one of the cluster's 3 nodes rebooted once, none failed. */
const onNew = (sim: SimCluster) => sim.reboots.length === 3 && sim.reboots.every((r) => !r.failed) && new Set(sim.reboots.map((r) => r.node)).size === 3;
const touched = (sim: SimCluster) => sim.writes.length > 0;

// ---------------------------------------------------------------- trust boundaries

s('a fleet plan file modified after it was made is refused before any cluster is reached: exit 3', async () => {
  const st = setup();
  const fp = JSON.parse(readFileSync(st.planFile, 'utf8'));
  fp.strategy.canaries = [];
  writeFileSync(st.planFile, JSON.stringify(fp));
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /fleet plan file was modified after it was made/);
  assert.equal(st.opened, []);
});

s('a cluster plan edited inside the fleet plan (fleet id made to match again) is refused: exit 3, no cluster reached', async () => {
  const st = setup();
  const fp = JSON.parse(readFileSync(st.planFile, 'utf8'));
  fp.clusters[1].plan.pools[0].maxUnavailable.resolved = 3;
  fp.id = fleetPlanIdOf(fp);
  writeFileSync(st.planFile, JSON.stringify(fp));
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /the plan of cluster west in fleet plan .* was modified/);
  assert.equal(st.opened, []);
});

s(
  'a cluster plan edited and re-sealed, fleet id too, is caught by its re-plan at its turn: the canary fails (exit 3) with no node touched, the others never reached',
  async () => {
    const st = setup();
    const fp = JSON.parse(readFileSync(st.planFile, 'utf8'));
    const p = fp.clusters[0].plan;
    p.pools[0].maxUnavailable.resolved = 3;
    p.pools[0].waves = [p.pools[0].waves.flat()];
    for (const n of p.pools[0].nodes) n.wave = 1;
    p.pools[0].waveSize = 3;
    p.id = planIdOf(p);
    fp.id = fleetPlanIdOf(fp);
    writeFileSync(st.planFile, JSON.stringify(fp));
    const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
    assert.is(r.code, 3, r.err);
    assert.match(r.err, /east: failed \(exit 3\): plan .* is not what the spec and the cluster give now/);
    assert.equal(st.opened, ['ctx-east']);
    assert.equal(st.sims['ctx-east'].cordons, []);
    assert.not.ok(touched(st.sims['ctx-west']) || touched(st.sims['ctx-south']));
  },
);

s('a cluster plan taken from another fleet (another Fleet file) is refused: exit 3', async () => {
  const st = setup();
  const fp = JSON.parse(readFileSync(st.planFile, 'utf8'));
  fp.clusters[2].plan.spec.path = 'other-fleet.yaml';
  fp.clusters[2].plan.id = planIdOf(fp.clusters[2].plan);
  fp.id = fleetPlanIdOf(fp);
  writeFileSync(st.planFile, JSON.stringify(fp));
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /the plan of cluster south was not made from this fleet plan's Fleet/);
  assert.equal(st.opened, []);
});

s('the Fleet file changed since the fleet plan was made: exit 3 before any cluster is reached', async () => {
  const st = setup();
  writeFileSync(join(st.dir, 'fleet.yaml'), readFileSync(join(st.dir, 'fleet.yaml'), 'utf8') + '# edited\n');
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /the spec changed since the plan was made/);
  assert.equal(st.opened, []);
});

s('the check of a fleet plan of 120 clusters reads and validates the Fleet once, and re-plans each cluster from its own effective spec', async () => {
  const b = new FleetBuilder()
    .many(120, 'site', 3, (i): Record<string, string> => (i % 2 ? { tier: 'edge' } : {}))
    .override({ clusterSelector: { matchLabels: { tier: 'edge' } }, pools: [{ name: 'worker', maxUnavailable: 2 }] });
  const { dir } = b.write();
  const fp = b.plan();
  let reads = 0;
  const counting: typeof readFleet = (ports, file, ref) => {
    reads++;
    return readFleet(ports, file, ref);
  };
  const { clusters } = await inDir(dir, async () => openSavedFleetPlans(nodeInputs, fp, DEFAULT_DURATIONS, counting));
  assert.is(reads, 1);
  assert.is(clusters.size, 120);
  assert.is(clusters.get('site-000')!.spec.spec.pools?.[0]?.maxUnavailable, 1);
  assert.is(clusters.get('site-001')!.spec.spec.pools?.[0]?.maxUnavailable, 2, 'the label override');
  for (const name of ['site-000', 'site-001', 'site-119']) {
    const saved = fp.clusters.find((c) => c.name === name)!.plan!;
    const snapshot = b.clusters.find((c) => c.name === name)!.cluster!.snapshot();
    const fresh = confirmSavedPlan(saved, clusters.get(name)!.replan(snapshot), snapshot, { compareDurations: true });
    assert.is(fresh.id, saved.id, `${name}: re-planned as fleet plan made it`);
  }
});

s("a context the kubeconfig does not have is that cluster's error (exit 1), not a crash: continue rolls the others", async () => {
  const st = setup({ strategy: { batchTimeoutAction: 'continue' }, missing: ['ctx-south'] });
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 1, r.err);
  assert.match(r.out, /south +2 +failed +1 +\S+ +context "ctx-south" is not in the kubeconfig/);
  assert.match(r.out, /west +2 +done +0/);
  assert.is(st.sims['ctx-west'].reboots.length, 3);
  assert.not.match(r.err, /at .*\.ts:\d+/, 'no stack trace');
});

s('without a terminal and without --auto-approve: refused, nothing reached', async () => {
  const st = setup();
  const r = await cli(['fleet', 'apply', st.planFile], st.options);
  assert.is(r.code, 1);
  assert.match(r.err, /needs confirmation/);
  assert.equal(st.opened, []);
});

// ---------------------------------------------------------------- rollout

s('-o yaml: the events -o json prints, one YAML document each', async () => {
  const events = async (format: string) => {
    const st = setup();
    const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve', '-o', format], st.options);
    assert.is(r.code, 0, r.err);
    return r.out;
  };
  const json = (await events('json'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const yaml = await events('yaml');
  assert.ok(yaml.startsWith('---\n'));
  const docs = parseAllDocuments(yaml).map((d) => d.toJS());
  // The clusters of a batch roll at once: the same events, their order within a batch free.
  const kinds = (es: { type: string; cluster?: string }[]) => es.map((e) => `${e.type} ${e.cluster ?? ''}`).sort();
  assert.equal(kinds(docs), kinds(json));
  assert.is(docs[0].type, 'fleet-start');
  assert.is(docs.at(-1).type, 'fleet-done');
});

s('one canary, then maxConcurrency 2: all three clusters rolled, each recorded in itself; -o json is NDJSON of fleet and cluster events', async () => {
  const st = setup();
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve', '-o', 'json'], st.options);
  assert.is(r.code, 0, r.err);
  const events = r.out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.is(events[0].type, 'fleet-start');
  assert.is(events.at(-1).type, 'fleet-done');
  assert.equal(
    events.filter((e) => e.type === 'fleet-batch-start').map((e) => e.clusters),
    [['east'], ['south', 'west']],
  );
  assert.ok(events.some((e) => e.type === 'fleet-cluster-event' && e.cluster === 'west' && e.event.type === 'reboot'));
  const waves = (c: string) => events.filter((e) => e.type === 'fleet-cluster-event' && e.cluster === c && e.event.type === 'wave-start').length;
  assert.equal([waves('east'), waves('west'), waves('south')], [2, 3, 3], 'east rolled with its own maxUnavailable 2');
  const fpId = JSON.parse(readFileSync(st.planFile, 'utf8')).id;
  for (const n of NAMES) {
    const sim = st.sims[`ctx-${n}`];
    assert.ok(onNew(sim), `${n} rebooted its 3 nodes`);
    const rec = await readFleetRecord(sim.driver().records);
    assert.is(rec?.fleetPlanId, fpId);
    assert.is(rec?.outcome, 'done');
    assert.is(rec?.batch, n === 'east' ? 1 : 2);
  }
  // The canary finished before the batch started.
  const doneEast = events.findIndex((e) => e.type === 'fleet-cluster-done' && e.cluster === 'east');
  const startWest = events.findIndex((e) => e.type === 'fleet-cluster-start' && e.cluster === 'west');
  assert.ok(doneEast < startWest);
  // A rerun applies nothing again.
  const before = Object.values(st.sims).map((x) => x.reboots.length);
  const again = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(again.code, 0, again.err);
  assert.match(again.out, /east \(canary\) +1 +nothing-to-do/, 'a canary is never skipped on its record: its own apply answers');
  assert.equal(
    Object.values(st.sims).map((x) => x.reboots.length),
    before,
  );
});

s('a failing canary (its node fails the reboot) halts the fleet: exit 5, the other two never reached', async () => {
  const st = setup({ faults: { east: { seed: 1, rebootFailRate: 1 } } });
  const r = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(r.code, 5, r.err);
  assert.match(r.err, /fleet halted \(canary-failed\)/);
  assert.match(r.out, /west +2 +not-started/);
  assert.equal(st.opened, ['ctx-east']);
  assert.not.ok(touched(st.sims['ctx-west']) || touched(st.sims['ctx-south']));
  assert.is((await readFleetRecord(st.sims['ctx-east'].driver().records))?.outcome, 'failed');
});

s('killed mid-rollout, then run again: finished clusters are skipped, the half-done one resumes from its own progress, no node rebooted twice', async () => {
  const st = setup({ strategy: { batchTimeoutAction: 'continue' } });
  // The process dies (kill -9) when west asks its second node to reboot: its fleet record stays "running".
  const open = st.openDriver;
  let reboots = 0;
  st.openDriver = async (flags, io) => {
    const o = await open(flags, io);
    if (flags.context !== 'ctx-west') return o;
    const d = o.driver as SimDriver;
    const set = d.setDesiredImageState.bind(d);
    d.setDesiredImageState = async (node, state) => {
      if (state === 'Booted' && ++reboots === 2) d.kill();
      return set(node, state);
    };
    return o;
  };
  const first = await cli(['fleet', 'apply', st.planFile, '--auto-approve'], st.options);
  assert.is(first.code, 1, first.err);
  assert.match(first.out, /west +2 +failed/);
  const west = st.sims['ctx-west'];
  assert.is((await readFleetRecord(west.driver().records))?.outcome, 'running', 'the killed process wrote nothing more');
  assert.is(west.reboots.length, 1);
  st.openDriver = open;
  const opened = st.opened.length;
  const again = await cli(['fleet', 'apply', st.planFile, '--auto-approve', '--lock-timeout', '10m'], st.options);
  assert.is(again.code, 0, again.err);
  assert.match(again.out, /east \(canary\) +1 +nothing-to-do/, 'a canary is never skipped on its record: its own apply answers');
  assert.match(again.out, /south +2 +already-done/);
  assert.match(again.out, /west +2 +done/);
  assert.equal(st.opened.slice(opened).sort(), ['ctx-east', 'ctx-south', 'ctx-west'], 'each cluster read once for its record');
  assert.ok(onNew(west), 'west: every node rebooted exactly once');
  assert.is((await readFleetRecord(west.driver().records))?.outcome, 'done');
});

s.run();
