/**
 * The rollback guarantees (docs/apply.md "Rollback", "Continuing a rollback") against the cases a
 * review found: each test states what a user relies on, and each failed before its fix.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { stepOnce, rollbackOf } from '../../support/rollback.ts';
import { nodeProgressOf } from '../../../src/cluster/progress.ts';
import { planRollback, rollbackInputOfSnapshot } from '../../../src/plan/rollback-planner.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';

/** Someone with write access to the namespace edits one field of run.json. */
function editRunRecord(sim: SimCluster, edit: (r: Record<string, unknown>) => void) {
  const cm = sim.get('ConfigMap', 'bootcplan-progress', 'openshift-bootcplan')!;
  const r = JSON.parse(cm.data!['run.json']) as Record<string, unknown>;
  edit(r);
  cm.data!['run.json'] = JSON.stringify(r);
}

/** Eight bootc workers, maxUnavailable 2, two waves of the run done. */
async function afterTwoWaves() {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 8)).snapshot();
  const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  return { sim, fwd };
}

const t = suite('rollback guarantees: what a review found');

t('a forward run killed after a reboot request: plan --rollback takes back the node the run rebooted onto its image', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).snapshot();
  const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  // Wave 2: killed (SIGKILL, a Job's deadline) right after its node was asked to reboot.
  let victim = '';
  const killed = await runApply(sim, fwd.plan, fwd.replan, {
    step: true,
    onEventHook: (e, d) => {
      if (e.type === 'reboot') {
        victim = e.node;
        d.kill();
      }
    },
  });
  assert.is((killed.error as Error).name, 'KilledError', String(killed.error));
  sim.advance(900); // the node boots the run's image meanwhile
  assert.is(sim.get('BootcNode', victim)!.status?.booted?.imageDigest, NEW_DIGEST, `${victim} drained and rebooted onto the run's image`);
  const e = nodeProgressOf(sim.get('Node', victim));
  assert.is(e?.planId, fwd.plan.id, "its entry is the run's");

  const { plan, replan } = await rollbackOf(sim);
  assert.is(plan.summary.errors, 0, JSON.stringify(plan.diagnostics));
  // Cause: the Node's entry stays at step cordon through drain and reboot (bootc-node.ts writes
  // it only at the cordon, on failure and when done), and src/domain/rollback.ts UPDATED_STEPS
  // leaves cordon out, so the node counts as one the run did not update (stages-origin).
  const listed = plan.pools[0]?.nodes.map((n) => n.name) ?? [];
  const first = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 });
  // What the user sees: the node, still cordoned by the run and not the rollback's, uses up the
  // budget: the rollback halts (exit 5). Uncordoning it by hand, the same plan then ends done.
  if (first.code !== 0) {
    sim.adminCordon(victim, false);
    const again = await runApply(sim, plan, replan);
    assert.is(again.code, 0, String(again.error));
  }
  assert.ok((await sim.driver().readProgress()).run!.done, "the rollback's record says done");
  assert.is(
    sim.get('BootcNode', victim)!.status?.booted?.image,
    OLD,
    `${victim} (drained and rebooted by the run, entry step ${e?.step}) back on the image it booted after the rollback ended done; the plan listed ${JSON.stringify(listed)}, leftovers ${JSON.stringify(plan.rollback!.leftovers)}; first apply: ${String(first.error)}`,
  );
});

t('a forward run stopped by SIGTERM while a node reboots: the rollback that follows takes that node back too', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).snapshot();
  const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  let victim = '';
  const stop = new AbortController();
  const stopped = await runApply(sim, fwd.plan, fwd.replan, {
    step: true,
    signal: stop.signal,
    onEventHook: (e) => {
      if (e.type === 'reboot') {
        victim = e.node;
        stop.abort('SIGTERM');
      }
    },
  });
  assert.is(stopped.code, 143, String(stopped.error));
  sim.advance(900);
  assert.is(sim.get('BootcNode', victim)!.status?.booted?.imageDigest, NEW_DIGEST, `${victim} rebooted onto the run's image`);
  const step = nodeProgressOf(sim.get('Node', victim))?.step;
  const { plan } = await rollbackOf(sim);
  assert.is(plan.summary.errors, 0, JSON.stringify(plan.diagnostics));
  const listed = plan.pools[0]?.nodes.map((n) => n.name) ?? [];
  assert.ok(
    listed.includes(victim),
    `${victim} (drained and rebooted by the run, entry step ${step}) goes back; the plan lists ${JSON.stringify(listed)}, leftovers ${JSON.stringify(plan.rollback!.leftovers)}`,
  );
});

t('a run record whose startedAt was edited to a non-time is refused by plan --rollback, naming the field', async () => {
  const { sim } = await afterTwoWaves();
  editRunRecord(sim, (r) => (r.startedAt = 'last tuesday'));
  const input = rollbackInputOfSnapshot(sim.snapshotCopy(), 'run');
  // Cause: src/cluster/run-record.ts decodeRunRecord checks planId, startedAt, updatedAt only as
  // strings (line 37); the rollback's own record then carries them into fields it checks
  // strictly (rollbackOf.startedAt isTime, rollbackOf.planId isPlanId, trigger.at isTime).
  assert.ok('refused' in input, `planned from an edited record: of.startedAt ${'refused' in input ? '' : JSON.stringify(input.of.startedAt)}`);
});

t('a run record edited to a non-time is refused where it is read (apply, plan --rollback), naming the field', async () => {
  const { sim } = await afterTwoWaves();
  editRunRecord(sim, (r) => (r.startedAt = 'last tuesday'));
  const refused = await sim
    .driver()
    .readProgress()
    .then(
      () => null,
      (err: Error) => err.message,
    );
  assert.match(refused ?? 'read without a word', /run\.json has no startedAt that is a time/);
});

t('a halt reason longer than a trigger keeps: the rollback made from it stops and resumes', async () => {
  const { sim } = await afterTwoWaves();
  editRunRecord(sim, (r) => {
    const pools = r.pools as Record<string, Record<string, unknown>>;
    pools.worker.halted = { node: null, reason: `Degraded: ${'x'.repeat(4000)}` };
  });
  const { plan, replan } = await rollbackOf(sim);
  assert.ok((plan.rollback?.trigger.observed ?? '').length <= 1024, 'the trigger keeps at most 1,024 characters of it');
  const stop = new AbortController();
  const first = await runApply(sim, plan, replan, {
    signal: stop.signal,
    onEventHook: (e) => {
      if (e.type === 'reboot') stop.abort('SIGTERM');
    },
  });
  assert.is(first.code, 143, String(first.error));
  const again = await runApply(sim, plan, replan);
  assert.is(again.code, 0, `the same rollback plan again: ${String(again.error)}`);
});

t("MCO: bootcplan's MachineConfig carries a third image since the run: plan --rollback refuses (rollback-pool-moved), as for a bootc pool", async () => {
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 4)).snapshot();
  const fwd = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  const input = rollbackInputOfSnapshot(sim.snapshotCopy(), 'run');
  if ('refused' in input) throw new Error(input.refused);
  // Someone points bootcplan's MachineConfig at another image (a hotfix) after the run.
  const third = OLD.replace(/@.*/, '@sha256:' + 'e'.repeat(64));
  const s = sim.snapshotCopy();
  s.machineConfigs.find((m) => m.metadata.name === '99-infra-zz-bootcplan-os-image')!.spec!.osImageURL = third;
  const plan = planRollback(input, s);
  // docs/apply.md "MCO pools": deleted only "after checking it still carries the run's image";
  // "rollback-pool-moved (someone changed the pool's image or bootcplan's MachineConfig since the
  // run)". Cause: src/plan/rollback-mco-pool.ts mcoChange (line 89 on) never compares the
  // MachineConfig's osImageURL with the run's target (mcoPoolRollback is not even passed it).
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code),
    ['rollback-pool-moved'],
    `planned instead: ${JSON.stringify(plan.changes.map((c) => [c.address, c.action, c.patch]))}`,
  );
});

t('scope wave after a bootc wave failed: an MCO pool the run finished earlier is not rolled back', async () => {
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 2)).bootcPool('worker', nodes('w', 4)).snapshot();
  const fwd = planWith(
    specYaml([
      { name: 'infra', image: NEW, maxUnavailable: 2 },
      { name: 'worker', image: NEW, maxUnavailable: 2 },
    ]),
    snap,
  );
  const sim = newSim(snap);
  const order = fwd.plan.pools
    .slice()
    .sort((a, b) => a.priority - b.priority)
    .map((p) => p.name);
  for (let i = 0; i < 6; i++) {
    const rec = (await sim.driver().readProgress()).run;
    if (rec?.pools.worker?.wavesDone === 1) break;
    assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped', `step ${i} (pools in order ${order.join(', ')})`);
  }
  const rec = (await sim.driver().readProgress()).run!;
  assert.ok(rec.pools.infra.done && rec.pools.worker.wavesDone === 1, JSON.stringify(rec.pools));
  const { plan } = await rollbackOf(sim, 'wave');
  assert.equal(plan.rollback!.source.scopeWave?.pool, 'worker');
  // docs/apply.md "Who goes back": --scope wave takes "only the entries of the wave where the run
  // stopped ..., in that pool". Cause: src/plan/rollback-planner.ts planRollback skips only the
  // other *bootc* pools under scopeWave (origin.kind === 'bootc'), so every MCO pool of the run
  // goes back whole (rollback-scope-widened-mco).
  assert.equal(
    plan.pools.map((p) => p.name),
    ['worker'],
    `rolled back: ${JSON.stringify(plan.pools.map((p) => [p.name, p.nodes.map((n) => n.name)]))}; ${plan.diagnostics.map((d) => d.code).join(', ')}`,
  );
});

t.run();
