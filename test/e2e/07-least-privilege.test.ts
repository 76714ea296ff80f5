/**
 * Least privilege (issue "Sealed plans and hostile input"): the ServiceAccount of
 * examples/rbac.yaml, against the real API server with its ValidatingAdmissionPolicies,
 * writes bootcplan's own MachineConfigs and cordons nodes, and nothing more; it reads the
 * cluster's identity (the kube-system Namespace) and no other Namespace. The full apply
 * as this ServiceAccount is 05-apply.test.ts; every other field the policies pin, with full
 * applies under them, is 07-admission-policies.test.ts.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setupEnv, clientFor, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { KubeApiError } from '../../src/kube/rest.ts';
import type { TestKubeClient as KubeClient } from '../support/fake-api.ts';
import { rejects, sleep } from './helpers.ts';
import { readLiveSnapshot } from '../../src/kube/read.ts';
import { clusterIdentityOf } from '../../src/cluster/identity.ts';

const t = suite('e2e: least privilege of the bootcplan ServiceAccount');
let env: TestEnv;
let sa: KubeClient;

const MC = '/apis/machineconfiguration.openshift.io/v1/machineconfigs';
const MERGE = 'application/merge-patch+json';
const ROLE = 'machineconfiguration.openshift.io/role';

const bootcplanMc = (pool: string, spec: Record<string, unknown> = { osImageURL: 'quay.io/example/os@sha256:' + 'b'.repeat(64) }) => ({
  apiVersion: 'machineconfiguration.openshift.io/v1',
  kind: 'MachineConfig',
  metadata: { name: `99-${pool}-zz-bootcplan-os-image`, labels: { [ROLE]: pool, 'bootcplan.dev/managed-by': 'bootcplan' } },
  spec,
});

const denied = (e: unknown, what: RegExp) => e instanceof KubeApiError && (e.status === 403 || e.status === 422) && what.test(e.message);

/** Policies are loaded by the API server shortly after they are created; wait until the MachineConfig one denies. */
async function policiesActive() {
  for (let i = 0; i < 100; i++) {
    try {
      await sa.request('POST', MC, {
        body: { ...bootcplanMc('probe'), metadata: { name: 'probe-not-bootcplan', labels: { [ROLE]: 'probe', 'bootcplan.dev/managed-by': 'bootcplan' } } },
        query: { dryRun: 'All' },
      });
    } catch (err) {
      if (err instanceof KubeApiError && /bootcplan may only write its own MachineConfigs/.test(err.message)) return;
      throw err;
    }
    await sleep(100);
  }
  throw new Error('the ValidatingAdmissionPolicy bootcplan-machineconfigs never took effect');
}

t.before(async () => {
  env = await setupEnv();
  await resetCluster(env.admin);
  sa = clientFor(env.saKubeconfig!);
  await policiesActive();
  await loadObjects(env.admin, [
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'lp-1', labels: { 'node-role.kubernetes.io/worker': '' }, annotations: { 'machineconfiguration.openshift.io/state': 'Done' } },
      spec: {},
    },
    {
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'MachineConfig',
      metadata: { name: '00-worker', labels: { [ROLE]: 'worker' } },
      spec: { kernelArguments: ['quiet'] },
    },
  ]);
});

t('creates and patches its own osImageURL MachineConfig', async () => {
  await sa.request('POST', MC, { body: bootcplanMc('worker') });
  const next = 'quay.io/example/os@sha256:' + 'c'.repeat(64);
  await sa.request('PATCH', `${MC}/99-worker-zz-bootcplan-os-image`, { body: { spec: { osImageURL: next } }, contentType: MERGE });
  const mc = await env.admin.request('GET', `${MC}/99-worker-zz-bootcplan-os-image`);
  assert.is(mc.spec.osImageURL, next);
});

t('cannot create any other MachineConfig: other names, other content, a name that does not match its role', async () => {
  await rejects(
    () =>
      sa.request('POST', MC, {
        body: { ...bootcplanMc('worker'), metadata: { name: '50-worker-ssh', labels: { [ROLE]: 'worker', 'bootcplan.dev/managed-by': 'bootcplan' } } },
      }),
    (e) => denied(e, /only write its own MachineConfigs/),
  );
  await rejects(
    () => sa.request('POST', MC, { body: bootcplanMc('infra', { osImageURL: 'quay.io/x/y@sha256:' + 'd'.repeat(64), kernelArguments: ['init=/bin/sh'] }) }),
    (e) => denied(e, /spec.osImageURL and nothing else/),
  );
  await rejects(
    () => sa.request('POST', MC, { body: bootcplanMc('infra', { config: { ignition: { version: '3.4.0' }, storage: { files: [{ path: '/etc/x' }] } } }) }),
    (e) => denied(e, /nothing else/),
  );
  const mislabelled = bootcplanMc('infra');
  mislabelled.metadata.labels[ROLE] = 'master';
  await rejects(
    () => sa.request('POST', MC, { body: mislabelled }),
    (e) => denied(e, /only write its own MachineConfigs/),
  );
});

t('cannot patch another MachineConfig (RBAC by name), nor add content to its own (policy)', async () => {
  await rejects(
    () => sa.request('PATCH', `${MC}/00-worker`, { body: { spec: { kernelArguments: ['init=/bin/sh'] } }, contentType: MERGE }),
    (e) => e instanceof KubeApiError && e.status === 403,
  );
  await rejects(
    () => sa.request('PATCH', `${MC}/99-worker-zz-bootcplan-os-image`, { body: { spec: { kernelArguments: ['init=/bin/sh'] } }, contentType: MERGE }),
    (e) => denied(e, /nothing else/),
  );
  const mc = await env.admin.request('GET', `${MC}/00-worker`);
  assert.equal(mc.spec.kernelArguments, ['quiet']);
});

t('deletes its own osImageURL MachineConfig (the rollback of an MCO pool it created one for), and no other', async () => {
  await rejects(
    () => sa.request('DELETE', `${MC}/00-worker`, { body: { apiVersion: 'v1', kind: 'DeleteOptions' } }),
    (e) => e instanceof KubeApiError && e.status === 403,
  );
  assert.ok(await env.admin.request('GET', `${MC}/00-worker`));
  const own = await env.admin.request('GET', `${MC}/99-worker-zz-bootcplan-os-image`);
  await sa.request('DELETE', `${MC}/99-worker-zz-bootcplan-os-image`, {
    body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: own.metadata.resourceVersion } },
  });
  await rejects(
    () => env.admin.request('GET', `${MC}/99-worker-zz-bootcplan-os-image`),
    (e) => e?.name === 'NotFoundError' || (e instanceof KubeApiError && e.status === 404),
  );
});

t('on a Node: may cordon and write bootcplan.dev/ annotations; may not touch labels, taints, other annotations or the rest of the spec', async () => {
  const node = '/api/v1/nodes/lp-1';
  await sa.request('PATCH', node, {
    body: { spec: { unschedulable: true }, metadata: { annotations: { 'bootcplan.dev/cordoned-by': 'bootcplan' } } },
    contentType: MERGE,
  });
  await sa.request('PATCH', node, {
    body: { spec: { unschedulable: null }, metadata: { annotations: { 'bootcplan.dev/cordoned-by': null } } },
    contentType: MERGE,
  });
  for (const [body, why] of [
    [{ metadata: { labels: { 'node-role.kubernetes.io/master': '' } } }, /not metadata\.labels$/],
    [{ spec: { taints: [{ key: 'x', effect: 'NoSchedule' }] } }, /not spec\.taints$/],
    [
      { metadata: { annotations: { 'machineconfiguration.openshift.io/state': 'Working' } } },
      /not metadata\.annotations\.machineconfiguration\.openshift\.io\/state$/,
    ],
    // The API server allows providerID from "" to a value once; only the policy stops bootcplan.
    [{ spec: { providerID: 'aws:///us-east-1a/i-2' } }, /may change only spec\.unschedulable .* not spec\.providerID$/],
  ] as const) {
    await rejects(
      () => sa.request('PATCH', node, { body, contentType: MERGE }),
      (e) => denied(e, why),
      `denied: ${JSON.stringify(body)}`,
    );
  }
  const n = await env.admin.request('GET', node);
  assert.is(n.spec.unschedulable, undefined);
  assert.is(n.metadata.annotations['machineconfiguration.openshift.io/state'], 'Done');
  assert.is(n.metadata.labels['node-role.kubernetes.io/master'], undefined);
});

t('reads the cluster identity (the kube-system Namespace, by name, also as a watch) and no other Namespace', async () => {
  const ks = await sa.request('GET', '/api/v1/namespaces/kube-system');
  const listed = await sa.request('GET', '/api/v1/namespaces', { query: { fieldSelector: 'metadata.name=kube-system' } });
  assert.equal(
    listed.items.map((n: { metadata: { uid: string } }) => n.metadata.uid),
    [ks.metadata.uid],
  );
  await rejects(
    () => sa.request('GET', '/api/v1/namespaces/default'),
    (e) => e instanceof KubeApiError && e.status === 403,
  );
  await rejects(
    () => sa.request('GET', '/api/v1/namespaces'),
    (e) => e instanceof KubeApiError && e.status === 403,
  );
  // What a plan made as this ServiceAccount records: the API server's own uid for kube-system.
  const snap = await readLiveSnapshot(sa);
  assert.equal(clusterIdentityOf(snap), { kind: 'Namespace/kube-system.metadata.uid', id: ks.metadata.uid });
  assert.is(snap.server, new URL(env.server).host);
});

t('the namespace enforces the restricted Pod Security level', async () => {
  const ns = await env.admin.request('GET', '/api/v1/namespaces/openshift-bootcplan');
  assert.is(ns.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted');
  await rejects(
    () =>
      env.admin.request('POST', '/api/v1/namespaces/openshift-bootcplan/pods', {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'root' },
          spec: { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] },
        },
      }),
    (e) => e instanceof KubeApiError && e.status === 403 && /violates PodSecurity "restricted/.test(e.message),
  );
});

t.run();
