/**
 * What an apply keeps for the way back (docs/apply.md "Rollback"): each updated node's `from`
 * (the exact pullspec it booted, written with its cordon), each pool's origin (read before the
 * run's first write, and saved before it), the run chain over re-planned applies, and holds
 * carried until the plan targets another image.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { stepOnce } from '../../support/rollback.ts';
import { nodeProgressOf } from '../../../src/cluster/progress.ts';
import { carriedHolds, newRunFields } from '../../../src/apply/engine/run-chain.ts';
import { imageRef } from '../../../src/sim/fake-ids.ts';
import { isoOf } from '../../../src/apply/ports/driver.ts';
import type { Hold } from '../../../src/cluster/progress.ts';

const t = suite('rollback: the run record keeps the way back');
const OLD_DIGEST = OLD.slice(OLD.indexOf('@') + 1);

t('a bootc apply: every node entry keeps from = the pullspec it booted; the pool origin and the run chain are saved before the first write', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const sim = newSim(snap);
  const r = await runApply(sim, plan, replan);
  assert.is(r.error, null, String(r.error));
  for (const n of nodes('w', 4)) {
    const e = nodeProgressOf(sim.get('Node', n.name));
    assert.is(e?.from, OLD, n.name);
    assert.is(e?.step, 'done');
  }
  const rec = (await sim.driver().readProgress()).run!;
  assert.equal(rec.pools.worker.origin, { kind: 'bootc', ref: OLD, image: OLD, digest: OLD_DIGEST, mixed: null });
  assert.equal(rec.run, { id: plan.id, planIds: [plan.id], targets: { worker: NEW_DIGEST } });
  assert.equal(rec.spec, { name: 'test', path: 'spec.yaml', sha256: plan.spec.sha256, commit: null });
  const first = sim.writes.findIndex((w) => w.op !== 'lock' && w.op !== 'progress');
  const saved = sim.writes.findIndex((w) => w.op === 'progress');
  assert.ok(
    saved >= 0 && saved < first,
    `the record (write ${saved}) before the first write to the cluster (write ${first}: ${sim.writes[first]?.op} ${sim.writes[first]?.target})`,
  );
});

t('a node the daemon reports by tag keeps from as repository@digest', async () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 2));
  const bn = b.object('BootcNode', 'w-00');
  bn.status.booted.image = 'quay.io/example/os:43.1';
  const snap = b.snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), snap);
  const sim = newSim(snap);
  assert.is((await runApply(sim, plan, replan)).error, null);
  assert.is(nodeProgressOf(sim.get('Node', 'w-00'))?.from, `quay.io/example/os@${OLD_DIGEST}`);
  // Two spellings of one digest: the origin takes the most common, the one the nodes deployed.
  const rec = (await sim.driver().readProgress()).run!;
  assert.equal(rec.pools.worker.origin, { kind: 'bootc', ref: OLD, image: OLD, digest: OLD_DIGEST, mixed: null });
});

t('a pool whose nodes booted two images records both digests as mixed, and no image', async () => {
  const OTHER = imageRef('test-other');
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3));
  b.object('BootcNode', 'w-02').status.booted = {
    ...b.object('BootcNode', 'w-02').status.booted,
    image: OTHER,
    imageDigest: OTHER.slice(OTHER.indexOf('@') + 1),
  };
  const snap = b.snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), snap);
  const sim = newSim(snap);
  await stepOnce(sim, plan, replan);
  const o = (await sim.driver().readProgress()).run!.pools.worker.origin;
  assert.equal(o, { kind: 'bootc', ref: OLD, image: null, digest: null, mixed: [OLD_DIGEST, OTHER.slice(OTHER.indexOf('@') + 1)].sort() });
});

t('a re-planned apply continues the run: same run id, both plan ids, the origin the first record saw', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]);
  const { plan, replan } = planWith(spec, snap);
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, plan, replan), 'stepped');
  // apply -f SPEC again: the pool already has the new ref and two nodes run it.
  const second = planWith(spec, sim.snapshotCopy());
  assert.is.not(second.plan.id, plan.id);
  assert.is((await runApply(sim, second.plan, second.replan)).error, null);
  const rec = (await sim.driver().readProgress()).run!;
  assert.is(rec.planId, second.plan.id);
  assert.equal(rec.run, { id: plan.id, planIds: [plan.id, second.plan.id], targets: { worker: NEW_DIGEST } });
  assert.equal(rec.pools.worker.origin, { kind: 'bootc', ref: OLD, image: OLD, digest: OLD_DIGEST, mixed: null });
  for (const n of nodes('w', 4)) assert.is(nodeProgressOf(sim.get('Node', n.name))?.from, OLD, n.name);
});

t(
  "an MCO pool: origin names bootcplan's MachineConfig (absent before), the pre-run rendered config and image, when it was read; the rendered target is kept once seen",
  async () => {
    const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 2)).snapshot();
    const { plan, replan } = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 1 }]), snap);
    const sim = newSim(snap);
    assert.is((await runApply(sim, plan, replan)).error, null);
    const o = (await sim.driver().readProgress()).run!.pools.infra.origin;
    assert.is(o?.kind, 'mco');
    if (o?.kind !== 'mco') return;
    assert.equal(
      { ...o, renderedTarget: null },
      {
        kind: 'mco',
        machineConfig: '99-infra-zz-bootcplan-os-image',
        osImageURL: null,
        rendered: 'rendered-infra-0001',
        renderedTarget: null,
        image: OLD,
        readAt: isoOf(sim.start),
      },
    );
    const mcp = sim.get('MachineConfigPool', 'infra')!;
    assert.is(o.renderedTarget, mcp.spec?.configuration?.name);
    assert.is.not(o.renderedTarget, 'rendered-infra-0001');
  },
);

t('holds carry into a new record while the plan targets the held image, and end when it targets another', () => {
  const hold = (pool: string, target: string): Hold => ({
    pool,
    target,
    action: 'rolled-back',
    check: 'alerts',
    observed: '1 firing alert',
    at: '2026-09-14T09:00:00Z',
    planId: 'a1b2c3d4e5f60718',
  });
  const holds = [hold('worker', NEW_DIGEST), hold('infra', NEW_DIGEST)];
  assert.equal(carriedHolds(holds, { worker: NEW_DIGEST }), holds, 'infra is not in the plan: its hold stays');
  assert.equal(carriedHolds(holds, { worker: OLD_DIGEST, infra: NEW_DIGEST }), [holds[1]]);
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  const { plan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap);
  const prev = { planId: 'ffffffffffffffff', startedAt: 'x', updatedAt: 'x', changesApplied: true, done: true, pools: {}, holds, rollbackOf: null };
  assert.equal(newRunFields(prev, plan).holds, holds);
});

t.run();
