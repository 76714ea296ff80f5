/**
 * No clock from the cluster keeps an `apply --step` Job green (docs/design.md §3, §7): the lock's times
 * are the holder's and are never trusted beyond now plus the skew allowance; whether the holder
 * is alive is judged on the observing runs' clocks, from what they keep in the Rollout status
 * (status.lockObserved; src/domain/lease-expiry.ts judgeHeldLock).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import type { RolloutStatus } from '../../../src/apply/ports/rollout-object.ts';
import { newSim } from '../../support/apply.ts';
import { run } from '../../../src/cli/main.ts';
import type { DriverFactory } from '../../../src/app/ports.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';
import { judgeHeldLock } from '../../../src/domain/lease-expiry.ts';
import { CLOCK_SKEW_ALLOWANCE_SECONDS } from '../../../src/domain/clock-skew.ts';
import { BOOTCPLAN_NAMESPACE, LOCK_NAME } from '../../../src/cluster/types.ts';
import type { TestObject } from '../../support/cluster.ts';
import { io } from '../../support/cli.ts';

const s = suite('lock-clocks');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-lockclock-'));

function setup() {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]);
  const file = join(dir, `spec-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  const sim = newSim(snap);
  sim.rollouts.put('test', parse(text).spec);
  let n = 0;
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: `job-${++n}@test` });
  const step = async (extra: string[] = []) => {
    const o = io();
    const code = await run(['apply', '-f', file, '--auto-approve', '--step', ...extra], { io: o, openDriver });
    return { code, ...o };
  };
  return { sim, step };
}

/** The Rollout's status as the reporter wrote it whole (a full write comes before any lockObserved write). */
const status = (sim: SimCluster) => sim.rollouts.objects.get('test')!.status as RolloutStatus;

/** The lock Lease's times set by hand (a holder whose clock is wrong, or one that died long ago). */
function leaseTimes(sim: SimCluster, acquireTime: string, renewTime: string) {
  sim.mutate((o) => {
    const l = o.get('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE) as TestObject;
    l.spec.acquireTime = acquireTime;
    l.spec.renewTime = renewTime;
  });
}

s(
  'a Lease whose times are in 2099 and that nobody renews: exit 0 with a clock-skew warning, then exit 4 once it has been seen unchanged for its duration plus the allowance',
  async () => {
    const { sim, step } = setup();
    await sim.driver('holder').acquireLock({ holder: 'laptop@skewed', planId: 'p0', ttlSeconds: 300 });
    leaseTimes(sim, '2099-01-01T00:00:00.000000Z', '2099-01-01T00:00:00.000000Z');
    const first = await step();
    assert.is(first.code, 0, first.err);
    assert.match(
      first.err,
      /warning: clock skew: the lock Lease's renewTime 2099-01-01T00:00:00Z is 7\dy ahead of this clock \(allowance 5m0s\): counted as now; check the clock of laptop@skewed/,
    );
    assert.match(first.err, /nothing to do now: another apply holds the lock: laptop@skewed/);
    assert.is(status(sim).lockObserved!.holder, 'laptop@skewed');
    const codes: number[] = [];
    let last = first;
    for (let i = 0; i < 8 && !codes.includes(4); i++) {
      sim.advance(300); // a CronJob every 5 minutes
      last = await step();
      codes.push(last.code);
    }
    assert.equal(codes, [0, 4], last.err);
    const st = status(sim);
    assert.equal([st.phase, st.reason, st.lastExitCode], ['Degraded', 'LockStuck', 4]);
    assert.match(
      st.message,
      /^lock stuck: its holder has not renewed it for 10m0s \(seen unchanged since \S+; the lease lasts 300s\): it is gone or cut off; another apply holds the lock: laptop@skewed/,
    );
  },
);

s('a holder that stopped renewing 5 hours ago (its Lease says so): no longer green; exit 4 after its duration plus the allowance as observed', async () => {
  const { sim, step } = setup();
  await sim.driver('holder').acquireLock({ holder: 'job-dead@test', planId: 'p0', ttlSeconds: 300 });
  const fiveHoursAgo = new Date((sim.now - 5 * 3600) * 1000).toISOString().replace('Z', '000Z');
  leaseTimes(sim, fiveHoursAgo, fiveHoursAgo);
  assert.is((await step()).code, 0, 'the first run cannot tell a silent holder from a live one yet');
  sim.advance(300 + CLOCK_SKEW_ALLOWANCE_SECONDS);
  const later = await step();
  assert.is(later.code, 4, later.err);
  assert.match(later.err, /lock stuck: its holder has not renewed it/, later.err);
});

s(
  'a holder that renews is left to work (exit 0 every run) until it has held the lock for 6 hours as observed; a run that takes the lock clears the observation',
  async () => {
    const { sim, step } = setup();
    const holder = sim.driver('holder');
    const lock = await holder.acquireLock({ holder: 'job-long@test', planId: 'p0', ttlSeconds: 300 });
    const codes: number[] = [];
    for (let i = 0; i < 12 * 7 && !codes.includes(4); i++) {
      codes.push((await step()).code);
      sim.advance(300);
      await holder.renewLock(lock.lockId);
    }
    const firstStuck = codes.indexOf(4);
    assert.ok(firstStuck >= 72 && firstStuck <= 73, `stuck after 6 h of 5-minute runs (run ${firstStuck})`);
    assert.match(status(sim).message, /lock stuck: it has been held for 6h\dm \(seen held since/);
    // The holder lets go; the next run takes the lock, applies, and removes lockObserved.
    await holder.releaseLock(lock.lockId);
    const mine = await step();
    assert.is(mine.code, 0, mine.err);
    assert.is(status(sim).lockObserved, undefined);
  },
);

s('judgeHeldLock: the times kept by earlier runs are believed only up to the allowance too (a pod clock in 2099 wrote them)', () => {
  const now = 1_800_000_000;
  const lock = { lockId: 'abc', holder: 'h', acquiredAt: now - 60, renewedAt: now - 10, ttlSeconds: 300 };
  const first = judgeHeldLock(null, lock, now, 6 * 3600);
  assert.is(first.stuck, null);
  assert.equal(first.skew, []);
  const future = { ...first.next, heldSince: '2099-01-01T00:00:00Z', recordSince: '2099-01-01T00:00:00Z' };
  const j = judgeHeldLock(future, lock, now, 6 * 3600);
  assert.is(j.next.heldSince, first.next.heldSince, 'counted from now');
  assert.is(j.skew.length, 2);
  assert.match(j.skew[0], /lockObserved\.heldSince 2099-01-01T00:00:00Z is 7\dy ahead/);
  // Unchanged for exactly the duration plus the allowance: stuck; one second less: not yet.
  assert.is(judgeHeldLock(first.next, lock, now + 300 + CLOCK_SKEW_ALLOWANCE_SECONDS - 1, 6 * 3600).stuck, null);
  assert.match(judgeHeldLock(first.next, lock, now + 300 + CLOCK_SKEW_ALLOWANCE_SECONDS, 6 * 3600).stuck!, /not renewed/);
  // A renewal (another record) restarts the silence, not the holding time.
  const renewed = judgeHeldLock(first.next, { ...lock, renewedAt: now + 100 }, now + 200, 6 * 3600);
  assert.equal([renewed.next.heldSince, renewed.next.recordSince === first.next.recordSince], [first.next.heldSince, false]);
});

s.run();
