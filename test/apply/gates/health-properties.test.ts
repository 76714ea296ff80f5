/**
 * Properties of health gates on random clusters (fast-check, fixed seed): after a failed gate no
 * further node starts (no cordon by bootcplan, no wave start; an MCO pool's nodes the MCO had taken
 * for the wave in flight finish, no other), every node bootcplan started finishes its update, no
 * cordon takes a pool over its budget, and the apply ends with exit 5 naming the check. Over 1-3
 * pools (bootc in waves or slots, MCO), 1-12 nodes each, budgets 1-3, nodes out of service on their
 * own, preflight / afterWave / afterNode checks, a failure at a random gate or at a random rate.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { seeded } from '../../support/seeds.ts';
import { ClusterBuilder, specYaml, NEW, type TestNode } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { SimHealthSource, parseFailCheck, type FailCheckRule } from '../../../src/sim/health.ts';
import { RolloutHaltedError, HealthCheckFailedError } from '../../../src/base/errors.ts';
import type { ApplyEvent } from '../../../src/apply/ports/events.ts';

const s = suite('health gate properties');
const D = { stage: 300, drain: 30, reboot: 120, softReboot: 30, ready: 20 };
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

interface PoolShape {
  kind: 'bootc' | 'slots' | 'mco';
  n: number;
  budget: number;
  cordoned: number;
  staged: boolean;
}

const poolArb: fc.Arbitrary<PoolShape> = fc.record({
  kind: fc.constantFrom<PoolShape['kind']>('bootc', 'bootc', 'slots', 'mco'),
  n: fc.integer({ min: 1, max: 12 }),
  budget: fc.integer({ min: 1, max: 3 }),
  cordoned: fc.integer({ min: 0, max: 1 }),
  staged: fc.boolean(),
});

type Fault = { kind: 'point'; pick: number } | { kind: 'rate'; rate: number; seed: number };
const faultArb: fc.Arbitrary<Fault> = fc.oneof(
  fc.record({ kind: fc.constant('point' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('rate' as const), rate: fc.constantFrom(0.05, 0.15, 0.4), seed: fc.integer({ min: 1, max: 1e6 }) }),
);

function build(pools: PoolShape[]) {
  const b = new ClusterBuilder();
  const specPools: Record<string, unknown>[] = [];
  pools.forEach((p, i) => {
    const name = `p${i}`;
    const ns: TestNode[] = Array.from({ length: p.n }, (_, j) => ({
      name: `${name}-${j}`,
      zone: ZONES[j % 3],
      cordoned: j < p.cordoned && p.n > 1,
      staged: p.staged,
    }));
    if (p.kind === 'mco') b.mcoPool(name, ns);
    else b.bootcPool(name, ns);
    specPools.push({ name, image: NEW, maxUnavailable: p.budget, ...(p.kind === 'slots' ? { rollout: 'slots' } : { soakSeconds: 20 }) });
  });
  const checks = [
    { name: 'alerts', alerts: {}, intervalSeconds: 10, successes: 2 },
    { name: 'slo', prometheus: { query: 'up', condition: 'min == 1' }, when: ['afterWave'], intervalSeconds: 15, successes: 1 },
    {
      name: 'node',
      condition: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web', type: 'Available' },
      when: ['afterNode'],
      intervalSeconds: 5,
      successes: 2,
    },
  ];
  const snap = b.snapshot();
  return { snap, ...planWith(specYaml(specPools, { healthChecks: checks }), snap, D) };
}

/** A failure at one of the plan's gates, picked by `pick`. */
function pointRule(plan: ReturnType<typeof build>['plan'], pick: number): FailCheckRule {
  const points: string[] = ['alerts@preflight'];
  for (const p of plan.pools) {
    p.waves.forEach((_, k) => points.push(`${['alerts', 'slo'][k % 2]}@${p.name}:wave=${k + 1}`));
    for (const n of p.waves.flat()) points.push(`node@node=${n}`);
  }
  return parseFailCheck(points[pick % points.length]) as FailCheckRule;
}

s('after a failed gate no further node starts; nodes in flight finish; budgets hold; exit 5', async () => {
  let failedRuns = 0;
  const opts = seeded(260_503, 80);
  await fc.assert(
    fc.asyncProperty(fc.array(poolArb, { minLength: 1, maxLength: 3 }), faultArb, async (shapes, fault) => {
      const { snap, plan, replan } = build(shapes);
      const sim = newSim(snap, { durations: D });
      const health =
        fault.kind === 'point'
          ? new SimHealthSource({ failChecks: [pointRule(plan, fault.pick)] })
          : new SimHealthSource({ failRate: fault.rate, seed: fault.seed });
      const r = await runApply(sim, plan, replan, { health });
      assert.ok(r.code === 0 || r.code === 5, `exit ${r.code}: ${(r.error as Error)?.stack}`);
      const ev: ApplyEvent[] = r.events;
      const f = ev.findIndex((e) => e.type === 'gate-fail');
      if (f < 0) {
        assert.not.instance(r.error, HealthCheckFailedError);
      } else {
        failedRuns++;
        assert.instance(r.error, RolloutHaltedError);
        const later = ev.slice(f + 1);
        assert.equal(
          later.filter((e) => e.type === 'wave-start'),
          [],
          'a wave started after the failed gate',
        );
        const mco = new Set(plan.pools.filter((p) => p.backend === 'mco').map((p) => p.name));
        const lastWave = new Map<string, string[]>();
        for (const e of ev.slice(0, f)) if (e.type === 'wave-start') lastWave.set(e.pool, e.nodes);
        for (const e of later) {
          if (e.type !== 'cordon') continue;
          assert.ok(mco.has(e.pool), `bootcplan cordoned ${e.node} after the failed gate`);
          assert.ok((lastWave.get(e.pool) ?? []).length > 0, `the MCO took ${e.node} of ${e.pool} after the failed gate, outside the wave in flight`);
        }
      }
      // Every node bootcplan started finished its update (in flight at the failure included).
      for (const c of ev.filter((e) => e.type === 'cordon' && !plan.pools.some((p) => p.name === e.pool && p.backend === 'mco'))) {
        const node = (c as { node: string }).node;
        assert.ok(
          ev.some((e) => (e.type === 'booted' || e.type === 'node-failed') && e.node === node && e.t >= c.t),
          `${node} was left half-way`,
        );
      }
      for (const c of sim.cordons)
        if (!c.wasUnavailable && c.budget !== null)
          assert.ok(c.unavailableAfter <= c.budget, `cordon of ${c.node}: ${c.unavailableAfter} unavailable, budget ${c.budget}`);
      for (const [node, count] of sim.rebootCounts()) assert.ok(count <= 1, `${node} rebooted ${count} times`);
    }),
    opts,
  );
  // About 88% of runs fail a gate (four fresh seeds: 69-73 of 80); a handful (FC_RUNS=5) proves nothing.
  assert.ok(opts.numRuns < 20 || failedRuns >= opts.numRuns / 2, `only ${failedRuns} of ${opts.numRuns} runs had a failed gate`);
});

s.run();
