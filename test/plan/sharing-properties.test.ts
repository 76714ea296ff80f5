/**
 * Properties of docs/safety.md rules 2 and 3 over random clusters (fast-check): bootc pools with
 * overlapping label selectors (the operator gave each node's BootcNode to the first pool that
 * took it), control-plane nodes that carry those labels too, and any maxUnavailable for master:
 * - no node is scheduled in two pools; a node two pools claim is scheduled in none, and the
 *   plan has an error naming it;
 * - the control-plane pool gets 1 written and waves of one, and asking for more is an error;
 * - a plan with no error, applied to the simulator, cordons only nodes of exactly one pool
 *   and never has two control-plane nodes out; a plan with an error is never applied.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, type TestNode } from '../support/cluster.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';
import type { Plan } from '../../src/plan/types.ts';
import { seeded } from '../support/seeds.ts';

const s = suite('sharing properties');

const LABELS = ['a', 'b', 'c'] as const;
const key = (l: string) => `example.com/${l}`;
const D = { stage: 50, drain: 5, reboot: 20, softReboot: 5, ready: 2 };

interface Shape {
  /** per worker node: the labels it carries (the first one decides its BootcNode's pool) */
  workers: (typeof LABELS)[number][][];
  /** per master (3): the labels it carries */
  masters: (typeof LABELS)[number][][];
  masterBudget: number | string | null;
}

// Mostly one label per worker and none on masters, so that many plans are free of errors and get applied.
const workerLabels = fc.oneof(
  { arbitrary: fc.constantFrom(...LABELS).map((l) => [l]), weight: 12 },
  { arbitrary: fc.subarray([...LABELS], { minLength: 1 }), weight: 1 },
);
const masterLabels = fc.oneof({ arbitrary: fc.constant([] as (typeof LABELS)[number][]), weight: 12 }, { arbitrary: fc.subarray([...LABELS]), weight: 1 });
const shapeArb: fc.Arbitrary<Shape> = fc.record({
  workers: fc.array(workerLabels, { minLength: 1, maxLength: 10 }),
  masters: fc.tuple(masterLabels, masterLabels, masterLabels).map((t) => [...t]),
  masterBudget: fc.constantFrom<number | string | null>(null, 1, 2, 3, '34%', '50%', '67%', '100%'),
});

function build(sh: Shape) {
  const b = new ClusterBuilder();
  const masters: TestNode[] = sh.masters.map((ls, i) => ({
    name: `m-${i}`,
    zone: `us-east-1${'abc'[i]}`,
    labels: Object.fromEntries(ls.map((l) => [key(l), ''])),
  }));
  b.mcoPool('master', masters);
  for (const pool of LABELS) {
    const own: TestNode[] = sh.workers.flatMap((ls, i) =>
      ls[0] === pool ? [{ name: `w-${i}`, zone: `us-east-1${'abc'[i % 3]}`, labels: Object.fromEntries(ls.map((l) => [key(l), ''])) }] : [],
    );
    b.bootcPool(`pool-${pool}`, own, { role: 'worker', selector: { matchLabels: { [key(pool)]: '' } } });
  }
  const pools = [
    ...LABELS.map((l) => ({ name: `pool-${l}`, image: NEW, maxUnavailable: 2 })),
    { name: 'master', image: NEW, ...(sh.masterBudget === null ? {} : { maxUnavailable: sh.masterBudget }) },
  ];
  return { snap: b.snapshot(), spec: specYaml(pools) };
}

/** The oracle: the bootc pools that claim each node (its labels; the BootcNode's owner is one of them). */
function claims(sh: Shape): Map<string, string[]> {
  const out = new Map<string, string[]>();
  sh.workers.forEach((ls, i) =>
    out.set(
      `w-${i}`,
      ls.map((l) => `pool-${l}`),
    ),
  );
  sh.masters.forEach((ls, i) =>
    out.set(
      `m-${i}`,
      ls.map((l) => `pool-${l}`),
    ),
  );
  return out;
}

const scheduledIn = (plan: Plan) => new Map(plan.pools.flatMap((p) => p.waves.flat().map((n) => [n, p.name] as const)));
const resolves = (b: number | string | null) => (b === null ? 1 : typeof b === 'number' ? b : Math.max(1, Math.floor((Number(b.slice(0, -1)) * 3) / 100)));

function checkPlan(sh: Shape, plan: Plan) {
  const where = new Map<string, string[]>();
  for (const p of plan.pools) for (const n of p.waves.flat()) where.set(n, [...(where.get(n) ?? []), p.name]);
  for (const [n, ps] of where) assert.is(ps.length, 1, `${n} scheduled in ${ps.join(', ')}`);
  const errors = plan.diagnostics.filter((d) => d.severity === 'error');
  for (const [node, pools] of claims(sh)) {
    const cp = node.startsWith('m-');
    const shared = pools.length >= 2 || (cp && pools.length >= 1);
    if (!shared) continue;
    assert.not.ok(
      cp ? [...(where.get(node) ?? [])].some((p) => p !== 'master') : where.has(node),
      `${node} (claimed by ${pools.join(', ')}${cp ? ' and master' : ''}) is scheduled`,
    );
    // A master claimed by a bootc pool is also claimed by master (the spec makes the MCO roll it).
    const codes = cp ? ['control-plane-node-in-pool', 'pool-node-conflict'] : ['pool-node-conflict'];
    assert.ok(
      errors.some((d) => codes.includes(d.code) && d.message.includes(node)),
      `${codes.join(' or ')} names ${node}`,
    );
  }
  const master = plan.pools.find((p) => p.name === 'master')!;
  assert.is(master.maxUnavailable.resolved, 1);
  assert.ok(master.waves.every((w) => w.length === 1));
  const mcp = plan.changes.find((c) => c.kind === 'MachineConfigPool' && c.name === 'master')!;
  assert.is((mcp.after as { spec: { maxUnavailable: number } }).spec.maxUnavailable, 1);
  // (a bootc pool that took only masters is a control-plane pool too, with its own finding)
  assert.is(
    errors.some((d) => d.code === 'control-plane-max-unavailable' && d.path === 'spec.pools[3].maxUnavailable'),
    resolves(sh.masterBudget) > 1,
    `master budget ${sh.masterBudget}`,
  );
}

s('plans: no node in two pools, shared nodes in none (with an error), the control plane 1 at a time', () => {
  fc.assert(
    fc.property(shapeArb, (sh) => {
      const { snap, spec } = build(sh);
      checkPlan(sh, planWith(spec, snap).plan);
    }),
    seeded(3106, 150),
  );
});

s('apply in the simulator: a plan with an error is refused; otherwise each cordon is of a node in one pool, and at most one master is out', async () => {
  let applied = 0;
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(shapeArb, async (sh) => {
      const { snap, spec } = build(sh);
      const { plan, replan } = planWith(spec, snap, { ...D });
      const sim = newSim(snap, { durations: D });
      const r = await runApply(sim, plan, replan);
      if (plan.summary.errors) {
        refused++;
        assert.is(r.code, 1);
        assert.equal(sim.cordons, []);
        assert.equal(sim.reboots, []);
        return;
      }
      applied++;
      assert.is(r.code, 0, String(r.error));
      const pools = scheduledIn(plan);
      for (const c of sim.cordons) assert.ok(pools.has(c.node), `${c.node} cordoned but in no wave`);
      for (const x of sim.reboots) assert.ok(pools.has(x.node), `${x.node} rebooted but in no wave`);
      assert.ok((sim.peakUnavailable.get('master') ?? 0) <= 1, `peak master unavailable ${sim.peakUnavailable.get('master')}`);
    }),
    seeded(3107, 50),
  );
  // Both branches ran (typically 10-20 applied and 30-40 refused of 50).
  assert.ok(applied >= 5 && refused >= 5, `applied ${applied}, refused ${refused}`);
});

s.run();
