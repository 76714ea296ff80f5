/**
 * `plan --rollback` and `apply ROLLBACK.json` through the CLI (docs/apply.md "Rollback"): the
 * way back planned from a snapshot that holds the run record, reviewed (text, Markdown, HTML,
 * JSON), sealed, and applied against the cluster; the refusals as one-screen errors.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, nodes } from '../support/cluster.ts';
import { planWith, newSim } from '../support/apply.ts';
import { stepOnce } from '../support/rollback.ts';
import { run as runSources } from '../../src/cli/main.ts';
import { cli, inDir } from '../support/cli.ts';
import type { ClusterSnapshot, KObject } from '../../src/cluster/types.ts';
import type { SimCluster } from '../../src/sim/cluster.ts';

const t = suite('rollback: the CLI');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-rollback-'));

/** The simulated cluster as a snapshot file (what `bootcplan snapshot` writes). */
function snapshotFile(sim: SimCluster, name: string): string {
  const s: ClusterSnapshot = sim.snapshotCopy();
  const items: KObject[] = [];
  for (const v of Object.values(s)) {
    if (Array.isArray(v)) items.push(...(v as KObject[]));
    else if (v && typeof v === 'object') items.push(v as KObject);
  }
  const file = join(dir, name);
  writeFileSync(file, stringify({ apiVersion: 'v1', kind: 'List', items }));
  return file;
}

async function afterWaveOne() {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
  const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  return { sim, fwd, updated: fwd.plan.pools[0].waves[0] };
}

t('plan --rollback: a reviewable plan in every format; --out seals it; show verifies it; apply runs it and the nodes go back', async () => {
  const { sim, fwd, updated } = await afterWaveOne();
  await inDir(dir, async () => {
    const file = snapshotFile(sim, 'after-wave-1.yaml');
    const text = await cli(['plan', '--rollback', '--cluster', 'after-wave-1.yaml']);
    assert.is(text.code, 0, text.err);
    assert.match(text.out, new RegExp(`Rollback of plan ${fwd.plan.id} \\(scope run\\): 2 nodes back to ${OLD.replace(/[.]/g, '\\.')} in 1 wave`));
    assert.match(
      text.out,
      /pool worker: back to .*@sha256:[0-9a-f]{12}.* via BootcNodePool\/worker spec\.image\.ref \(the rollback deployment's image: no download\)/,
    );
    assert.match(text.out, /w-02, w-03, w-04, w-05 boot the origin but staged the run's image before the first wave/);
    const md = await cli(['plan', '--rollback', '--cluster', 'after-wave-1.yaml', '-o', 'markdown']);
    assert.match(md.out, /Rollback of plan `[0-9a-f]{16}`/);
    assert.match(md.out, /\| worker \| .*sha256:[0-9a-f]{12}.* \| BootcNodePool\/worker spec\.image\.ref \| no \|/);
    const html = await cli(['plan', '--rollback', '--cluster', 'after-wave-1.yaml', '-o', 'html']);
    assert.match(html.out, /<h2[^>]*>Rollback of plan/);
    assert.match(html.out, /BootcNodePool\/worker spec\.image\.ref/);
    assert.is((await cli(['plan', '--rollback', '--cluster', 'after-wave-1.yaml', '--detailed-exitcode'])).code, 2);

    const saved = await cli(['plan', '--rollback', '--cluster', 'after-wave-1.yaml', '--out', 'rollback.json']);
    assert.is(saved.code, 0, saved.err);
    const plan = JSON.parse(readFileSync(join(dir, 'rollback.json'), 'utf8'));
    assert.is(plan.formatVersion, '1.2');
    assert.is(plan.rollback.of.planId, fwd.plan.id);
    assert.is((await cli(['show', 'rollback.json'])).code, 0);
    const edited = { ...plan, rollback: { ...plan.rollback, scope: 'wave' } };
    writeFileSync(join(dir, 'edited.json'), JSON.stringify(edited));
    assert.is((await cli(['show', 'edited.json'])).code, 3, 'an edited rollback plan is refused (its seal)');

    const applied = await cli(['apply', 'rollback.json'], { entry: runSources, openDriver: async () => ({ driver: sim.driver(), holder: 'ci@test' }) });
    assert.is(applied.code, 0, applied.err + applied.out);
    for (const n of updated) assert.is(sim.get('BootcNode', n)!.status?.booted?.image, OLD, n);
    const rec = (await sim.driver().readProgress()).run!;
    assert.equal(
      rec.holds?.map((h) => [h.pool, h.target]),
      [['worker', NEW_DIGEST]],
    );
    void file;
  });
});

t('refusals: no run record, a record that is a rollback; exit 1 with one error and a hint', async () => {
  await inDir(dir, async () => {
    writeFileSync(join(dir, 'fresh.yaml'), new ClusterBuilder().bootcPool('worker', nodes('w', 2)).yaml());
    const none = await cli(['plan', '--rollback', '--cluster', 'fresh.yaml']);
    assert.is(none.code, 1);
    assert.match(none.err, /^error: plan --rollback: this cluster has no run record/m);
    assert.match(none.err, /hint: /);
    assert.not.match(none.err, /\n\s+at /, 'no stack trace');
    const { sim } = await afterWaveOne();
    snapshotFile(sim, 'w1.yaml');
    assert.is((await cli(['plan', '--rollback', '--cluster', 'w1.yaml', '--out', 'rb.json'])).code, 0);
    assert.is((await cli(['apply', 'rb.json'], { entry: runSources, openDriver: async () => ({ driver: sim.driver(), holder: 'ci@test' }) })).code, 0);
    snapshotFile(sim, 'after-rollback.yaml');
    const twice = await cli(['plan', '--rollback', '--cluster', 'after-rollback.yaml']);
    assert.is(twice.code, 1);
    assert.match(twice.err, /the latest run is itself a rollback/);
    assert.match(twice.err, /hint: plan the spec to go forward again/);
  });
});

t.run();
