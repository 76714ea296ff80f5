/**
 * A rollback stopped at ANY await point, then continued (docs/apply.md "Continuing a
 * rollback"), as a fast-check property with a fixed seed, on the random clusters of
 * test/apply/gates/rollback-properties.test.ts (one or two bootc pools and an MCO pool, random sizes,
 * budgets, administrators' cordons, soft reboots, a run stopped after a random number of waves).
 * The rollback's apply is stopped when its k-th awaited driver or clock call starts (k drawn over
 * the whole rollback) by SIGTERM, SIGINT, or a kill (no clean-up: the process is gone), and then
 * continued either by applying the same rollback plan again or by a fresh `plan --rollback`.
 * Whatever happens:
 * - every node the run updated ends on the image it booted before, and no cordon of bootcplan's is left;
 * - no node of a pool is cordoned beyond its maxUnavailable;
 * - no node the run did not update is cordoned or rebooted;
 * - no node reboots more than twice in the run and its rollback (once forward, once back).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { runApply } from '../../support/apply.ts';
import { rollbackOf, shapeArb, runForward, updatedByRun, bootedDigest, type Shape } from '../../support/rollback.ts';
import { stoppingAt } from '../../support/stop-drivers.ts';
import { seeded } from '../../support/seeds.ts';
import { digestOf } from '../../../src/domain/nodes.ts';
import { BOOTCPLAN_CORDONED_BY } from '../../../src/domain/labels.ts';
import { apply } from '../../../src/apply/applier.ts';
import { exitCodeOf } from '../../../src/base/errors.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';
import type { Plan } from '../../../src/plan/types.ts';
import type { ClusterSnapshot } from '../../../src/cluster/types.ts';

const t = suite('rollback properties: stopped and continued');

type Stop = 'SIGTERM' | 'SIGINT' | 'kill';
type Resume = 'same-plan' | 'plan-again';
const stats = { cases: 0, noRollback: 0, stopped: 0, finishedFirst: 0, continued: 0 };

/** The rollback's apply, its k-th awaited call stopping it (0: never); the number of calls it made. */
async function rollbackRun(
  sim: SimCluster,
  plan: Plan,
  replan: (s: ClusterSnapshot) => Plan,
  k: number,
  stop: Stop,
): Promise<{ code: number; calls: number; error: unknown }> {
  const raw = sim.driver('rollback');
  const signal = new AbortController();
  const { driver, count } = stoppingAt(raw, k, () => (stop === 'kill' ? raw.kill() : signal.abort(stop)));
  try {
    await apply({ plan, replan, driver, holder: 'test@rollback', signal: signal.signal });
    return { code: 0, calls: count(), error: null };
  } catch (error) {
    return { code: exitCodeOf(error), calls: count(), error };
  }
}

async function check(raw: Shape, at: number, stop: Stop, resume: Resume): Promise<void> {
  const sh = { ...raw, failRate: 0 }; // no failed reboots: a continued rollback must finish
  const dry = await runForward(sh);
  const rec = (await dry.driver().readProgress()).run;
  stats.cases++;
  if (!rec?.run) return void stats.noRollback++;
  let rb;
  try {
    rb = await rollbackOf(dry);
  } catch {
    return void stats.noRollback++; // refused: nothing to stop
  }
  if (rb.plan.summary.errors || !rb.plan.summary.nodes) return void stats.noRollback++;
  const whole = await rollbackRun(dry, rb.plan, rb.replan, 0, 'SIGTERM');
  if (whole.code !== 0) return void stats.noRollback++; // a rollback that halts on its own (budget) is the other property's
  const k = 1 + Math.floor(at * whole.calls);

  const sim = await runForward(sh);
  const first = await rollbackOf(sim);
  assert.is(first.plan.id, rb.plan.id, 'the simulator is deterministic');
  const updated = updatedByRun(sim, new Set(rec.run.planIds));
  const [cordons, reboots] = [sim.cordons.length, sim.reboots.length];
  const why = `k=${k}/${whole.calls} ${stop} then ${resume}: ${JSON.stringify(sh)}`;
  const stopped = await rollbackRun(sim, first.plan, first.replan, k, stop);
  const expected = stop === 'kill' ? 1 : stop === 'SIGINT' ? 130 : 143;
  assert.ok(stopped.code === 0 || stopped.code === expected, `stopped: exit ${stopped.code} ${(stopped.error as Error)?.message}: ${why}`);
  if (stopped.code) stats.stopped++;
  else stats.finishedFirst++;

  const lock = stop === 'kill' ? { lockTimeoutSeconds: 400 } : {};
  const after = (await sim.driver().readProgress()).run!;
  const done = !!after.rollbackOf && after.done; // the stop came after its last step
  if (resume === 'same-plan') {
    const again = await runApply(sim, first.plan, first.replan, lock);
    assert.is(again.code, 0, `same plan again: ${(again.error as Error | undefined)?.stack ?? String(again.error)}: ${why}`);
  } else if (done) {
    let refused = '';
    await rollbackOf(sim).catch((e: Error) => (refused = e.message));
    assert.match(refused, /and it finished: nothing to roll back/, why);
  } else {
    const cont = await rollbackOf(sim);
    assert.is(cont.plan.summary.errors, 0, `plan --rollback again: ${JSON.stringify(cont.plan.diagnostics)}: ${why}`);
    for (const p of cont.plan.pools)
      for (const n of p.nodes) assert.ok(updated.has(n.name), `${n.name} is in the continued plan and was not updated by the run: ${why}`);
    if ((cont.plan.rollback!.continues ?? []).length) stats.continued++;
    const again = await runApply(sim, cont.plan, cont.replan, lock);
    assert.is(again.code, 0, `plan --rollback again, applied: ${(again.error as Error | undefined)?.stack ?? String(again.error)}: ${why}`);
  }

  for (const c of sim.cordons.slice(cordons)) {
    assert.ok(updated.has(c.node), `the rollback cordoned ${c.node}, which the run did not update: ${why}`);
    if (!c.wasUnavailable && c.budget !== null)
      assert.ok(c.unavailableAfter <= c.budget, `${c.node}: ${c.unavailableAfter} of pool ${c.pool} out of service, budget ${c.budget}: ${why}`);
  }
  for (const x of sim.reboots.slice(reboots)) assert.ok(updated.has(x.node), `the rollback rebooted ${x.node}, which the run did not update: ${why}`);
  for (const [n, count] of sim.rebootCounts()) assert.ok(count <= 2, `${n} rebooted ${count} times: ${why}`);
  for (const [name, from] of updated) {
    assert.is(bootedDigest(sim, name), digestOf(from), `${name} is not back on the image it booted: ${why}`);
  }
  // No cordon of bootcplan's is left (an MCO pool's nodes are the MCD's to uncordon: it does once they are Ready).
  for (const [name, node] of sim.nodes)
    assert.not.ok(node.spec?.unschedulable && node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], `${name} is left cordoned by bootcplan: ${why}`);
}

t('a rollback stopped at any await point and continued ends with every updated node back, within the budget, touching no other node', async () => {
  await fc.assert(
    fc.asyncProperty(
      shapeArb,
      fc.integer({ min: 0, max: 999 }).map((x) => x / 1000), // doubles lean to 0 and the first call
      fc.constantFrom<Stop>('SIGTERM', 'SIGINT', 'kill'),
      fc.constantFrom<Resume>('same-plan', 'plan-again'),
      check,
    ),
    { ...seeded(2614, 30), includeErrorInReport: true },
  );
  if (process.env.FC_RUNS) console.log(`\n  ${JSON.stringify(stats)}`);
});

t.run();
