/**
 * The lock that holds (docs/apply.md; docs/safety.md "Stopping"), against the simulator: renewals that fail for a while keep
 * the lock, renewals that fail for the lease's whole duration lose it, a lock taken mid-wave
 * stops the first apply before its next disruptive step, expiry is judged by observed time
 * (never by a skewed holder's renewTime), a stop request (SIGTERM) leaves an MCO pool paused
 * and a rerun resumes cleanly, and --lock-timeout waits for the lock.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { InterruptedError, LockHeldError, LockNotHeldError } from '../../../src/base/errors.ts';
import { DriverError, isoOf } from '../../../src/apply/ports/driver.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';
import { BOOTCPLAN_NAMESPACE, LOCK_NAME } from '../../../src/cluster/types.ts';
import { LeaseObserver } from '../../../src/domain/lease-expiry.ts';
import { nodeObject } from '../../../src/sim/node-objects.ts';
import { renderStatus } from '../../../src/render/status.ts';

const s = suite('lock');

/** Writes that change what runs on a node or a pool. */
const DISRUPTIVE = new Set(['cordon', 'desiredImageState', 'drain', 'pause', 'unpause', 'patch', 'create', 'progress']);

function bootc(n = 6, mu = 2) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', n)).snapshot();
  return { snap, ...planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: mu }]), snap) };
}

function mco(n = 6, mu = 2) {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('m', n)).snapshot();
  return { snap, ...planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: mu }]), snap) };
}

const rel = (sim: SimCluster) => sim.now - sim.start;
const partition = () => new DriverError('dial tcp 10.0.0.1:6443: connect: connection refused');

s('renewals that fail for less than the lease duration are retried with backoff and keep the lock: the apply finishes', async () => {
  const { snap, plan, replan } = bootc();
  const sim = newSim(snap);
  let from = -1;
  let failures = 0;
  const r = await runApply(sim, plan, replan, {
    timeouts: { lockTtlSeconds: 60 },
    onEventHook: (e, d) => {
      if (e.type !== 'wave-start' || e.wave !== 2) return;
      from = rel(sim);
      d.renewFault = () => (rel(sim) < from + 30 ? (failures++, partition()) : null);
    },
  });
  assert.is(r.code, 0, String((r.error as Error)?.stack ?? r.error));
  assert.ok(failures >= 3, `renewals failed ${failures} times, and were retried`);
  assert.is(sim.reboots.length, 6);
  for (const [node, count] of sim.rebootCounts()) assert.is(count, 1, node);
});

s('renewals that fail for the whole lease duration lose the lock: the apply stops before its next disruptive step, exit 4', async () => {
  const { snap, plan, replan } = bootc(9, 3);
  const sim = newSim(snap);
  let from = -1;
  const r = await runApply(sim, plan, replan, {
    timeouts: { lockTtlSeconds: 60 },
    onEventHook: (e, d) => {
      if (e.type === 'reboot' && from < 0) {
        from = rel(sim);
        d.renewFault = partition;
      }
    },
  });
  assert.is(r.code, 4, String(r.error));
  assert.instance(r.error, LockNotHeldError);
  assert.match((r.error as Error).message, /no renewal succeeded for 60s/);
  // The last renewal that succeeded was sent at most 20 s (a third of 60) before the fault:
  // nothing disruptive after it expired, and the apply did not wait on past it.
  const late = sim.writes.filter((w) => w.session === r.driver.name && DISRUPTIVE.has(w.op) && w.t > from + 60);
  assert.equal(late, []);
  assert.ok(rel(sim) <= from + 61, `stopped at ${rel(sim)}, the lease expired by ${from + 60}`);
  assert.ok(sim.reboots.length < 9, 'later waves not started');
});

s('a lock taken by another apply mid-wave stops the first apply before its next disruptive step (exit 4); the new holder keeps it', async () => {
  const { snap, plan, replan } = bootc(9, 3);
  const sim = newSim(snap);
  let stolenAt = -1;
  const thief = sim.driver('thief');
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      if (e.type !== 'reboot' || stolenAt >= 0) return;
      // Someone ran `bootcplan unlock` on a live apply, and another apply took the lock.
      sim.lock.release(thief, sim.lock.leaseOf()!.lockId);
      sim.lock.acquire(thief, { holder: 'cronjob@cluster', planId: plan.id, ttlSeconds: 300 });
      stolenAt = sim.writes.length;
    },
  });
  assert.is(r.code, 4, String(r.error));
  assert.instance(r.error, LockNotHeldError);
  assert.match((r.error as Error).message, /now held by cronjob@cluster/);
  const after = sim.writes.slice(stolenAt).filter((w) => w.session === r.driver.name && DISRUPTIVE.has(w.op));
  assert.equal(after, [], 'no write of the first apply after the lock was taken');
  assert.is(sim.lock.leaseOf()?.holder, 'cronjob@cluster', "the first apply did not release the new holder's lock");
  assert.is(sim.reboots.length, 1, 'only the reboot requested before the lock was taken');
});

s('a lock taken while an MCO pool is unpaused for a wave: the first apply pauses that pool again (the safe side) and stops, exit 4', async () => {
  const { snap, plan, replan } = mco(6, 2);
  const sim = newSim(snap);
  const thief = sim.driver('thief');
  let stolen = false;
  const r = await runApply(sim, plan, replan, {
    timeouts: { lockTtlSeconds: 60 },
    onEventHook: (e, d) => {
      if (e.type !== 'wave-start' || e.wave !== 2) return;
      const unpause = d.setPoolPaused.bind(d);
      d.setPoolPaused = async (kind, name, paused, by) => {
        await unpause(kind, name, paused, by);
        if (paused || stolen) return;
        // Right after the unpause, with an MCO slow to start nodes: the lock is taken.
        stolen = true;
        (sim as unknown as { mco: { sync: () => void } }).mco.sync = () => undefined;
        sim.lock.release(thief, sim.lock.leaseOf()!.lockId);
        sim.lock.acquire(thief, { holder: 'cronjob@cluster', planId: plan.id, ttlSeconds: 300 });
      };
    },
  });
  assert.ok(stolen);
  assert.is(r.code, 4, String(r.error));
  assert.match((r.error as Error).message, /now held by cronjob@cluster/);
  assert.is(sim.get('MachineConfigPool', 'worker')!.spec!.paused, true, 'the MCO does not roll the rest unsupervised');
  assert.ok(rel(sim) < 2000, `stopped at ${rel(sim)}s: at the next renewal, not after the MCO-start timeout`);
});

/** A holder whose clock is `skew` seconds off: its renewTime is its own clock's, renewed every `every` s while it lives. */
function skewedHolder(sim: SimCluster, skew: number, ttl: number, every: number | null) {
  const renew = () => isoOf(sim.now + skew);
  const lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: LOCK_NAME,
      namespace: BOOTCPLAN_NAMESPACE,
      resourceVersion: '1',
      annotations: { 'bootcplan.dev/lock-id': 'skewed0000', 'bootcplan.dev/plan-id': 'other' },
    },
    spec: { holderIdentity: 'skewed@elsewhere', leaseDurationSeconds: ttl, acquireTime: renew(), renewTime: renew() },
  };
  sim.put(lease);
  let rv = 1;
  const tick = () => {
    const l = sim.get('Lease', LOCK_NAME, BOOTCPLAN_NAMESPACE);
    if (!l || l.spec!.holderIdentity !== 'skewed@elsewhere') return;
    l.spec!.renewTime = renew();
    l.metadata.resourceVersion = String(++rv);
    sim.changed(l);
    sim.after(every!, tick);
  };
  if (every) sim.after(every, tick);
}

s('expiry is judged by observed time: a live holder whose clock is an hour behind keeps its lock', async () => {
  const { snap, plan, replan } = bootc(3);
  const sim = newSim(snap);
  skewedHolder(sim, -3600, 60, 20);
  const r = await runApply(sim, plan, replan, { lockTimeoutSeconds: 600 });
  assert.is(r.code, 4, 'its renewTime is an hour old by this clock, but it keeps changing');
  assert.instance(r.error, LockHeldError);
  assert.ok(rel(sim) >= 600);
  assert.is(sim.reboots.length, 0);
});

s('expiry is judged by observed time: a dead holder whose clock was a day ahead is taken over after one lease duration, not never', async () => {
  const { snap, plan, replan } = bootc(3);
  const sim = newSim(snap);
  skewedHolder(sim, 86400, 60, null);
  const waits: number[] = [];
  const r = await runApply(sim, plan, replan, { lockTimeoutSeconds: 600, onLockWait: (_h, w) => waits.push(w) });
  assert.is(r.code, 0, String(r.error));
  const took = sim.writes.find((w) => w.op === 'lock')!;
  assert.ok(took.t >= 60 && took.t <= 76, `taken over at ${took.t}s: 60 s after it was first seen unchanged (polls back off to 15 s)`);
  assert.ok(waits.length >= 3);
  // ... and a dead holder whose clock was behind is not taken at once by a clock comparison.
  const sim2 = newSim(snap);
  skewedHolder(sim2, -3600, 60, null);
  assert.is((await runApply(sim2, plan, replan)).code, 4);
});

s('the observed-time rule: a lease is expired only once the same record has been seen for its whole duration', () => {
  const o = new LeaseObserver();
  assert.is(o.expired(1000), false, 'never read');
  o.observe({ key: 'a', ttlSeconds: 60 }, 1000);
  assert.is(o.expired(1059), false);
  o.observe({ key: 'a', ttlSeconds: 60 }, 1030);
  assert.is(o.expired(1060), true, 'unchanged since 1000');
  o.observe({ key: 'b', ttlSeconds: 60 }, 1061);
  assert.is(o.expired(1100), false, 'renewed: counted again from when it was seen');
  assert.is(o.expiresAt(), 1121);
});

s(
  'SIGTERM mid-wave on an MCO pool: stops with exit 143, the pool paused again, where it stopped recorded, the lock released; a rerun resumes and reboots no node twice',
  async () => {
    const { snap, plan, replan } = mco(6, 2);
    const sim = newSim(snap);
    const stop = new AbortController();
    const first = await runApply(sim, plan, replan, {
      signal: stop.signal,
      // The MCO cordons the first node of wave 2 while the pool is unpaused for that wave.
      onEventHook: (e) => {
        if (e.type === 'cordon' && e.wave === 2 && !stop.signal.aborted) stop.abort('SIGTERM');
      },
    });
    assert.is(first.code, 143, String((first.error as Error)?.stack ?? first.error));
    assert.instance(first.error, InterruptedError);
    assert.match((first.error as Error).message, /^stopped by SIGTERM in pool worker, wave 2: .*paused again.*lock is released/);
    assert.is(sim.get('MachineConfigPool', 'worker')!.spec!.paused, true, 'the MCO takes no more nodes');
    const rec = sim.progress.read(sim.nodes.values()).run!;
    assert.equal(rec.pools.worker.interrupted?.wave, 2);
    assert.is(rec.pools.worker.mcoUnpaused, undefined);
    assert.is(sim.lock.leaseOf(), null, 'released');
    const second = await runApply(sim, plan, replan);
    assert.is(second.code, 0, String((second.error as Error)?.stack ?? second.error));
    assert.ok(second.result!.resumed);
    assert.is(sim.rebootCounts().size, 6);
    for (const [node, count] of sim.rebootCounts()) assert.is(count, 1, node);
    assert.is(sim.progress.read(sim.nodes.values()).run!.pools.worker.interrupted, undefined, 'cleared by the rerun');
    assert.is(sim.get('MachineConfigPool', 'worker')!.spec!.paused, false, 'left as the spec wants it at the end');
  },
);

s(
  'an apply killed (SIGKILL) while an MCO pool is unpaused: the unpause was recorded first, and a rerun pauses the pool before anything else, even one that then stops as stale',
  async () => {
    const { snap, plan, replan } = mco(6, 2);
    const sim = newSim(snap);
    const first = await runApply(sim, plan, replan, {
      onEventHook: (e, d) => {
        if (e.type === 'cordon' && e.wave === 1) d.kill();
      },
    });
    assert.is((first.error as Error).name, 'KilledError');
    assert.is(sim.get('MachineConfigPool', 'worker')!.spec!.paused, false, 'left unpaused by the dead apply');
    assert.is(sim.progress.read(sim.nodes.values()).run!.pools.worker.mcoUnpaused, true, 'recorded before the unpause');
    // The cluster changes meanwhile: the rerun refuses the plan (exit 3), but pauses the pool first.
    sim.mutate((o) => o.add(nodeObject({ name: 'm-new', role: 'worker', zone: 'us-east-1a', bootc: false })));
    const at = sim.writes.length;
    const stale = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 });
    assert.is(stale.code, 3, String(stale.error));
    const mine = sim.writes
      .slice(at)
      .filter((w) => w.session === stale.driver.name)
      .map((w) => `${w.op} ${w.target}`);
    assert.equal(mine.slice(1, 2), ['pause MachineConfigPool/worker'], mine.join('; '));
    assert.is(sim.get('MachineConfigPool', 'worker')!.spec!.paused, true, 'the MCO does not roll the rest on its own');
    assert.is(sim.progress.read(sim.nodes.values()).run!.pools.worker.mcoUnpaused, undefined);
  },
);

s('SIGTERM on a bootc pool mid-wave: nodes in flight keep their progress entries, the rerun finishes them, each node rebooted once', async () => {
  const { snap, plan, replan } = bootc(9, 3);
  const sim = newSim(snap);
  const stop = new AbortController();
  let reboots = 0;
  const first = await runApply(sim, plan, replan, {
    signal: stop.signal,
    onEventHook: (e) => {
      if (e.type === 'reboot' && ++reboots === 4) stop.abort('SIGTERM');
    },
  });
  assert.is(first.code, 143, String((first.error as Error)?.stack ?? first.error));
  const state = sim.progress.read(sim.nodes.values());
  const rec = state.run!;
  const cordoned = sim
    .view()
    .nodes.filter((n) => n.spec?.unschedulable)
    .map((n) => n.metadata.name);
  for (const n of cordoned) assert.ok(state.nodes[n], `${n} is cordoned and has its progress entry`);
  assert.equal(rec.pools.worker.interrupted?.wave, 2);
  assert.match(
    renderStatus(null, false, state),
    /worker: 1 wave\(s\) finished \(1\)[^\n]*\n {4}stopped by SIGTERM at 2026-09-14T\S+ in wave 2; apply again to continue/,
  );
  const second = await runApply(sim, plan, replan);
  assert.is(second.code, 0, String((second.error as Error)?.stack ?? second.error));
  assert.is(sim.rebootCounts().size, 9);
  for (const [node, count] of sim.rebootCounts()) assert.is(count, 1, node);
  for (const n of sim.view().nodes) assert.not.ok(n.spec?.unschedulable, n.metadata.name);
});

s(
  "a fleet batch timeout (the runner aborts with reason batch-timeout) is recorded in the cluster's own progress as batch-timeout, not as SIGTERM",
  async () => {
    const { snap, plan, replan } = bootc(9, 3);
    const sim = newSim(snap);
    const stop = new AbortController();
    let reboots = 0;
    const first = await runApply(sim, plan, replan, {
      signal: stop.signal,
      onEventHook: (e) => {
        if (e.type === 'reboot' && ++reboots === 4) stop.abort('batch-timeout');
      },
    });
    assert.instance(first.error, InterruptedError);
    const state = sim.progress.read(sim.nodes.values());
    assert.equal(state.run!.pools.worker.interrupted?.reason, 'batch-timeout');
    assert.equal(state.run!.pools.worker.interrupted?.wave, 2);
    assert.match(
      renderStatus(null, false, state),
      /stopped by the fleet's batch timeout \(batchTimeoutSeconds\) at 2026-09-14T\S+ in wave 2; apply again to continue/,
    );
  },
);

s('--lock-timeout: a second apply waits for the first, naming its holder, then takes the lock; a shorter wait ends with exit 4', async () => {
  const { snap, plan, replan } = bootc(6, 2);
  const sim = newSim(snap);
  const told: string[] = [];
  const [a, b] = await Promise.all([
    runApply(sim, plan, replan, { holder: 'alice@ci' }),
    runApply(sim, plan, replan, { holder: 'bob@ci', lockTimeoutSeconds: 3 * 3600, onLockWait: (h) => told.push(h.holder) }),
  ]);
  assert.is(a.code, 0);
  assert.is(b.code, 0, String(b.error));
  assert.is(b.result!.outcome, 'nothing-to-do', 'it took the lock once alice released it');
  assert.ok(told.length > 0 && told.every((h) => h === 'alice@ci'), told.join());
  const sim2 = newSim(snap);
  const [c, d] = await Promise.all([
    runApply(sim2, plan, replan, { holder: 'alice@ci' }),
    runApply(sim2, plan, replan, { holder: 'bob@ci', lockTimeoutSeconds: 120 }),
  ]);
  assert.is(c.code, 0);
  assert.is(d.code, 4);
  assert.instance(d.error, LockHeldError);
  assert.match((d.error as Error).message, /alice@ci/);
});

s.run();
