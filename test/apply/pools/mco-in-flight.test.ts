/**
 * docs/safety.md rule 5: in-flight MCO work. A node whose MCO desiredConfig differs from its
 * currentConfig, or whose MCO state is present and not Done, is out of service (it uses
 * budget) and is not scheduled, in bootc pools too. A pool whose MachineConfigPool has
 * rendered a config it has not rolled out (spec vs status configuration, or Updating=True)
 * is blocked: an error at the spec's pool entry that names the rendered config and the
 * pool; bootcplan does not reboot nodes while the MCO does. bootcplan's own MCO waves (the
 * pool rolls the spec's image) are not a foreign rollout: a re-plan mid-wave is not stale.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, OLD, nodes } from '../../support/cluster.ts';
import { newSim, planWith, runApply } from '../../support/apply.ts';
import { remainingWorkDifference } from '../../../src/plan/saved/remaining-work.ts';
import { viewNode, indexSnapshot } from '../../../src/domain/nodes.ts';
import type { Plan } from '../../../src/plan/types.ts';
import type { TestObject } from '../../support/cluster.ts';

const s = suite('MCO work in flight');

const nodeOf = (plan: Plan, name: string) => plan.pools.flatMap((p) => p.nodes).find((n) => n.name === name)!;
const errorsOf = (plan: Plan, code: string) => plan.diagnostics.filter((d) => d.code === code && d.severity === 'error');

s('a bootc node whose MCO desiredConfig differs from currentConfig is out of service: it uses budget and is not scheduled', () => {
  const ws = nodes('w', 6);
  ws[1].mco = { currentConfig: 'rendered-worker-0001', desiredConfig: 'rendered-worker-0002', state: 'Working' };
  const snap = new ClusterBuilder().bootcPool('worker', ws).snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const pool = plan.pools[0];
  assert.equal(pool.unavailableNow, ['w-01']);
  assert.is(pool.waveSize, 1, 'budget 2 minus the node the MCO is updating');
  assert.is(nodeOf(plan, 'w-01').blockedBy, 'updating');
  assert.is(nodeOf(plan, 'w-01').wave, null);
  assert.not.ok(pool.waves.flat().includes('w-01'));
  assert.is(pool.waves.flat().length, 5);
  assert.ok(
    nodeOf(plan, 'w-01').conditions?.some((c) => c.type === 'MCOState' && c.status === 'Working'),
    JSON.stringify(nodeOf(plan, 'w-01')),
  );
});

s('the MCO state present and not Done makes a node unavailable, with desiredConfig == currentConfig too (bootc and MCO-only)', () => {
  for (const state of ['Working', 'Rebooting']) {
    const snap = new ClusterBuilder()
      .bootcPool('worker', [{ name: 'w-00', mco: { currentConfig: 'rendered-worker-0001', desiredConfig: 'rendered-worker-0001', state } }, { name: 'w-01' }])
      .mcoPool('infra', [{ name: 'i-00', mco: { state } }, { name: 'i-01' }])
      .snapshot();
    const plan = planFor(
      specYaml([
        { name: 'worker', image: NEW },
        { name: 'infra', image: NEW },
      ]),
      snap,
    );
    assert.is(nodeOf(plan, 'w-00').blockedBy, 'updating', state);
    assert.is(nodeOf(plan, 'i-00').blockedBy, 'updating', state);
    assert.equal(
      plan.pools.map((p) => p.waveSize),
      [0, 0],
      state,
    );
  }
  // Done, and no MCO annotations at all (a bootc node outside OpenShift): available.
  const idx = indexSnapshot(
    new ClusterBuilder().bootcPool('worker', [{ name: 'w-00', mco: { currentConfig: 'a', desiredConfig: 'a', state: 'Done' } }, { name: 'w-01' }]).snapshot(),
  );
  for (const n of ['w-00', 'w-01']) assert.is(viewNode(idx.nodes.get(n)!, idx).unavailable, null, n);
});

s('a MachineConfigPool rendered but not rolled out blocks its bootc pool: an error at the pool entry naming the rendered config and the pool', () => {
  const snap = new ClusterBuilder()
    .bootcPool('worker', nodes('w', 4))
    .machineConfigPool('worker')
    .mcpRollout('worker', 'rendered-worker-5f1c9', { updating: true })
    .snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), snap);
  const ds = errorsOf(plan, 'mco-rollout-in-progress');
  assert.is(ds.length, 1, JSON.stringify(plan.diagnostics));
  const d = ds[0];
  assert.equal([d.path, d.file, d.line, d.column], ['spec.pools[0].name', 'spec.yaml', 7, 13]);
  assert.match(d.message, /rendered-worker-5f1c9/);
  assert.match(d.message, /MachineConfigPool worker/);
  assert.match(d.message, /rendered-worker-0001/);
  assert.match(d.hint!, /oc wait mcp\/worker --for=condition=Updated/);
  const pool = plan.pools[0];
  assert.equal(pool.waves, []);
  assert.equal(
    pool.nodes.map((n) => n.blockedBy),
    ['mco-updating', 'mco-updating', 'mco-updating', 'mco-updating'],
  );
  assert.is(plan.summary.blocked, 4);
  assert.is(plan.summary.nodes, 0);
});

s('spec vs status configuration alone (paused, Updating=False) and Updating=True alone each block the pool', () => {
  const mismatch = new ClusterBuilder().mcoPool('infra', nodes('i', 3)).mcpRollout('infra', 'rendered-infra-kubelet').snapshot();
  const updating = new ClusterBuilder().mcoPool('infra', nodes('i', 3)).mcpRollout('infra', null, { updating: true }).snapshot();
  for (const [what, snap] of [
    ['spec != status', mismatch],
    ['Updating=True', updating],
  ] as const) {
    const plan = planFor(specYaml([{ name: 'infra', image: NEW }]), snap);
    assert.is(errorsOf(plan, 'mco-rollout-in-progress').length, 1, what);
    assert.equal(plan.pools[0].waves, [], what);
    assert.ok(
      plan.pools[0].nodes.every((n) => n.blockedBy === 'mco-updating'),
      what,
    );
  }
  const msg = errorsOf(planFor(specYaml([{ name: 'infra', image: NEW }]), mismatch), 'mco-rollout-in-progress')[0].message;
  assert.match(msg, /rendered-infra-kubelet/);
});

s('a rollout in another MachineConfigPool does not block this pool; a pool with nothing left to do has no error', () => {
  const snap = new ClusterBuilder()
    .bootcPool('worker', nodes('w', 3))
    .mcoPool('infra', nodes('i', 2, undefined, { current: true }))
    .mcpRollout('infra', 'rendered-infra-kubelet', { updating: true })
    .snapshot();
  const plan = planFor(
    specYaml([
      { name: 'worker', image: NEW },
      { name: 'infra', image: NEW },
    ]),
    snap,
  );
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  assert.is(plan.pools.find((p) => p.name === 'worker')!.waves.flat().length, 3);
});

/**
 * bootcplan's own MCO wave as a real MCO shows it: the pool has rendered the config that
 * carries the spec's image (spec.configuration.name = rendered-infra-0002, osImageURL NEW),
 * status still names the old one, Updating=True; i-00 is done, i-01 is being updated.
 */
function midWave(): ClusterBuilder {
  return new ClusterBuilder()
    .mcoPool('infra', [
      { name: 'i-00', createdAt: '2026-01-01T00:00:00Z', current: true },
      { name: 'i-01', createdAt: '2026-01-02T00:00:00Z', mco: { desiredConfig: 'rendered-infra-0002', state: 'Working' } },
      { name: 'i-02', createdAt: '2026-01-03T00:00:00Z' },
    ])
    .osImageMachineConfig('infra', NEW, '99-infra-zz-bootcplan-os-image')
    .mcpRollout('infra', 'rendered-infra-0002', { updating: true });
}

s("bootcplan's own MCO wave: a re-plan mid-wave (the MCP rolls the spec's image) is not blocked and not stale", () => {
  const spec = specYaml([{ name: 'infra', image: NEW }]);
  const before = new ClusterBuilder()
    .mcoPool('infra', [
      { name: 'i-00', createdAt: '2026-01-01T00:00:00Z' },
      { name: 'i-01', createdAt: '2026-01-02T00:00:00Z' },
      { name: 'i-02', createdAt: '2026-01-03T00:00:00Z' },
    ])
    .snapshot();
  const { plan, replan } = planWith(spec, before);
  assert.equal(plan.pools[0].waves, [['i-00'], ['i-01'], ['i-02']]);
  const snap = midWave().snapshot();
  const fresh = replan(snap);
  assert.equal(
    fresh.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  assert.equal(remainingWorkDifference(plan, fresh, snap), []);
  assert.is(nodeOf(fresh, 'i-01').blockedBy, 'updating', "the node in bootcplan's wave is in flight");
  assert.is(nodeOf(fresh, 'i-02').blockedBy, 'no-budget');
});

s("an MCO-only pool whose MachineConfigPool rolls another image than the spec's is blocked", () => {
  const other = OLD.replace('test-old', 'someone-else');
  const snap = new ClusterBuilder()
    .mcoPool('infra', nodes('i', 3))
    .mcpRollout('infra', 'rendered-infra-other', { osImageURL: other, updating: true })
    .snapshot();
  const plan = planFor(specYaml([{ name: 'infra', image: NEW }]), snap);
  assert.is(errorsOf(plan, 'mco-rollout-in-progress').length, 1);
  assert.equal(plan.pools[0].waves, []);
});

s('apply: an MCO rollout that starts between two waves stops the apply (exit 3) before the next wave reboots anything', async () => {
  const D = { stage: 100, drain: 10, reboot: 50, softReboot: 5, ready: 3 };
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).machineConfigPool('worker').snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap, D);
  assert.is(plan.pools[0].waves.length, 4);
  const sim = newSim(snap, { durations: D });
  let started = false;
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      if (e.type !== 'wave-end' || e.wave !== 1 || started) return;
      started = true;
      sim.mutate((o) => {
        const mcp = o.get('MachineConfigPool', 'worker') as TestObject;
        mcp.spec.configuration = { name: 'rendered-worker-kubelet' };
        mcp.status.conditions = [{ type: 'Updating', status: 'True', reason: '', message: 'All nodes are updating to MachineConfig rendered-worker-kubelet' }];
      });
    },
  });
  assert.is(r.code, 3, String((r.error as Error)?.message));
  assert.ok(
    (r.error as { difference: string[] }).difference.some((l) => l.includes('mco-rollout-in-progress') && l.includes('rendered-worker-kubelet')),
    JSON.stringify((r.error as { difference: string[] }).difference),
  );
  assert.equal(
    sim.reboots.map((x) => x.node),
    [plan.pools[0].waves[0][0]],
    'only the first wave rebooted',
  );
});

s.run();
