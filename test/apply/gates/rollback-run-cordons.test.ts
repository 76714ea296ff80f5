/**
 * A run stopped or killed between a node's cordon and its uncordon leaves that node cordoned with
 * bootcplan's mark of the run's plan, its entry at step `cordon` (the Node's entry is written only
 * at the cordon, a failure and the end: src/apply/pools/bootc-node.ts). The rollback judges such a node
 * by what it boots (docs/apply.md "Who goes back"): the run's image -> it goes back; still the
 * origin -> not rebooted, but the run's cordon is undone. Either way the rollback ends done in
 * one apply, the node schedulable and on the image it booted before the run.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { stepOnce, rollbackOf } from '../../support/rollback.ts';
import { nodeProgressOf } from '../../../src/cluster/progress.ts';
import { BOOTCPLAN_CORDONED_BY } from '../../../src/domain/labels.ts';
import type { ApplyEvent } from '../../../src/apply/ports/events.ts';

const OLD_DIGEST = OLD.slice(OLD.indexOf('@') + 1);

/** Four bootc workers, maxUnavailable 1; wave 1 done, wave 2 killed at its first `at` event. */
async function killedAt(at: ApplyEvent['type']) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).snapshot();
  const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  let victim = '';
  const killed = await runApply(sim, fwd.plan, fwd.replan, {
    step: true,
    onEventHook: (e, d) => {
      if (e.type === at && 'node' in e && typeof e.node === 'string' && !victim) {
        victim = e.node;
        d.kill();
      }
    },
  });
  assert.is((killed.error as Error).name, 'KilledError', String(killed.error));
  sim.advance(900);
  const node = sim.get('Node', victim)!;
  assert.is(nodeProgressOf(node)?.step, 'cordon', 'the entry still reads cordon');
  assert.is(node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], fwd.plan.id, "cordoned with the run's mark");
  return { sim, fwd, victim };
}

function assertBackAndSchedulable(sim: ReturnType<typeof newSim>, victim: string) {
  const node = sim.get('Node', victim)!;
  assert.not.ok(node.spec?.unschedulable, `${victim} schedulable after the rollback`);
  assert.is(node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined, `${victim}: no cordon mark left`);
  assert.is(sim.get('BootcNode', victim)!.status?.booted?.image, OLD, `${victim} on the image it booted before the run`);
}

const t = suite('rollback: a node the run left under its cordon');

t('killed after its reboot request: the node the run rebooted goes back and is uncordoned, in one apply', async () => {
  const { sim, victim } = await killedAt('reboot');
  assert.is(sim.get('BootcNode', victim)!.status?.booted?.imageDigest, NEW_DIGEST);
  const { plan, replan } = await rollbackOf(sim);
  assert.is(plan.summary.errors, 0, JSON.stringify(plan.diagnostics));
  const n = plan.pools[0].nodes.find((x) => x.name === victim);
  assert.ok(n && n.wave !== null, `${victim} scheduled: ${JSON.stringify(plan.pools[0].nodes)}`);
  assert.equal(plan.rollback!.excluded, []);
  const reboots = sim.reboots.length;
  const r = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 }); // the killed apply's lock expires
  assert.is(r.code, 0, String(r.error));
  assert.ok((await sim.driver().readProgress()).run!.done);
  assert.ok(
    sim.reboots.slice(reboots).some((x) => x.node === victim),
    `${victim} rebooted onto its origin`,
  );
  assertBackAndSchedulable(sim, victim);
});

t('killed after its cordon, before the reboot: the node on its origin is uncordoned, never rebooted', async () => {
  const { sim, victim } = await killedAt('cordon');
  assert.is(sim.get('BootcNode', victim)!.status?.booted?.imageDigest, OLD_DIGEST, 'not rebooted by the run');
  const { plan, replan } = await rollbackOf(sim);
  assert.is(plan.summary.errors, 0, JSON.stringify(plan.diagnostics));
  assert.equal(plan.rollback!.excluded, [], 'not left to a human as out of service');
  const reboots = sim.reboots.length;
  const r = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 }); // the killed apply's lock expires
  assert.is(r.code, 0, String(r.error));
  assert.ok((await sim.driver().readProgress()).run!.done);
  assert.equal(
    sim.reboots.slice(reboots).filter((x) => x.node === victim),
    [],
    `${victim} booted the origin all along: never rebooted`,
  );
  assertBackAndSchedulable(sim, victim);
  assert.is(nodeProgressOf(sim.get('Node', victim))?.step, 'done');
});

t.run();
