/**
 * An interrupted rollback continues (docs/apply.md "Rollback", "Continuing a rollback"): a
 * rollback is a run like any other and can be stopped (SIGTERM, SIGINT), or killed half way. Then
 * - the same rollback plan applied again continues it (docs/design.md §7 "Apply is resumable");
 * - `plan --rollback` plans the rest of it from the rollback's own run record and the cluster as
 *   they are now: the nodes already back are not listed, the ones it left mid-way are;
 * - a finished rollback is never rolled back (that would roll the pool forward to the image that
 *   failed): `plan --rollback` refuses it;
 * - `onFailure: rollback` stopped half way exits as a stop (143/130), `status` says the rollback
 *   is incomplete, the forward plan stays held, and `plan --rollback` continues it.
 * Whatever the way, every node the run updated ends on the image it booted before, no node the
 * run did not update is touched, the budget holds, and the pool stays held for the run's image.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { stepOnce, rollbackOf } from '../../support/rollback.ts';
import { cli, inDir } from '../../support/cli.ts';
import { run as runSources } from '../../../src/cli/main.ts';
import { planFileText } from '../../../src/plan/saved/writer.ts';
import { HeldTargetError } from '../../../src/base/errors.ts';
import { nodeProgressOf } from '../../../src/cluster/progress.ts';
import { rollbackInputOf } from '../../../src/plan/rollback-planner.ts';
import { renderStatus } from '../../../src/render/status.ts';
import { SimHealthSource, parseFailCheck, type FailCheckRule } from '../../../src/sim/health.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';

const t = suite('rollback: an interrupted rollback continues');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-rollback-resume-'));
const WORKERS = nodes('w', 8).map((n) => n.name);

/** Eight bootc workers, maxUnavailable 2, two waves of the run done: four nodes updated, four not. */
async function afterTwoWaves() {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 8)).snapshot();
  const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  const updated = WORKERS.filter((n) => sim.get('BootcNode', n)!.status?.booted?.imageDigest === NEW_DIGEST);
  assert.is(updated.length, 4);
  return { sim, fwd, updated, untouched: WORKERS.filter((n) => !updated.includes(n)), reboots: new Map(sim.rebootCounts()) };
}

/** The run's outcome: every updated node back on OLD, rebooted once more; the others never rebooted; cordons of updated nodes only, within the budget. */
function assertRolledBack(sim: SimCluster, updated: string[], untouched: string[], reboots: Map<string, number>, cordonsFrom: number) {
  for (const n of updated) {
    assert.is(sim.get('BootcNode', n)!.status?.booted?.image, OLD, `${n} is back on the image it booted`);
    assert.is((sim.rebootCounts().get(n) ?? 0) - (reboots.get(n) ?? 0), 1, `${n} rebooted once by the rollback`);
    assert.not.ok(sim.get('Node', n)!.spec?.unschedulable, `${n} is uncordoned`);
    assert.is(nodeProgressOf(sim.get('Node', n))?.step, 'done', n);
  }
  for (const n of untouched) assert.is(sim.rebootCounts().get(n) ?? 0, 0, `${n} was not updated by the run and was never rebooted`);
  for (const c of sim.cordons.slice(cordonsFrom)) {
    assert.ok(updated.includes(c.node), `${c.node} was cordoned and the run had not updated it`);
    assert.ok(c.unavailableAfter <= 2, `${c.node}: ${c.unavailableAfter} out of service, budget 2`);
  }
  assert.is(sim.get('BootcNodePool', 'worker')!.spec?.image?.ref, OLD);
}

async function assertHeld(sim: SimCluster) {
  const rec = (await sim.driver().readProgress()).run!;
  assert.ok(rec.done, "the rollback's record is done");
  assert.equal(
    rec.holds?.map((h) => [h.pool, h.target, h.action]),
    [['worker', NEW_DIGEST, 'rolled-back']],
  );
}

/** The sources' CLI against the simulated cluster (a driver of its own per command). */
const onSim = (sim: SimCluster) => ({ entry: runSources, openDriver: async () => ({ driver: sim.driver(), holder: 'ci@test' }) });

t('apply plans/rollback.json stopped by SIGTERM mid-wave, then again: it continues, and re-updates no node already back', async () => {
  const { sim, updated, untouched, reboots } = await afterTwoWaves();
  const { plan, replan } = await rollbackOf(sim);
  assert.is(plan.pools[0].waves.length, 2);
  const cordons = sim.cordons.length;
  const stop = new AbortController();
  let backs = 0;
  const first = await runApply(sim, plan, replan, {
    signal: stop.signal,
    onEventHook: (e) => {
      if (e.type === 'reboot' && ++backs === 3) stop.abort('SIGTERM');
    },
  });
  assert.is(first.code, 143, String(first.error));
  const back = updated.filter((n) => sim.get('BootcNode', n)!.status?.booted?.image === OLD);
  assert.ok(back.length >= 2 && back.length < 4, `stopped mid-wave 2 with ${back.length} nodes back`);
  await inDir(dir, async () => {
    writeFileSync(join(dir, 'rollback.json'), planFileText(plan));
    const again = await cli(['apply', 'rollback.json'], onSim(sim));
    assert.is(again.code, 0, again.err + again.out);
  });
  assertRolledBack(sim, updated, untouched, reboots, cordons);
  await assertHeld(sim);
});

t("SIGINT during the rollback's staging, then the same plan again: it continues from the start, nothing rebooted twice", async () => {
  const { sim, updated, untouched, reboots } = await afterTwoWaves();
  const { plan, replan } = await rollbackOf(sim);
  const cordons = sim.cordons.length;
  const stop = new AbortController();
  const first = await runApply(sim, plan, replan, {
    signal: stop.signal,
    onEventHook: (e) => {
      if (e.type === 'change') stop.abort('SIGINT');
    },
  });
  assert.is(first.code, 130, String(first.error));
  const again = await runApply(sim, plan, replan);
  assert.is(again.code, 0, String(again.error));
  assert.ok(again.result!.resumed);
  assertRolledBack(sim, updated, untouched, reboots, cordons);
  await assertHeld(sim);
});

t("killed mid-rollback, then plan --rollback again: planned from the rollback's own record and the cluster; it finishes", async () => {
  const { sim, fwd, updated, untouched, reboots } = await afterTwoWaves();
  const first = await rollbackOf(sim);
  const cordons = sim.cordons.length;
  let cordoned = 0;
  const killed = await runApply(sim, first.plan, first.replan, {
    onEventHook: (e, d) => {
      if (e.type === 'cordon' && ++cordoned === 3) d.kill();
    },
  });
  assert.is((killed.error as Error).name, 'KilledError');
  const back = updated.filter((n) => sim.get('BootcNode', n)!.status?.booted?.image === OLD);
  const midway = updated.filter((n) => !back.includes(n) && nodeProgressOf(sim.get('Node', n))?.planId === first.plan.id);
  assert.is(back.length, 2, 'the first rollback wave is back');
  assert.is(midway.length, 1, 'one node cordoned by the killed rollback');

  const cont = await rollbackOf(sim);
  const r = cont.plan.rollback!;
  assert.is(cont.plan.summary.errors, 0, JSON.stringify(cont.plan.diagnostics));
  assert.is(r.of.planId, fwd.plan.id, 'it still reverses the forward plan');
  assert.equal(r.of.run.planIds, [fwd.plan.id]);
  assert.equal(r.source.targets, first.plan.rollback!.source.targets, "the run's image is still what it goes back from");
  assert.equal(r.source.origins, first.plan.rollback!.source.origins, "the origins are the forward run's");
  assert.equal(r.continues, [first.plan.id]);
  assert.equal(
    cont.plan.pools[0].nodes.map((n) => n.name).sort(),
    updated.filter((n) => !back.includes(n)).sort(),
    'the nodes still to go back, the one mid-way included',
  );
  assert.is(cont.plan.pools[0].targetImage, OLD, 'back to the origin, never forward');
  assert.equal(
    cont.plan.changes.map((c) => [c.address, c.action]),
    [['BootcNodePool/worker', 'noop']],
  );

  const done = await runApply(sim, cont.plan, cont.replan, { lockTimeoutSeconds: 400 });
  assert.is(done.code, 0, String((done.error as Error)?.stack ?? done.error));
  assertRolledBack(sim, updated, untouched, reboots, cordons);
  await assertHeld(sim);
  const rec = (await sim.driver().readProgress()).run!;
  assert.is(rec.rollbackOf?.planId, fwd.plan.id);
  assert.equal(rec.run?.planIds, [first.plan.id, cont.plan.id], 'one rollback, continued: its plan ids');

  // Finished: a rollback of it would roll the pool forward to the image that failed.
  const after = rollbackInputOf(rec, 'run');
  assert.ok('refused' in after);
  assert.match(after.refused, /the latest run is itself a rollback \(of plan \w+\), and it finished: nothing to roll back/);
});

t('a rollback of the rollback never happens: planned while it is in flight, the continuation still goes back to the origin', async () => {
  const { sim, fwd } = await afterTwoWaves();
  const first = await rollbackOf(sim);
  let cordoned = 0;
  await runApply(sim, first.plan, first.replan, {
    onEventHook: (e, d) => {
      if (e.type === 'cordon' && ++cordoned === 1) d.kill();
    },
  });
  const cont = await rollbackOf(sim);
  // Every node of it goes to OLD; none of them to the run's image.
  for (const n of cont.plan.pools[0].nodes) assert.is(n.to, OLD.slice(OLD.indexOf('@') + 1), n.name);
  // Killed again before it wrote anything: a third plan still continues the same rollback.
  const killed = await runApply(sim, cont.plan, cont.replan, {
    lockTimeoutSeconds: 400,
    onEventHook: (e, d) => {
      if (e.type === 'start') d.kill();
    },
  });
  assert.is((killed.error as Error).name, 'KilledError');
  const third = await rollbackOf(sim);
  assert.is(third.plan.rollback!.of.planId, fwd.plan.id);
  assert.is(third.plan.pools[0].targetImage, OLD);
});

t('killed right after a rollback reboot request, the node back by the rerun: the same plan again is not stale, the node is uncordoned', async () => {
  const { sim, updated, untouched, reboots } = await afterTwoWaves();
  const { plan, replan } = await rollbackOf(sim);
  const cordons = sim.cordons.length;
  const killed = await runApply(sim, plan, replan, {
    onEventHook: (e, d) => {
      if (e.type === 'reboot') d.kill();
    },
  });
  assert.is((killed.error as Error).name, 'KilledError');
  // The lock's 300 s pass before the rerun takes it: the node boots its origin by then, still cordoned.
  const again = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 });
  assert.is(again.code, 0, String(again.error));
  assertRolledBack(sim, updated, untouched, reboots, cordons);
  await assertHeld(sim);
});

t(
  'MCO: a rollback stopped mid-wave, then plan --rollback: the node the MCO moves back and the ones left are scheduled, none left out for budget; the pool ends unpaused',
  async () => {
    const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 4)).snapshot();
    const fwd = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 1 }]), snap);
    const sim = newSim(snap);
    for (let i = 0; i < 4; i++) assert.is(await stepOnce(sim, fwd.plan, fwd.replan), i < 3 ? 'stepped' : 'done');
    const first = await rollbackOf(sim);
    assert.is(first.plan.pools[0].waves.length, 4);
    const stop = new AbortController();
    let rebooted = 0;
    const r = await runApply(sim, first.plan, first.replan, {
      signal: stop.signal,
      onEventHook: (e) => {
        if (e.type === 'reboot' && ++rebooted === 3) stop.abort('SIGTERM');
      },
    });
    assert.is(r.code, 143, String(r.error));
    const cont = await rollbackOf(sim);
    const [pool] = cont.plan.pools;
    assert.ok(pool.nodes.length >= 2, JSON.stringify(pool.nodes));
    for (const n of pool.nodes) assert.ok(n.wave !== null, `${n.name} is listed and not scheduled (${n.blockedBy})`);
    const done = await runApply(sim, cont.plan, cont.replan);
    assert.is(done.code, 0, String(done.error));
    for (const n of nodes('i', 4))
      assert.is(sim.get('Node', n.name)!.metadata.annotations!['machineconfiguration.openshift.io/currentConfig'], 'rendered-infra-0001', n.name);
    assert.is(sim.get('MachineConfigPool', 'infra')!.spec?.paused, false, 'left as the spec wants it');
    for (const [n, k] of sim.rebootCounts()) assert.is(k, 2, `${n}: once forward, once back`);
  },
);

t(
  'MCO: the MCO finished the node while the stopped rollback had the pool paused: the continued rollback has no wave there and still leaves the pool as the spec wants it',
  async () => {
    const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 1)).snapshot();
    const fwd = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 1 }]), snap);
    const sim = newSim(snap);
    assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'done');
    const first = await rollbackOf(sim);
    const stop = new AbortController();
    const r = await runApply(sim, first.plan, first.replan, {
      signal: stop.signal,
      onEventHook: (e) => {
        if (e.type === 'reboot') stop.abort('SIGTERM');
      },
    });
    assert.is(r.code, 143, String(r.error));
    assert.is(sim.get('MachineConfigPool', 'infra')!.spec?.paused, true, 'paused again by the stop');
    sim.advance(3600); // the MCO finishes the node it started
    const cont = await rollbackOf(sim);
    assert.equal(cont.plan.pools[0].waves, []);
    assert.is((await runApply(sim, cont.plan, cont.replan)).code, 0);
    assert.is(sim.get('Node', 'i-00')!.metadata.annotations!['machineconfiguration.openshift.io/currentConfig'], 'rendered-infra-0001');
    assert.is(sim.get('MachineConfigPool', 'infra')!.spec?.paused, false, 'not left paused by the stopped rollback');
  },
);

t(
  'a node of the pool out of service when the rollback is planned uses up the budget: every node is still scheduled, the rollback waits at its cordon and halts saying why, never ends done with nodes left',
  async () => {
    const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
    const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), snap);
    const sim = newSim(snap);
    assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
    assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
    const updated = WORKERS.slice(0, 6).filter((n) => sim.get('BootcNode', n)!.status?.booted?.imageDigest === NEW_DIGEST);
    assert.is(updated.length, 2);
    const other = WORKERS.slice(0, 6).find((n) => !updated.includes(n))!;
    sim.adminCordon(other, true); // an administrator's maintenance on a node the run did not touch
    const { plan, replan } = await rollbackOf(sim);
    assert.equal(plan.pools[0].nodes.map((n) => [n.name, n.wave !== null]).sort(), updated.map((n) => [n, true]).sort(), 'listed and scheduled');
    const held = await runApply(sim, plan, replan, { timeouts: { budgetSeconds: 600 } });
    assert.is(held.code, 5, String(held.error));
    assert.match((held.error as Error).message, /budget|maxUnavailable|out of service/);
    for (const n of updated) assert.is(sim.get('BootcNode', n)!.status?.booted?.imageDigest, NEW_DIGEST, `${n} waits`);
    // Maintenance over: the same plan again finishes, within the budget.
    sim.adminCordon(other, false);
    const cordons = sim.cordons.length;
    const done = await runApply(sim, plan, replan);
    assert.is(done.code, 0, String(done.error));
    for (const n of updated) assert.is(sim.get('BootcNode', n)!.status?.booted?.image, OLD, n);
    for (const c of sim.cordons.slice(cordons)) assert.ok(c.unavailableAfter <= 1, `${c.node}: ${c.unavailableAfter} out of service`);
  },
);

t(
  'onFailure: rollback stopped half way: exit 143, status says the rollback is incomplete, the forward plan is held, plan --rollback continues it',
  async () => {
    const D = { stage: 600, drain: 60, reboot: 300, softReboot: 30, ready: 30 };
    const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 8)).snapshot();
    const check = { name: 'alerts', alerts: { matchers: ['severity="critical"'] }, intervalSeconds: 10, successes: 1, onFailure: 'rollback', scope: 'run' };
    const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }], { healthChecks: [check] }), snap, D);
    const sim = newSim(snap, { durations: D });
    const stop = new AbortController();
    let rolled = 0;
    const failing = new SimHealthSource({ failChecks: [parseFailCheck('alerts@worker:wave=2') as FailCheckRule] });
    const r = await runApply(sim, fwd.plan, fwd.replan, {
      signal: stop.signal,
      health: failing,
      onEventHook: (e) => {
        if (e.type === 'uncordon' && e.rollback && ++rolled === 2) stop.abort('SIGTERM');
      },
    });
    assert.is(r.code, 143, String(r.error));
    const updated = WORKERS.filter((n) => (sim.rebootCounts().get(n) ?? 0) >= 1);
    const untouched = WORKERS.filter((n) => !updated.includes(n));
    assert.is(updated.length, 4);
    const st = await sim.driver().readProgress();
    const text = renderStatus(null, false, st);
    assert.match(text, /INCOMPLETE/);
    assert.match(text, /bootcplan plan --rollback/);
    assert.match(
      text,
      /stopped by SIGTERM at .*; plan --rollback \(or its plan file applied again\) continues it/,
      'where the rollback stopped is in its own record',
    );
    assert.match((r.error as Error).message, /of the rollback: .*bootcplan plan --rollback plans the rest of it/);
    // The CronJob's next run of the forward plan: held, nothing written.
    const cordons = sim.cordons.length;
    const held = await runApply(sim, fwd.plan, fwd.replan, { step: true, health: new SimHealthSource() });
    assert.instance(held.error, HeldTargetError);
    assert.is(sim.cordons.length, cordons);
    // plan --rollback continues the rollback the apply started.
    const cont = await rollbackOf(sim);
    assert.is(cont.plan.rollback!.of.planId, fwd.plan.id);
    assert.is(cont.plan.rollback!.trigger.check, 'alerts');
    assert.equal(
      cont.plan.pools[0].nodes.map((n) => n.name).sort(),
      updated.filter((n) => sim.get('BootcNode', n)!.status?.booted?.imageDigest === NEW_DIGEST).sort(),
    );
    const done = await runApply(sim, cont.plan, cont.replan);
    assert.is(done.code, 0, String((done.error as Error)?.stack ?? done.error));
    for (const n of updated) assert.is(sim.get('BootcNode', n)!.status?.booted?.image, OLD, n);
    for (const n of untouched) assert.is(sim.rebootCounts().get(n) ?? 0, 0, n);
    for (const [n, k] of sim.rebootCounts()) assert.ok(k <= 2, `${n} rebooted ${k} times`);
    const rec = (await sim.driver().readProgress()).run!;
    assert.equal(
      rec.holds?.map((h) => [h.pool, h.target, h.action, h.check]),
      [['worker', NEW_DIGEST, 'rolled-back', 'alerts']],
    );
    assert.match(renderStatus(null, false, await sim.driver().readProgress()), /: done/);
  },
);

t.run();
