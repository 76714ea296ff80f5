/**
 * Properties of the slot runner (rollout: slots) on random clusters, jitter and faults (fast-check):
 * - no admission ever takes the pool over maxUnavailable (nodes out of service on their own count);
 * - every eligible node is updated exactly once, also when the apply is killed at a random event
 *   and run again;
 * - without faults, the pool's out-of-service count never passes the budget at any instant, and
 *   slots keep every slot busy: the run ends within Graham's bound for greedy list scheduling,
 *   last node staged + sum(node times) / slots + the longest node time (plus a second per
 *   re-plan). Slots are not always faster than waves: the waves runner re-plans each wave and
 *   may take the nodes in another order, and a list-scheduling order can lose to another order
 *   by up to one node time (seen: 2,162 s against 2,142 s, seed 595064764).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, type TestNode } from '../../support/cluster.ts';
import { planWith, runApply, newSim, type Run } from '../../support/apply.ts';
import { seeded } from '../../support/seeds.ts';

const s = suite('slots properties');
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const D = { stage: 120, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

interface Shape {
  n: number;
  cordoned: number;
  notReady: number;
  staged: number;
  budget: number | string;
  jitter: number;
  seed: number;
}

const shapeArb: fc.Arbitrary<Shape> = fc
  .record({
    n: fc.oneof({ arbitrary: fc.integer({ min: 1, max: 20 }), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 120 }), weight: 1 }),
    cordoned: fc.integer({ min: 0, max: 3 }),
    notReady: fc.integer({ min: 0, max: 1 }),
    staged: fc.double({ min: 0, max: 1, noNaN: true }),
    int: fc.integer({ min: 1, max: 6 }),
    pct: fc.integer({ min: 4, max: 60 }),
    usePct: fc.boolean(),
    jitter: fc.constantFrom(0, 0.1, 0.3, 0.6),
    seed: fc.integer({ min: 1, max: 1e6 }),
  })
  .map((r) => ({
    n: r.n,
    cordoned: r.cordoned,
    notReady: r.notReady,
    staged: Math.round(r.staged * r.n),
    budget: r.usePct ? `${r.pct}%` : Math.ceil(r.n / 20) + r.int,
    jitter: r.jitter,
    seed: r.seed,
  }));

function build(sh: Shape, rollout: 'slots' | 'waves' = 'slots') {
  const ns: TestNode[] = Array.from({ length: sh.n }, (_, i) => ({
    name: `w-${String(i).padStart(3, '0')}`,
    zone: ZONES[i % 3],
    cordoned: i < sh.cordoned,
    notReady: i >= sh.cordoned && i < sh.cordoned + sh.notReady,
    staged: i >= sh.n - sh.staged,
  }));
  const snap = new ClusterBuilder().bootcPool('worker', ns).snapshot();
  return { snap, ...planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: sh.budget, rollout }]), snap, D) };
}

/**
 * The outcomes an apply may legitimately end with here: done; killed (the property kills it); or
 * halted because a node waited longer than the budget wait for maxUnavailable room (wave-gates.ts
 * budgetTimeoutFailures: flapping nodes can hold a small budget for that long, and then apply
 * halts rather than take the pool over it). Any other end (a node failing, an internal error)
 * breaks the property.
 */
const BUDGET_WAIT = /^(no maxUnavailable budget for \d+m|out of service on its own .* for \d+m)/;
function budgetHalt(r: Run): boolean {
  const failed = r.events.filter((e) => e.type === 'node-failed');
  return (r.error as Error)?.name === 'RolloutHaltedError' && failed.length > 0 && failed.every((e) => BUDGET_WAIT.test(e.message));
}
const because = (r: Run) => String((r.error as Error)?.stack ?? r.error);

type KillCase = [Shape, number, number, number];
const killArgs = [shapeArb, fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 20 }), fc.constantFrom(0, 0.05)] as const;

/** Runs the apply, kills it at event `killAt` (0: never), reruns a killed one; checks the pool. */
async function killAndRerun(sh: Shape, killAt: number, flaps: number, conflictRate: number): Promise<'done' | 'halted'> {
  const { snap, plan, replan } = build(sh);
  const sim = newSim(snap, { durations: D, jitter: { fraction: sh.jitter, seed: sh.seed }, faults: { seed: sh.seed, flapsPerHour: flaps, conflictRate } });
  const pool = plan.pools[0];
  let count = 0;
  let last = await runApply(sim, plan, replan, {
    onEventHook: (_e, d) => {
      if (killAt > 0 && ++count === killAt) d.kill();
    },
  });
  if (last.code !== 0 && !budgetHalt(last)) {
    assert.is((last.error as Error).name, 'KilledError', because(last));
    // A new process takes the dead apply's lock once it has seen the Lease unchanged for its TTL.
    last = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 });
    assert.ok(last.code === 0 || budgetHalt(last), `rerun: ${because(last)}`);
  }
  const budget = pool.maxUnavailable.resolved;
  for (const c of sim.cordons) {
    if (c.wasUnavailable) continue;
    assert.ok(c.unavailableAfter <= budget, `cordon of ${c.node} at t=${c.t}: ${c.unavailableAfter} unavailable, budget ${budget}`);
  }
  const eligible = pool.nodes.filter((x) => x.wave !== null).map((x) => x.name);
  const counts = sim.rebootCounts();
  for (const [n, times] of counts) {
    assert.ok(eligible.includes(n), `${n} rebooted, but it is not in the admission order`);
    assert.is(times, 1, `${n} rebooted ${times} times`);
    assert.is(sim.get('BootcNode', n)!.status!.booted!.imageDigest, NEW_DIGEST, n);
  }
  if (last.code !== 0) return 'halted';
  for (const n of eligible) assert.is(counts.get(n), 1, `${n} rebooted ${counts.get(n) ?? 0} times`);
  return 'done';
}

s(
  'slots never take the pool over maxUnavailable and update every eligible node at most once, and all of them unless halted for lack of budget, across a kill',
  async () => {
    await fc.assert(
      fc.asyncProperty(...killArgs, async (...args: KillCase) => {
        await killAndRerun(...args);
      }),
      seeded(3112, 60),
    );
  },
);

s(
  'kept counterexample (fresh seed 751318129): 6 nodes, budget 4%, 20 flaps an hour, killed at the first event: the rerun halts for lack of budget, over budget never',
  async () => {
    const found: KillCase = [{ n: 6, cordoned: 0, notReady: 0, staged: 0, budget: '4%', jitter: 0.6, seed: 560811 }, 1, 20, 0.05];
    assert.is(await killAndRerun(...found), 'halted');
    await fc.assert(
      fc.asyncProperty(...killArgs, async (...args: KillCase) => {
        await killAndRerun(...args);
      }),
      { seed: 751318129, numRuns: 60 },
    );
  },
);

/**
 * Graham's bound for greedy list scheduling on `slots` slots, from the run's own events: after the
 * last node is staged no slot idles while a node waits, so the run ends by then + the nodes'
 * summed out-of-service time / slots + the longest one.
 */
function slotsBound(events: readonly { type: string; t?: number; node?: string }[], slots: number): number {
  const cordoned = new Map<string, number>();
  const times: number[] = [];
  let lastStaged = 0;
  for (const e of events) {
    if (e.type === 'staged') lastStaged = Math.max(lastStaged, e.t ?? 0);
    if (e.type === 'cordon' && e.node) cordoned.set(e.node, e.t ?? 0);
    if (e.type === 'uncordon' && e.node && cordoned.has(e.node)) times.push((e.t ?? 0) - cordoned.get(e.node)!);
  }
  const sum = times.reduce((a, b) => a + b, 0);
  return lastStaged + sum / Math.max(1, slots) + Math.max(0, ...times);
}

s('without faults: never more than the budget out at any instant, and slots keep every slot busy (within the list-scheduling bound)', async () => {
  await fc.assert(
    fc.asyncProperty(shapeArb, async (sh) => {
      const sim = (snap: Parameters<typeof newSim>[0]) => newSim(snap, { durations: D, jitter: { fraction: sh.jitter, seed: sh.seed } });
      const slots = build(sh, 'slots');
      const waves = build(sh, 'waves');
      const a = sim(slots.snap);
      const ra = await runApply(a, slots.plan, slots.replan);
      const b = sim(waves.snap);
      const rb = await runApply(b, waves.plan, waves.replan);
      assert.is(ra.code, 0, String(ra.error));
      assert.is(rb.code, 0, String(rb.error));
      const budget = slots.plan.pools[0].maxUnavailable.resolved;
      const before = sh.cordoned + sh.notReady;
      assert.ok(a.peakUnavailable.get('worker')! <= Math.max(budget, before), `peak ${a.peakUnavailable.get('worker')} > budget ${budget}`);
      const bound = slotsBound(ra.events, slots.plan.pools[0].waveSize) + slots.plan.pools[0].waves.length;
      assert.ok(ra.result!.durationSeconds <= bound, `slots ${ra.result!.durationSeconds} s, bound ${bound} s (waves ${rb.result!.durationSeconds} s)`);
    }),
    seeded(3113, 40),
  );
});

s.run();
