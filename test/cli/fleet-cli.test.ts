/**
 * `bootcplan fleet plan | show | validate` (docs/fleets.md) on snapshot files: the batches and a line
 * per cluster, `--out` a sealed fleet plan, a cluster that cannot be read is its error (exit 1,
 * the fleet still printed and saved), a modified fleet plan file is refused (exit 3).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { FleetBuilder } from '../support/fleet.ts';
import { fleetPlanIdOf } from '../../src/fleet/plan.ts';
import { planIdOf } from '../../src/plan/planner.ts';
import { cli } from '../support/cli.ts';

const s = suite('fleet cli');

const fleet = new FleetBuilder()
  .cluster('east', { labels: { region: 'us' } })
  .cluster('west', { labels: { region: 'us' } })
  .cluster('south', { labels: { region: 'ap' } })
  .strategy({ canaries: ['east'], maxConcurrency: 2 });
const { dir, file } = fleet.write();

s('fleet plan over snapshot files: batches, a line per cluster, the fleet line; exit 0', async () => {
  const r = await cli(['fleet', 'plan', '-f', file]);
  assert.is(r.code, 0, r.err);
  assert.match(r.out, /Batches \(canaries first, then up to 2 clusters each/);
  assert.match(r.out, /\n {2}1 {2}canary .*east\n {2}2 {2}batch .*south, west\n/);
  assert.match(r.out, /Fleet: 3 of 3 clusters planned, 3 with changes; 9 nodes in 2 batches \(est\. /);
});

s('fleet plan --out saves a sealed fleet plan; fleet show renders it; json round-trips', async () => {
  const out = join(dir, 'fleet-plan.json');
  const r = await cli(['fleet', 'plan', '-f', file, '--out', out, '-o', 'json']);
  assert.is(r.code, 0, r.err);
  const saved = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(JSON.parse(r.out), saved);
  assert.is(fleetPlanIdOf(saved), saved.id);
  assert.match(r.err, new RegExp(`saved fleet plan ${saved.id}`));
  const shown = await cli(['fleet', 'show', out]);
  assert.is(shown.code, 0, shown.err);
  assert.match(shown.out, new RegExp(`fleet plan ${saved.id}`));
});

s('a fleet plan file modified after it was made is refused: exit 3', async () => {
  const out = join(dir, 'tampered.json');
  await cli(['fleet', 'plan', '-f', file, '--out', out]);
  const fp = JSON.parse(readFileSync(out, 'utf8'));
  fp.strategy.batchSoakSeconds = 0;
  fp.batches[1].clusters.reverse();
  writeFileSync(out, JSON.stringify(fp));
  const r = await cli(['fleet', 'show', out]);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /fleet plan file was modified after it was made/);
});

s('a fleet plan whose cluster plan was edited (fleet id made to match again) is refused: exit 3', async () => {
  const out = join(dir, 'edited-cluster.json');
  await cli(['fleet', 'plan', '-f', file, '--out', out]);
  const fp = JSON.parse(readFileSync(out, 'utf8'));
  fp.clusters[1].plan.pools[0].maxUnavailable.resolved = 3;
  fp.id = fleetPlanIdOf(fp);
  writeFileSync(out, JSON.stringify(fp));
  const r = await cli(['fleet', 'show', out]);
  assert.is(r.code, 3, r.err);
  assert.match(r.err, /the plan of cluster west in fleet plan .* was modified/);
  // Re-sealed cluster plan too: the shape is fine, the seal is fine; apply's re-plan is what catches it.
  fp.clusters[1].plan.id = planIdOf(fp.clusters[1].plan);
  fp.id = fleetPlanIdOf(fp);
  writeFileSync(out, JSON.stringify(fp));
  assert.is((await cli(['fleet', 'show', out])).code, 0);
});

s('a cluster whose snapshot cannot be read is its error: exit 1, the fleet still printed and saved', async () => {
  const b = new FleetBuilder().cluster('good').cluster('gone').strategy({ maxConcurrency: 5 });
  const w = b.write();
  writeFileSync(join(w.dir, 'gone.yaml'), 'kind: [');
  const out = join(w.dir, 'plan.json');
  const r = await cli(['fleet', 'plan', '-f', w.file, '--out', out]);
  assert.is(r.code, 1, r.err);
  assert.match(r.out, /gone +- +- +- +- +- +error: snapshot-invalid/);
  assert.match(r.out, /Errors:\n {2}gone: snapshot-invalid: /);
  assert.match(r.out, /hint: /);
  assert.ok(existsSync(out));
  assert.equal(
    JSON.parse(readFileSync(out, 'utf8')).batches.map((x: { clusters: string[] }) => x.clusters),
    [['good']],
  );
});

s("a snapshot path outside the repository (or the Fleet's directory) is not read", async () => {
  const b = new FleetBuilder().cluster('a');
  const w = b.write();
  const doc = b.doc() as { spec: { clusters: { snapshot: string }[] } };
  doc.spec.clusters[0].snapshot = '../../../../../../etc/passwd';
  writeFileSync(w.file, JSON.stringify(doc));
  const r = await cli(['fleet', 'plan', '-f', w.file]);
  assert.is(r.code, 1);
  assert.match(r.out, /snapshot "..\/..\/..\/..\/..\/..\/etc\/passwd" is outside/);
  assert.not.match(r.out, /root:/);
});

s('fleet validate: valid, or every error with its position (exit 1)', async () => {
  const ok = await cli(['fleet', 'validate', '-f', file]);
  assert.is(ok.code, 0, ok.err);
  assert.match(ok.out, /valid \(3 clusters, 1 canary\)/);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, readFileSync(file, 'utf8').replace('canaries:\n      - east', 'canaries:\n      - eats'));
  const r = await cli(['fleet', 'validate', '-f', bad]);
  assert.is(r.code, 1);
  assert.match(r.err, /bad\.yaml:\d+:\d+: spec\.strategy\.canaries\[0\]: canary "eats" is not a cluster of this fleet/);
});

s('no Fleet file: one line naming the Fleet and the -f default', async () => {
  const r = await cli(['fleet', 'plan', '-f', join(dir, 'nope.yaml')]);
  assert.is(r.code, 1);
  assert.match(r.err, /error: Fleet .*nope\.yaml does not exist\n {2}hint: pass the Fleet with -f FILE \(default: fleet\.yaml in the current directory\)/);
});

s.run();
