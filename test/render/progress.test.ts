import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ApplyEvent } from '../../src/apply/ports/events.ts';
import { ProgressModel, progressPlan, observedRatio, remainingSeconds, type ProgressPlan } from '../../src/render/progress.ts';
import { TtyProgress, CiProgress } from '../../src/render/events.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { planWith, newSim, runApply } from '../support/apply.ts';

const s = suite('apply progress: done / total and the ETA');

/** A pool of `n` nodes in waves of `size`, every wave estimated at `slot` seconds. */
function fakePlan(name: string, n: number, size: number, slot: number): ProgressPlan {
  const waveNodes = Array.from({ length: Math.ceil(n / size) }, (_, i) => Math.min(size, n - i * size));
  return { estimatedSeconds: waveNodes.length * slot, pools: [{ name, nodes: n, waveNodes, slots: waveNodes.map(() => slot) }] };
}

/** The events of waves `from`..`to` of pool `pool` (size `size`, each taking `took` seconds from `t0`), node names w-1... */
function waveEvents(pool: string, from: number, to: number, waves: number, size: number, t0: number, took: number): ApplyEvent[] {
  const out: ApplyEvent[] = [];
  let t = t0;
  for (let k = from; k <= to; k++) {
    const names = Array.from({ length: size }, (_, i) => `w-${(k - 1) * size + i + 1}`);
    out.push({ t, type: 'wave-start', pool, wave: k, waves, nodes: names });
    for (const n of names) out.push({ t: t + 1, type: 'cordon', pool, node: n, wave: k });
    t += took;
    for (const n of names) out.push({ t, type: 'uncordon', pool, node: n, wave: k });
    out.push({ t, type: 'wave-end', pool, wave: k, waves });
  }
  return out;
}

s("regression: 112 of 300 nodes done reads 112/300, not 112/114 (the total is the plan's, not the nodes of the waves started)", () => {
  const plan = fakePlan('worker', 300, 2, 100);
  const tty = new TtyProgress({ color: false, plan, width: 200 });
  const events: ApplyEvent[] = [
    { t: 0, type: 'start', message: 'p', resumed: false },
    { t: 0, type: 'pool-start', pool: 'worker', waves: 150, message: '' },
    ...waveEvents('worker', 1, 56, 150, 2, 0, 100),
    { t: 5600, type: 'wave-start', pool: 'worker', wave: 57, waves: 150, nodes: ['w-113', 'w-114'] },
  ];
  let out = '';
  for (const e of events) out = tty.update(e);
  assert.match(out, /wave 57\/150 +\[#######\.+\] 112\/300 nodes/);
  assert.not.match(out, /112\/114/);
  // the CI log says the same
  const ci = new CiProgress({ plan });
  const log = events.map((e) => ci.update(e)).join('');
  assert.match(log, /worker wave 57\/150 start: 2 node\(s\) \(w-113, w-114\); 112\/300 nodes done\n$/);
});

s('without the plan the total is unknown and says so ("?"), never the nodes of the started waves', () => {
  const m = new ProgressModel(null);
  for (const e of waveEvents('worker', 1, 3, 150, 2, 0, 100)) m.update(e);
  const tty = new TtyProgress({ color: false, width: 200 });
  let out = '';
  for (const e of waveEvents('worker', 1, 3, 150, 2, 0, 100)) out = tty.update(e);
  assert.match(out, / 6\/\? nodes/);
});

s("a node is done at its uncordon, or at the end of its wave when it stays cordoned (administrator's cordon); failed nodes are not", () => {
  const m = new ProgressModel(fakePlan('worker', 4, 2, 100));
  m.update({ t: 0, type: 'pool-start', pool: 'worker', waves: 2, message: '' });
  m.update({ t: 0, type: 'wave-start', pool: 'worker', wave: 1, waves: 2, nodes: ['a', 'b'] });
  m.update({ t: 50, type: 'uncordon', pool: 'worker', node: 'a', wave: 1 });
  assert.is(m.done(m.pools.get('worker')!), 1);
  m.update({ t: 90, type: 'wave-end', pool: 'worker', wave: 1, waves: 2 });
  assert.is(m.done(m.pools.get('worker')!), 2, 'b was cordoned by an administrator: done at the wave end');
  m.update({ t: 100, type: 'wave-start', pool: 'worker', wave: 2, waves: 2, nodes: ['c', 'd'] });
  m.update({ t: 150, type: 'node-failed', pool: 'worker', node: 'c', message: 'x', conditions: [] });
  m.update({ t: 150, type: 'uncordon', pool: 'worker', node: 'd', wave: 2 });
  m.update({ t: 151, type: 'halt', pool: 'worker', node: 'c', message: 'x' });
  assert.is(m.done(m.pools.get('worker')!), 3);
  assert.is(m.eta(), null, 'a halted pool has no ETA');
});

s("a resumed apply counts the waves an earlier run finished with the plan's sizes", () => {
  const m = new ProgressModel(fakePlan('worker', 10, 2, 100));
  m.update({ t: 0, type: 'start', message: 'p', resumed: true });
  m.update({ t: 0, type: 'pool-start', pool: 'worker', waves: 5, message: '' });
  m.update({ t: 1, type: 'wave-start', pool: 'worker', wave: 4, waves: 5, nodes: ['w-7', 'w-8'] });
  assert.is(m.done(m.pools.get('worker')!), 6);
  m.update({ t: 2, type: 'pool-done', pool: 'worker' });
  assert.is(m.done(m.pools.get('worker')!), 10);
});

s('between waves the live line says how much soak is left, and ticks move it on', () => {
  const tty = new TtyProgress({ color: false, plan: fakePlan('worker', 4, 2, 100), width: 200 });
  tty.update({ t: 0, type: 'pool-start', pool: 'worker', waves: 2, message: '' });
  for (const e of waveEvents('worker', 1, 1, 2, 2, 0, 90)) tty.update(e);
  assert.match(tty.update({ t: 90, type: 'soak', pool: 'worker', wave: 1, seconds: 600 }), /wave 1\/2 .* 2\/4 nodes, 1m30s elapsed, ETA \S+, soak 10m left/);
  assert.match(tty.tick(390), /soak 5m left/);
  assert.not.match(tty.update({ t: 690, type: 'wave-start', pool: 'worker', wave: 2, waves: 2, nodes: ['w-3', 'w-4'] }), /soak/);
});

s('ETA rule: observed / estimated ratio of the finished waves, applied to the rest of the slot in progress and the later slots', () => {
  assert.is(observedRatio([]), null);
  assert.is(
    observedRatio([
      { estimated: 100, observed: 150 },
      { estimated: 100, observed: 250 },
    ]),
    2,
  );
  assert.is(observedRatio([{ estimated: 0, observed: 50 }]), null, 'a wave without an estimate does not count');
  assert.is(remainingSeconds([100, 100, 100], 0, 1), 300);
  assert.is(remainingSeconds([100, 100, 100], 30, 2), 170 + 400);
  assert.is(remainingSeconds([100, 100], 500, 1), 100, 'a wave running over its estimate counts as ending now, never below 0');
  assert.is(remainingSeconds([], 10, 1), 0);

  // 10 waves of 100 s estimated; the first 4 took 150 s each: ETA after wave 4 = 6 x 150.
  const m = new ProgressModel(fakePlan('worker', 20, 2, 100));
  m.update({ t: 0, type: 'pool-start', pool: 'worker', waves: 10, message: '' });
  for (const e of waveEvents('worker', 1, 4, 10, 2, 0, 150)) m.update(e);
  assert.is(m.ratio(m.pools.get('worker')!), 1.5);
  assert.is(m.eta(600), 900);
  // 60 s into wave 5: 150 - 60 left of it, then 5 more waves.
  m.update({ t: 610, type: 'wave-start', pool: 'worker', wave: 5, waves: 10, nodes: ['w-9', 'w-10'] });
  assert.is(m.eta(660), 90 + 5 * 150);
  // before any wave ended: the plan's estimate
  const fresh = new ProgressModel(fakePlan('worker', 20, 2, 100));
  assert.is(fresh.eta(0), 1000);
});

s('ETA across pools: a waiting pool is scaled by the ratio of the pools that ran; the total is the sum', () => {
  const plan: ProgressPlan = {
    estimatedSeconds: 600,
    pools: [
      { name: 'a', nodes: 4, waveNodes: [2, 2], slots: [100, 100] },
      { name: 'b', nodes: 8, waveNodes: [2, 2, 2, 2], slots: [100, 100, 100, 100] },
    ],
  };
  const m = new ProgressModel(plan);
  m.update({ t: 0, type: 'pool-start', pool: 'a', waves: 2, message: '' });
  for (const e of waveEvents('a', 1, 1, 2, 2, 0, 50)) m.update(e);
  assert.is(m.poolEta(m.pools.get('b')!, 50), 200, 'b waits: 4 x 100 x 0.5');
  assert.is(m.eta(50), 50 + 200);
});

s('from a real (simulated) apply: the count never exceeds the total, reaches it at the end, and the ETA ends at 0', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 12)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 60 }]), snap);
  const r = await runApply(newSim(snap), plan, replan);
  assert.is(r.code, 0);
  const m = new ProgressModel(progressPlan(plan));
  const p = m.pools.get('worker')!;
  assert.is(p.total, 12);
  let last = -1;
  for (const e of r.events) {
    m.update(e);
    assert.ok(m.done(p) >= last && m.done(p) <= 12, `${e.type}: ${m.done(p)}`);
    last = m.done(p);
  }
  assert.is(m.done(p), 12);
  assert.is(m.eta(), 0);
  // the sim runs the plan's durations: the observed ratio is the estimate's
  assert.ok(Math.abs(m.ratio(p) - 1) < 0.05, String(m.ratio(p)));
  // the plan's slots add up to its estimate
  const pp = progressPlan(plan);
  assert.ok(Math.abs(pp.pools[0].slots.reduce((a, b) => a + b, 0) - plan.summary.estimatedSeconds) < 1e-6);
});

s.run();
