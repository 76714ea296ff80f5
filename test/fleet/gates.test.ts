/**
 * The canary batch gate (docs/fleets.md "Health gates"): after a canary's batch has soaked, its
 * afterWave checks are measured once more before the next batch starts; the gate takes fleet
 * time; a failure stops the fleet (exit 5) and names the check and what it saw; a canary that
 * cannot measure its checks fails its gate; `fleet rehearse --fail-check CLUSTER/NAME@batch`
 * exercises it.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { FleetBuilder, workerCluster } from '../support/fleet.ts';
import { runBatchGates, batchGateChecks } from '../../src/fleet/gates.ts';
import type { FleetPlan } from '../../src/fleet/plan-types.ts';
import type { PlanHealthCheck } from '../../src/plan/types.ts';
import { cli } from '../support/cli.ts';

/** A 100-column terminal for the fleet's progress lines. */
const NARROW = { io: { stderrColumns: 100 } };

const s = suite('fleet: canary batch gate');
const IMAGE = 'quay.io/example/fedora-bootc-node@sha256:' + 'e'.repeat(64);

function fleet() {
  return new FleetBuilder()
    .withRollout({
      pools: [{ name: 'worker', image: IMAGE, maxUnavailable: 2 }],
      healthChecks: [
        { name: 'alerts', alerts: { matchers: ['severity="critical"'] }, intervalSeconds: 60, successes: 3 },
        { name: 'ops', clusterOperators: {}, when: ['preflight'] },
      ],
    })
    .cluster('east', { labels: { region: 'us' }, cluster: workerCluster(4, 'e') })
    .cluster('west', { labels: { region: 'us' }, cluster: workerCluster(4, 'w') })
    .strategy({ canaries: ['east'], maxConcurrency: 1, batchSoakSeconds: 300 })
    .write();
}

s("after the canary's batch soaked, its afterWave checks run again: the next batch starts after the soak and the gate", async () => {
  const { file } = fleet();
  const r = await cli(['fleet', 'rehearse', '-f', file, '-o', 'json'], NARROW);
  assert.is(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(
    j.clusters.map((c: any) => c.outcome),
    ['done', 'done'],
  );
  // 3 successes 60 s apart: the gate takes 120 s of fleet time after the 300 s soak.
  assert.is(j.batches[1].start, j.batches[0].end + 300 + 120);
  const plan = await cli(['fleet', 'plan', '-f', file], NARROW);
  assert.match(plan.out, /\n {2}1 +canary +est\. \S+ +east; then its batch gate: alerts\n/);
  const md = await cli(['fleet', 'plan', '-f', file, '-o', 'markdown'], NARROW);
  assert.match(md.out, /\| 1 \| canary \| east; then its batch gate: alerts \|/);
});

s("fleet rehearse --fail-check east/alerts@batch: the canary's batch gate fails, nothing else starts, exit 5, the check named", async () => {
  const { file } = fleet();
  const r = await cli(['fleet', 'rehearse', '-f', file, '--fail-check', 'east/alerts@batch'], NARROW);
  assert.is(r.code, 5, r.err);
  assert.match(r.out, /east +1 canary +failed/);
  assert.match(r.out, /west +2 +not-started/);
  assert.match(r.out, /canary east failed its batch gate: health check alerts failed: rehearsal: --fail-check east\/alerts@batch \(on failure: halt\)/);
  // A rule for another cluster, or another point, changes nothing.
  assert.is((await cli(['fleet', 'rehearse', '-f', file, '--fail-check', 'west/alerts@batch'], NARROW)).code, 0);
  const unknown = await cli(['fleet', 'rehearse', '-f', file, '--fail-check', 'east/nope@batch'], NARROW);
  assert.is(unknown.code, 1);
  assert.match(unknown.err, /the plan's checks: alerts, ops/);
});

s('a canary with checks whose session cannot measure them fails its batch gate; a canary without afterWave checks has none', async () => {
  const check = { name: 'a', kind: 'alerts', when: ['afterWave'], pools: ['worker'] } as unknown as PlanHealthCheck;
  const plan = {
    clusters: [
      { name: 'east', plan: { healthChecks: [check] } },
      { name: 'quiet', plan: { healthChecks: [{ ...check, when: ['preflight'] }] } },
    ],
  } as unknown as FleetPlan;
  assert.equal(batchGateChecks(plan.clusters[1].plan).length, 0);
  const events: unknown[] = [];
  const failed = await runBatchGates({
    plan,
    batch: { index: 1, kind: 'canary', clusters: ['east', 'quiet'], estimatedSeconds: 0 },
    signal: new AbortController().signal,
    verifier: async () => ({ verify: null }),
    finished: () => true,
    emit: (e) => events.push(e),
  });
  assert.equal(failed, { cluster: 'east', message: 'canary east has health checks and no health source to measure them for its batch gate' });
  const none = await runBatchGates({
    plan,
    batch: { index: 2, kind: 'batch', clusters: ['east'], estimatedSeconds: 0 },
    signal: new AbortController().signal,
    verifier: async () => {
      throw new Error('not a canary batch: never opened');
    },
    finished: () => true,
    emit: () => undefined,
  });
  assert.is(none, null);
});

s.run();
