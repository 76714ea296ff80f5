/**
 * `fleet rehearse` (docs/fleets.md "Rehearsing a fleet"): each cluster on its own simulated cluster with a seed of its own,
 * composed by the fleet runner's batch rules on a virtual clock into the fleet timeline.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SleepClock } from '../../src/sim/sleep-clock.ts';
import { rehearseCluster, clusterSeed, type FleetRehearseOptions } from '../../src/fleet/rehearsal-sim.ts';
import { DEFAULT_DURATIONS } from '../../src/domain/timing.ts';
import { AbortedError } from '../../src/apply/ports/driver.ts';
import { clusterFixture, fleetFixture } from '../support/fleet-rehearsal.ts';
import { runFleet } from '../../src/fleet/runner.ts';
import { renderFleetRehearsalHtml } from '../../src/fleet/rehearsal-html.ts';
import { rehearseFleet } from '../../src/fleet/rehearsal-sim.ts';

const s = suite('fleet-rehearse');

const OPTS: FleetRehearseOptions = { durations: DEFAULT_DURATIONS, failRate: 0, jitter: 0, seed: 1 };

s('the sleep clock: concurrent sleeps end at their own virtual times; held work takes no time', async () => {
  const clock = new SleepClock(0);
  const ends: [string, number][] = [];
  const task = async (name: string, work: number, sleep: number) => {
    await clock.hold(async () => {
      for (let i = 0; i < work; i++) await new Promise((r) => setImmediate(r));
    });
    await clock.sleep(sleep);
    ends.push([name, clock.now()]);
  };
  await Promise.all([task('a', 50, 300), task('b', 0, 100), task('c', 5, 200)]);
  assert.equal(
    ends,
    [
      ['b', 100],
      ['c', 200],
      ['a', 300],
    ],
    'a long simulation (50 turns of the event loop) does not let time run ahead',
  );
});

s('the sleep clock: an aborted sleep rejects and does not move time', async () => {
  const clock = new SleepClock(0);
  const ac = new AbortController();
  const long = clock.sleep(1000, ac.signal).then(
    () => 'ended',
    (e) => (e instanceof AbortedError ? `aborted at ${clock.now()}` : 'other'),
  );
  await clock.sleep(60);
  ac.abort();
  assert.is(await long, 'aborted at 60');
  assert.is(clock.now(), 60);
});

s('a cluster seed depends on the fleet seed and the name only', () => {
  assert.is(clusterSeed(1, 'east'), clusterSeed(1, 'east'));
  assert.is.not(clusterSeed(1, 'east'), clusterSeed(1, 'west'));
  assert.is.not(clusterSeed(1, 'east'), clusterSeed(2, 'east'));
});

s('one cluster: its rehearsal, outcome, duration and estimate', async () => {
  const c = clusterFixture({ name: 'east', nodes: 6, maxUnavailable: 2 });
  const r = await rehearseCluster({ name: 'east', ...c, options: OPTS });
  assert.is(r.outcome, 'done');
  assert.is(r.exitCode, 0);
  assert.ok(r.durationSeconds > 0);
  assert.ok(Math.abs(r.durationSeconds - r.estimatedSeconds) <= r.estimatedSeconds * 0.02, `${r.durationSeconds} vs ${r.estimatedSeconds}`);
  assert.is(r.rehearsal?.pools[0].waves.length, 3);
});

s('one cluster with --fail-rate 1 halts with exit 5 and says why', async () => {
  const c = clusterFixture({ name: 'east', nodes: 6 });
  const r = await rehearseCluster({ name: 'east', ...c, options: { ...OPTS, failRate: 1 } });
  assert.is(r.outcome, 'halted');
  assert.is(r.exitCode, 5);
  assert.match(r.message ?? '', /east-w-\d+ failed/);
  assert.ok(r.durationSeconds < r.estimatedSeconds);
});

s('the same cluster name and fleet seed give the same jittered rehearsal; another name another one', async () => {
  const c = clusterFixture({ name: 'east', nodes: 9, maxUnavailable: 3 });
  const o = { ...OPTS, jitter: 0.5, seed: 7 };
  const a = await rehearseCluster({ name: 'east', ...c, options: o });
  const b = await rehearseCluster({ name: 'east', ...c, options: o });
  const other = await rehearseCluster({ name: 'west', ...c, options: o });
  assert.is(a.durationSeconds, b.durationSeconds);
  assert.is.not(a.durationSeconds, other.durationSeconds);
});

// ---- the fleet

const FLEET = [
  { name: 'canary', nodes: 4, canary: true },
  { name: 'a', nodes: 6 },
  { name: 'b', nodes: 8 },
  { name: 'c', nodes: 4 },
  { name: 'd', nodes: 10 },
];

s('the fleet: batches in order, the clusters of a batch at once, the soak between; makespan = the fleet plan estimate', async () => {
  const { fleetPlan, clusters } = fleetFixture(FLEET, { maxConcurrency: 2, batchSoakSeconds: 600 });
  const r = await rehearseFleet({ fleetPlan, clusters, options: OPTS, runner: runFleet });
  assert.equal(
    r.batches.map((b) => b.clusters),
    [['canary'], ['a', 'b'], ['c', 'd']],
  );
  assert.equal(
    r.batches.map((b) => b.outcome),
    ['done', 'done', 'done'],
  );
  const [b1, b2, b3] = r.batches;
  assert.is(b1.start, 0);
  assert.is(b2.start, b1.end! + 600, 'batch 2 starts after the soak');
  assert.equal(b1.soak, { start: b1.end!, end: b1.end! + 600 });
  assert.is(b3.soak, null, 'no soak after the last batch');
  const a = r.clusters.find((c) => c.name === 'a')!;
  const b = r.clusters.find((c) => c.name === 'b')!;
  assert.is(a.start, b.start, 'the clusters of a batch start together');
  assert.is(b2.end, Math.max(a.end!, b.end!), 'a batch ends with its slowest cluster');
  assert.is(a.end! - a.start!, a.durationSeconds, "a cluster takes its own rehearsal's time");
  assert.is(r.makespanSeconds, b3.end);
  assert.ok(Math.abs(r.makespanSeconds - r.estimatedSeconds) <= r.estimatedSeconds * 0.02, `${r.makespanSeconds} vs ${r.estimatedSeconds}`);
  assert.is(r.exitCode, 0);
  assert.is(r.stopped, null);
});

s("a cluster's result does not depend on the order of the fleet or its batch (its own seed)", async () => {
  const o = { ...OPTS, jitter: 0.4, failRate: 0.1, seed: 3 };
  // continue: a failed cluster does not stop the fleet (abort would, after its batch)
  const one = fleetFixture(FLEET, { maxConcurrency: 2, batchTimeoutAction: 'continue' });
  const other = fleetFixture(
    [...FLEET].reverse().map((c) => ({ ...c, canary: false })),
    { maxConcurrency: 4, batchTimeoutAction: 'continue' },
  );
  const r1 = await rehearseFleet({ fleetPlan: one.fleetPlan, clusters: one.clusters, options: o, runner: runFleet });
  const r2 = await rehearseFleet({ fleetPlan: other.fleetPlan, clusters: other.clusters, options: o, runner: runFleet });
  const view = (r: typeof r1) =>
    Object.fromEntries(r.clusters.filter((c) => c.outcome !== 'not-started').map((c) => [c.name, [c.outcome, c.durationSeconds, c.seed]]));
  const v1 = view(r1);
  const v2 = view(r2);
  assert.is(Object.keys(v1).length, 5, 'every cluster ran in both (the canary did not fail with this seed)');
  assert.ok(Object.values(v1).some((v) => v[0] === 'failed') && Object.values(v1).some((v) => v[0] === 'done'), 'some failed, some did not: the seeds matter');
  for (const name of Object.keys(v1)) assert.equal(v1[name], v2[name], name);
});

s('a failed canary stops the fleet: the other clusters are not started', async () => {
  const { fleetPlan, clusters } = fleetFixture(FLEET, { maxConcurrency: 2 });
  const r = await rehearseFleet({ fleetPlan, clusters, options: { ...OPTS, failRate: 1 }, runner: runFleet });
  assert.is(r.stopped, 'canary-failed');
  assert.is(r.exitCode, 5);
  assert.equal(
    r.clusters.map((c) => c.outcome),
    ['failed', 'not-started', 'not-started', 'not-started', 'not-started'],
  );
  assert.equal(
    r.batches.map((b) => b.outcome),
    ['failed', 'not-started', 'not-started'],
  );
  assert.is(r.makespanSeconds, r.clusters[0].end);
  assert.ok(r.makespanSeconds < r.clusters[0].estimatedSeconds!, 'it stopped at the failed node');
});

/** A batch of a 6-node and a 10-node cluster, then one more batch; the timeout between their durations. */
function timeoutFleet(action: 'abort' | 'continue', canary = false) {
  const list = [
    { name: 'small', nodes: 6, canary },
    { name: 'big', nodes: 10, canary },
    { name: 'tail', nodes: 4 },
  ];
  const probe = fleetFixture(list);
  const est = (n: string) => probe.fleetPlan.clusters.find((c) => c.name === n)!.plan!.summary.estimatedSeconds;
  const timeout = Math.round((est('small') + est('big')) / 2);
  return {
    ...fleetFixture(canary ? list : list.map((c) => ({ ...c })), {
      maxConcurrency: 2,
      batchSoakSeconds: 300,
      batchTimeoutSeconds: timeout,
      batchTimeoutAction: action,
    }),
    timeout,
  };
}

s('batch timeout, abort: the unfinished cluster is cut at the timeout (timed-out, exit 5), no later batch starts', async () => {
  const { fleetPlan, clusters, timeout } = timeoutFleet('abort');
  assert.equal(
    fleetPlan.batches.map((b) => b.clusters),
    [['big', 'small'], ['tail']],
  );
  const r = await rehearseFleet({ fleetPlan, clusters, options: OPTS, runner: runFleet });
  const by = Object.fromEntries(r.clusters.map((c) => [c.name, c]));
  assert.is(by.small.outcome, 'done');
  assert.is(by.big.outcome, 'timed-out');
  assert.is(by.big.exitCode, 5);
  assert.is(by.big.end, timeout, 'cut at the timeout');
  assert.ok(by.big.durationSeconds! > timeout, 'its own rehearsal needed longer');
  assert.is(by.tail.outcome, 'not-started');
  assert.is(r.stopped, 'batch-timeout');
  assert.is(r.exitCode, 5);
  assert.is(r.batches[0].timeoutAt, timeout);
  assert.is(r.batches[0].outcome, 'timed-out');
  assert.is(r.makespanSeconds, timeout);
});

s('batch timeout, continue: the next batch starts after the timeout and the soak', async () => {
  const { fleetPlan, clusters, timeout } = timeoutFleet('continue');
  const r = await rehearseFleet({ fleetPlan, clusters, options: OPTS, runner: runFleet });
  const later = r.clusters.find((c) => c.name === 'tail')!;
  assert.is(r.clusters.find((c) => c.name === 'big')!.outcome, 'timed-out');
  assert.is(later.outcome, 'done');
  assert.is(later.start, timeout + 300);
  assert.equal(r.batches[0].soak, { start: timeout, end: timeout + 300 });
  assert.is(r.stopped, null);
  assert.is(r.exitCode, 5, 'the timed-out cluster still counts');
});

s('a timed-out canary stops the fleet even with continue', async () => {
  const list = [
    { name: 'canary', nodes: 10, canary: true },
    { name: 'a', nodes: 4 },
  ];
  const probe = fleetFixture(list);
  const est = probe.fleetPlan.clusters[0].plan!.summary.estimatedSeconds;
  const { fleetPlan, clusters } = fleetFixture(list, { batchTimeoutSeconds: Math.round(est / 2), batchTimeoutAction: 'continue' });
  const r = await rehearseFleet({ fleetPlan, clusters, options: OPTS, runner: runFleet });
  assert.equal(
    r.clusters.map((c) => c.outcome),
    ['timed-out', 'not-started'],
  );
  assert.is(r.stopped, 'canary-failed');
});

s('the fleet timeline of a real run draws: every cluster that ran has its bar, the timeout its line', async () => {
  const { fleetPlan, clusters } = timeoutFleet('continue');
  const r = await rehearseFleet({ fleetPlan, clusters, options: OPTS, runner: runFleet });
  const html = renderFleetRehearsalHtml(r);
  assert.is((html.match(/<rect class="bar (done|timed-out)"/g) ?? []).length, 3);
  assert.is((html.match(/<line class="timeout"/g) ?? []).length, 1, 'the second batch ended long before its timeout, past the axis: no line');
  assert.is((html.match(/<rect class="soak"/g) ?? []).length, 1);
});

s.run();
