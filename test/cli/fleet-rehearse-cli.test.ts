/**
 * `bootcplan fleet rehearse` (docs/fleets.md) through the CLI: a Fleet of snapshot files planned now
 * (-f) or a saved fleet plan, rehearsed on simulated clusters; the worst exit code; a failed
 * canary stops the fleet; a cluster plan that no longer matches its snapshot fails that cluster
 * (exit 3) as `rehearse PLANFILE` would.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uidOf } from '../../src/sim/fake-ids.ts';
import { FleetBuilder, workerCluster } from '../support/fleet.ts';
import { inDir, cli } from '../support/cli.ts';

const s = suite('fleet rehearse cli');

function fleet(action: 'abort' | 'continue' = 'abort') {
  return new FleetBuilder()
    .withRollout({ pools: [{ name: 'worker', image: 'quay.io/example/fedora-bootc-node@sha256:' + 'e'.repeat(64), maxUnavailable: 2 }] })
    .cluster('east', { labels: { region: 'us' }, cluster: workerCluster(4, 'e') })
    .cluster('west', { labels: { region: 'us' }, cluster: workerCluster(6, 'w') })
    .cluster('south', { labels: { region: 'ap' }, cluster: workerCluster(8, 's') })
    .strategy({ canaries: ['east'], maxConcurrency: 2, batchSoakSeconds: 300, batchTimeoutAction: action })
    .write();
}

s('fleet rehearse -f FLEET -o json: every cluster done, batches in order with the soak, makespan = the fleet estimate', async () => {
  const { file } = fleet();
  const r = await cli(['fleet', 'rehearse', '-f', file, '-o', 'json'], { io: { stderrColumns: 100 } });
  assert.is(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(
    j.batches.map((b: any) => b.clusters),
    [['east'], ['south', 'west']],
  );
  assert.equal(
    j.clusters.map((c: any) => c.outcome),
    ['done', 'done', 'done'],
  );
  assert.is(j.batches[1].start, j.batches[0].end + 300);
  assert.is(j.exitCode, 0);
  assert.ok(Math.abs(j.makespanSeconds - j.estimatedSeconds) <= j.estimatedSeconds * 0.02, `${j.makespanSeconds} vs ${j.estimatedSeconds}`);
});

s('fleet rehearse --fail-rate 1: the canary fails, nothing else starts, exit 5; the text says so', async () => {
  const { file } = fleet();
  const r = await cli(['fleet', 'rehearse', '-f', file, '--fail-rate', '1', '--seed', '3'], { io: { stderrColumns: 100 } });
  assert.is(r.code, 5, r.err);
  assert.match(r.out, /east +1 canary +failed/);
  assert.match(r.out, /west +2 +not-started/);
  assert.match(r.out, /Fleet rehearsal: stopped after .*canary east failed/);
});

s('fleet rehearse FLEETPLAN -o html: the report with the chart of batches over time', async () => {
  const { dir, file } = fleet();
  await inDir(dir, async () => {
    const p = await cli(['fleet', 'plan', '-f', file, '--out', join(dir, 'fp.json')], { io: { stderrColumns: 100 } });
    assert.is(p.code, 0, p.err);
    const r = await cli(['fleet', 'rehearse', join(dir, 'fp.json'), '-o', 'html', '--jitter', '0.3'], { io: { stderrColumns: 100 } });
    assert.is(r.code, 0, r.err);
    assert.match(r.out, /^<!doctype html>/);
    assert.match(r.out, /<svg id="fleet-chart"/);
    assert.is((r.out.match(/<rect class="bar done"/g) ?? []).length, 3);
    assert.match(r.out, /<rect class="soak"/);
  });
});

s('a cluster whose snapshot changed since the fleet plan fails (exit 3) in its turn; with continue the others roll', async () => {
  const { dir, file } = fleet('continue');
  await inDir(dir, async () => {
    assert.is((await cli(['fleet', 'plan', '-f', file, '--out', join(dir, 'fp.json')], { io: { stderrColumns: 100 } })).code, 0);
    // The same cluster (its identity, as test/support/fleet.ts gives it), with 9 nodes now.
    const grown = workerCluster(9, 's');
    grown.object('ClusterVersion').spec.clusterID = uidOf('cluster/south');
    writeFileSync(join(dir, 'south.yaml'), grown.yaml());
    const r = await cli(['fleet', 'rehearse', join(dir, 'fp.json'), '-o', 'json'], { io: { stderrColumns: 100 } });
    assert.is(r.code, 3, r.err);
    const by = Object.fromEntries(JSON.parse(r.out).clusters.map((c: any) => [c.name, c]));
    assert.is(by.south.outcome, 'failed');
    assert.is(by.south.exitCode, 3);
    assert.match(by.south.message, /is not what the spec and the cluster give now/);
    assert.is(by.west.outcome, 'done');
  });
});

s('a fleet plan file edited after it was made is refused before anything runs: exit 3', async () => {
  const { dir, file } = fleet();
  await inDir(dir, async () => {
    await cli(['fleet', 'plan', '-f', file, '--out', join(dir, 'fp.json')], { io: { stderrColumns: 100 } });
    const fp = JSON.parse(readFileSync(join(dir, 'fp.json'), 'utf8'));
    fp.strategy.batchSoakSeconds = 0;
    writeFileSync(join(dir, 'fp.json'), JSON.stringify(fp));
    const r = await cli(['fleet', 'rehearse', join(dir, 'fp.json')], { io: { stderrColumns: 100 } });
    assert.is(r.code, 3);
    assert.is(r.out, '');
  });
});

s('progress on a terminal: one live line (clusters done of all, the batch, fleet time) redrawn in place, erased before the report', async () => {
  const { file } = fleet();
  const r = await cli(['fleet', 'rehearse', '-f', file], { io: { stderrIsTTY: true, stderrColumns: 100 } });
  assert.is(r.code, 0, r.err);
  assert.not.match(r.err, /\n/, 'one line, never scrolled');
  assert.ok(r.io.errWrites.length >= 4, r.io.errWrites.join('|'));
  assert.ok(
    r.io.errWrites.every((w) => w.startsWith('\r\x1b[K')),
    'each write redraws the line',
  );
  assert.match(r.err, /rehearsing fleet: 0\/3 clusters done; batch 1\/2 \(canary east\); fleet time 0s/);
  assert.match(r.err, /rehearsing fleet: 1\/3 clusters done; batch 2\/2 \(2 clusters\); fleet time \d+[hm]/);
  assert.match(r.err, /3\/3 clusters done/);
  assert.is(r.io.errWrites.at(-1), '\r\x1b[K', 'erased at the end');
  assert.match(r.out, /Fleet rehearsal/);
});

s('progress without a terminal: one line per batch as it ends; nothing with -q', async () => {
  const { file } = fleet();
  const r = await cli(['fleet', 'rehearse', '-f', file, '--fail-rate', '1', '--seed', '3', '-o', 'json'], { io: { stderrIsTTY: false, stderrColumns: 100 } });
  assert.is(r.code, 5);
  assert.equal(r.err.split('\n').filter(Boolean).length, 1, r.err);
  assert.match(r.err, /^fleet rehearse: batch 1\/2 \(canary east\) ended, failed: east; 0\/3 clusters done; fleet time \d+/);
  const ok = await cli(['fleet', 'rehearse', '-f', file, '-o', 'json'], { io: { stderrColumns: 100 } });
  const lines = ok.err.split('\n').filter(Boolean);
  assert.is(lines.length, 2, ok.err);
  assert.match(lines[0], /batch 1\/2 \(canary east\) ended; 1\/3 clusters done/);
  assert.match(lines[1], /batch 2\/2 \(2 clusters\) ended; 3\/3 clusters done; fleet time \d+h\d+m/);
  JSON.parse(ok.out);
  const quiet = await cli(['-q', 'fleet', 'rehearse', '-f', file, '-o', 'json'], { io: { stderrIsTTY: true, stderrColumns: 100 } });
  assert.is(quiet.code, 0);
  assert.is(quiet.err, '');
});

s('bad flags: one-screen errors, exit 1', async () => {
  const { file } = fleet();
  const j = await cli(['fleet', 'rehearse', '-f', file, '--jitter', '2'], { io: { stderrColumns: 100 } });
  assert.is(j.code, 1);
  assert.match(j.err, /--jitter/);
  assert.not.match(j.err, /\n\s+at /, 'no stack trace');
  const o = await cli(['fleet', 'rehearse', '-f', file, '-o', 'xml'], { io: { stderrColumns: 100 } });
  assert.is(o.code, 1);
  assert.match(o.err, /text, json, yaml, markdown, html/);
});

s.run();
