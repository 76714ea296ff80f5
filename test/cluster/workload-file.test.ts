import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { decodeWorkloads, encodeWorkloads } from '../../src/cluster/workload-file.ts';
import { snapshotText } from '../../src/app/snapshot.ts';
import * as workloadProjection from '../../src/cluster/workload-projection.ts';
import type { KObject } from '../../src/cluster/types.ts';

const s = suite('workload file');

const node = (name: string): KObject =>
  ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': `host-${name}` } }, spec: {}, status: {} }) as unknown as KObject;

function pod(i: number): KObject {
  const owned = i % 5 !== 0;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: i % 2 ? 'payments' : 'shop',
      name: `api-${i}`,
      labels: { app: `api-${i % 3}`, ...(i % 4 === 0 ? { 'statefulset.kubernetes.io/pod-name': `api-${i}` } : {}) },
      ...(owned
        ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: i % 2 ? 'ReplicaSet' : 'StatefulSet', name: `api-${i % 3}`, uid: 'u', controller: true }] }
        : {}),
      ...(i % 7 === 0 ? { annotations: { 'kubernetes.io/config.mirror': 'x' } } : {}),
      ...(i % 11 === 0 ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      nodeName: `n${i % 3}`,
      containers: [{ name: 'c', resources: { requests: { cpu: `${100 + i}m`, memory: `${i}Mi` } } }],
      volumes: [...(i % 3 === 0 ? [{ name: 'e', emptyDir: {} }] : []), ...(i === 4 ? [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }] : [])],
      tolerations: i % 2 ? [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }] : [],
      ...(i % 6 === 0 ? { nodeSelector: { disk: 'ssd' } } : {}),
    },
    status: { phase: i % 9 === 0 ? 'Pending' : 'Running', conditions: [{ type: 'Ready', status: i % 8 === 0 ? 'False' : 'True' }] },
  } as unknown as KObject;
}

const objects = (): KObject[] => [
  node('n0'),
  node('n1'),
  node('n2'),
  ...Array.from({ length: 30 }, (_, i) => pod(i)),
  { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'shop', name: 'unscheduled' }, spec: {}, status: { phase: 'Pending' } } as unknown as KObject,
  { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { namespace: 'shop', name: 'data' }, spec: { volumeName: 'pv-1' } } as unknown as KObject,
  {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-1' },
    spec: {
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['host-n1'] }] }] } },
    },
  } as unknown as KObject,
  ...[{ minAvailable: 2 }, { maxUnavailable: '25%', unhealthyPodEvictionPolicy: 'AlwaysAllow' }, {}].map(
    (spec, i) =>
      ({
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { namespace: 'payments', name: `api-${i}`, generation: 3 },
        spec: { ...(i < 2 ? { selector: { matchLabels: { app: `api-${i}` } } } : {}), ...spec },
        status: { observedGeneration: 3, currentHealthy: 4, desiredHealthy: 2, disruptionsAllowed: 2, expectedPods: 4 },
      }) as unknown as KObject,
  ),
  { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { namespace: 'payments', name: 'api-1' }, spec: { replicas: 3 } } as unknown as KObject,
  { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { namespace: 'shop', name: 'api-0' }, spec: {} } as unknown as KObject,
];

const meta = { source: 'live:test', server: 'https://api.example:6443' };

for (const format of ['json', 'yaml'] as const) {
  s(`a ${format} snapshot carries the projection: reading it back gives the same workloads`, () => {
    const live = snapshotFromObjects(objects(), 'live:test');
    assert.ok(live.workloads && live.workloads.pods.length === 30 && live.workloads.pods.some((p) => p.pinnedTo === 'n1'));
    const nonWorkload = objects().filter((o) => o.kind === 'Node');
    const text = snapshotText(nonWorkload, live.workloads, meta, format === 'json');
    assert.match(text, /bootcplan.dev\/snapshot-format/);
    const back = parseSnapshot(text, `s.${format}`);
    assert.equal(back.diagnostics, []);
    assert.equal(back.snapshot?.workloads, live.workloads);
    assert.is(back.snapshot?.fingerprint, live.fingerprint);
    // Written twice, the same bytes.
    assert.is(snapshotText(nonWorkload, back.snapshot!.workloads!, meta, format === 'json'), text);
  });
}

s('a snapshot without workloads (an older one, or a read refused): workloads null, no format annotation', () => {
  const text = snapshotText([node('n0')], null, meta, true);
  assert.not.match(text, /snapshot-format|WorkloadProjection/);
  assert.is(parseSnapshot(text, 'old.json').snapshot?.workloads, null);
  // A cluster with no pods at all is not an older snapshot: empty workloads, not null.
  const empty = parseSnapshot(snapshotText([node('n0')], { pods: [], budgets: [], controllers: [] }, meta, false), 'empty.yaml');
  assert.equal(empty.snapshot?.workloads, { pods: [], budgets: [], controllers: [] });
});

s('a pod costs well under 300 bytes of the file', () => {
  const live = snapshotFromObjects(objects(), 'live:test');
  const pods = Array.from({ length: 2000 }, (_, i) => ({ ...live.workloads!.pods[i % 30], name: `api-7d9f8c6b5-${String(i).padStart(5, '0')}` }));
  for (const json of [true, false]) {
    const bytes = snapshotText([], { ...live.workloads!, pods }, meta, json).length - snapshotText([], { ...live.workloads!, pods: [] }, meta, json).length;
    assert.ok(bytes / pods.length < 120, `${bytes / pods.length} bytes per pod`);
  }
});

s('an item edited by hand: a positioned diagnostic naming the row and column, never a crash', () => {
  const live = snapshotFromObjects(objects(), 'live:test');
  const item = encodeWorkloads(live.workloads!);
  const cases: [(i: typeof item) => void, RegExp][] = [
    [(i) => (i.pods[2][2] = 999), /pods\[2\]\[2\]/],
    [(i) => (i.pods[0] = [1]), /pods\[0\]/],
    [(i) => (i.budgets[0][2] = '50'), /budgets\[0\]\[2\]/],
    [(i) => ((i as unknown as { values: unknown }).values = 'x'), /values/],
    [(i) => (i.pods[1][3] = i.values.findIndex((v) => Array.isArray(v))), /pods\[1\]\[3\]/],
  ];
  for (const [edit, path] of cases) {
    const bad = structuredClone(item);
    edit(bad);
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [node('n0'), bad] }, null, 1);
    const r = parseSnapshot(text, 'bad.json');
    assert.is(r.snapshot, null);
    assert.is(r.diagnostics.length, 1);
    assert.is(r.diagnostics[0].code, 'snapshot-invalid');
    assert.match(r.diagnostics[0].path ?? '', path);
    assert.ok(r.diagnostics[0].line !== null, 'positioned');
  }
  const newer = parseSnapshot(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ ...item, apiVersion: 'snapshot.bootcplan.dev/v2' }] }), 'new.json');
  assert.match(newer.diagnostics[0].expected ?? '', /newer bootcplan/);
  assert.ok('path' in decodeWorkloads({ ...item, strings: 3 }));
});

s('a PodDisruptionBudget of a snapshot file is projected once (checked and kept in one pass)', () => {
  const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects() });
  let reads = 0;
  const parse = JSON.parse;
  // Count the reads of each budget's spec.minAvailable the projection makes (not enumerable: walks of the whole tree skip it).
  JSON.parse = ((t: string) => {
    const v = parse(t) as { items?: KObject[] };
    for (const o of v.items ?? []) {
      if (o.kind !== 'PodDisruptionBudget') continue;
      const spec = o.spec as Record<string, unknown>;
      const min = spec.minAvailable;
      delete spec.minAvailable;
      Object.defineProperty(spec, 'minAvailable', { enumerable: false, get: () => (reads++, min) });
    }
    return v;
  }) as typeof JSON.parse;
  try {
    const r = parseSnapshot(text, 's.json');
    assert.is(r.snapshot?.workloads?.budgets.length, 3);
  } finally {
    JSON.parse = parse;
  }
  assert.is(reads, 3);
});

s('collectors merge 300,000 pods (no spread of them onto the call stack), sharing equal label maps', () => {
  const { WorkloadCollector } = workloadProjection;
  const part = new WorkloadCollector();
  const one = pod(1);
  for (let i = 0; i < 300000; i++) part.add({ ...one, metadata: { ...one.metadata, name: `p-${i}`, labels: { app: 'x' } } } as KObject);
  const all = new WorkloadCollector();
  all.merge(part);
  const w = all.finish();
  assert.is(w?.pods.length, 300000);
  assert.ok(w!.pods[0].labels === w!.pods[299999].labels, 'one label map for equal ones');
});

s.run();
