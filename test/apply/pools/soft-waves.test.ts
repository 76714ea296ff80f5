/**
 * Soft reboots grouped into the same waves (docs/design.md §7; src/apply/pools/bootc-pool.ts composeBootcWave):
 * whether a bootc node soft-reboots is known only once it has staged, so the applier
 * composes each wave from a fresh plan once the staging state differs from the saved plan.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, nodes, type TestNode } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { rehearse } from '../../../src/sim/rehearse.ts';
import type { ApplyEvent } from '../../../src/apply/ports/events.ts';

const s = suite('soft reboots in waves of their own');

const D = { stage: 300, drain: 60, reboot: 300, softReboot: 60, ready: 0 };
const SOFT_WINDOW = D.drain + D.softReboot + D.ready;
const HARD_WINDOW = D.drain + D.reboot + D.ready;

/**
 * These cases describe a bootc-operator whose daemon performs soft reboots (the installed one
 * does not: src/domain/bootc-daemon.ts), in the planner, the simulator and the rehearsal alike.
 */
const SOFT_OPERATOR = { softReboot: true };

/** Nodes whose index is even are soft-reboot capable once staged (half of them). */
const capable = (name: string) => Number(name.split('-')[1]) % 2 === 0;

function pool(n: number, mu: number | string, extra: Record<string, unknown> = {}, tn: TestNode[] = nodes('w', n)) {
  const snap = new ClusterBuilder().bootcPool('worker', tn).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: mu, rebootPolicy: 'AllowSoftReboot', ...extra }]);
  return { snap, ...planWith(spec, snap, D, SOFT_OPERATOR) };
}

function waveTimes(events: ApplyEvent[]) {
  const out = new Map<number, { start: number; end: number; nodes: string[] }>();
  for (const e of events) {
    if (e.type === 'wave-start') out.set(e.wave, { start: e.t, end: NaN, nodes: e.nodes });
    if (e.type === 'wave-end') out.get(e.wave)!.end = e.t;
  }
  return [...out.entries()].sort((a, b) => a[0] - b[0]).map(([wave, w]) => ({ wave, ...w }));
}

s('100 nodes, maxUnavailable 10%, half soft-capable (known once staged): soft waves take drain + soft reboot and the makespan drops', async () => {
  const { snap, plan, replan } = pool(100, '10%');
  // Nothing staged at plan time: every reboot kind is unknown, the estimate counts them hard.
  assert.ok(plan.pools[0].nodes.every((n) => n.reboot === 'unknown'));
  assert.is(plan.summary.estimatedSeconds, D.stage + 10 * HARD_WINDOW);
  const sim = newSim(snap, { durations: D, softRebootCapable: capable, bootcOperator: SOFT_OPERATOR });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String((r.error as Error)?.stack ?? r.error));
  const makespan = r.result!.durationSeconds;
  console.log(`    makespan: ${makespan} s (all waves hard, as before the change: ${D.stage + 10 * HARD_WINDOW} s)`);
  // 50 soft nodes make 5 waves of their own, the 50 hard ones 5 more.
  assert.is(makespan, D.stage + 5 * SOFT_WINDOW + 5 * HARD_WINDOW);
  assert.is(sim.reboots.filter((x) => x.kind === 'soft').length, 50);
  const waves = waveTimes(r.events);
  assert.is(waves.length, 10);
  for (const w of waves) {
    const soft = w.nodes.filter(capable).length;
    assert.ok(soft === 0 || soft === w.nodes.length, `wave ${w.wave} mixes soft and hard: ${w.nodes.join(',')}`);
    assert.is(w.end - w.start, soft ? SOFT_WINDOW : HARD_WINDOW, `wave ${w.wave}`);
  }
  assert.ok(
    waves.slice(0, 5).every((w) => w.nodes.every(capable)),
    'soft waves first',
  );
  // wave-start lists the nodes the wave actually took; every node once, each wave within the plan's size
  const seen = new Set<string>();
  for (const w of waves) {
    const cordoned = r.events
      .filter((e) => e.type === 'cordon')
      .filter((e) => e.wave === w.wave)
      .map((e) => e.node)
      .sort();
    assert.equal(cordoned, [...w.nodes].sort(), `wave ${w.wave}`);
    assert.ok(w.nodes.length <= plan.pools[0].waves[w.wave - 1].length);
    for (const n of w.nodes) {
      assert.not.ok(seen.has(n), `${n} in two waves`);
      seen.add(n);
    }
  }
  assert.is(seen.size, 100);
  assert.is(sim.peakUnavailable.get('worker'), 10);
  for (const c of sim.cordons) assert.ok(c.unavailableAfter <= 10 || c.wasUnavailable, JSON.stringify(c));
  for (const bn of sim.view().bootcNodes) assert.is(bn.status!.booted!.imageDigest, NEW_DIGEST);
});

s('waves keep zone spread inside the soft and the hard groups', async () => {
  const { snap, plan, replan } = pool(36, 6);
  const r = await runApply(newSim(snap, { durations: D, softRebootCapable: capable, bootcOperator: SOFT_OPERATOR }), plan, replan);
  assert.is(r.code, 0, String(r.error));
  const zoneOf = new Map(plan.pools[0].nodes.map((n) => [n.name, n.zone]));
  for (const w of waveTimes(r.events)) assert.is(new Set(w.nodes.map((n) => zoneOf.get(n))).size, 3, `wave ${w.wave}: ${w.nodes.join(',')}`);
});

s('RebootOnly: nothing is soft, regrouping changes no duration', async () => {
  const { snap, plan, replan } = pool(30, 3, { rebootPolicy: 'RebootOnly' });
  const sim = newSim(snap, { durations: D, softRebootCapable: capable, bootcOperator: SOFT_OPERATOR });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String(r.error));
  assert.is(r.result!.durationSeconds, plan.summary.estimatedSeconds);
  assert.is(sim.reboots.filter((x) => x.kind === 'soft').length, 0);
});

s('Estimate vs rehearsal: with every capability known at plan time the plan already groups soft reboots and the rehearsal takes the estimate', async () => {
  const tn = nodes('w', 30).map((n, i) => ({ ...n, staged: true, softRebootCapable: i % 3 === 0 }));
  const { snap, plan, replan } = pool(30, 5, { soakSeconds: 30 }, tn);
  const p = plan.pools[0];
  assert.ok(p.nodes.every((n) => n.reboot !== 'unknown'));
  assert.equal(
    p.waves.map((w) => w.map((n) => p.nodes.find((x) => x.name === n)!.reboot)),
    [
      ['soft', 'soft', 'soft', 'soft', 'soft'],
      ['soft', 'soft', 'soft', 'soft', 'soft'],
      ['hard', 'hard', 'hard', 'hard', 'hard'],
      ['hard', 'hard', 'hard', 'hard', 'hard'],
      ['hard', 'hard', 'hard', 'hard', 'hard'],
      ['hard', 'hard', 'hard', 'hard', 'hard'],
    ],
  );
  assert.is(plan.summary.estimatedSeconds, 2 * SOFT_WINDOW + 4 * HARD_WINDOW + 5 * 30);
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot: snap, bootcOperator: SOFT_OPERATOR });
  assert.is(error, null, String(error));
  assert.is(rehearsal.durationSeconds, plan.summary.estimatedSeconds);
  assert.is(rehearsal.reboots.soft, 10);
  // The saved plan's waves ran as planned.
  assert.equal(
    rehearsal.pools[0].waves.map((w) => w.nodes),
    p.waves,
  );
});

s(
  'the installed bootc-operator performs no soft reboots: AllowSoftReboot with soft-capable staged nodes is planned, estimated, rehearsed and applied as hard reboots, with a warning',
  async () => {
    const tn = nodes('w', 6).map((n, i) => ({ ...n, staged: true, softRebootCapable: i % 2 === 0 }));
    const snap = new ClusterBuilder().bootcPool('worker', tn).snapshot();
    const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, rebootPolicy: 'AllowSoftReboot' }]);
    const { plan, replan } = planWith(spec, snap, D);
    const p = plan.pools[0];
    assert.ok(
      p.nodes.every((n) => n.reboot === 'hard'),
      JSON.stringify(p.nodes.map((n) => n.reboot)),
    );
    assert.is(plan.summary.softReboots, 0);
    assert.is(plan.summary.hardReboots, 6);
    assert.is(plan.summary.estimatedSeconds, 3 * HARD_WINDOW);
    const d = plan.diagnostics.find((x) => x.code === 'soft-reboot-not-performed')!;
    assert.ok(d, JSON.stringify(plan.diagnostics.map((x) => x.code)));
    assert.is(d.severity, 'warning');
    assert.is(d.path, 'spec.pools[0].rebootPolicy');
    assert.match(d.message, /does not perform soft reboots/);
    assert.match(
      d.message,
      /its 6 node\(s\) to update are planned and estimated as hard reboots, including 3 whose staged image reports softRebootCapable \(w-00, w-02, w-04\)/,
    );
    const { rehearsal, error } = await rehearse({ plan, replan, snapshot: snap });
    assert.is(error, null, String(error));
    assert.is(rehearsal.reboots.soft, 0);
    assert.is(rehearsal.durationSeconds, plan.summary.estimatedSeconds);
    const sim = newSim(snap, { durations: D });
    const r = await runApply(sim, plan, replan);
    assert.is(r.code, 0, String(r.error));
    assert.ok(sim.reboots.every((x) => x.kind === 'hard'));
    assert.ok(r.events.filter((e) => e.type === 'reboot').every((e) => (e as { kind: string }).kind === 'hard'));
  },
);

s('RebootOnly: no soft-reboot warning (nothing to say)', () => {
  const tn = nodes('w', 2).map((n) => ({ ...n, staged: true, softRebootCapable: true }));
  const snap = new ClusterBuilder().bootcPool('worker', tn).snapshot();
  const { plan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap, D);
  assert.not.ok(plan.diagnostics.some((x) => x.code === 'soft-reboot-not-performed'));
});

s('killed during a regrouped wave, the rerun finishes it first, reboots no node twice and leaves no node cordoned', async () => {
  const { snap, plan, replan } = pool(40, 4);
  const sim = newSim(snap, { durations: D, softRebootCapable: capable, bootcOperator: SOFT_OPERATOR });
  let reboots = 0;
  const first = await runApply(sim, plan, replan, {
    onEventHook: (e, d) => {
      if (e.type === 'reboot' && ++reboots === 10) d.kill();
    },
  });
  assert.is((first.error as Error).name, 'KilledError');
  const killedWave = waveTimes(first.events).at(-1)!;
  assert.ok(killedWave.nodes.every(capable), 'the first waves are the soft ones');
  sim.advance(301);
  const second = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 }); // the Lease expires 300 s after this apply first sees it
  assert.is(second.code, 0, String((second.error as Error)?.stack ?? second.error));
  const resumed = waveTimes(second.events)[0];
  assert.is(resumed.wave, killedWave.wave);
  for (const n of killedWave.nodes.filter((n) => first.events.some((e) => e.type === 'cordon' && e.node === n))) {
    assert.ok(resumed.nodes.includes(n) || sim.get('BootcNode', n)!.status!.booted!.imageDigest === NEW_DIGEST, `${n} resumed in its wave`);
  }
  for (const [node, count] of sim.rebootCounts()) assert.is(count, 1, node);
  assert.is(sim.rebootCounts().size, 40);
  for (const nd of sim.view().nodes.filter((x) => x.metadata.name.startsWith('w-'))) assert.not.ok(nd.spec!.unschedulable, nd.metadata.name);
});

s.run();
