/**
 * The rollback planner's rules (docs/apply.md "Rollback"; src/domain/rollback.ts): who goes
 * back, what it refuses (a plan error, never a silent skip), what it reports, and that a
 * rollback plan is sealed like any plan and re-planned from its own sealed section.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, nodes } from '../support/cluster.ts';
import { planWith, newSim } from '../support/apply.ts';
import { stepOnce, rollbackOf } from '../support/rollback.ts';
import { planRollback, rollbackInputOf, rollbackInputOfPlan } from '../../src/plan/rollback-planner.ts';
import { tamperedId } from '../../src/plan/saved/seal.ts';
import { decisionDifference } from '../../src/plan/saved/compare.ts';
import { parsePlanFile } from '../../src/plan/saved/reader.ts';
import { planFileText as renderJson } from '../../src/plan/saved/writer.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { BOOTCPLAN_PROGRESS } from '../../src/cluster/progress.ts';
import { bootcRollbackRole, originImage, bootedPullspec } from '../../src/domain/rollback.ts';
import type { ProgressRecord } from '../../src/cluster/progress.ts';

const t = suite('rollback planner: rules and refusals');
const OLD_DIGEST = OLD.slice(OLD.indexOf('@') + 1);
const OTHER = imageRef('test-other');
const OTHER_DIGEST = OTHER.slice(OTHER.indexOf('@') + 1);

async function afterWaveOne(n = 6, tweak?: (b: ClusterBuilder) => void) {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', n));
  tweak?.(b);
  const snap = b.snapshot();
  const fwd = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  return { sim, fwd, updated: fwd.plan.pools[0].waves[0] };
}

const codes = (p: { diagnostics: { code: string; severity: string }[] }, severity = 'error') =>
  p.diagnostics.filter((d) => d.severity === severity).map((d) => d.code);

t('refused: no record, a record that is itself a rollback, a record without origins', () => {
  const none = rollbackInputOf(null, 'run');
  assert.ok('refused' in none && /no run record/.test(none.refused));
  const base: ProgressRecord = {
    planId: 'a1b2c3d4e5f60718',
    startedAt: 'x',
    updatedAt: 'x',
    changesApplied: true,
    done: true,
    pools: { worker: { wavesDone: 1, done: false } },
  };
  const old = rollbackInputOf(base, 'run');
  assert.ok('refused' in old && /keeps no origins: it was written by a bootcplan without rollbacks/.test(old.refused));
  const rb = rollbackInputOf(
    {
      ...base,
      rollbackOf: {
        planId: 'ffffffffffffffff',
        scope: 'run',
        pool: null,
        wave: null,
        trigger: { kind: 'manual', check: null, observed: null, at: 'x' },
        origins: {},
      },
    },
    'run',
  );
  assert.ok(
    'refused' in rb && /the latest run is itself a rollback \(of plan ffffffffffffffff\)/.test(rb.refused) && /plan the spec to go forward again/.test(rb.hint),
  );
});

t('a pool that started from two images: rollback-mixed-origins, an error (no single image returns every node)', async () => {
  const { sim } = await afterWaveOne(6, (b) => {
    const bn = b.object('BootcNode', 'w-05');
    bn.status.booted = { ...bn.status.booted, image: OTHER, imageDigest: OTHER_DIGEST };
  });
  const { plan } = await rollbackOf(sim);
  assert.equal(codes(plan), ['rollback-mixed-origins']);
  assert.is(plan.pools.length, 0);
  assert.match(plan.diagnostics[0].message, /started the run from 2 different images/);
});

t('a member that boots another image and never booted the origin: rollback-would-stage-unbooted', async () => {
  const { sim } = await afterWaveOne(4);
  // A node joins the pool later, on another image, without bootc's rollback deployment of the origin.
  sim.mutate(({ bootcNodes }) => {
    const bn = bootcNodes.get('w-03')!;
    bn.status!.booted = { ...bn.status!.booted, image: OTHER, imageDigest: OTHER_DIGEST };
    delete bn.status!.staged;
    delete bn.status!.rollback;
  });
  const { plan } = await rollbackOf(sim);
  assert.equal(codes(plan), ['rollback-would-stage-unbooted']);
  assert.match(
    plan.diagnostics.find((d) => d.code === 'rollback-would-stage-unbooted')!.message,
    /w-03 boots neither the run's image nor sha256:.{12}, and never booted/,
  );
  // With bootc's rollback deployment of the origin it did boot it: it stages the origin (a warning).
  sim.mutate(({ bootcNodes }) => {
    bootcNodes.get('w-03')!.status!.rollback = { image: OLD, imageDigest: OLD_DIGEST };
  });
  const again = await rollbackOf(sim);
  assert.equal(codes(again.plan), []);
  assert.ok(again.plan.rollback!.leftovers.some((l) => l.node === 'w-03' && l.what === 'stages-origin'));
});

t('an updated node whose recorded from is another image: rollback-origin-differs', async () => {
  const { sim, updated } = await afterWaveOne(4);
  sim.mutate(({ nodes: all }) => {
    const ann = all.get(updated[0])!.metadata.annotations!;
    ann[BOOTCPLAN_PROGRESS] = JSON.stringify({ ...JSON.parse(ann[BOOTCPLAN_PROGRESS]), from: OTHER });
  });
  const { plan } = await rollbackOf(sim);
  assert.equal(codes(plan), ['rollback-origin-differs']);
  assert.match(plan.diagnostics[0].message, new RegExp(`${updated[0]} booted another image than the pool's origin`));
});

t('a Degraded updated node is left to a human: listed, blocked, not driven; the others go back', async () => {
  const { sim, updated } = await afterWaveOne(4);
  sim.mutate(({ bootcNodes }) => {
    const conds = bootcNodes.get(updated[0])!.status!.conditions!;
    conds.splice(
      conds.findIndex((c: { type: string }) => c.type === 'Degraded'),
      1,
      { type: 'Degraded', status: 'True', reason: 'Test' },
    );
  });
  const { plan } = await rollbackOf(sim);
  assert.equal(codes(plan), []);
  assert.equal(plan.rollback!.excluded, [{ node: updated[0], pool: 'worker', why: 'degraded' }]);
  const n = plan.pools[0].nodes.find((x) => x.name === updated[0])!;
  assert.equal([n.wave, n.blockedBy], [null, 'degraded']);
  assert.equal(plan.pools[0].waves, [[updated[1]]]);
  assert.equal(
    codes(plan, 'warning').filter((c) => c === 'rollback-nodes-excluded'),
    ['rollback-nodes-excluded'],
  );
});

/** A run of two bootc pools, worker then infra, stepped once (wave 1 of worker): infra has the run's image as its pool's image, staged. */
async function twoPoolsAfterWaveOne(tweak?: (b: ClusterBuilder) => void) {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).bootcPool('infra', nodes('i', 3));
  tweak?.(b);
  const snap = b.snapshot();
  const pool = (name: string, priority: number) => ({ name, image: NEW, maxUnavailable: 2, priority });
  const fwd = planWith(specYaml([pool('worker', 1), pool('infra', 2)]), snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  assert.is(sim.get('BootcNodePool', 'infra')!.spec?.image?.ref, NEW, 'the run handed infra its image before the first pool ran');
  return sim;
}

t('scope wave: a pool of the run whose waves never started gets its image back (no reboot), and its nodes with the image staged are named', async () => {
  const sim = await twoPoolsAfterWaveOne();
  const { plan } = await rollbackOf(sim, 'wave');
  assert.equal(codes(plan), []);
  assert.equal(
    plan.pools.map((p) => [p.name, p.nodes.filter((n) => n.wave !== null).length]),
    [
      ['worker', 2],
      ['infra', 0],
    ],
  );
  const change = plan.changes.find((c) => c.address === 'BootcNodePool/infra');
  assert.equal([change?.action, change?.reason, change?.after], ['update', 'pool-image-rollback', { spec: { image: { ref: OLD } } }]);
  assert.ok(codes(plan, 'warning').includes('rollback-scope-wave-reverted'));
  const staged = plan.rollback!.leftovers.filter((l) => l.pool === 'infra' && l.what === 'target-still-staged').map((l) => l.node);
  assert.equal(staged, ['i-00', 'i-01', 'i-02']);
  assert.ok(plan.diagnostics.some((d) => d.code === 'rollback-target-still-staged' && /pool infra: i-00, i-01, i-02/.test(d.message)));
  // scope run: the same pool, the same way back.
  const run = await rollbackOf(sim, 'run');
  assert.equal(
    run.plan.pools.map((p) => p.name),
    ['worker', 'infra'],
  );
});

t('scope wave: such a pool that cannot be taken back (two origins) is kept, held and named, and does not refuse the failed wave', async () => {
  const sim = await twoPoolsAfterWaveOne((b) => {
    const bn = b.object('BootcNode', 'i-02');
    bn.status.booted = { ...bn.status.booted, image: OTHER, imageDigest: OTHER_DIGEST };
  });
  const { plan } = await rollbackOf(sim, 'wave');
  assert.equal(codes(plan), [], 'the failed wave still goes back');
  assert.equal(
    plan.pools.map((p) => p.name),
    ['worker'],
  );
  const kept = plan.diagnostics.find((d) => d.code === 'rollback-scope-wave-kept');
  assert.match(
    kept?.message ?? '',
    /^pool infra: i-00, i-01, i-02 have it staged \(an unplanned reboot boots it\): its image cannot go back \(pool infra started the run from 2 different images/,
  );
  assert.equal(
    plan.rollback!.leftovers.filter((l) => l.pool === 'infra').map((l) => [l.node, l.what]),
    [
      ['i-00', 'target-still-staged'],
      ['i-01', 'target-still-staged'],
      ['i-02', 'target-still-staged'],
    ],
  );
});

t("the budget is the pool's live one minus nodes out of service now", async () => {
  const { sim, updated } = await afterWaveOne(6);
  sim.adminCordon('w-05', true); // out of service on its own: uses one of the 2
  const { plan } = await rollbackOf(sim);
  assert.equal(plan.pools[0].maxUnavailable.resolved, 2);
  assert.equal(
    plan.pools[0].waves.map((w) => w.length),
    [1, 1],
  );
  assert.equal(plan.pools[0].waves.flat().sort(), [...updated].sort());
});

t('sealed: the id is the content hash; a file with another origin is tampered; a re-plan of an unchanged cluster decides the same', async () => {
  const { sim } = await afterWaveOne(4);
  const { plan, input } = await rollbackOf(sim);
  assert.is(tamperedId(plan), null);
  const edited = structuredClone(plan);
  edited.rollback!.source.origins.worker = { kind: 'bootc', ref: OTHER, image: OTHER, digest: OTHER_DIGEST, mixed: null };
  assert.ok(tamperedId(edited));
  const read = parsePlanFile(renderJson(plan), 'rollback.json');
  assert.equal(read.diagnostics, []);
  assert.equal(rollbackInputOfPlan(read.plan!), input);
  assert.equal(decisionDifference(plan, planRollback(rollbackInputOfPlan(read.plan!), sim.snapshotCopy())), []);
  // A plan file whose origin names a tag is refused when read back.
  const bad = JSON.parse(renderJson(plan));
  bad.rollback.source.origins.worker.image = 'quay.io/x:latest';
  assert.match(parsePlanFile(JSON.stringify(bad), 'bad.json').diagnostics[0]?.message ?? '', /origin whose image is not a digest reference/);
});

t('pure rules: origin image, booted pullspec, roles', () => {
  assert.equal(originImage([OLD, OLD, null]), { image: OLD, digest: OLD_DIGEST, mixed: null });
  assert.equal(originImage([OLD, OTHER]).mixed, [OLD_DIGEST, OTHER_DIGEST].sort());
  assert.equal(originImage([]), { image: null, digest: null, mixed: null });
  assert.is(bootedPullspec('quay.io/x/os:1.2', OLD_DIGEST), `quay.io/x/os@${OLD_DIGEST}`);
  assert.is(bootedPullspec('registry:5000/x/os:1.2', OLD_DIGEST), `registry:5000/x/os@${OLD_DIGEST}`);
  assert.is(bootedPullspec('quay.io/x/os:1.2', null), null);
  const chain = new Set(['p1']);
  const facts = {
    entry: { planId: 'p1', pool: 'worker', wave: 1, step: 'done' as const, wasCordoned: false, from: OLD },
    chain,
    wave: null,
    pool: 'worker',
    bootedDigest: NEW_DIGEST,
    stagedDigest: null,
    rollbackDigest: OLD_DIGEST,
    rebootRequested: false,
    degraded: false,
    target: NEW_DIGEST,
    origin: OLD_DIGEST,
  };
  assert.is(bootcRollbackRole(facts), 'rollback');
  // An entry reads `cordon` through the drain and the reboot (it is written at the cordon, a
  // failure and the end): what the node boots says whether the run updated it.
  const cordoned = { ...facts, entry: { ...facts.entry, step: 'cordon' as const } };
  assert.is(bootcRollbackRole(cordoned), 'rollback', "cordoned, then rebooted onto the run's image: updated by the run");
  assert.is(bootcRollbackRole({ ...cordoned, bootedDigest: OLD_DIGEST, rebootRequested: true }), 'rollback', 'cordoned, its reboot into the target requested');
  assert.is(bootcRollbackRole({ ...cordoned, bootedDigest: OLD_DIGEST }), 'untouched', 'only cordoned, still on its origin: not updated by the run');
  assert.is(
    bootcRollbackRole({ ...cordoned, bootedDigest: OLD_DIGEST, stagedDigest: NEW_DIGEST }),
    'target-still-staged',
    'only cordoned, the target staged: not rebooted',
  );
  assert.is(bootcRollbackRole({ ...facts, entry: { ...facts.entry, planId: 'p0' } }), 'stages-origin', "another run: not this one's");
  assert.is(bootcRollbackRole({ ...facts, entry: null, rollbackDigest: null }), 'would-stage-unbooted');
  assert.is(bootcRollbackRole({ ...facts, entry: { ...facts.entry, from: undefined } }), 'origin-differs', 'no from: no proof');
  assert.is(bootcRollbackRole({ ...facts, bootedDigest: OLD_DIGEST, stagedDigest: NEW_DIGEST }), 'target-still-staged');
  assert.is(bootcRollbackRole({ ...facts, wave: { planId: 'p1', pool: 'worker', wave: 2 } }), 'stages-origin', 'scope wave: an earlier wave');
});

t.run();
