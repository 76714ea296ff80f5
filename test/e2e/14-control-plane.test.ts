/**
 * The control plane the drain suites stand on (test/e2e/control-plane.ts): the real
 * kube-controller-manager and kube-scheduler against the test API server, with the test's
 * kubelet stand-in. What a drain forecast relies on must hold here as on a cluster: the
 * disruption controller computes a PodDisruptionBudget's status from the pods, the Eviction API
 * refuses what the budget does not allow (429), the ReplicaSet controller replaces an evicted
 * pod and the scheduler places it on a schedulable node, the garbage collector removes what a
 * deleted Deployment owned.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeApiError } from '../../src/kube/api-errors.ts';
import { alive, PodKubelet, registerNode, startControlPlane, until, type ControlPlane } from './control-plane.ts';

const t = suite('control plane: controller-manager, scheduler and the kubelet stand-in');
let cp: ControlPlane;
let kubelet: PodKubelet;

interface PdbStatus {
  currentHealthy?: number;
  desiredHealthy?: number;
  disruptionsAllowed?: number;
  expectedPods?: number;
  observedGeneration?: number;
}
interface PodItem {
  metadata: { name: string; deletionTimestamp?: string; ownerReferences?: { kind: string }[] };
  spec: { nodeName?: string };
  status?: { phase?: string };
}

const NS = 'default';
const pdbStatus = async (name: string) =>
  ((await cp.admin.request('GET', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${name}`)).status ?? {}) as PdbStatus;
const podsOf = async (app: string) =>
  ((await cp.admin.request('GET', `/api/v1/namespaces/${NS}/pods`, { query: { labelSelector: `app=${app}` } })) as { items: PodItem[] }).items;
const readyPods = (pods: PodItem[]) => pods.filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
const evict = (pod: string) =>
  cp.admin.request('POST', `/api/v1/namespaces/${NS}/pods/${pod}/eviction`, {
    body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: NS } },
  });

function deployment(name: string, replicas: number): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m', memory: '64Mi' } } }] },
      },
    },
  };
}

t.before(async () => {
  cp = await startControlPlane();
  console.log(`e2e: control plane (kube-apiserver, kube-controller-manager, kube-scheduler) started in ${cp.startSeconds.toFixed(1)}s`);
  for (const n of ['w-1', 'w-2', 'w-3']) await registerNode(cp.admin, n, { 'node-role.kubernetes.io/worker': '' });
  kubelet = new PodKubelet(cp.admin, { readyDelayMs: 150, jitterMs: 150 }).start();
});

t.after(() => {
  kubelet?.stop();
});

t('a Deployment of 3 is scheduled, made Ready, and its PDB status is computed by the disruption controller', async () => {
  await cp.admin.request('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, { body: deployment('web', 3) });
  await cp.admin.request('POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
    body: {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'web', namespace: NS },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    },
  });
  const pods = await until(
    '3 Running pods of web',
    () => podsOf('web'),
    (p) => readyPods(p).length === 3,
  );
  for (const p of pods) {
    assert.ok(p.spec.nodeName && /^w-[123]$/.test(p.spec.nodeName), `${p.metadata.name} placed by the scheduler: ${p.spec.nodeName}`);
    assert.is(p.metadata.ownerReferences?.[0]?.kind, 'ReplicaSet', 'created by the ReplicaSet controller');
  }
  const s = await until(
    'the PDB status',
    () => pdbStatus('web'),
    (s) => s.currentHealthy === 3,
  );
  assert.equal(
    { currentHealthy: s.currentHealthy, desiredHealthy: s.desiredHealthy, disruptionsAllowed: s.disruptionsAllowed, expectedPods: s.expectedPods },
    { currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3 },
  );
});

t('the Eviction API refuses what the budget does not allow; the evicted pod is replaced and the budget frees up', async () => {
  const [a, b] = readyPods(await podsOf('web')).map((p) => p.metadata.name);
  await evict(a);
  // The disruption controller has not yet seen the eviction's effect: the API server itself
  // counted it (status.disruptedPods), so a second eviction at once is refused.
  try {
    await evict(b);
    assert.unreachable('the second eviction should have been refused');
  } catch (e) {
    if (!(e instanceof KubeApiError)) throw e;
    assert.is(e.status, 429, e.message);
    assert.match(e.message, /disruption budget/i);
  }
  await until(
    'the evicted pod removed by the kubelet stand-in',
    async () => kubelet.removed,
    (r) => r.includes(`${NS}/${a}`),
  );
  const pods = await until(
    'a replacement Running',
    () => podsOf('web'),
    (p) => readyPods(p).length === 3 && !p.some((x) => x.metadata.name === a),
  );
  assert.ok(
    pods.every((p) => p.spec.nodeName),
    'the replacement is bound',
  );
  await until(
    'the budget allows 1 again',
    () => pdbStatus('web'),
    (s) => s.currentHealthy === 3 && s.disruptionsAllowed === 1,
  );
  await evict(b);
});

t('a PDB with maxUnavailable 0 refuses every eviction', async () => {
  await cp.admin.request('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, { body: deployment('db', 2) });
  await cp.admin.request('POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
    body: {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'db', namespace: NS },
      spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'db' } } },
    },
  });
  await until(
    '2 Running pods of db',
    () => podsOf('db'),
    (p) => readyPods(p).length === 2,
  );
  const s = await until(
    'the db PDB status',
    () => pdbStatus('db'),
    (s) => s.currentHealthy === 2,
  );
  assert.is(s.disruptionsAllowed, 0);
  assert.is(s.desiredHealthy, 2, 'maxUnavailable 0 of the Deployment scale 2');
  const [pod] = readyPods(await podsOf('db')).map((p) => p.metadata.name);
  try {
    await evict(pod);
    assert.unreachable('the eviction should have been refused');
  } catch (e) {
    if (!(e instanceof KubeApiError)) throw e;
    assert.is(e.status, 429, e.message);
  }
});

t('the garbage collector removes the ReplicaSets and pods of a deleted Deployment', async () => {
  await cp.admin.request('DELETE', `/apis/apps/v1/namespaces/${NS}/deployments/db`, {
    body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' },
  });
  await until(
    'the db pods gone',
    () => podsOf('db'),
    (p) => p.length === 0,
  );
  const rs = (await cp.admin.request('GET', `/apis/apps/v1/namespaces/${NS}/replicasets`, { query: { labelSelector: 'app=db' } })) as { items: unknown[] };
  assert.is(rs.items.length, 0);
  assert.ok(alive(cp.controllerManagerPid), 'kube-controller-manager still running');
  assert.ok(alive(cp.schedulerPid), 'kube-scheduler still running');
});

t.run();
