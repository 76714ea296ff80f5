/**
 * docs/safety.md rule 6: an administrator's pauses and cordons are theirs. bootcplan marks its own
 * cordon (`bootcplan.dev/cordoned-by`) and its own pause (`bootcplan.dev/paused-by`), and undoes
 * only what carries its mark.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { BOOTCPLAN_CORDONED_BY, BOOTCPLAN_PAUSED_BY } from '../../../src/domain/labels.ts';
import { machineConfigPoolObject } from '../../../src/sim/node-objects.ts';

const s = suite('admin-pauses');

const QUICK = { stage: 100, drain: 10, reboot: 50, softReboot: 10, ready: 0 };

s('cordons: bootcplan marks its own cordon and removes the mark with the uncordon, in the same write', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap);
  const sim = newSim(snap, { durations: QUICK });
  const marks: (string | undefined)[] = [];
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      if (e.type === 'drain-done' && e.node === 'w-00') marks.push(sim.get('Node', 'w-00')!.metadata.annotations?.[BOOTCPLAN_CORDONED_BY]);
    },
  });
  assert.is(r.error, null, String((r.error as Error)?.stack));
  assert.equal(marks, [plan.id], 'marked with the plan id while bootcplan holds the cordon');
  for (const n of ['w-00', 'w-01']) {
    const node = sim.get('Node', n)!;
    assert.not.ok(node.spec!.unschedulable, `${n} uncordoned`);
    assert.is(node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined, `${n}: mark removed`);
  }
});

s(
  'an administrator cordons nodes while bootcplan drains and reboots: they stay cordoned after the apply; a node cordoned before its wave is not taken, and the pool halts saying why',
  async () => {
    // The nodes the administrator holds out of service use the pool's budget: 3 leaves room for the others.
    const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
    const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }]), snap);
    const first = plan.pools[0].waves[0][0];
    const later = plan.pools[0].waves[1][0];
    const sim = newSim(snap, { durations: QUICK });
    const r = await runApply(sim, plan, replan, {
      onEventHook: (e) => {
        if (e.type === 'drain-done' && e.node === first) {
          // The administrator takes the node over while bootcplan drains it: bootcplan's mark
          // goes (`kubectl annotate node <n> bootcplan.dev/cordoned-by-`), the cordon stays.
          sim.mutate((o) => {
            delete o.nodes.get(first)!.metadata.annotations![BOOTCPLAN_CORDONED_BY];
          });
        }
        if (e.type === 'reboot' && e.node === first) sim.adminCordon(later, true); // `kubectl cordon` of a node of a later wave
      },
    });
    // The later node was out of service on its own when its wave came: never taken (docs/safety.md rule 7);
    // the budget wait ends the pool with a halt that names it.
    assert.is(r.code, 5, String((r.error as Error)?.stack));
    assert.match(JSON.stringify((r.error as { report?: string[] }).report ?? []), new RegExp(`${later}.*out of service on its own \\(cordoned\\)`));
    for (const n of [first, later]) {
      const node = sim.get('Node', n)!;
      assert.is(node.spec!.unschedulable, true, `${n} stays cordoned`);
      assert.is(node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined, `${n} carries no bootcplan mark`);
      assert.not.ok(
        r.events.some((e) => e.type === 'uncordon' && e.node === n),
        `${n}: no uncordon`,
      );
    }
    assert.is(sim.get('BootcNode', first)!.status!.booted!.image, NEW, `${first} was updated`);
    assert.is.not(sim.get('BootcNode', later)!.status!.booted!.image, NEW, `${later} was not taken`);
    assert.not.ok(
      sim.reboots.some((x) => x.node === later),
      `${later} was not rebooted`,
    );
    const left = r.events.find((e) => e.type === 'node-unavailable' && e.node === first);
    assert.ok(left && left.type === 'node-unavailable' && /left cordoned/.test(left.message), 'the apply reports the node it left cordoned');
    for (const n of nodes('w', 6)
      .map((x) => x.name)
      .filter((x) => x !== first && x !== later))
      assert.not.ok(sim.get('Node', n)!.spec!.unschedulable, `${n} uncordoned`);
  },
);

s("driver: a node cordoned by someone else is not marked by bootcplan's cordon and not undone by its uncordon", async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const sim = newSim(snap);
  const d = sim.driver();
  sim.adminCordon('w-00', true);
  assert.is(await d.cordon('w-00', 'plan-a'), 'already-cordoned');
  assert.is(sim.get('Node', 'w-00')!.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined);
  assert.is(await d.uncordon('w-00', 'plan-a'), 'not-ours');
  assert.is(sim.get('Node', 'w-00')!.spec!.unschedulable, true);
  // Its own cordon, and a mark of another plan (exact match only).
  assert.is(await d.cordon('w-01', 'plan-a'), 'cordoned');
  assert.is(await d.uncordon('w-01', 'plan-b'), 'not-ours');
  assert.is(sim.get('Node', 'w-01')!.spec!.unschedulable, true);
  // Uncordoned out of band: bootcplan's uncordon only clears its stale mark.
  sim.adminCordon('w-01', false);
  assert.is(await d.uncordon('w-01', 'plan-a'), 'mark-cleared');
  assert.is(sim.get('Node', 'w-01')!.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined);
});

// ------------------------------------------------------------------ pauses (planner)

function adminPausedMco(specExtra: Record<string, unknown> = {}, mark?: string) {
  const b = new ClusterBuilder().mcoPool('worker', nodes('w', 3), { paused: true, maxUnavailable: 1 });
  if (mark) b.object('MachineConfigPool', 'worker').metadata.annotations = { [BOOTCPLAN_PAUSED_BY]: mark };
  const snap = b.snapshot();
  return { snap, plan: planFor(specYaml([{ name: 'worker', image: NEW, ...specExtra }]), snap) };
}

s(
  'a MachineConfigPool an administrator paused stays paused: no paused:false in its patch, its nodes held back (pool-paused), a diagnostic at the pool entry',
  () => {
    const { plan } = adminPausedMco();
    const mcp = plan.changes.find((c) => c.kind === 'MachineConfigPool')!;
    assert.not.ok(
      mcp.patch.some((op) => op.path === '/spec/paused' && op.op !== 'test' && (op as any).value === false),
      JSON.stringify(mcp.patch),
    );
    const pool = plan.pools[0];
    assert.equal(pool.waves, []);
    assert.equal(
      pool.nodes.map((n) => n.blockedBy),
      ['pool-paused', 'pool-paused', 'pool-paused'],
    );
    const d = plan.diagnostics.find((x) => x.code === 'pool-paused-by-administrator')!;
    assert.ok(d, JSON.stringify(plan.diagnostics.map((x) => x.code)));
    assert.is(d.severity, 'warning');
    assert.equal([d.path, d.line, d.column], ['spec.pools[0]', 7, 7]);
    assert.match(d.message, /MachineConfigPool worker is paused.*not by bootcplan.*3 node/);
    assert.match(d.hint!, /paused: false/);
  },
);

s('the bootc pool of the same name as an administrator-paused MachineConfigPool is held back too', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3));
  b.add(machineConfigPoolObject('worker', 1, 'rendered-worker-0001', { 'node-role.kubernetes.io/worker': '' }, true));
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), b.snapshot());
  assert.equal(plan.pools[0].waves, []);
  assert.ok(plan.pools[0].nodes.every((n) => n.blockedBy === 'pool-paused'));
  assert.ok(plan.diagnostics.some((d) => d.code === 'pool-paused-by-administrator' && /BootcNodePool worker/.test(d.message)));
  const mcp = plan.changes.find((c) => c.kind === 'MachineConfigPool')!;
  assert.not.ok(mcp.patch.some((op) => op.path === '/spec/paused' && op.op !== 'test'));
});

s("spec paused: false explicitly lifts the administrator's pause: a disruptive change, and the nodes are scheduled", () => {
  const { plan } = adminPausedMco({ paused: false });
  const mcp = plan.changes.find((c) => c.kind === 'MachineConfigPool')!;
  assert.ok(
    mcp.patch.some((op) => op.path === '/spec/paused' && op.op === 'replace' && (op as any).value === false),
    JSON.stringify(mcp.patch),
  );
  assert.is(mcp.risk, 'disruptive');
  assert.is(plan.pools[0].waves.length, 3);
  const d = plan.diagnostics.find((x) => x.code === 'pool-pause-lifted')!;
  assert.ok(d);
  assert.is(d.path, 'spec.pools[0].paused');
});

s("a pause bootcplan made (bootcplan.dev/paused-by) is not an administrator's: the pool is rolled", () => {
  const { plan } = adminPausedMco({}, 'a1b2c3d4e5f60718');
  assert.is(plan.pools[0].waves.length, 3);
  assert.not.ok(plan.diagnostics.some((d) => d.code.startsWith('pool-pause')));
});

s(
  "apply: an administrator-paused MachineConfigPool is still paused after the apply, without bootcplan's mark; bootcplan's own pauses between waves carry it",
  async () => {
    const held = adminPausedMco();
    const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW }]), held.snap);
    const sim = newSim(held.snap, { durations: QUICK });
    const r = await runApply(sim, plan, replan);
    assert.is(r.error, null, String((r.error as Error)?.stack));
    const mcp = sim.get('MachineConfigPool', 'worker')!;
    assert.is(mcp.spec!.paused, true);
    assert.is(mcp.metadata.annotations?.[BOOTCPLAN_PAUSED_BY], undefined);
    assert.is(sim.reboots.length, 0);

    const snap = new ClusterBuilder().mcoPool('worker', nodes('w', 2)).snapshot();
    const p2 = planWith(specYaml([{ name: 'worker', image: NEW }]), snap);
    const sim2 = newSim(snap, { durations: QUICK });
    const marks: (string | undefined)[] = [];
    const r2 = await runApply(sim2, p2.plan, p2.replan, {
      onEventHook: (e) => {
        if (e.type === 'wave-end') marks.push(sim2.get('MachineConfigPool', 'worker')!.metadata.annotations?.[BOOTCPLAN_PAUSED_BY]);
      },
    });
    assert.is(r2.error, null, String((r2.error as Error)?.stack));
    assert.equal(marks, [p2.plan.id, p2.plan.id], 'paused by bootcplan between waves');
    assert.is(sim2.get('MachineConfigPool', 'worker')!.spec!.paused, false);
    assert.is(sim2.get('MachineConfigPool', 'worker')!.metadata.annotations?.[BOOTCPLAN_PAUSED_BY], undefined, 'unpaused at the end, mark removed');
  },
);

s('apply: an administrator who takes over the pause of an MCO pool between waves stops the apply (exit 3) and the pool stays paused', async () => {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('w', 3)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap);
  const sim = newSim(snap, { durations: QUICK });
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      // `oc annotate mcp worker bootcplan.dev/paused-by-`: the pause bootcplan made between waves is now the administrator's.
      if (e.type === 'wave-end' && e.wave === 1)
        sim.mutate((o) => {
          delete o.get('MachineConfigPool', 'worker')!.metadata.annotations![BOOTCPLAN_PAUSED_BY];
        });
    },
  });
  assert.is(r.code, 3, String(r.error));
  assert.match((r.error as any).difference.join('\n'), /held back now, the pool was paused by someone else/);
  assert.is(sim.get('MachineConfigPool', 'worker')!.spec!.paused, true);
  assert.is(sim.reboots.length, 1);
});

s('an MCO-only pool an administrator paused gets no osImageURL MachineConfig: the MCO would roll it whole on unpause, outside the waves', () => {
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 3), { paused: true }).snapshot();
  const { plan } = planWith(specYaml([{ name: 'infra', image: NEW }]), snap);
  assert.equal(
    plan.changes.filter((c) => c.kind === 'MachineConfig' && c.action !== 'noop').map((c) => c.address),
    [],
  );
  assert.equal(plan.pools[0].waves, []);
  assert.ok(plan.diagnostics.some((d) => d.code === 'pool-paused-by-administrator'));
  // With `paused: false` in the spec the pause is lifted knowingly, and the image goes with it.
  const lifted = planWith(specYaml([{ name: 'infra', image: NEW, paused: false }]), snap).plan;
  assert.ok(lifted.changes.some((c) => c.kind === 'MachineConfig' && c.action !== 'noop'));
});

s.run();
