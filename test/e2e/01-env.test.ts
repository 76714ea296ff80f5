/**
 * The test environment itself, the CRDs and RBAC, kubeconfig resolution, and reading a
 * cluster where bootcplan's CRDs are not installed.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, startEnv, setupEnv, clientFor, type TestEnv } from './env.ts';
import { readLiveObjects } from '../../src/kube/read.ts';
import { resolveKubeConfig } from '../../src/kube/config.ts';
import { ClusterApiError } from '../../src/base/errors.ts';
import { KubeApiError } from '../../src/kube/rest.ts';
import { rejects } from './helpers.ts';
import { io } from '../support/cli.ts';
import { run } from '../support/built.ts'; // the bundle, as the package ships it

const t = suite('e2e: environment, CRDs, RBAC, kubeconfig');
let env: TestEnv;

t.before(async () => {
  env = await startEnv();
});

t('a cluster without bootcplan CRDs: snapshot reads what exists and reports the rest as not installed', async () => {
  const read = await readLiveObjects(env.admin);
  // Nodes, and the kube-system Namespace that identifies the cluster (src/cluster/identity.ts).
  assert.equal(
    read.objects.filter((o) => o.kind !== 'Node').map((o) => `${o.kind}/${o.metadata.name}`),
    ['Namespace/kube-system'],
  );
  for (const r of [
    'bootcnodepools.node.bootc.dev',
    'bootcnodes.node.bootc.dev',
    'machineconfigpools.machineconfiguration.openshift.io',
    'machinesets.machine.openshift.io',
  ]) {
    assert.ok(read.notInstalled.includes(r), `${r} not installed: ${read.notInstalled.join(', ')}`);
  }
  const c = io();
  const code = await run(['snapshot', '--kubeconfig', env.kubeconfig], { io: c });
  assert.is(code, 0, c.err);
  assert.match(c.out, /kind: List/);
  assert.match(c.err, /not installed: .*bootcnodepools\.node\.bootc\.dev/);
  assert.match(c.err, /cluster identity: Namespace\/kube-system\.metadata\.uid [0-9a-f-]{36}\n/);
});

t('CRDs install, and the stored schemas keep every x-kubernetes-* field', async () => {
  const full = await setupEnv();
  assert.is(full.crdChecks.length, 11);
  for (const c of full.crdChecks) {
    assert.ok(c.expected > 0, `${c.name} declares x-kubernetes-* fields`);
    assert.equal(c.missing, [], `${c.name}: stored schema lost ${c.missing.join(', ')}`);
  }
  const mc = full.crdChecks.find((c) => c.name === 'machineconfigurations.operator.openshift.io')!;
  assert.ok(mc.expected >= 10, `MachineConfiguration keeps its CEL rules and list-map keys (${mc.expected})`);
});

t('the ServiceAccount of examples/rbac.yaml can do what apply needs and no more', async () => {
  const full = await setupEnv();
  const sa = clientFor(full.saKubeconfig);
  const review = async (verb: string, group: string, resource: string, namespace?: string, name?: string, subresource?: string) => {
    const r = await sa.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb, group, resource, namespace, name, subresource } },
      },
    });
    return r.status.allowed === true;
  };
  assert.ok(await review('patch', '', 'nodes', undefined, 'w-1'));
  assert.ok(await review('create', '', 'pods', 'default', 'p', 'eviction'));
  assert.ok(await review('patch', 'node.bootc.dev', 'bootcnodes', undefined, 'w-1'));
  assert.ok(await review('update', 'coordination.k8s.io', 'leases', 'openshift-bootcplan', 'bootcplan-lock'));
  assert.ok(await review('patch', 'operator.openshift.io', 'machineconfigurations', undefined, 'cluster'));
  assert.not.ok(await review('delete', '', 'nodes', undefined, 'w-1'), 'may not delete nodes');
  assert.not.ok(await review('delete', '', 'pods', 'default', 'p'), 'may not delete pods (evictions only)');
  assert.not.ok(await review('update', 'coordination.k8s.io', 'leases', 'kube-system', 'kube-controller-manager'), 'may not touch other leases');
  assert.not.ok(await review('patch', 'operator.openshift.io', 'machineconfigurations', undefined, 'other'));
  assert.not.ok(await review('get', '', 'secrets', 'openshift-machine-api', 'x'), 'no secrets');
  // Health checks: the ClusterOperators, the CA ConfigMap and the token Secret of the example, by name.
  assert.ok(await review('list', 'config.openshift.io', 'clusteroperators'));
  assert.ok(await review('get', '', 'configmaps', 'openshift-bootcplan', 'openshift-service-ca.crt'));
  assert.ok(await review('get', '', 'secrets', 'openshift-bootcplan', 'prometheus-reader'));
  assert.not.ok(await review('get', '', 'secrets', 'openshift-bootcplan', 'other'), 'no other Secret');
  assert.not.ok(await review('list', '', 'secrets', 'openshift-bootcplan'), 'no Secret list');
  await rejects(
    () => sa.request('DELETE', '/api/v1/nodes/w-1'),
    (e: unknown) => e instanceof KubeApiError && e.status === 403,
  );
});

t('kubeconfig resolution: --kubeconfig, KUBECONFIG, ~/.kube/config, and a clear error when none works', async () => {
  const home = tempDir('bootcplan-home-');
  const none = () => resolveKubeConfig({}, { HOME: home });
  assert.throws(none, (e: unknown) => e instanceof ClusterApiError && /no Kubernetes cluster configured/.test(e.message) && /--kubeconfig/.test(e.hint ?? ''));
  assert.is(resolveKubeConfig({}, { HOME: home, KUBECONFIG: `/nonexistent:${env.kubeconfig}` }).context, 'testenv');
  assert.is(resolveKubeConfig({ kubeconfig: env.kubeconfig }, { HOME: home }).origin, `kubeconfig ${env.kubeconfig}`);
  assert.throws(
    () => resolveKubeConfig({ kubeconfig: env.kubeconfig, context: 'nope' }, {}),
    (e: unknown) => e instanceof ClusterApiError && /context "nope"/.test(e.message) && /testenv/.test(e.hint ?? ''),
  );
  assert.throws(
    () => resolveKubeConfig({ kubeconfig: join(home, 'missing') }, {}),
    (e: unknown) => e instanceof ClusterApiError && /no such file/.test(e.message),
  );
  const bad = join(home, 'bad');
  writeFileSync(bad, 'clusters: [');
  assert.throws(
    () => resolveKubeConfig({ kubeconfig: bad }, {}),
    (e: unknown) => e instanceof ClusterApiError && /not valid/.test(e.message),
  );

  // Through the CLI: one message and a hint, exit 1, never a stack trace.
  const c = io({ env: { NO_COLOR: '1', HOME: home } });
  assert.is(await run(['snapshot'], { io: c }), 1);
  assert.match(c.err, /^error: no Kubernetes cluster configured/m);
  assert.match(c.err, /hint: pass --kubeconfig/);
  assert.not.match(c.err, /\n\s+at /);

  // A server that does not answer.
  const dead = join(home, 'dead');
  writeFileSync(
    dead,
    'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
  );
  const d = io({ env: { NO_COLOR: '1', HOME: home } });
  assert.is(await run(['plan', '-f', 'examples/rollout.yaml', '--kubeconfig', dead], { io: d }), 1);
  assert.match(d.err, /error: cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:1 \(context "x"\): ECONNREFUSED/);
  assert.not.match(d.err, /\n\s+at /);

  // Bad credentials.
  const wrong = join(home, 'wrong');
  writeFileSync(
    wrong,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${env.server}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: wrong}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
  );
  const w = io({ env: { NO_COLOR: '1', HOME: home } });
  assert.is(await run(['snapshot', '--kubeconfig', wrong], { io: w }), 1);
  assert.match(w.err, /401 Unauthorized/);
  assert.match(w.err, /hint: log in again/);
});

t.run();
