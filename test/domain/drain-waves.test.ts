/**
 * Waves spread over the PodDisruptionBudgets (src/domain/drain-waves.ts): the demand each node's
 * drain puts on each budget, the first-fit split, and the property that no wave asks a budget
 * for more disruptions than it allows whenever a split exists.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { seeded } from '../support/seeds.ts';
import { budgetDemand, spreadBudgetWaves } from '../../src/domain/drain-waves.ts';
import { planWaves } from '../../src/domain/waves.ts';
import type { DrainBudget, DrainPod } from '../../src/cluster/workloads.ts';
import { pod as drainPod } from '../support/drain.ts';

const s = suite('drain waves');

/** A pod of `app` in namespace ns, asking for nothing (room is not what these waves weigh). */
const pod = (name: string, node: string, app: string, extra: Partial<DrainPod> = {}): DrainPod =>
  drainPod(name, node, {
    namespace: 'ns',
    labels: { app },
    controller: { kind: 'ReplicaSet', name: app },
    requests: { cpuMillis: 0, memoryBytes: 0 },
    ...extra,
  });
const budget = (app: string, allowed: number, expected = 5): DrainBudget => ({
  namespace: 'ns',
  name: app,
  selector: { matchLabels: { app } },
  minAvailable: expected - allowed,
  maxUnavailable: null,
  unhealthyPodEvictionPolicy: null,
  generation: 1,
  status: { observedGeneration: 1, currentHealthy: expected, desiredHealthy: expected - allowed, disruptionsAllowed: allowed, expectedPods: expected },
});

s('demand counts the pods each budget is asked for; DaemonSet, mirror, finished and doubly covered pods ask none', () => {
  const pods = [
    pod('a-1', 'n1', 'a'),
    pod('a-2', 'n1', 'a'),
    pod('ds', 'n1', 'a', { controller: { kind: 'DaemonSet', name: 'ds' } }),
    pod('mirror', 'n1', 'a', { mirror: true }),
    pod('done', 'n1', 'a', { phase: 'Succeeded' }),
    pod('pending', 'n2', 'a', { phase: 'Pending' }),
  ];
  const { demand, allowed } = budgetDemand(pods, [budget('a', 2)]);
  assert.equal([...(demand.get('n1') ?? [])], [['ns/a', 2]]);
  assert.is(demand.get('n2'), undefined);
  assert.is(allowed.get('ns/a'), 2);
  const two = budgetDemand([pod('a-1', 'n1', 'a')], [budget('a', 2), { ...budget('b', 1), selector: {} }]);
  assert.is(two.demand.size, 0);
});

s('no demand: the consecutive slices of planWaves', () => {
  const names = ['a', 'b', 'c', 'd', 'e'];
  assert.equal(spreadBudgetWaves(names, 2, new Map(), new Map()).waves, planWaves(names, 2));
});

s('3 nodes with a pod each of a budget allowing 1, size 3: 3 waves', () => {
  const demand = new Map(['n1', 'n2', 'n3'].map((n) => [n, new Map([['ns/a', 1]])]));
  assert.equal(spreadBudgetWaves(['n1', 'n2', 'n3'], 3, demand, new Map([['ns/a', 1]])).waves, [['n1'], ['n2'], ['n3']]);
});

s('a node that alone asks too much goes where no other asks the budget, and is reported; a budget allowing 0 does not split', () => {
  const demand = new Map([
    ['n1', new Map([['ns/a', 2]])],
    ['n2', new Map([['ns/a', 1]])],
    ['n3', new Map([['ns/z', 1]])],
    ['n4', new Map([['ns/z', 1]])],
  ]);
  const r = spreadBudgetWaves(
    ['n1', 'n2', 'n3', 'n4'],
    4,
    demand,
    new Map([
      ['ns/a', 1],
      ['ns/z', 0],
    ]),
  );
  assert.equal(r.waves, [['n1', 'n3', 'n4'], ['n2']]);
  assert.equal(r.unmet, [{ node: 'n1', budget: 'ns/a', need: 2, allowed: 1 }]);
});

s('the last node stays in the last wave', () => {
  const demand = new Map([
    ['n1', new Map([['ns/a', 1]])],
    ['n2', new Map([['ns/a', 1]])],
  ]);
  assert.equal(spreadBudgetWaves(['n1', 'n2', 'n3'], 3, demand, new Map([['ns/a', 1]]), 'n3').waves, [['n1'], ['n2', 'n3']]);
});

s('property: every wave within its size and each budget, every node once, when each node alone fits', () => {
  const arb = fc.record({
    nodes: fc.integer({ min: 1, max: 30 }),
    size: fc.integer({ min: 1, max: 6 }),
    budgets: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }),
    demands: fc.array(fc.tuple(fc.nat(29), fc.nat(3), fc.integer({ min: 1, max: 3 })), { maxLength: 60 }),
  });
  fc.assert(
    fc.property(arb, ({ nodes, size, budgets, demands }) => {
      const names = Array.from({ length: nodes }, (_, i) => `n${i}`);
      const allowed = new Map(budgets.map((a, i) => [`b${i}`, a]));
      const demand = new Map<string, Map<string, number>>();
      for (const [n, b, k] of demands) {
        const node = names[n % nodes];
        const key = `b${b % budgets.length}`;
        const m = demand.get(node) ?? new Map<string, number>();
        m.set(key, (m.get(key) ?? 0) + k);
        demand.set(node, m);
      }
      const { waves, unmet } = spreadBudgetWaves(names, size, demand, allowed);
      assert.equal(waves.flat().sort(), [...names].sort());
      for (const w of waves) {
        assert.ok(w.length >= 1 && w.length <= size);
        const used = new Map<string, number>();
        for (const n of w) for (const [b, k] of demand.get(n) ?? []) used.set(b, (used.get(b) ?? 0) + k);
        for (const [b, k] of used) {
          const a = allowed.get(b) ?? 0;
          // A feasible split exists per budget whenever each node alone fits it (one node per wave);
          // a budget allowing 0 blocks every wave alike, and an unmet node is alone with its budget.
          if (a === 0) continue;
          const alone = w.filter((n) => (demand.get(n)?.get(b) ?? 0) > 0);
          if (unmet.some((u) => u.budget === b && alone.includes(u.node))) assert.is(alone.length, 1);
          else assert.ok(k <= a, `wave ${w.join(',')} asks ${b} for ${k} > ${a}`);
        }
      }
    }),
    seeded(33_001, 300),
  );
});

s.run();
