/**
 * Properties of sharing the cluster with the MCO (docs/safety.md rules 5 and 7; fast-check), over
 * generated clusters with a bootc pool (and the MachineConfigPool of its role) and an
 * MCO-only pool, mixed node conditions (Ready, DiskPressure, NetworkUnavailable, and the
 * MemoryPressure / PIDPressure the MCO ignores), cordons, MCO work in flight on nodes and
 * rendered configs not yet rolled out:
 * - the plan never puts an unavailable node (as the MCO counts it) or a blocked node in a
 *   wave, and no wave is larger than the budget left by the unavailable nodes;
 * - a pool whose MachineConfigPool is rolling is blocked with an error, and the plan has no
 *   wave in it;
 * - applied to the simulated cluster, no node that was unavailable or blocked is ever
 *   cordoned or rebooted, and no pool has more nodes out of service than its budget (or
 *   than were out before anything started).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, type TestNode } from '../../support/cluster.ts';
import { newSim, planWith, runApply } from '../../support/apply.ts';
import { indexSnapshot, viewNode } from '../../../src/domain/nodes.ts';
import { seeded } from '../../support/seeds.ts';

const s = suite('sharing properties: MCO work and node health');

const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const D = { stage: 100, drain: 10, reboot: 50, softReboot: 5, ready: 3 };

type Health = 'ok' | 'DiskPressure' | 'NetworkUnavailable' | 'MemoryPressure' | 'PIDPressure' | 'notReady' | 'cordoned';
type Work = 'none' | 'config-moving' | 'state-working' | 'state-rebooting';

const healthArb = fc.oneof(
  { arbitrary: fc.constant<Health>('ok'), weight: 8 },
  { arbitrary: fc.constantFrom<Health>('DiskPressure', 'NetworkUnavailable', 'MemoryPressure', 'PIDPressure', 'notReady', 'cordoned'), weight: 3 },
);
const workArb = fc.oneof(
  { arbitrary: fc.constant<Work>('none'), weight: 8 },
  { arbitrary: fc.constantFrom<Work>('config-moving', 'state-working', 'state-rebooting'), weight: 2 },
);
const nodeArb = fc.record({ health: healthArb, work: workArb, current: fc.integer({ min: 0, max: 9 }).map((x) => x < 2) });

interface Shape {
  workers: { health: Health; work: Work; current: boolean }[];
  infra: { health: Health; work: Work; current: boolean }[];
  workerBudget: number;
  infraBudget: number;
  rolling: 'none' | 'worker' | 'infra' | 'infra-paused';
}

const shapeArb: fc.Arbitrary<Shape> = fc.record({
  workers: fc.array(nodeArb, { minLength: 1, maxLength: 14 }),
  infra: fc.array(nodeArb, { minLength: 1, maxLength: 8 }),
  workerBudget: fc.integer({ min: 1, max: 4 }),
  infraBudget: fc.integer({ min: 1, max: 3 }),
  rolling: fc.oneof(
    { arbitrary: fc.constant<Shape['rolling']>('none'), weight: 4 },
    { arbitrary: fc.constantFrom<Shape['rolling']>('worker', 'infra', 'infra-paused'), weight: 1 },
  ),
});

function testNode(prefix: string, pool: string, i: number, n: Shape['workers'][number]): TestNode {
  const t: TestNode = {
    name: `${prefix}-${String(i).padStart(2, '0')}`,
    zone: ZONES[i % 3],
    createdAt: `2026-01-01T00:${String(i).padStart(2, '0')}:00Z`,
    current: n.current,
  };
  if (n.health === 'notReady') t.notReady = true;
  else if (n.health === 'cordoned') t.cordoned = true;
  else if (n.health !== 'ok') t.conditions = { [n.health]: 'True' };
  // MCO-only nodes already on the target run the builder's new rendered config.
  const done = pool === 'infra' && n.current ? 'rendered-infra-0002' : `rendered-${pool}-0001`;
  if (n.work === 'config-moving') t.mco = { currentConfig: done, desiredConfig: `rendered-${pool}-kubelet`, state: 'Working' };
  else if (n.work === 'state-working') t.mco = { currentConfig: done, desiredConfig: done, state: 'Working' };
  else if (n.work === 'state-rebooting') t.mco = { currentConfig: done, desiredConfig: done, state: 'Rebooting' };
  return t;
}

function build(sh: Shape) {
  const b = new ClusterBuilder()
    .bootcPool(
      'worker',
      sh.workers.map((n, i) => testNode('w', 'worker', i, n)),
    )
    .machineConfigPool('worker')
    .mcoPool(
      'infra',
      sh.infra.map((n, i) => testNode('i', 'infra', i, n)),
      { maxUnavailable: sh.infraBudget, paused: sh.rolling === 'infra-paused' },
    );
  if (sh.rolling === 'worker') b.mcpRollout('worker', 'rendered-worker-kubelet', { updating: true });
  if (sh.rolling === 'infra') b.mcpRollout('infra', 'rendered-infra-kubelet', { updating: true });
  if (sh.rolling === 'infra-paused') b.mcpRollout('infra', 'rendered-infra-kubelet');
  const snap = b.snapshot();
  const spec = specYaml([
    { name: 'worker', image: NEW, maxUnavailable: sh.workerBudget },
    { name: 'infra', image: NEW, maxUnavailable: sh.infraBudget },
  ]);
  return { snap, ...planWith(spec, snap, D) };
}

s('no unavailable or blocked node is ever cordoned or rebooted, and no pool goes over its budget', async () => {
  await fc.assert(
    fc.asyncProperty(shapeArb, async (sh) => {
      const { snap, plan, replan } = build(sh);
      const idx = indexSnapshot(snap);
      // Every node out of service now, in the pools or not, and every blocked node.
      const untouchable = new Set(snap.nodes.map((n) => n.metadata.name).filter((n) => viewNode(idx.nodes.get(n)!, idx).unavailable !== null));
      const unavailableAtStart = new Map<string, number>();
      for (const pool of plan.pools) {
        const unavailable = pool.unavailableNow.length;
        unavailableAtStart.set(pool.name, unavailable);
        assert.ok(
          pool.waveSize <= Math.max(0, pool.maxUnavailable.resolved - unavailable),
          `${pool.name}: wave size ${pool.waveSize}, budget ${pool.maxUnavailable.resolved}, ${unavailable} unavailable`,
        );
        for (const w of pool.waves) assert.ok(w.length <= pool.waveSize, `${pool.name}: a wave of ${w.length}, wave size ${pool.waveSize}`);
        const inWaves = new Set(pool.waves.flat());
        for (const n of pool.nodes) {
          const v = viewNode(idx.nodes.get(n.name)!, idx);
          const mcoHealthy = v.ready && v.healthy && !v.cordoned;
          if (n.blockedBy !== null || v.unavailable !== null || !mcoHealthy) {
            assert.not.ok(inWaves.has(n.name), `${n.name} (${n.blockedBy ?? v.unavailable}) is in a wave`);
            untouchable.add(n.name);
          }
          // MCO-unhealthy (Ready, DiskPressure, NetworkUnavailable, cordon) and MCO work in flight always block.
          if (!mcoHealthy || v.updating) assert.ok(n.blockedBy !== null, `${n.name} is unavailable but not blocked`);
        }
        // the MCO's pressure rules only: MemoryPressure / PIDPressure alone never block
        for (const [i, n] of (pool.name === 'worker' ? sh.workers : sh.infra).entries()) {
          if ((n.health === 'MemoryPressure' || n.health === 'PIDPressure') && n.work === 'none' && !n.current && sh.rolling === 'none') {
            const name = `${pool.name === 'worker' ? 'w' : 'i'}-${String(i).padStart(2, '0')}`;
            const pn = pool.nodes.find((x) => x.name === name)!;
            assert.ok(pn.blockedBy === null || pn.blockedBy === 'no-budget', `${name} with ${n.health} is blocked ${pn.blockedBy}`);
          }
        }
      }
      const rollingPool = sh.rolling === 'worker' ? 'worker' : sh.rolling === 'none' ? null : 'infra';
      const errors = plan.diagnostics.filter((d) => d.severity === 'error');
      const rollingHasWork = rollingPool !== null && plan.pools.find((p) => p.name === rollingPool)!.nodes.length > 0;
      if (rollingHasWork) {
        assert.ok(
          errors.some((d) => d.code === 'mco-rollout-in-progress'),
          JSON.stringify(plan.diagnostics),
        );
        const p = plan.pools.find((x) => x.name === rollingPool)!;
        assert.equal(p.waves, []);
        assert.ok(p.nodes.every((n) => n.blockedBy !== null));
        return; // a plan with an error is never applied
      }
      assert.equal(errors, [], JSON.stringify(errors));

      const sim = newSim(snap, { durations: D });
      const r = await runApply(sim, plan, replan);
      assert.is(r.code, 0, String((r.error as Error)?.stack ?? r.error) + JSON.stringify((r.error as { difference?: string[] })?.difference));
      for (const x of sim.reboots) assert.not.ok(untouchable.has(x.node), `${x.node} was blocked and rebooted`);
      for (const c of sim.cordons) assert.not.ok(untouchable.has(c.node), `${c.node} was blocked and cordoned`);
      for (const e of r.events) {
        if ((e.type === 'cordon' || e.type === 'reboot') && untouchable.has(e.node)) assert.unreachable(`${e.type} of blocked ${e.node}`);
      }
      for (const pool of plan.pools) {
        const limit = Math.max(pool.maxUnavailable.resolved, unavailableAtStart.get(pool.name)!);
        const peak = sim.peakUnavailable.get(pool.name) ?? 0;
        assert.ok(
          peak <= limit,
          `${pool.name}: ${peak} out of service at once, budget ${pool.maxUnavailable.resolved}, ${unavailableAtStart.get(pool.name)} before`,
        );
      }
    }),
    seeded(3105, 60),
  );
});

s.run();
