/**
 * Rehearsing health gates (docs/apply.md "Rehearsing a failing gate"): `rehearse --fail-check
 * NAME@POINT` and `--fail-check-rate R`, the gates on the timeline and in the makespan, and the
 * promise that the health faults draw from a stream of their own: a `--seed` rehearsal without
 * them replays byte for byte (test/support/golden/rehearsal-seeded.txt was written by the bootcplan before
 * health checks existed, with the same command; only its plan id was updated since, when every plan
 * gained its pools' way back, and its times, by less than a second each, when the soak began to count
 * from the wave's end to the millisecond; and its waves and times when every reboot became a hard
 * one, as the released bootc-operator performs them), and a plan with checks fails the same nodes.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { cli } from '../support/cli.ts';
import { ROOT, GOLDEN_DIR } from '../support/render.ts';

const s = suite('rehearse: health gates');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-rehearse-health-'));
copyFileSync(join(ROOT, 'examples/rollout.yaml'), join(dir, 'rollout.yaml'));
copyFileSync(join(ROOT, 'examples/cluster.yaml'), join(dir, 'cluster.yaml'));
copyFileSync(join(ROOT, 'examples/health/openshift.yaml'), join(dir, 'health.yaml'));

/** Each command runs in the suite's directory at a fixed time, as the seeded goldens were recorded. */
const IN_DIR = { cwd: dir, now: () => Date.parse('2026-09-14T08:00:00Z') };
const SEEDED = ['--fail-rate', '0.1', '--seed', '5', '--jitter', '0.2'];

s('a --seed rehearsal without health faults replays byte for byte what the bootcplan before health checks printed', async () => {
  const r = await cli(['rehearse', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml', ...SEEDED, '--events'], IN_DIR);
  assert.is(r.code, 5);
  assert.is(r.out, readFileSync(join(GOLDEN_DIR, 'rehearsal-seeded.txt'), 'utf8'));
});

s("a plan with checks fails the same nodes with the same seed: the health stream draws nothing from the faults' one", async () => {
  const plain = JSON.parse((await cli(['rehearse', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml', ...SEEDED, '-o', 'json'], IN_DIR)).out);
  const gated = JSON.parse(
    (await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', ...SEEDED, '--fail-check-rate', '0', '-o', 'json'], IN_DIR)).out,
  );
  const failed = (r: any) => r.events.filter((e: any) => e.type === 'node-failed').map((e: any) => e.node);
  assert.equal(failed(gated), failed(plain));
  assert.equal(failed(plain), ['worker-b-0']);
  assert.ok(gated.durationSeconds > plain.durationSeconds, 'the makespan counts the gates');
  const gateTime = gated.gates.reduce((n: number, g: any) => n + g.end - g.start, 0);
  assert.ok(gateTime > 0);
});

s('--fail-check NAME@POINT halts at that gate (exit 5); the timeline, the text and the JSON show the gates', async () => {
  const r = await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', '--fail-check', 'api-error-ratio@worker:wave=2'], IN_DIR);
  assert.is(r.code, 5);
  assert.match(r.out, /health faults: --fail-check api-error-ratio@worker:wave=2/);
  assert.match(r.out, /\n {4}gate +\S+ +\S+ +0s +failed: api-error-ratio\n/);
  assert.match(
    r.out,
    /Health gates: 8 passed \(3m30s in total\); api-error-ratio failed after wave 2 of worker at 1h5m: rehearsal: --fail-check api-error-ratio@worker:wave=2\./,
  );
  assert.match(r.err, /error: rollout halted: health check api-error-ratio failed after wave 2\/4 of pool worker/);
  const json = JSON.parse(
    (await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', '--fail-check', 'api-error-ratio@worker:wave=2', '-o', 'json'], IN_DIR)).out,
  );
  assert.equal(json.healthFaults, { failChecks: ['api-error-ratio@worker:wave=2'], failRate: 0, seed: 1 });
  assert.equal(json.gates.at(-1), {
    point: 'afterWave',
    pool: 'worker',
    wave: 2,
    start: json.gates.at(-1).start,
    end: json.gates.at(-1).start,
    result: 'failed',
    check: 'api-error-ratio',
    observed: 'rehearsal: --fail-check api-error-ratio@worker:wave=2',
  });
  const html = (
    await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', '--fail-check', 'api-error-ratio@worker:wave=2', '-o', 'html'], IN_DIR)
  ).out;
  assert.match(html, /<path class="gate passed"/);
  assert.match(html, /<line class="gate-rule"/);
  assert.match(html, /api-error-ratio failed<\/text>/);
});

s('--fail-check-rate: the same seed, the same gates; a rate of 1 fails the preflight gate, writing nothing', async () => {
  const a = JSON.parse(
    (await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', '--fail-check-rate', '0.2', '--seed', '11', '-o', 'json'], IN_DIR)).out,
  );
  const b = JSON.parse(
    (await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', '--fail-check-rate', '0.2', '--seed', '11', '-o', 'json'], IN_DIR)).out,
  );
  assert.equal(a.gates, b.gates);
  const all = JSON.parse((await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', '--fail-check-rate', '1', '-o', 'json'], IN_DIR)).out);
  assert.equal([all.exitCode, all.gates.length, all.gates[0].point, all.gates[0].result], [5, 1, 'preflight', 'failed']);
  assert.is(all.events.filter((e: any) => e.type === 'change').length, 0);
});

s('a --fail-check that names no check of the plan, or no gate point, is an input error saying what there is', async () => {
  const unknown = await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', '--fail-check', 'no-alerts@wave=1'], IN_DIR);
  assert.is(unknown.code, 1);
  assert.match(unknown.err, /--fail-check no-alerts@wave=1: no health check of that name in the plan/);
  assert.match(unknown.err, /the plan's checks: no-critical-alerts, api-error-ratio, operators, router-available/);
  const bad = await cli(['rehearse', '-f', 'health.yaml', '--cluster', 'cluster.yaml', '--fail-check', 'operators@wave2'], IN_DIR);
  assert.is(bad.code, 1);
  assert.match(bad.err, /"wave2" in "operators@wave2" is no gate point/);
  const none = await cli(['rehearse', '-f', 'rollout.yaml', '--cluster', 'cluster.yaml', '--fail-check', 'x@preflight'], IN_DIR);
  assert.match(none.err, /the plan has no health checks/);
});

s.run();
