import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, nodes } from '../support/cluster.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';
import { LockHeldError, RolloutHaltedError, StalePlanError, PolicyBlockedError } from '../../src/base/errors.ts';
import { digestOf } from '../../src/domain/nodes.ts';
import { nodeObject, bootcNodeObject } from '../../src/sim/node-objects.ts';
import { OLD } from '../support/cluster.ts';
import type { TestObject } from '../support/cluster.ts';

const s = suite('apply');

const MAKESPAN = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 0 };

function worker(n: number, mu: number | string = 2, extra: Record<string, unknown> = {}, tweak?: (ns: ReturnType<typeof nodes>) => void) {
  const ns = nodes('w', n);
  tweak?.(ns);
  const snap = new ClusterBuilder().bootcPool('worker', ns).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: mu, ...extra }]);
  return { snap, spec, ...planWith(spec, snap) };
}

s('makespan: 60 nodes, maxUnavailable 6, stage 600, drain 60, reboot 300 => 4200 s, and the plan estimate agrees', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 60)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 6 }]), snap, MAKESPAN);
  const sim = newSim(snap, { durations: MAKESPAN });
  const r = await runApply(sim, plan, replan);
  assert.is(r.error, null, String((r.error as Error)?.stack));
  const d = r.result!.durationSeconds;
  console.log(`    makespan: ${d} s (plan estimate ${plan.summary.estimatedSeconds} s)`);
  assert.ok(Math.abs(d - 4200) <= 84, `makespan ${d}`);
  assert.is(plan.summary.estimatedSeconds, 4200);
  assert.is(sim.reboots.length, 60);
  assert.is(sim.peakUnavailable.get('worker'), 6);
  for (const n of sim.view().bootcNodes) assert.is(n.status!.booted!.imageDigest, NEW_DIGEST);
  for (const n of sim.view().nodes.filter((x) => x.metadata.name.startsWith('w-'))) assert.not.ok(n.spec!.unschedulable, n.metadata.name);
  // event order for one node
  const w = r.events.filter((e) => 'node' in e && e.node === 'w-00').map((e) => e.type);
  assert.equal(w, ['stage-start', 'staged', 'cordon', 'drain-done', 'reboot', 'booted', 'uncordon']);
  assert.is(r.events[r.events.length - 1].type, 'done');
});

s('two concurrent applies on one cluster: one proceeds, the other gets LockHeldError (exit 4) naming holder and since', async () => {
  const { snap, plan, replan } = worker(6);
  const sim = newSim(snap);
  const [a, b] = await Promise.all([runApply(sim, plan, replan, { holder: 'alice@ci' }), runApply(sim, plan, replan, { holder: 'bob@laptop' })]);
  const codes = [a.code, b.code].sort();
  assert.equal(codes, [0, 4]);
  const loser = a.code === 4 ? a : b;
  const err = loser.error as LockHeldError;
  assert.instance(err, LockHeldError);
  assert.match(err.message, /alice@ci since 2026-09-14T08:00:00Z/);
  assert.ok(err.lockId.length > 4);
  assert.is(sim.reboots.length, 6);
  assert.is(await sim.driver().readLock(), null, 'released after the apply');
});

s('a changed cluster is refused with exit 3 before any write, listing the difference', async () => {
  const { snap, plan, replan } = worker(6);
  const sim = newSim(snap);
  sim.mutate((o) => {
    o.add(nodeObject({ name: 'w-99', role: 'worker', zone: 'us-east-1a', bootc: true }));
    o.add(bootcNodeObject({ name: 'w-99', pool: 'worker', desiredImage: OLD, booted: { image: OLD } }));
  });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 3);
  assert.instance(r.error, StalePlanError);
  assert.ok(
    (r.error as StalePlanError).difference.some((l) => l.includes('w-99')),
    (r.error as StalePlanError).difference.join('\n'),
  );
  assert.equal(
    sim.writes.filter((w) => !['lock', 'unlock', 'progress'].includes(w.op)),
    [],
  );
});

s('the cluster changing between waves stops the apply at the next wave (exit 3)', async () => {
  const { snap, plan, replan } = worker(6, 2);
  const sim = newSim(snap);
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      if (e.type === 'wave-end' && e.wave === 1)
        sim.mutate((o) => {
          (o.get('BootcNode', 'w-05') as TestObject).status.booted.imageDigest = 'sha256:' + 'f'.repeat(64);
        });
    },
  });
  assert.is(r.code, 3, String(r.error));
  assert.ok((r.error as StalePlanError).difference.some((l) => l.includes('w-05')));
  assert.is(sim.reboots.length, 2);
});

s('a failed reboot halts the pool: paused, remaining waves untouched, exit 5 naming the node and its conditions', async () => {
  const { snap, plan, replan } = worker(6, 2);
  const sim = newSim(snap, { faults: { seed: 3, rebootFailRate: 1 } });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 5);
  const err = r.error as RolloutHaltedError;
  assert.instance(err, RolloutHaltedError);
  assert.match(err.message, /w-0\d/);
  assert.ok(
    err.report.some((l) => l.includes('Degraded=True')),
    err.report.join('\n'),
  );
  assert.is(sim.reboots.length, 2, 'only the first wave rebooted');
  assert.is(sim.view().bootcNodePools[0].spec!.rollout!.paused, true);
  assert.ok(r.events.some((e) => e.type === 'halt') && r.events.some((e) => e.type === 'node-failed'));
  const progress = await sim.driver().readProgress();
  assert.ok(progress.run!.pools.worker.halted);
  const failed = Object.values(progress.nodes).filter((e) => e.step === 'failed');
  assert.ok(failed.length >= 1, "the failed node's entry says so, on its Node");
});

s('a node cordoned by an administrator after the plan is not taken: it stays cordoned and unrebooted, and the pool halts saying why', async () => {
  // docs/safety.md rules 6 and 7: a node someone else took out of service is never cordoned, drained
  // or rebooted by bootcplan; it waits for the node, and the budget wait ends in a halt (exit 5).
  const { snap, plan, replan } = worker(4, 2);
  const sim = newSim(snap);
  sim.mutate((o) => {
    o.nodes.get('w-01')!.spec!.unschedulable = true;
  });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 5, String(r.error));
  assert.match(
    String((r.error as Error).message) + JSON.stringify((r.error as { report?: string[] }).report ?? []),
    /w-01.*out of service on its own \(cordoned\)/,
  );
  assert.is(sim.get('Node', 'w-01')!.spec!.unschedulable, true);
  assert.is.not(sim.get('BootcNode', 'w-01')!.status!.booted!.imageDigest, NEW_DIGEST);
  assert.not.ok(
    sim.reboots.some((x) => x.node === 'w-01'),
    'w-01 was rebooted',
  );
  for (const c of sim.cordons) assert.ok(c.unavailableAfter <= 2 || c.wasUnavailable, JSON.stringify(c));
});

s('the soak counts from the exact end of the wave: a wave that ends mid-second soaks the full soakSeconds', async () => {
  const { snap, plan, replan } = worker(4, 2, { soakSeconds: 100 });
  // A clock that starts 0.9 s into a second: every wave ends 0.9 s into one.
  // (Staging quicker than the staging limit: the cluster's condition times are whole seconds.)
  const sim = newSim(snap, { start: '2026-09-14T08:00:00.900Z', durations: { stage: 60, drain: 60, reboot: 300, softReboot: 30, ready: 30 } });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String(r.error));
  const end = r.events.find((e) => e.type === 'wave-end' && e.wave === 1);
  const next = r.events.find((e) => e.type === 'wave-start' && e.wave === 2);
  assert.ok(end && next);
  assert.ok(next.t - end.t >= 100, `wave 2 started ${next.t - end.t} s after wave 1 ended; the soak is 100 s`);
  const soak = r.events.find((e) => e.type === 'soak');
  assert.is(soak?.type === 'soak' && soak.seconds, 100);
  const rec = (await sim.driver().readProgress()).run!;
  assert.match(rec.pools.worker.lastWaveEnd ?? '', /\.900Z$/, 'the run record keeps the milliseconds');
});

s('apply --step advances one wave per run and exits 0; the last run finishes', async () => {
  const { snap, plan, replan } = worker(6, 2, { soakSeconds: 100 });
  const sim = newSim(snap);
  const outcomes: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await runApply(sim, plan, replan, { step: true });
    assert.is(r.code, 0, String(r.error));
    outcomes.push(`${r.result!.outcome}:${r.result!.wavesRun}`);
    sim.advance(i === 0 ? 700 : 30);
  }
  // The first run finds the nodes staging the target (600 s): nothing to do yet (docs/design.md §3).
  assert.equal(outcomes, ['waiting:0', 'stepped:1', 'stepped:1', 'done:1', 'nothing-to-do:0']);
  assert.is(sim.reboots.length, 6);
});

s('killed mid-wave, the rerun resumes and reboots no node twice', async () => {
  const { snap, plan, replan } = worker(9, 3);
  const sim = newSim(snap);
  let n = 0;
  const first = await runApply(sim, plan, replan, {
    onEventHook: (e, d) => {
      if (e.type === 'reboot' && ++n === 4) d.kill();
    },
  });
  assert.is(first.code, 1);
  assert.is((first.error as Error).name, 'KilledError');
  const held = await runApply(sim, plan, replan);
  assert.is(held.code, 4, 'the dead apply still holds the lock');
  // Its Lease expires once a new apply has seen it unchanged for the lease's duration (300 s).
  const second = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 });
  assert.is(second.code, 0, String(second.error));
  assert.ok(second.result!.resumed);
  for (const [node, count] of sim.rebootCounts()) assert.is(count, 1, node);
  assert.is(sim.rebootCounts().size, 9);
  for (const nd of sim.view().nodes.filter((x) => x.metadata.name.startsWith('w-'))) assert.not.ok(nd.spec!.unschedulable, nd.metadata.name);
});

s('a plan with cpms-replacement-not-allowed is blocked by policy (exit 6); other errors exit 1', async () => {
  const { snap, plan, replan } = worker(3);
  const bad = {
    ...plan,
    diagnostics: [
      {
        severity: 'error' as const,
        code: 'cpms-replacement-not-allowed',
        message: 'replaces control-plane machines',
        path: null,
        file: null,
        line: null,
        column: null,
      },
    ],
  };
  const r = await runApply(newSim(snap), bad, replan);
  assert.is(r.code, 6);
  assert.instance(r.error, PolicyBlockedError);
  const other = { ...plan, diagnostics: [{ ...bad.diagnostics[0], code: 'pool-not-found' }] };
  assert.is((await runApply(newSim(snap), other, replan)).code, 1);
});

s('maintenance-window policy stops before the first write with exit 6', async () => {
  const { snap, plan, replan } = worker(3);
  const sim = newSim(snap);
  const r = await runApply(sim, plan, replan, { policy: () => 'outside the maintenance windows' });
  assert.is(r.code, 6);
  assert.equal(
    sim.writes.filter((w) => !['lock', 'unlock', 'progress'].includes(w.op)),
    [],
  );
});

s('MCO-only pool: MachineConfig written, the MCO moves the nodes wave by wave, pool unpaused at the end', async () => {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('m', 6)).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]);
  const { plan, replan } = planWith(spec, snap);
  const sim = newSim(snap);
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String((r.error as Error)?.stack ?? r.error));
  assert.is(sim.reboots.length, 6);
  assert.is(sim.peakUnavailable.get('worker'), 2);
  const mcp = sim.get('MachineConfigPool', 'worker')!;
  assert.is(mcp.spec!.paused, false);
  assert.is(mcp.spec!.maxUnavailable, 2);
  const rendered = sim.get('MachineConfig', mcp.spec!.configuration!.name!)!;
  assert.is(digestOf(rendered.spec!.osImageURL), NEW_DIGEST);
  assert.is(r.events.filter((e) => e.type === 'wave-end').length, 3);
  assert.is(r.events.filter((e) => e.type === 'booted').length, 6);
  assert.ok(
    Math.abs(r.result!.durationSeconds - plan.summary.estimatedSeconds) <= plan.summary.estimatedSeconds * 0.02,
    `${r.result!.durationSeconds} vs ${plan.summary.estimatedSeconds}`,
  );
});

s('MCO-only pool: the predicted waves are the nodes the MCO takes (zone by zone, oldest first), so wave-start events match', async () => {
  const b = new ClusterBuilder().mcoPool('worker', nodes('m', 9));
  // m-00..m-08 across zones a, b, c; the newest nodes have the smallest names
  for (const o of b.objects.filter((x) => x.kind === 'Node')) o.metadata.creationTimestamp = `2026-0${9 - Number(o.metadata.name.slice(2))}-01T00:00:00Z`;
  const snap = b.snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  assert.equal(plan.pools[0].waves, [['m-06', 'm-03'], ['m-00', 'm-07'], ['m-04', 'm-01'], ['m-08', 'm-05'], ['m-02']]);
  const sim = newSim(snap);
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 0, String((r.error as Error)?.stack ?? r.error));
  const starts = r.events.filter((e) => e.type === 'wave-start');
  assert.is(starts.length, 5);
  for (const w of starts) {
    const taken = r.events
      .filter((e) => e.type === 'cordon')
      .filter((e) => e.wave === w.wave)
      .map((e) => e.node)
      .sort();
    assert.equal(taken, [...w.nodes].sort(), `wave ${w.wave}`);
  }
});

s.run();
