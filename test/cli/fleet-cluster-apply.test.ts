/**
 * One cluster's plan out of a fleet plan is a normal sealed plan (docs/fleets.md): `bootcplan
 * apply cluster-plan.json` re-plans from the Fleet file at its path (and commit) for
 * spec.fleetCluster, with the same provenance checks as for a Rollout spec.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync, readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DriverFactory } from '../../src/app/ports.ts';
import type { Plan } from '../../src/plan/types.ts';
import { planIdOf } from '../../src/plan/planner.ts';
import { newSim } from '../support/apply.ts';
import { cli } from '../support/cli.ts';
import { FleetBuilder, workerCluster } from '../support/fleet.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { gitIn } from '../support/git.ts';

const s = suite('a cluster plan out of a fleet plan');

const repo = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-apply-'));
const git = gitIn(repo);
git('init', '-q', '-b', 'main');
const fleet = new FleetBuilder()
  .cluster('east', { cluster: workerCluster(4), overrides: { pools: [{ name: 'worker', maxUnavailable: 2 }] } })
  .cluster('west', { cluster: workerCluster(4) });
fleet.write(repo);
git('add', '.');
git('commit', '-qm', 'fleet');

async function clusterPlan(name: string): Promise<Plan> {
  const p = await cli(['fleet', 'plan', '-f', 'fleet.yaml', '--out', './fleet-plan.json'], { cwd: repo });
  assert.is(p.code, 0, p.err);
  const r = await cli(['fleet', 'show', './fleet-plan.json', '--cluster', name, '-o', 'json'], { cwd: repo });
  assert.is(r.code, 0, r.err);
  return JSON.parse(r.out);
}

async function applyTo(name: string, plan: Plan) {
  writeFileSync(join(repo, `${name}-plan.json`), JSON.stringify(plan, null, 2));
  const sim = newSim(readSnapshotFile(nodeInputs, join(repo, `${name}.yaml`)));
  const before = (await sim.driver().snapshot()).fingerprint;
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'fleet@test' });
  const r = await cli(['apply', `${name}-plan.json`, '--auto-approve', '--json'], { cwd: repo, openDriver });
  return { ...r, wrote: (await sim.driver().snapshot()).fingerprint !== before };
}

s('apply east-plan.json re-plans from the Fleet for cluster east and runs: exit 0', async () => {
  const plan = await clusterPlan('east');
  assert.is(plan.spec.fleetCluster, 'east');
  assert.is(plan.pools[0].maxUnavailable.resolved, 2);
  const r = await applyTo('east', plan);
  assert.is(r.code, 0, r.err);
  assert.ok(r.wrote);
});

s('a cluster plan edited and re-sealed is refused by the re-plan: exit 3, nothing written', async () => {
  const plan = await clusterPlan('west');
  plan.pools[0].maxUnavailable.resolved = 4;
  plan.pools[0].waves = [plan.pools[0].waves.flat()];
  for (const n of plan.pools[0].nodes) n.wave = 1;
  plan.pools[0].waveSize = 4;
  const r = await applyTo('west', { ...plan, id: planIdOf(plan) });
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /is not what the spec and the cluster give now/);
  assert.not.ok(r.wrote);
});

s('a cluster plan re-labelled for another cluster is refused: exit 3', async () => {
  const plan = await clusterPlan('west');
  plan.spec.fleetCluster = 'east';
  const r = await applyTo('west', { ...plan, id: planIdOf(plan) });
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /maxUnavailable is 1 in the plan file, 2 from the spec and the cluster/);
  assert.not.ok(r.wrote);
});

s('a cluster plan for a cluster the Fleet does not list is an input error: exit 1', async () => {
  const plan = await clusterPlan('west');
  plan.spec.fleetCluster = 'nowhere';
  const r = await applyTo('west', { ...plan, id: planIdOf(plan) });
  assert.is(r.code, 1, r.err);
  assert.match(r.err, /made for cluster "nowhere", which the Fleet fleet.yaml does not list/);
});

s('a fleet plan made with --ref: the cluster plan names the commit, and apply reads the Fleet at it', async () => {
  const p = await cli(['fleet', 'plan', '-f', 'fleet.yaml', '--ref', 'HEAD', '--out', './fleet-plan-ref.json'], { cwd: repo });
  assert.is(p.code, 0, p.err);
  const r = await cli(['fleet', 'show', './fleet-plan-ref.json', '--cluster', 'west', '-o', 'json'], { cwd: repo });
  const plan: Plan = JSON.parse(r.out);
  assert.match(String(plan.spec.commit), /^[0-9a-f]{40}$/);
  assert.is(plan.spec.ref, 'HEAD');
  const file = join(repo, 'fleet.yaml');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text + '# a working-tree edit the commit does not have\n');
  try {
    const a = await applyTo('west', plan);
    assert.is(a.code, 0, a.err);
    assert.ok(a.wrote);
  } finally {
    writeFileSync(file, text);
  }
});

s('the Fleet changed since the fleet plan was made: exit 3', async () => {
  const plan = await clusterPlan('west');
  const file = join(repo, 'fleet.yaml');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text + '# changed\n');
  try {
    const r = await applyTo('west', plan);
    assert.is(r.code, 3, r.err);
    assert.match(r.err, /the spec changed since the plan was made/);
  } finally {
    writeFileSync(file, text);
  }
});

s.run();
