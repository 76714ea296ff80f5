/**
 * docs/safety.md rule 8: the staging gate. With a tag (allowTags: true) the target is the digest the
 * BootcNodePool resolved (status.targetDigest); until then the plan says so and schedules no
 * node. The gate requires the BootcNode to ask for the target; the staging limit runs from a
 * recorded staging attempt, and a node that never started staging is reported as such.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, OLD, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { simResolve } from '../../../src/sim/bootc-operator.ts';
import { RolloutHaltedError } from '../../../src/base/errors.ts';

const s = suite('staging-gate');

const TAG = 'quay.io/example/os:4.22';
const TAG_DIGEST = simResolve(TAG);
const QUICK = { stage: 100, drain: 10, reboot: 50, softReboot: 10, ready: 0 };
const tagSpec = (extra: Record<string, unknown> = {}) => specYaml([{ name: 'worker', image: TAG, allowTags: true, maxUnavailable: 1, ...extra }]);

s('plan: a tag the BootcNodePool resolved is planned as its digest (status.targetDigest)', () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 3), { tag: TAG }).snapshot();
  const plan = planFor(tagSpec(), snap);
  const pool = plan.pools[0];
  assert.is(pool.targetDigest, TAG_DIGEST);
  assert.is(pool.waves.length, 3);
  assert.ok(pool.nodes.every((n) => n.to === TAG_DIGEST && n.blockedBy === null));
  const d = plan.diagnostics.find((x) => x.code === 'image-tag')!;
  assert.match(d.message, new RegExp(`resolved it to ${TAG_DIGEST}`));
});

s("plan: a tag not resolved yet (the pool asks for another image) holds the nodes back, with a diagnostic at the pool's image", () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 3)).snapshot(); // spec.image.ref is OLD (a digest)
  const plan = planFor(tagSpec(), snap);
  const pool = plan.pools[0];
  assert.is(pool.targetDigest, null);
  assert.equal(pool.waves, []);
  assert.ok(
    pool.nodes.every((n) => n.blockedBy === 'tag-unresolved'),
    JSON.stringify(pool.nodes.map((n) => n.blockedBy)),
  );
  const d = plan.diagnostics.find((x) => x.code === 'image-tag-unresolved')!;
  assert.ok(d, JSON.stringify(plan.diagnostics.map((x) => x.code)));
  assert.equal([d.path, d.line, d.column], ['spec.pools[0].image', 8, 14]);
  assert.match(d.message, /has not resolved/);
  assert.match(d.hint!, /status\.targetDigest/);
  // The pool's image is still set by the plan: the operator resolves the tag then.
  assert.ok(plan.changes.some((c) => c.kind === 'BootcNodePool' && c.reason === 'pool-image'));
});

s('plan: the pool asks for the tag but has no status.targetDigest yet, or a status of an older generation: not resolved', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 2), { tag: TAG, tagUnresolved: true });
  assert.ok(planFor(tagSpec(), b.snapshot()).pools[0].nodes.every((n) => n.blockedBy === 'tag-unresolved'));
  const b2 = new ClusterBuilder().bootcPool('worker', nodes('w', 2), { tag: TAG });
  b2.object('BootcNodePool', 'worker').status.observedGeneration = 3; // generation 4
  const plan = planFor(tagSpec(), b2.snapshot());
  assert.ok(plan.pools[0].nodes.every((n) => n.blockedBy === 'tag-unresolved'));
  assert.match(plan.diagnostics.find((x) => x.code === 'image-tag-unresolved')!.message, /generation 3/);
});

s('rehearsal: a tag-pinned pool passes the staging gate; each node is staged, then rebooted, into the resolved digest', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 3), { tag: TAG }).snapshot();
  const { plan, replan } = planWith(tagSpec(), snap, QUICK);
  const sim = newSim(snap, { durations: QUICK });
  const r = await runApply(sim, plan, replan);
  assert.is(r.error, null, String((r.error as Error)?.stack));
  for (const n of ['w-00', 'w-01', 'w-02']) {
    const types = r.events.filter((e) => 'node' in e && e.node === n).map((e) => e.type);
    assert.equal(types, ['stage-start', 'staged', 'cordon', 'drain-done', 'reboot', 'booted', 'uncordon'], n);
    assert.is(sim.get('BootcNode', n)!.status!.booted!.imageDigest, TAG_DIGEST);
  }
  assert.is(sim.reboots.length, 3);
});

s(
  'rehearsal: from a digest to a tag: the first apply sets the image (nodes stage, none reboots), the operator resolves it, the next plan rolls the nodes',
  async () => {
    const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
    const first = planWith(tagSpec(), snap, QUICK);
    assert.equal(first.plan.pools[0].waves, []);
    const sim = newSim(snap, { durations: QUICK });
    const r1 = await runApply(sim, first.plan, first.replan);
    assert.is(r1.error, null, String((r1.error as Error)?.stack));
    assert.is(sim.reboots.length, 0);
    assert.is(sim.get('BootcNodePool', 'worker')!.status!.targetDigest, TAG_DIGEST);
    const second = planWith(tagSpec(), sim.view(), QUICK);
    assert.is(second.plan.pools[0].targetDigest, TAG_DIGEST);
    assert.is(second.plan.pools[0].waves.length, 2);
    const r2 = await runApply(sim, second.plan, second.replan);
    assert.is(r2.error, null, String((r2.error as Error)?.stack));
    assert.is(sim.reboots.length, 2);
  },
);

s('a node whose BootcNode never asks for the target is reported as "never started staging", not "staging active for more than 10m"', async () => {
  // The pool already asks for NEW; the bootc-operator handed it to every node but w-01.
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3), { image: NEW });
  for (const n of ['w-00', 'w-02']) b.object('BootcNode', n).spec.desiredImage = NEW;
  b.object('BootcNode', 'w-01').spec.desiredImage = OLD;
  const snap = b.snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }]), snap, QUICK);
  const sim = newSim(snap, { durations: QUICK });
  const r = await runApply(sim, plan, replan);
  assert.instance(r.error, RolloutHaltedError);
  assert.is(r.code, 5);
  const failed = r.events.find((e) => e.type === 'node-failed');
  assert.ok(failed && failed.type === 'node-failed' && failed.node === 'w-01');
  if (failed?.type !== 'node-failed') return;
  assert.match(failed.message, /^never started staging: its BootcNode's spec\.desiredImage is .*, not the target sha256:/);
  assert.not.match((r.error as Error).message, /staging active/);
  assert.match((r.error as Error).message, /never started staging within 10 minutes: w-01/);
  assert.is(sim.reboots.length, 0, 'the gate held the wave');
});

s.run();
