/**
 * Properties of the applier on random clusters and random faults (fast-check):
 * - no cordon ever takes a pool over its budget;
 * - an apply killed at a random event and run again completes, every node rebooted once;
 * - a cluster changed since the plan is refused with exit 3 before any write;
 * - with soft reboots allowed and capability known only once staged, waves composed from
 *   the fresh plan keep every node in exactly one wave, no wave larger than the plan's,
 *   and no cordon over the budget, also across a kill and a rerun.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, type TestNode } from '../support/cluster.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { nodeObject, bootcNodeObject } from '../../src/sim/node-objects.ts';
import type { StalePlanError } from '../../src/base/errors.ts';
import type { SimCluster } from '../../src/sim/cluster.ts';
import { seeded } from '../support/seeds.ts';
import type { TestObject } from '../support/cluster.ts';

const s = suite('properties');

const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

interface Shape {
  n: number;
  zones: number;
  cordoned: number;
  degraded: number;
  notReady: number;
  staged: number;
  budget: number | string;
}

const shapeArb: fc.Arbitrary<Shape> = fc
  .record({
    n: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 24 }), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 200 }), weight: 1 }),
    zones: fc.integer({ min: 1, max: 3 }),
    cordoned: fc.integer({ min: 0, max: 3 }),
    degraded: fc.integer({ min: 0, max: 2 }),
    notReady: fc.integer({ min: 0, max: 1 }),
    staged: fc.double({ min: 0, max: 1, noNaN: true }),
    int: fc.integer({ min: 0, max: 6 }),
    pct: fc.integer({ min: 4, max: 60 }),
    usePct: fc.boolean(),
  })
  .map((r) => ({
    n: r.n,
    zones: r.zones,
    cordoned: r.cordoned,
    degraded: r.degraded,
    notReady: r.notReady,
    staged: Math.round(r.staged * r.n),
    // keep the number of waves moderate so that the suite stays fast
    budget: r.usePct ? `${r.pct}%` : Math.ceil(r.n / 25) + r.int,
  }));

function build(sh: Shape, extra: Record<string, unknown> = {}) {
  const ns: TestNode[] = Array.from({ length: sh.n }, (_, i) => ({
    name: `w-${String(i).padStart(3, '0')}`,
    zone: ZONES[i % sh.zones],
    cordoned: i < sh.cordoned,
    degraded: i >= sh.cordoned && i < sh.cordoned + sh.degraded,
    notReady: i >= sh.cordoned + sh.degraded && i < sh.cordoned + sh.degraded + sh.notReady,
    staged: i >= sh.n - sh.staged,
  }));
  const snap = new ClusterBuilder().bootcPool('worker', ns).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: sh.budget, soakSeconds: 30, ...extra }]);
  return { snap, spec, ...planWith(spec, snap) };
}

s('no cordon takes a pool over maxUnavailable, whatever the cluster and the faults', async () => {
  await fc.assert(
    fc.asyncProperty(
      shapeArb,
      fc.record({
        seed: fc.integer({ min: 1, max: 1e6 }),
        flapsPerHour: fc.integer({ min: 0, max: 30 }),
        conflictRate: fc.constantFrom(0, 0.02, 0.1),
        rebootFailRate: fc.constantFrom(0, 0, 0.02, 0.2),
      }),
      async (sh, faults) => {
        const { snap, plan, replan } = build(sh);
        const sim = newSim(snap, { faults });
        const r = await runApply(sim, plan, replan);
        assert.ok(r.code === 0 || r.code === 5, `exit ${r.code}: ${(r.error as Error)?.stack}`);
        const budget = plan.pools[0].maxUnavailable.resolved;
        for (const c of sim.cordons) {
          if (c.wasUnavailable) continue;
          assert.ok(c.unavailableAfter <= budget, `cordon of ${c.node} at t=${c.t}: ${c.unavailableAfter} unavailable, budget ${budget}`);
        }
        // no node that needed no update was touched, and nothing rebooted twice
        for (const [node, count] of sim.rebootCounts()) assert.ok(count <= 1 || faults.rebootFailRate > 0, `${node} rebooted ${count} times`);
        if (r.code === 0) {
          for (const n of plan.pools[0].nodes.filter((x) => x.wave !== null)) {
            assert.is(sim.get('BootcNode', n.name)!.status!.booted!.imageDigest, NEW_DIGEST, n.name);
          }
        }
      },
    ),
    seeded(3108, 60),
  );
});

s('apply killed at a random event, then run again, completes with each node rebooted exactly once', async () => {
  await fc.assert(
    fc.asyncProperty(
      shapeArb,
      fc.integer({ min: 1, max: 2000 }),
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 1, max: 1e6 }),
      async (sh, killAt, flaps, seed) => {
        const { snap, plan, replan } = build(sh);
        const sim = newSim(snap, { faults: { seed, flapsPerHour: flaps } });
        let count = 0;
        const first = await runApply(sim, plan, replan, {
          onEventHook: (_e, d) => {
            if (++count === killAt) d.kill();
          },
        });
        if (first.code !== 0) {
          assert.is((first.error as Error).name, 'KilledError', String((first.error as Error)?.stack));
          sim.advance(301); // the dead apply's lock expires
          const second = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 }); // the Lease expires 300 s after this apply first sees it
          assert.is(second.code, 0, `rerun: ${(second.error as Error)?.stack ?? String(second.error)}`);
        }
        const scheduled = plan.pools[0].nodes.filter((x) => x.wave !== null).map((x) => x.name);
        assertEachRebootedOnceAndCordonsRestored(sim, scheduled, sh.n, sh.cordoned);
      },
    ),
    seeded(3109, 50),
  );
});

type Mutation = 'add-node' | 'other-image' | 'remove-node' | 'pool-image' | 'pool-budget';

s('a cluster changed since the plan is refused with exit 3, before any write', async () => {
  await fc.assert(
    fc.asyncProperty(shapeArb, fc.constantFrom<Mutation>('add-node', 'other-image', 'remove-node', 'pool-image', 'pool-budget'), async (sh, m) => {
      const { snap, plan, replan } = build(sh);
      const sim = newSim(snap);
      const pending = plan.pools[0].nodes.map((n) => n.name);
      sim.mutate((o) => {
        if (m === 'add-node' || pending.length === 0) {
          o.add(nodeObject({ name: 'w-new', role: 'worker', zone: ZONES[0], bootc: true }));
          o.add(bootcNodeObject({ name: 'w-new', pool: 'worker', desiredImage: OLD, booted: { image: OLD } }));
        } else if (m === 'other-image') {
          (o.get('BootcNode', pending[0]) as TestObject).status.booted = { image: imageRef('other'), imageDigest: imageRef('other').split('@')[1] };
        } else if (m === 'remove-node') {
          o.remove('Node', pending[0]);
          o.remove('BootcNode', pending[0]);
        } else if (m === 'pool-image') {
          (o.get('BootcNodePool', 'worker') as TestObject).spec.image.ref = imageRef('someone-else');
        } else {
          (o.get('BootcNodePool', 'worker') as TestObject).spec.rollout.maxUnavailable = 17;
        }
      });
      const r = await runApply(sim, plan, replan);
      assert.is(r.code, 3, `${m}: exit ${r.code} ${(r.error as Error)?.message}`);
      assert.ok((r.error as StalePlanError).difference.length > 0);
      assert.equal(
        sim.writes.filter((w) => w.op !== 'lock' && w.op !== 'unlock'),
        [],
        m,
      );
      assert.is(sim.reboots.length, 0);
    }),
    seeded(3110, 60),
  );
});

s('soft reboots regrouped from the fresh plan: never over budget, each node in one wave, rebooted once, also across a kill', async () => {
  await fc.assert(
    fc.asyncProperty(
      shapeArb,
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.integer({ min: 0, max: 2000 }),
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 1, max: 1e6 }),
      async (sh, softFraction, killAt, flaps, seed) => {
        const { snap, plan, replan } = build(sh, { rebootPolicy: 'AllowSoftReboot' });
        const capable = (name: string) => ((Number(name.slice(2)) * 7919) % 100) / 100 < softFraction;
        const sim = newSim(snap, { faults: { seed, flapsPerHour: flaps }, softRebootCapable: capable });
        const pool = plan.pools[0];
        const budget = pool.maxUnavailable.resolved;
        let count = 0;
        const first = await runApply(sim, plan, replan, {
          onEventHook: (_e, d) => {
            if (killAt > 0 && ++count === killAt) d.kill();
          },
        });
        const runs = [first];
        if (first.code !== 0) {
          assert.is((first.error as Error).name, 'KilledError', String((first.error as Error)?.stack));
          sim.advance(301);
          const second = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 }); // the Lease expires 300 s after this apply first sees it
          assert.is(second.code, 0, `rerun: ${(second.error as Error)?.stack ?? String(second.error)}`);
          runs.push(second);
        }
        for (const c of sim.cordons) {
          if (c.wasUnavailable) continue;
          assert.ok(c.unavailableAfter <= budget, `cordon of ${c.node} at t=${c.t}: ${c.unavailableAfter} unavailable, budget ${budget}`);
        }
        const scheduled = pool.nodes.filter((x) => x.wave !== null).map((x) => x.name);
        for (const r of runs) {
          // within one run: each node in one wave, and cordoned only by the wave that lists it
          const waveOf = new Map<string, number>();
          for (const e of r.events.filter((x) => x.type === 'wave-start')) {
            // the first run takes at most the plan's wave size; a rerun may add the nodes a killed run left in flight
            if (r === first)
              assert.ok(
                e.nodes.length <= pool.waves[e.wave - 1].length,
                `wave ${e.wave} has ${e.nodes.length} nodes, the plan ${pool.waves[e.wave - 1].length}`,
              );
            for (const n of e.nodes) {
              assert.ok(scheduled.includes(n), `${n} was not scheduled`);
              assert.not.ok(waveOf.has(n), `${n} in waves ${waveOf.get(n)} and ${e.wave}`);
              waveOf.set(n, e.wave);
            }
          }
          for (const e of r.events.filter((x) => x.type === 'cordon')) assert.is(waveOf.get(e.node), e.wave, `${e.node} cordoned in wave ${e.wave}`);
        }
        assertEachRebootedOnceAndCordonsRestored(sim, scheduled, sh.n, sh.cordoned);
      },
    ),
    seeded(3111, 50),
  );
});

s.run();

/** Every scheduled node rebooted exactly once onto the target; only admin-cordoned nodes stay cordoned. */
function assertEachRebootedOnceAndCordonsRestored(sim: SimCluster, scheduled: string[], nodeCount: number, cordoned: number) {
  const counts = sim.rebootCounts();
  for (const n of scheduled) {
    assert.is(counts.get(n), 1, `${n} rebooted ${counts.get(n) ?? 0} times`);
    assert.is(sim.get('BootcNode', n)!.status!.booted!.imageDigest, NEW_DIGEST, n);
  }
  assert.is(counts.size, scheduled.length);
  for (let i = 0; i < nodeCount; i++) {
    const name = `w-${String(i).padStart(3, '0')}`;
    assert.is(sim.get('Node', name)!.spec!.unschedulable === true, i < cordoned, `${name} cordon state`);
  }
}
