/**
 * Least privilege, proven on the real API server (docs/safety.md "Least privilege"): RBAC lets
 * the ServiceAccount of examples/rbac.yaml patch whole objects, and the ValidatingAdmissionPolicies
 * of the same file pin everything bootcplan does not write. As the ServiceAccount, each attack
 * below is refused and leaves the object as it was (its resourceVersion unchanged); and two full
 * applies as the same ServiceAccount, with the policies in force, still succeed: the example
 * plan (examples/rollout.yaml on examples/cluster.yaml) and one that writes every kind bootcplan
 * writes (a bootc pool, an MCO-only pool and its MachineConfig, managed boot images, skew
 * enforcement, the CPMS strategy). 07-least-privilege.test.ts holds the MachineConfig and
 * Node basics.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { setupEnv, clientFor, resetCluster, loadObjects, tempDir, type TestEnv } from './env.ts';
import { sleep } from './helpers.ts';
import { NodeAgent } from './agent.ts';
import { KubeApiError, requestStats, resetRequestStats, type KubeClient } from '../../src/kube/rest.ts';
import { run } from '../../src/cli/main.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import type { KObject } from '../../src/cluster/types.ts';
import { io } from '../support/cli.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SA_CONTEXT = 'bootcplan@testenv';
const t = suite('e2e: the admission policies pin what bootcplan does not write');
let env: TestEnv;
let sa: KubeClient;
let agent: NodeAgent | null = null;
let dir: string;

const MERGE = 'application/merge-patch+json';
const NODE = '/api/v1/nodes/w-00';
const MCP = '/apis/machineconfiguration.openshift.io/v1/machineconfigpools/infra';
const BNP = '/apis/node.bootc.dev/v1alpha1/bootcnodepools/worker';
const BN = '/apis/node.bootc.dev/v1alpha1/bootcnodes/w-00';
const CPMS = '/apis/machine.openshift.io/v1/namespaces/openshift-machine-api/controlplanemachinesets/cluster';
const MCFG = '/apis/operator.openshift.io/v1/machineconfigurations/cluster';
const OWN_MC = '/apis/machineconfiguration.openshift.io/v1/machineconfigs/99-infra-zz-bootcplan-os-image';
const EVENTS = '/apis/events.k8s.io/v1/namespaces/default/events';
const EVIL = 'quay.io/evil/os@sha256:' + 'e'.repeat(64);

function cluster(): KObject[] {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3), { maxUnavailable: 1 }).mcoPool('infra', nodes('i', 2));
  b.add({
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: {
      name: '99-infra-zz-bootcplan-os-image',
      labels: { 'machineconfiguration.openshift.io/role': 'infra', 'bootcplan.dev/managed-by': 'bootcplan' },
    },
    spec: { osImageURL: 'quay.io/example/os@sha256:' + 'b'.repeat(64) },
  } as KObject);
  return b.objects;
}

/** `names`: what the refusal says the request would have changed. */
interface Attack {
  what: string;
  path: string;
  body?: unknown;
  post?: unknown;
  names: string;
}

/** Each write as the ServiceAccount; each was accepted before the policies pinned it. */
const ATTACKS: Attack[] = [
  {
    what: 'Node: an owner reference to an owner that does not exist (the garbage collector would delete the Node)',
    names: 'not metadata.ownerReferences',
    path: NODE,
    body: { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: '0b1d8bd6-8c4e-4a6e-9a47-2d6f3c2f0e11' }] } },
  },
  { what: 'Node: a finalizer', names: 'not metadata.finalizers', path: NODE, body: { metadata: { finalizers: ['example.com/hold'] } } },
  {
    what: 'Node: spec.podCIDR',
    names: 'not spec.podCIDR, spec.podCIDRs',
    path: NODE,
    body: { spec: { podCIDR: '10.128.0.0/24', podCIDRs: ['10.128.0.0/24'] } },
  },
  {
    what: 'MachineConfigPool: spec.nodeSelector',
    names: 'not spec.nodeSelector',
    path: MCP,
    body: { spec: { nodeSelector: { matchLabels: { 'node-role.kubernetes.io/master': '' } } } },
  },
  {
    what: 'MachineConfigPool: spec.machineConfigSelector',
    names: 'not spec.machineConfigSelector',
    path: MCP,
    body: { spec: { machineConfigSelector: { matchLabels: { 'machineconfiguration.openshift.io/role': 'master' } } } },
  },
  {
    what: 'MachineConfigPool: a label',
    names: 'not metadata.labels',
    path: MCP,
    body: { metadata: { labels: { 'pools.operator.machineconfiguration.openshift.io/master': '' } } },
  },
  {
    what: 'MachineConfigPool: an annotation that is not bootcplan.dev/',
    names: 'not metadata.annotations.machineconfiguration.openshift.io/mco-built-in',
    path: MCP,
    body: { metadata: { annotations: { 'machineconfiguration.openshift.io/mco-built-in': 'true' } } },
  },
  {
    what: 'BootcNodePool: spec.nodeSelector',
    names: 'not spec.nodeSelector',
    path: BNP,
    body: { spec: { nodeSelector: { matchLabels: { 'node-role.kubernetes.io/master': '' } } } },
  },
  {
    what: "BootcNodePool: spec.pullSecretRef (another namespace's pull secret)",
    names: 'not spec.pullSecretRef',
    path: BNP,
    body: { spec: { pullSecretRef: { name: 'pull-secret', namespace: 'openshift-config' } } },
  },
  {
    what: 'BootcNodePool: spec.rollout.rebootTimeoutSeconds',
    names: 'not spec.rollout.rebootTimeoutSeconds',
    path: BNP,
    body: { spec: { rollout: { rebootTimeoutSeconds: 1 } } },
  },
  { what: 'BootcNode: spec.desiredImage (the image the node boots)', names: 'not spec.desiredImage', path: BN, body: { spec: { desiredImage: EVIL } } },
  { what: 'BootcNode: its owner reference removed', names: 'not metadata.ownerReferences', path: BN, body: { metadata: { ownerReferences: null } } },
  {
    what: 'ControlPlaneMachineSet: the template (userDataSecret)',
    names: 'not spec.template',
    path: CPMS,
    body: {
      spec: { template: { machines_v1beta1_machine_openshift_io: { spec: { providerSpec: { value: { userDataSecret: { name: 'evil-user-data' } } } } } } },
    },
  },
  { what: 'MachineConfiguration: managementState Unmanaged', names: 'not spec.managementState', path: MCFG, body: { spec: { managementState: 'Unmanaged' } } },
  { what: 'MachineConfiguration: spec.logLevel', names: 'not spec.logLevel', path: MCFG, body: { spec: { logLevel: 'TraceAll' } } },
  {
    what: "MachineConfig (bootcplan's own): a finalizer",
    names: 'not metadata.finalizers',
    path: OWN_MC,
    body: { metadata: { finalizers: ['example.com/hold'] } },
  },
  {
    what: 'Event: reported as another controller',
    names: 'not as machineconfiguration.openshift.io/machine-config-daemon',
    path: EVENTS,
    post: {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'w-00.spoofed' },
      eventTime: '2026-09-14T08:00:00.000000Z',
      reportingController: 'machineconfiguration.openshift.io/machine-config-daemon',
      reportingInstance: 'w-00',
      action: 'Reboot',
      reason: 'Reboot',
      type: 'Normal',
      note: 'Node will reboot into config rendered-worker-evil',
      regarding: { apiVersion: 'v1', kind: 'Node', name: 'w-00' },
    },
  },
];

/** The fields a refusal names after its last "not ", in order of name. */
const changedFields = (message: string) =>
  message
    .slice(message.lastIndexOf('not ') + 4)
    .split(', ')
    .sort();

const refused = (e: unknown) => e instanceof KubeApiError && (e.status === 403 || e.status === 422) && /bootcplan may /.test(e.message);

async function attempt(a: Attack, dryRun: boolean): Promise<unknown> {
  const query = dryRun ? { dryRun: 'All' } : undefined;
  return a.post ? sa.request('POST', a.path, { body: a.post, query }) : sa.request('PATCH', a.path, { body: a.body, contentType: MERGE, query });
}

t.before(async () => {
  env = await setupEnv();
  sa = clientFor(env.saKubeconfig);
  dir = tempDir('bootcplan-e2e-vap-');
});
t.after(() => agent?.stop());

t('as the ServiceAccount, every attack is refused by a policy and changes nothing', async () => {
  await resetCluster(env.admin);
  await loadObjects(env.admin, cluster());
  const accepted: string[] = [];
  for (const a of ATTACKS) {
    // Policies take effect shortly after they are created: a dry run until one refuses.
    let err: unknown = null;
    for (let i = 0; i < 50 && !refused(err); i++) {
      err = await attempt(a, true).then(
        () => null,
        (e) => e,
      );
      if (!refused(err)) await sleep(100);
    }
    if (!refused(err)) {
      accepted.push(`${a.what}: ${err ? (err as Error).message : 'accepted'}`);
      continue;
    }
    const before = a.post ? null : await env.admin.request('GET', a.path);
    const real = await attempt(a, false).then(
      () => null,
      (e) => e,
    );
    assert.ok(refused(real), `${a.what}: ${(real as Error)?.message ?? 'accepted'}`);
    // The policies list the changed fields in CEL map order, which is Go's map order: random.
    assert.equal(changedFields((real as Error).message), changedFields(a.names), `${a.what}: ${(real as Error).message}`);
    if (before) assert.is((await env.admin.request('GET', a.path)).metadata.resourceVersion, before.metadata.resourceVersion, `${a.what}: unchanged`);
  }
  assert.equal(accepted, [], 'attacks the API server accepted');
});

t('a refusal names what the request would have changed', async () => {
  const e = await sa.request('PATCH', MCP, { body: { spec: { nodeSelector: { matchLabels: { x: 'y' } }, maxUnavailable: 2 } }, contentType: MERGE }).then(
    () => null,
    (x) => x,
  );
  assert.ok(refused(e));
  assert.match(
    (e as Error).message,
    /bootcplan may change only spec\.maxUnavailable, spec\.paused and its own bootcplan\.dev\/ annotations of a MachineConfigPool, not spec\.nodeSelector/,
  );
});

/** Runs `apply` as the ServiceAccount with the node agent; returns the requests it made by "VERB resource". */
async function applyAsServiceAccount(spec: string): Promise<Record<string, number>> {
  agent?.stop();
  agent = await new NodeAgent(env.admin, { scale: 1 }).start();
  resetRequestStats();
  const cap = io();
  const code = await run(['apply', '-f', spec, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: cap });
  assert.is(code, 0, cap.err);
  assert.equal(agent.errors, []);
  assert.not.match(cap.err, /warning/, 'no write was refused, not even a status or an Event');
  agent.stop();
  agent = null;
  return requestStats(SA_CONTEXT).byVerbResource;
}

t('the example plan (examples/rollout.yaml on examples/cluster.yaml) applies as the ServiceAccount with the policies in force', async () => {
  await resetCluster(env.admin);
  const list = parse(readFileSync(join(ROOT, 'examples/cluster.yaml'), 'utf8'));
  await loadObjects(env.admin, list.items);
  // The example's soaks (2 and 5 minutes) are real time; everything else is the example.
  const spec = parse(readFileSync(join(ROOT, 'examples/rollout.yaml'), 'utf8'));
  for (const p of spec.spec.pools) p.soakSeconds = 0;
  const file = join(dir, 'rollout.yaml');
  writeFileSync(file, stringify(spec));
  const writes = await applyAsServiceAccount(file);
  for (const w of ['PATCH nodes', 'PATCH bootcnodepools', 'PATCH bootcnodes', 'POST events']) assert.ok(writes[w], `${w}: ${JSON.stringify(writes)}`);
  const pools = await env.admin.request('GET', '/apis/node.bootc.dev/v1alpha1/bootcnodepools');
  for (const p of pools.items) assert.is(p.spec.image.ref, spec.spec.pools[0].image, `${p.metadata.name} targets the example image`);
});

t('an apply that writes every kind bootcplan writes succeeds with the policies in force', async () => {
  await resetCluster(env.admin);
  await loadObjects(env.admin, new ClusterBuilder().bootcPool('worker', nodes('w', 3)).mcoPool('infra', nodes('i', 2)).objects);
  const file = join(dir, 'every-kind.yaml');
  writeFileSync(
    file,
    specYaml(
      [
        { name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0, drainTimeoutSeconds: 60, rebootPolicy: 'AllowSoftReboot' },
        { name: 'infra', image: NEW, maxUnavailable: 1, soakSeconds: 0 },
      ],
      {
        managedBootImages: { machineManagers: [{ resource: 'machinesets', apiGroup: 'machine.openshift.io', selection: { mode: 'All' } }] },
        bootImageSkewEnforcement: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.22.0' } },
        controlPlaneMachineSet: { strategy: 'OnDelete' },
      },
    ),
  );
  const writes = await applyAsServiceAccount(file);
  for (const w of [
    'PATCH nodes',
    'PATCH machineconfigpools',
    'POST machineconfigs',
    'PATCH bootcnodepools',
    'PATCH bootcnodes',
    'PATCH machineconfigurations',
    'PATCH controlplanemachinesets',
    'POST events',
  ]) {
    assert.ok(writes[w], `${w} was written: ${JSON.stringify(writes)}`);
  }
  const cpms = await env.admin.request('GET', CPMS);
  assert.is(cpms.spec.strategy.type, 'OnDelete');
  const mcfg = await env.admin.request('GET', MCFG);
  assert.equal(mcfg.spec.bootImageSkewEnforcement, { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.22.0' } });
  const mc = await env.admin.request('GET', OWN_MC);
  assert.is(mc.spec.osImageURL, NEW);
});

t.run();
