/**
 * Issue 12 rule 6: an administrator's pauses and cordons are theirs. bootcplan marks its own
 * cordon (`bootcplan.dev/cordoned-by`) and its own pause (`bootcplan.dev/paused-by`), and undoes
 * only what carries its mark.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from './builders.ts';
import { planWith, runApply, newSim } from './apply-harness.ts';
import { BOOTCPLAN_CORDONED_BY, BOOTCPLAN_PAUSED_BY } from '../src/domain/labels.ts';

const s = suite('admin-pauses');

const QUICK = { stage: 100, drain: 10, reboot: 50, softReboot: 10, ready: 0 };

s('cordons: bootcplan marks its own cordon and removes the mark with the uncordon, in the same write', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap);
  const sim = newSim(snap, { durations: QUICK });
  const marks: (string | undefined)[] = [];
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => { if (e.type === 'drain-done' && e.node === 'w-00') marks.push(sim.get('Node', 'w-00')!.metadata.annotations?.[BOOTCPLAN_CORDONED_BY]); },
  });
  assert.is(r.error, null, String((r.error as Error)?.stack));
  assert.equal(marks, [plan.id], 'marked with the plan id while bootcplan holds the cordon');
  for (const n of ['w-00', 'w-01']) {
    const node = sim.get('Node', n)!;
    assert.not.ok(node.spec.unschedulable, `${n} uncordoned`);
    assert.is(node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined, `${n}: mark removed`);
  }
});

s('an administrator cordons nodes while bootcplan drains and reboots: they stay cordoned after the apply, and the apply says so', async () => {
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
        sim.mutate((o) => { delete o.nodes.get(first)!.metadata.annotations![BOOTCPLAN_CORDONED_BY]; });
      }
      if (e.type === 'reboot' && e.node === first) sim.adminCordon(later, true); // `kubectl cordon` of a node of a later wave
    },
  });
  assert.is(r.error, null, String((r.error as Error)?.stack));
  for (const n of [first, later]) {
    const node = sim.get('Node', n)!;
    assert.is(node.spec.unschedulable, true, `${n} stays cordoned`);
    assert.is(node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined, `${n} carries no bootcplan mark`);
    assert.is(sim.get('BootcNode', n)!.status.booted.image, NEW, `${n} was updated`);
    assert.not.ok(r.events.some((e) => e.type === 'uncordon' && e.node === n), `${n}: no uncordon`);
  }
  const left = r.events.find((e) => e.type === 'node-unavailable' && e.node === first);
  assert.ok(left && left.type === 'node-unavailable' && /left cordoned/.test(left.message), 'the apply reports the node it left cordoned');
  for (const n of nodes('w', 6).map((x) => x.name).filter((x) => x !== first && x !== later)) assert.not.ok(sim.get('Node', n)!.spec.unschedulable, `${n} uncordoned`);
});

s('driver: a node cordoned by someone else is not marked by bootcplan\'s cordon and not undone by its uncordon', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const sim = newSim(snap);
  const d = sim.driver();
  sim.adminCordon('w-00', true);
  assert.is(await d.cordon('w-00', 'plan-a'), 'already-cordoned');
  assert.is(sim.get('Node', 'w-00')!.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined);
  assert.is(await d.uncordon('w-00', 'plan-a'), 'not-ours');
  assert.is(sim.get('Node', 'w-00')!.spec.unschedulable, true);
  // Its own cordon, and a mark of another plan (exact match only).
  assert.is(await d.cordon('w-01', 'plan-a'), 'cordoned');
  assert.is(await d.uncordon('w-01', 'plan-b'), 'not-ours');
  assert.is(sim.get('Node', 'w-01')!.spec.unschedulable, true);
  // Uncordoned out of band: bootcplan's uncordon only clears its stale mark.
  sim.adminCordon('w-01', false);
  assert.is(await d.uncordon('w-01', 'plan-a'), 'mark-cleared');
  assert.is(sim.get('Node', 'w-01')!.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined);
});

s.run();
