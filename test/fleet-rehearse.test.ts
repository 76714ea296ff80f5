/**
 * `fleet rehearse` (issue 17): each cluster on its own simulated cluster with a seed of its own,
 * composed by the fleet runner's batch rules on a virtual clock into the fleet timeline.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SleepClock } from '../src/sim/sleep-clock.ts';
import { rehearseCluster, clusterSeed, worstExit, type FleetRehearseOptions } from '../src/sim/fleet-rehearse.ts';
import { DEFAULT_DURATIONS } from '../src/domain/timing.ts';
import { AbortedError } from '../src/apply/driver.ts';
import { clusterFixture } from './fleet-rehearse-fixtures.ts';

const s = suite('fleet-rehearse');

const OPTS: FleetRehearseOptions = { durations: DEFAULT_DURATIONS, failRate: 0, jitter: 0, seed: 1 };

s('the sleep clock: concurrent sleeps end at their own virtual times; held work takes no time', async () => {
  const clock = new SleepClock(0);
  const ends: [string, number][] = [];
  const task = async (name: string, work: number, sleep: number) => {
    await clock.hold(async () => { for (let i = 0; i < work; i++) await new Promise((r) => setImmediate(r)); });
    await clock.sleep(sleep);
    ends.push([name, clock.now()]);
  };
  await Promise.all([task('a', 50, 300), task('b', 0, 100), task('c', 5, 200)]);
  assert.equal(ends, [['b', 100], ['c', 200], ['a', 300]], 'a long simulation (50 turns of the event loop) does not let time run ahead');
});

s('the sleep clock: an aborted sleep rejects and does not move time', async () => {
  const clock = new SleepClock(0);
  const ac = new AbortController();
  const long = clock.sleep(1000, ac.signal).then(() => 'ended', (e) => (e instanceof AbortedError ? `aborted at ${clock.now()}` : 'other'));
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

s('worst exit code: 1 > 6 > 5 > 4 > 3 > 2 > 0', () => {
  assert.is(worstExit([0, 2, 3]), 3);
  assert.is(worstExit([5, 4, 6]), 6);
  assert.is(worstExit([5, 1, 6]), 1);
  assert.is(worstExit([]), 0);
  assert.is(worstExit([0, 130]), 1);
});

s.run();
