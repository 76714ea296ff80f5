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
import { simFleet } from '../support/fleet-sim.ts';
import { OLD } from '../support/cluster.ts';
import { runApply } from '../support/apply.ts';
import { LockHeldError } from '../../src/base/errors.ts';
import { readFileSync } from 'node:fs';
import { SimHealthSource, parseFailCheck, type FailCheckRule } from '../../src/sim/health.ts';
import type { SimCluster } from '../../src/sim/cluster.ts';
import { nodeProgressOf } from '../../src/cluster/progress.ts';

/** A 100-column terminal for the fleet's progress lines. */
const NARROW = { io: { stderrColumns: 100 } };

const s = suite('fleet: canary batch gate');
const IMAGE = 'quay.io/example/fedora-bootc-node@sha256:' + 'e'.repeat(64);

function fleet(onFailure: Record<string, unknown> = {}) {
  return new FleetBuilder()
    .withRollout({
      pools: [{ name: 'worker', image: IMAGE, maxUnavailable: 2 }],
      healthChecks: [
        { name: 'alerts', alerts: { matchers: ['severity="critical"'] }, intervalSeconds: 60, successes: 3, ...onFailure },
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
  // onFailure halt: the canary is held, and the message never reads as if a rollback ran.
  assert.match(
    r.out,
    /canary east failed its batch gate: health check alerts failed: rehearsal: --fail-check east\/alerts@batch; canary east held: pool worker paused and held for this image; no other cluster was started/,
  );
  assert.not.match(r.out, /rolled back/);
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

s('a failed batch gate a session cannot act on, or whose action fails, says nothing was held or rolled back, with the commands that would', async () => {
  const check = { name: 'a', kind: 'alerts', when: ['afterWave'], pools: ['worker'], onFailure: 'rollback', scope: 'run' } as unknown as PlanHealthCheck;
  const plan = {
    clusters: [{ name: 'east', source: { context: 'ctx-east', kubeconfig: 'k.yaml', snapshot: null }, plan: { healthChecks: [check] } }],
  } as unknown as FleetPlan;
  const failure = {
    check,
    reason: 'condition' as const,
    observed: 'boom',
    position: { point: 'batch' as const, pool: null, wave: null, node: null },
    seconds: 0,
  };
  const gate = (act: null | (() => Promise<never>)) =>
    runBatchGates({
      plan,
      batch: { index: 1, kind: 'canary', clusters: ['east'], estimatedSeconds: 0 },
      signal: new AbortController().signal,
      verifier: async () => ({ verify: async () => ({ passed: false, failure }), act }),
      finished: () => true,
      emit: () => undefined,
    });
  const commands =
    'to roll it back: bootcplan plan --rollback --scope run --kubeconfig k.yaml --context ctx-east --out rollback-east.json, then bootcplan apply rollback-east.json --kubeconfig k.yaml --context ctx-east';
  assert.is(
    (await gate(null))?.message,
    `canary east failed its batch gate: health check a failed: boom; nothing was held or rolled back (on failure: rollback; this run cannot act on the cluster); ${commands}`,
  );
  const locked = await gate(async () => {
    throw new LockHeldError('someone', '2026-03-02T09:00:00Z', 'lock-1', null);
  });
  assert.match(locked!.message, /; nothing was held or rolled back \(on failure: rollback\): .*someone.*; to roll it back: bootcplan plan --rollback/);
  assert.not.match(locked!.message, /rolled back \d/);
});

s('fleet rehearse, onFailure rollback at the batch gate: the canary is rolled back (its 4 nodes), nothing else starts, exit 5', async () => {
  const { file } = fleet({ onFailure: 'rollback', scope: 'run' });
  const r = await cli(['fleet', 'rehearse', '-f', file, '--fail-check', 'east/alerts@batch'], NARROW);
  assert.is(r.code, 5, r.err);
  assert.match(r.out, /west +2 +not-started/);
  assert.match(
    r.out,
    /canary east failed its batch gate: health check alerts failed: rehearsal: --fail-check east\/alerts@batch; rolled back 4 node\(s\) of canary east to the image each booted before \(scope run\)/,
  );
});

// ---------------------------------------------------------------- fleet apply on simulated clusters

const rules = (...x: string[]): FailCheckRule[] => x.map((r) => parseFailCheck(r) as FailCheckRule);
const CHECK = { name: 'alerts', alerts: { matchers: ['severity="critical"'] }, intervalSeconds: 10, successes: 1 };

/** east (canary, 4 nodes, maxUnavailable 2: 2 waves) then west; every cluster measured by the simulated source, east's batch gate failing. */
function simGateFleet(check: Record<string, unknown>) {
  const b = new FleetBuilder()
    .withRollout({ pools: [{ name: 'worker', image: IMAGE, maxUnavailable: 2, soakSeconds: 0 }], healthChecks: [{ ...CHECK, ...check }] })
    .cluster('east', { context: 'ctx-east', cluster: workerCluster(4, 'e') })
    .cluster('west', { context: 'ctx-west', cluster: workerCluster(4, 'w') })
    .strategy({ canaries: ['east'], maxConcurrency: 1 });
  const f = simFleet(b, { prefix: 'bootcplan-fleet-gate-' });
  const open = f.openDriver;
  f.openDriver = async (flags, io) => ({ ...(await open(flags, io)), health: () => new SimHealthSource({ failChecks: rules('alerts@batch') }) });
  // The Rollout object a GitOps engine syncs into the canary (the spec's name), for its status.
  const name = b.plan().clusters[0].plan!.spec.name;
  f.sims['ctx-east'].rollouts.put(name, {});
  return { f, east: f.sims['ctx-east'], west: f.sims['ctx-west'], name };
}

const eastNodes = ['e-00', 'e-01', 'e-02', 'e-03'];
const bootedDigest = (sim: SimCluster, n: string) => sim.get('BootcNode', n)!.status?.booted?.imageDigest;

s("fleet apply, onFailure rollback at the batch gate: the canary's updated nodes boot their previous image again, west untouched, exit 5", async () => {
  const { f, east, west, name } = simGateFleet({ onFailure: 'rollback', scope: 'run' });
  const r = await cli(['fleet', 'apply', f.planFile, '--auto-approve'], f.options);
  assert.is(r.code, 5, r.err + r.out);
  assert.match(r.out, /rolled back 4 node\(s\) of canary east to the image each booted before \(scope run\)/);
  for (const n of eastNodes) {
    assert.is(east.get('BootcNode', n)!.status?.booted?.image, OLD, `${n} is back on its previous image`);
    assert.is(east.rebootCounts().get(n), 2, `${n}: once forward, once back`);
    assert.is(nodeProgressOf(east.get('Node', n))?.step, 'done');
    assert.not.ok(east.get('Node', n)!.spec?.unschedulable, `${n} uncordoned`);
  }
  assert.is(west.reboots.length, 0, 'no other cluster started');
  assert.not.ok(f.opened.includes('ctx-west'));
  const run = (await east.driver().readProgress()).run!;
  assert.ok(run.rollbackOf, 'the canary ran a rollback');
  assert.equal(
    run.holds?.map((h) => [h.pool, h.action]),
    [['worker', 'rolled-back']],
  );
  assert.is(east.rollouts.objects.get(name)!.status?.reason, 'RolledBack');
  assert.ok(east.rollouts.events.some((e) => e.reason === 'HealthCheckFailed' && /batch gate/.test(e.note)));
});

s('fleet apply, onFailure rollback with scope wave: only the last wave of the run goes back', async () => {
  const { f, east } = simGateFleet({ onFailure: 'rollback', scope: 'wave' });
  const r = await cli(['fleet', 'apply', f.planFile, '--auto-approve'], f.options);
  assert.is(r.code, 5, r.err + r.out);
  assert.match(r.out, /rolled back 2 node\(s\) of canary east to the image each booted before \(scope wave\)/);
  const back = eastNodes.filter((n) => east.rebootCounts().get(n) === 2);
  const stayed = eastNodes.filter((n) => east.rebootCounts().get(n) === 1);
  assert.is(back.length, 2);
  assert.is(stayed.length, 2);
  for (const n of back) assert.is(east.get('BootcNode', n)!.status?.booted?.image, OLD);
  for (const n of stayed) assert.is(bootedDigest(east, n), IMAGE.slice(IMAGE.indexOf('@') + 1), `${n} stays on the new image`);
});

s("fleet apply, onFailure halt at the batch gate: the canary's pool is paused and held, HealthCheckFailed on its Rollout, no rollback, exit 5", async () => {
  const { f, east, west, name } = simGateFleet({ onFailure: 'halt' });
  const r = await cli(['fleet', 'apply', f.planFile, '--auto-approve'], f.options);
  assert.is(r.code, 5, r.err + r.out);
  assert.match(
    r.out,
    /canary east held: pool worker paused and held for this image; to roll it back: bootcplan plan --rollback --scope run --context ctx-east --out rollback-east\.json, then bootcplan apply rollback-east\.json --context ctx-east/,
  );
  assert.not.match(r.out, /rolled back/);
  for (const n of eastNodes) assert.is(east.rebootCounts().get(n), 1, `${n} stays on the new image`);
  assert.is(west.reboots.length, 0, 'no other cluster started');
  assert.is(east.get('BootcNodePool', 'worker')!.spec?.rollout?.paused, true);
  const run = (await east.driver().readProgress()).run!;
  assert.equal(
    run.holds?.map((h) => [h.pool, h.action, h.check]),
    [['worker', 'halted', 'alerts']],
  );
  assert.is(run.pools.worker.halted?.check, 'alerts');
  const status = east.rollouts.objects.get(name)!.status!;
  assert.is(status.reason, 'HealthCheckFailed');
  assert.match(String(status.message), /health check alerts failed after the canary's batch/);
  assert.is(status.healthCheck?.point, 'batch');
  const reasons = east.rollouts.events.map((e) => `${e.regarding.kind}:${e.reason}`);
  assert.ok(reasons.includes('BootcNodePool:PoolHalted'), reasons.join());
  assert.ok(reasons.includes('Rollout:HealthCheckFailed'), reasons.join());
  // Held: the canary's own apply of the plan again exits 5 without writing (docs/apply.md "Holds").
  const again = await cli(['fleet', 'apply', f.planFile, '--auto-approve'], f.options);
  assert.is(again.code, 5);
  assert.match(again.out + again.err, /held back from this image/);
  // apply --retry on the canary lifts the hold for good (its plan was applied: nothing else to do).
  const plan = JSON.parse(readFileSync(f.planFile, 'utf8')).clusters[0].plan;
  const retried = await runApply(east, plan, () => plan, { retry: true, health: new SimHealthSource() });
  assert.is(retried.result?.outcome, 'nothing-to-do', String(retried.error));
  assert.equal((await east.driver().readProgress()).run!.holds ?? [], []);
});

s.run();
