/**
 * Properties of a rollback (docs/safety.md "Rollback") on random clusters (fast-check, fixed
 * seed): one or two bootc pools and an MCO pool of random sizes and budgets, nodes out of
 * service on their own, soft reboots, a run stopped after a random number of waves (and reboots
 * that fail at random), then `plan --rollback` and its apply. Whatever happens:
 * - a rollback never has more nodes of a pool out of service than its maxUnavailable;
 * - it never touches a node the run did not update (cordons and reboots only of nodes whose
 *   entry of the run is past its cordon, or, in an MCO pool, on the config the run rendered);
 * - it never sends a node to an image the node did not boot before the run (its `from`);
 * - no node reboots more than twice in the run and its rollback.
 * A machine may join the MCO pool during the run (after its first wave). The MCO moves every node
 * of the pool, so the rollback takes it too, to an image it may never have booted: allowed only
 * when the plan names it in a warning (docs/safety.md "Rollback").
 * A rollback plan may legitimately refuse (an error: a node that would stage an image it never
 * booted, one whose update failed half-way) and a rollback may halt for lack of budget; then it
 * has still done nothing the properties forbid.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { NEW_DIGEST } from '../../support/cluster.ts';
import { runApply } from '../../support/apply.ts';
import { rollbackOf, shapeArb, runForward, updatedByRun, bootedDigest, JOINED, type Shape } from '../../support/rollback.ts';
import { seeded } from '../../support/seeds.ts';
import { digestOf } from '../../../src/domain/nodes.ts';

const t = suite('rollback properties');
async function check(sh: Shape, join: boolean): Promise<void> {
  const sim = await runForward(sh, { join });
  const rec = (await sim.driver().readProgress()).run;
  if (!rec?.run) return; // the run wrote nothing (a halt before its first wave)
  const updated = updatedByRun(sim, new Set(rec.run.planIds));
  let rb;
  try {
    rb = await rollbackOf(sim);
  } catch {
    return; // refused (no origin kept for any pool)
  }
  if (rb.plan.summary.errors) return; // a refusal is a legitimate outcome: nothing was written
  // The joined machine may be taken only when the plan says so.
  const named = rb.plan.diagnostics.some((d) => d.code === 'rollback-mco-joined-during-run' && d.severity === 'warning' && d.message.includes(JOINED));
  const mayTake = (n: string) => updated.has(n) || (n === JOINED && named);
  for (const p of rb.plan.pools)
    for (const n of p.nodes) assert.ok(mayTake(n.name), `${n.name} is in the rollback plan and was not updated by the run (nor named as joined during it)`);
  const cordons = sim.cordons.length;
  const reboots = sim.reboots.length;
  const r = await runApply(sim, rb.plan, rb.replan);
  assert.ok(r.code === 0 || r.code === 5, `rollback ended with exit ${r.code}: ${(r.error as Error)?.message}`);
  for (const c of sim.cordons.slice(cordons)) {
    assert.ok(mayTake(c.node), `the rollback cordoned ${c.node}, which the run did not update`);
    if (!c.wasUnavailable && c.budget !== null)
      assert.ok(c.unavailableAfter <= c.budget, `${c.node}: ${c.unavailableAfter} of pool ${c.pool} out of service, budget ${c.budget}`);
  }
  for (const x of sim.reboots.slice(reboots)) assert.ok(mayTake(x.node), `the rollback rebooted ${x.node}, which the run did not update`);
  // Whatever the rollback got to (a halt leaves nodes on the run's image): every node updated by
  // the run boots the run's image or the one it booted before, never a third.
  for (const [name, from] of updated) {
    const now = bootedDigest(sim, name);
    assert.ok(now === digestOf(from) || now === NEW_DIGEST, `${name} boots ${now}: neither the run's image nor the one it booted before (${from})`);
  }
  if (!sh.failRate) for (const [n, k] of sim.rebootCounts()) assert.ok(k <= 2, `${n} rebooted ${k} times`);
  if (r.code === 0)
    for (const p of rb.plan.pools) for (const n of p.nodes) if (n.wave !== null) assert.is(bootedDigest(sim, n.name), n.to, `${n.name} is not back`);
}

t('a rollback stays within the budget, touches only nodes the run updated, and returns each to the image it booted', async () => {
  await fc.assert(fc.asyncProperty(shapeArb, fc.boolean(), check), seeded(2612, 40));
});

t.run();
