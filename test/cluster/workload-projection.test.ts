import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WorkloadCollector, parseQuantity, podRequests, projectBudget } from '../../src/cluster/workload-projection.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import type { KObject } from '../../src/cluster/types.ts';

const s = suite('workload projection');

const pod = (name: string, extra: Record<string, unknown> = {}): KObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: 'payments',
      name,
      labels: { app: 'api' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-7d9f', uid: 'u1', controller: true, blockOwnerDeletion: true }],
      ...((extra.metadata as object) ?? {}),
    },
    spec: {
      nodeName: 'worker-1',
      containers: [
        { name: 'app', image: 'x', resources: { requests: { cpu: '250m', memory: '128Mi' }, limits: { cpu: '1' } } },
        { name: 'sidecar', image: 'y', resources: { requests: { cpu: '0.1', memory: '64M' } } },
      ],
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      ...((extra.spec as object) ?? {}),
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' },
      ],
      ...((extra.status as object) ?? {}),
    },
  }) as unknown as KObject;

const pdb = (spec: Record<string, unknown>): KObject =>
  ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { namespace: 'payments', name: 'api', generation: 2 },
    spec: { selector: { matchLabels: { app: 'api' } }, ...spec },
    status: { observedGeneration: 2, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3 },
  }) as unknown as KObject;

s('quantities: decimal, binary, exponent, and not one', () => {
  assert.is(parseQuantity('100m'), 0.1);
  assert.is(parseQuantity('2'), 2);
  assert.is(parseQuantity('128Mi'), 128 * 2 ** 20);
  assert.is(parseQuantity('1G'), 1e9);
  assert.is(parseQuantity('129e6'), 129e6);
  assert.is(parseQuantity('.5'), 0.5);
  assert.is(parseQuantity('1.5Gi'), 1.5 * 2 ** 30);
  assert.is(parseQuantity('ten'), null);
  assert.is(parseQuantity('1Xi'), null);
  assert.is(parseQuantity(undefined), null);
});

s('requests: containers summed, at least the largest init container, plus overhead', () => {
  assert.equal(podRequests(pod('a').spec as Record<string, unknown>), { cpuMillis: 350, memoryBytes: 128 * 2 ** 20 + 64e6 });
  const spec = {
    containers: [{ resources: { requests: { cpu: '100m' } } }],
    initContainers: [{ resources: { requests: { cpu: '500m', memory: '1Gi' } } }],
    overhead: { cpu: '10m', memory: '1Mi' },
  };
  assert.equal(podRequests(spec), { cpuMillis: 510, memoryBytes: 2 ** 30 + 2 ** 20 });
});

s('a pod: node, controller, phase and Ready, mirror, emptyDir, local volume pin', () => {
  const c = new WorkloadCollector();
  c.add(
    pod('api-1', {
      spec: {
        volumes: [
          { name: 'cache', emptyDir: {} },
          { name: 'data', persistentVolumeClaim: { claimName: 'data-api-1' } },
        ],
      },
    }),
  );
  c.add(
    pod('etcd-master-0', {
      metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'master-0', uid: 'n' }], annotations: { 'kubernetes.io/config.mirror': 'abc' } },
      status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] },
    }),
  );
  c.add(pod('unscheduled', { spec: { nodeName: undefined } }));
  c.add({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { namespace: 'payments', name: 'data-api-1' },
    spec: { volumeName: 'local-pv-1' },
  } as unknown as KObject);
  c.add({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'local-pv-1' },
    spec: {
      local: { path: '/mnt/disks/1' },
      nodeAffinity: {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['worker-1.example'] }] }] },
      },
    },
  } as unknown as KObject);
  const w = c.finish((h) => (h === 'worker-1.example' ? 'worker-1' : h))!;
  assert.is(c.unscheduledPods, 1);
  assert.equal(
    w.pods.map((p) => p.name),
    ['api-1', 'etcd-master-0'],
  );
  const [api, etcd] = w.pods;
  assert.equal(api.controller, { kind: 'ReplicaSet', name: 'api-7d9f' });
  assert.is(api.ready, true);
  assert.is(api.emptyDir, true);
  assert.is(api.pinnedTo, 'worker-1');
  assert.is(api.mirror, false);
  assert.equal(api.tolerations, [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }]);
  assert.equal(api.nodeSelector, { 'kubernetes.io/os': 'linux' });
  assert.is(etcd.controller, null);
  assert.is(etcd.mirror, true);
  assert.is(etcd.ready, false);
  assert.is(etcd.phase, 'Pending');
  assert.is(etcd.pinnedTo, null);
});

s('a deleting pod', () => {
  const c = new WorkloadCollector();
  c.add(pod('api-2', { metadata: { deletionTimestamp: '2025-01-01T00:00:00Z' } }));
  assert.is(c.finish()!.pods[0].deleting, true);
});

s('a budget: spec, generation and status', () => {
  assert.equal(projectBudget(pdb({ minAvailable: 2, unhealthyPodEvictionPolicy: 'AlwaysAllow' })), {
    namespace: 'payments',
    name: 'api',
    minAvailable: 2,
    maxUnavailable: null,
    unhealthyPodEvictionPolicy: 'AlwaysAllow',
    generation: 2,
    selector: { matchLabels: { app: 'api' } },
    status: { observedGeneration: 2, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3 },
  });
  const pct = projectBudget(pdb({ maxUnavailable: '25%' }));
  assert.ok(!('path' in pct) && pct.maxUnavailable === '25%' && pct.unhealthyPodEvictionPolicy === null);
});

s('a budget the API server would refuse: both fields, a percentage that is not one', () => {
  assert.equal(projectBudget(pdb({ minAvailable: 1, maxUnavailable: 1 })), {
    path: 'spec',
    message: 'minAvailable and maxUnavailable are both set',
    expected: 'one of minAvailable and maxUnavailable',
  });
  assert.is((projectBudget(pdb({ minAvailable: '50' })) as { message: string }).message, '"50" is not a percentage');
  assert.is((projectBudget(pdb({ maxUnavailable: '150%' })) as { path: string }).path, 'spec.maxUnavailable');
  assert.is((projectBudget(pdb({ maxUnavailable: -1 })) as { message: string }).message, '-1 is not a count');
});

s('controllers: replicas, defaulting to 1', () => {
  const c = new WorkloadCollector();
  c.add({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { namespace: 'db', name: 'pg' }, spec: { replicas: 3 } } as unknown as KObject);
  c.add({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: 'payments', name: 'api' }, spec: {} } as unknown as KObject);
  c.add({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { namespace: 'payments', name: 'api-7d9f' }, spec: { replicas: 0 } } as unknown as KObject);
  assert.equal(c.finish()!.controllers, [
    { kind: 'Deployment', namespace: 'payments', name: 'api', replicas: 1 },
    { kind: 'ReplicaSet', namespace: 'payments', name: 'api-7d9f', replicas: 0 },
    { kind: 'StatefulSet', namespace: 'db', name: 'pg', replicas: 3 },
  ]);
});

s('no workload object: null (an older snapshot)', () => {
  const c = new WorkloadCollector();
  c.add({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } } as unknown as KObject);
  assert.is(c.finish(), null);
});

const file = (items: unknown[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 1);
const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker-1', labels: { 'kubernetes.io/hostname': 'worker-1' } } };

s('a snapshot file with pods and budgets fills workloads, outside the fingerprint', () => {
  const a = parseSnapshot(file([node, pod('api-1'), pdb({ minAvailable: 2 })]), 'a.json');
  assert.equal(a.diagnostics, []);
  assert.is(a.snapshot!.workloads!.pods.length, 1);
  assert.is(a.snapshot!.workloads!.budgets.length, 1);
  const b = parseSnapshot(file([node, pod('api-1', { status: { phase: 'Running', conditions: [] } })]), 'b.json');
  assert.is(b.snapshot!.workloads!.pods[0].ready, false);
  assert.is(a.snapshot!.fingerprint, b.snapshot!.fingerprint);
  const none = parseSnapshot(file([node]), 'c.json');
  assert.is(none.snapshot!.workloads, null);
});

s('a snapshot file with a budget the API server would refuse: a positioned diagnostic', () => {
  const r = parseSnapshot(file([node, pdb({ minAvailable: 1, maxUnavailable: '50' })]), 'bad.json');
  assert.is(r.snapshot, null);
  assert.is(r.diagnostics.length, 1);
  const d = r.diagnostics[0];
  assert.is(d.code, 'snapshot-invalid');
  assert.is(d.path, 'items[1].spec.maxUnavailable');
  assert.ok(d.line !== null && d.line > 1, `line ${d.line}`);
  assert.match(d.message, /"50" is not a percentage/);
});

s.run();
