import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { forecastWaveDrain, mayRunOn, tolerates, type DrainCluster } from '../../src/domain/drain-forecast.ts';
import type { DrainNode } from '../../src/cluster/workloads.ts';
import { budget, pod } from '../support/drain.ts';

const s = suite('drain forecast of a wave');

const node = (name: string, extra: Partial<DrainNode> = {}): DrainNode => ({
  name,
  labels: {},
  unschedulable: false,
  taints: [],
  allocatable: { cpuMillis: 4000, memoryBytes: 16 * 2 ** 30, pods: 110 },
  ...extra,
});
const nodes = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5'].map((n) => node(n));
const api3 = ['w-1', 'w-2', 'w-3'].map((n, i) => pod(`api-${i + 1}`, n));

s('a wave that evicts no more pods of a budget than it allows is ok', () => {
  const c: DrainCluster = { pods: api3, budgets: [budget('api', { minAvailable: 2 }, {})], nodes };
  const f = forecastWaveDrain(c, ['w-1']);
  assert.is(f.class, 'ok');
  assert.equal(f.findings, []);
  assert.is(f.evicted, 1);
  assert.is(f.rounds, 1);
});

s('serialized: two pods of a budget allowing 1 in one wave take 2 rounds, with the numbers and the hint', () => {
  const c: DrainCluster = { pods: api3, budgets: [budget('api', { minAvailable: 2 }, {})], nodes };
  const f = forecastWaveDrain(c, ['w-1', 'w-2']);
  assert.is(f.class, 'serialized');
  assert.is(f.rounds, 2);
  const [x] = f.findings;
  assert.is(x.reason, 'serialized');
  assert.is(x.budget, 'payments/api');
  assert.equal(x.numbers, { currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3, evictions: 2 });
  assert.equal(x.pods, ['payments/api-1', 'payments/api-2']);
  assert.equal(x.nodes, ['w-1', 'w-2']);
  assert.is(x.message, 'PDB payments/api allows 1 at once; the wave evicts 2: 2 rounds, each waiting for the replacements to be Ready');
  assert.is(x.hint, "spread these nodes over more waves (at most 1 of this budget's pods per wave), or raise the budget");
});

s('blocked: minAvailable equal to the expected pods allows 0 disruptions', () => {
  const c: DrainCluster = { pods: api3, budgets: [budget('api', { minAvailable: 3 }, { desiredHealthy: 3, disruptionsAllowed: 0 })], nodes };
  const f = forecastWaveDrain(c, ['w-1']);
  assert.is(f.class, 'blocked');
  assert.is(f.findings[0].reason, 'min-available-all');
  assert.is(f.findings[0].message, 'PDB payments/api: minAvailable 3 of 3 healthy allows 0 disruptions');
  assert.is(f.findings[0].hint, 'scale to 4 or set maxUnavailable: 1 on PDB payments/api');
});

s('blocked: maxUnavailable 0', () => {
  const c: DrainCluster = { pods: api3, budgets: [budget('api', { maxUnavailable: 0 }, { desiredHealthy: 3, disruptionsAllowed: 0 })], nodes };
  const f = forecastWaveDrain(c, ['w-3']);
  assert.is(f.class, 'blocked');
  assert.is(f.findings[0].reason, 'max-unavailable-zero');
  assert.equal(f.findings[0].pods, ['payments/api-3']);
  assert.match(f.findings[0].hint, /set maxUnavailable: 1/);
});

s('blocked: a budget already below its desired healthy count; an unready pod under AlwaysAllow still goes', () => {
  const pods = [pod('api-1', 'w-1'), pod('api-2', 'w-2', { ready: false }), pod('api-3', 'w-3', { ready: false })];
  const below = budget('api', { minAvailable: 2 }, { currentHealthy: 1, desiredHealthy: 2, disruptionsAllowed: 0 });
  const f = forecastWaveDrain({ pods, budgets: [below], nodes }, ['w-1']);
  assert.is(f.class, 'blocked');
  assert.is(f.findings[0].reason, 'below-desired');
  assert.is(f.findings[0].message, 'PDB payments/api has 1 healthy of the 2 it needs (3 expected): it allows 0 disruptions now');
  assert.match(f.findings[0].hint, /bring its 2 unready pods back to Ready first \(unhealthyPodEvictionPolicy: AlwaysAllow/);
  // The unready pod on w-2: free under AlwaysAllow, refused under the default policy.
  assert.is(forecastWaveDrain({ pods, budgets: [{ ...below, unhealthyPodEvictionPolicy: 'AlwaysAllow' }], nodes }, ['w-2']).class, 'ok');
  assert.is(forecastWaveDrain({ pods, budgets: [below], nodes }, ['w-2']).class, 'blocked');
});

s('blocked: a pod under two budgets can never be evicted (the Eviction API answers 500)', () => {
  const c: DrainCluster = {
    pods: api3,
    budgets: [
      budget('api', { minAvailable: 1 }, { desiredHealthy: 1, disruptionsAllowed: 2 }),
      budget('all', { minAvailable: 1, selector: {} }, { desiredHealthy: 1, disruptionsAllowed: 2 }),
    ],
    nodes,
  };
  const f = forecastWaveDrain(c, ['w-2']);
  assert.is(f.class, 'blocked');
  assert.is(f.findings[0].reason, 'multiple-budgets');
  assert.is(f.findings[0].budget, 'payments/all, payments/api');
  assert.equal(f.findings[0].pods, ['payments/api-2']);
});

s('blocked: pods pinned to the wave by local volumes hold the budget until the wave ends', () => {
  const pods = ['w-1', 'w-2', 'w-3'].map((n, i) => pod(`db-${i}`, n, { pinnedTo: n, controller: { kind: 'StatefulSet', name: 'db' } }));
  const c: DrainCluster = { pods, budgets: [budget('api', { maxUnavailable: 1 }, {})], nodes };
  // One per wave: allowed.
  assert.is(forecastWaveDrain(c, ['w-1']).class, 'ok');
  // Two in one wave: the first eviction holds the only disruption while its pod waits for w-1.
  const f = forecastWaveDrain(c, ['w-1', 'w-2']);
  assert.is(f.class, 'blocked');
  assert.is(f.findings[0].reason, 'no-replacement');
  assert.match(f.findings[0].message, /allows 1 at once and 2 evicted pods of this wave cannot come back elsewhere/);
  // Not pinned: the same wave only waits for one replacement.
  const loose = { ...c, pods: pods.map((p) => ({ ...p, pinnedTo: null })) };
  assert.is(forecastWaveDrain(loose, ['w-1', 'w-2']).class, 'serialized');
});

s('outage: a single-replica workload without a budget, and one whose replicas all sit in the wave', () => {
  const pods = [
    pod('solo', 'w-1', { controller: { kind: 'ReplicaSet', name: 'solo-1' }, labels: { app: 'solo' } }),
    ...api3.map((p) => ({ ...p, labels: { app: 'web' } })),
  ];
  const f = forecastWaveDrain({ pods, budgets: [], nodes }, ['w-1']);
  assert.is(f.class, 'outage');
  assert.equal(
    f.findings.map((x) => [x.reason, x.pods]),
    [['unguarded-workload', ['payments/solo']]],
  );
  assert.is(
    f.findings[0].message,
    "ReplicaSet payments/solo-1 has its only ready replica on this wave's nodes and no PodDisruptionBudget: it is down during the drain",
  );
  const all = forecastWaveDrain({ pods, budgets: [], nodes }, ['w-1', 'w-2', 'w-3']);
  assert.equal(
    all.findings.map((x) => x.pods.length),
    [3, 1],
  );
  assert.match(all.findings[0].message, /all 3 ready replicas/);
  // Two of three in the wave: the workload keeps one.
  assert.is(forecastWaveDrain({ pods: pods.slice(1), budgets: [], nodes }, ['w-1', 'w-2']).class, 'ok');
});

s('no-room: the evicted pods do not fit the free allocatable of the nodes they may move to', () => {
  const small = (n: string) => node(n, { allocatable: { cpuMillis: 1000, memoryBytes: 4 * 2 ** 30, pods: 110 } });
  const big = pod('big', 'w-1', {
    requests: { cpuMillis: 800, memoryBytes: 1 << 30 },
    labels: { app: 'big' },
    controller: { kind: 'ReplicaSet', name: 'big-1' },
  });
  const filler = pod('filler', 'w-2', { requests: { cpuMillis: 500, memoryBytes: 1 << 30 }, labels: { app: 'f' } });
  const twin = pod('filler-2', 'w-2', { requests: { cpuMillis: 100, memoryBytes: 1 << 20 }, labels: { app: 'f' } });
  const c: DrainCluster = { pods: [big, filler, twin], budgets: [], nodes: [small('w-1'), small('w-2')] };
  const f = forecastWaveDrain(c, ['w-1']);
  assert.equal(
    f.findings.map((x) => [x.class, x.pods]),
    [
      ['no-room', ['payments/big']],
      ['outage', ['payments/big']],
    ],
  );
  assert.is(f.class, 'no-room');
  assert.match(f.findings[0].message, /first-fit estimate/);
  // Room on a third node: it fits, but a cordoned or tainted one does not count.
  assert.is(forecastWaveDrain({ ...c, nodes: [...c.nodes, small('w-3')] }, ['w-1']).findings[0].class, 'outage');
  assert.is(
    forecastWaveDrain({ ...c, nodes: [...c.nodes, small('w-3')].map((n) => (n.name === 'w-3' ? { ...n, unschedulable: true } : n)) }, ['w-1']).findings[0]
      .class,
    'no-room',
  );
  assert.is(
    forecastWaveDrain({ ...c, nodes: [...c.nodes, node('w-3', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] })] }, ['w-1']).findings[0]
      .class,
    'no-room',
  );
});

s('DaemonSet and mirror pods stay, terminal pods go freely, unmanaged pods and emptyDir data are named', () => {
  const pods = [
    pod('agent', 'w-1', { controller: { kind: 'DaemonSet', name: 'agent' }, labels: { app: 'api' } }),
    pod('static', 'w-1', { mirror: true, controller: { kind: 'Node', name: 'w-1' } }),
    pod('job-done', 'w-1', { phase: 'Succeeded', ready: false, controller: { kind: 'Job', name: 'j' }, labels: { app: 'job' } }),
    pod('debug', 'w-1', { controller: null, labels: { app: 'debug' } }),
    pod('cache', 'w-1', { emptyDir: true, labels: { app: 'cache' } }),
    pod('cache-2', 'w-2', { emptyDir: true, labels: { app: 'cache' } }),
  ];
  const budgets = [budget('api', { maxUnavailable: 0 }, { desiredHealthy: 1, expectedPods: 1, disruptionsAllowed: 0 })];
  const f = forecastWaveDrain({ pods, budgets, nodes }, ['w-1']);
  // The DaemonSet pod matches the blocking budget but is never evicted; the cache keeps its
  // replica on w-2; nothing recreates the unmanaged pod, so no workload is down.
  assert.is(f.class, 'ok', JSON.stringify(f.findings));
  assert.is(f.evicted, 2);
  assert.equal(f.effects, [
    { pod: 'payments/debug', node: 'w-1', effect: 'deleted-unmanaged' },
    { pod: 'payments/cache', node: 'w-1', effect: 'emptydir-lost' },
  ]);
});

s('tolerations as core/v1 ToleratesTaint; nodeSelector and cordons decide where a pod may run', () => {
  const gpu = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  assert.ok(tolerates([{ key: 'dedicated', operator: 'Equal', value: 'gpu' }], gpu));
  assert.ok(tolerates([{ operator: 'Exists' }], gpu));
  assert.ok(tolerates([{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }], gpu));
  assert.not.ok(tolerates([{ key: 'dedicated', operator: 'Equal', value: 'cpu' }], gpu));
  assert.not.ok(tolerates([{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }], gpu));
  const p = pod('x', 'w-1', { nodeSelector: { zone: 'a' } });
  assert.ok(mayRunOn(p, node('n', { labels: { zone: 'a' } })));
  assert.not.ok(mayRunOn(p, node('n', { labels: { zone: 'b' } })));
  assert.not.ok(mayRunOn(p, node('n', { labels: { zone: 'a' }, unschedulable: true })));
  assert.ok(mayRunOn(p, node('n', { labels: { zone: 'a' }, taints: [{ key: 'k', effect: 'PreferNoSchedule' }] })));
});

s.run();
