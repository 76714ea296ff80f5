/**
 * The e2e test environment: a real kube-apiserver + etcd from scripts/testenv (built once
 * and cached), bootcplan's CRDs, the RBAC of examples/rbac.yaml and a ServiceAccount token.
 * Started once per process (the first suite's `before` hook), stopped at process exit
 * (test/run.ts ends with process.exit, which runs the hook; Ctrl-C too).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeClientOptions } from '../../src/kube/rest.ts';
import { TestKubeClient as KubeClient } from '../support/fake-api.ts';
import { KubeDriver, type KubeDriverOptions } from '../../src/kube/driver.ts';
import { resourceOf, collectionPath, objectPath, RESOURCES } from '../../src/kube/resources.ts';
import type { KObject } from '../../src/cluster/types.ts';
import { NotFoundError, AlreadyExistsError } from '../../src/apply/ports/driver.ts';

const ROOT = resolve(import.meta.dirname, '../..');
export const CRD_DIR = join(ROOT, 'deploy/crds');

export interface TestEnv {
  dir: string;
  server: string;
  kubeconfig: string;
  /** kubeconfig of the bootcplan ServiceAccount (examples/rbac.yaml), after setup() */
  saKubeconfig: string;
  admin: KubeClient;
  version: string;
  startSeconds: number;
}

let envPromise: Promise<TestEnv> | null = null;
let setupPromise: Promise<TestEnv> | null = null;
let stopDir: string | null = null;

/** Temp dirs of the suites (spec files, the ServiceAccount kubeconfig), removed at exit. */
export const tempDirs: string[] = [];
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}

function stopAtExit() {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
  if (!stopDir) return;
  const dir = stopDir;
  stopDir = null;
  spawnSync(join(ROOT, 'scripts/testenv/stop.sh'), [dir], { stdio: 'ignore' });
}
process.on('exit', stopAtExit);
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    stopAtExit();
    process.exit(130);
  });

export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

export function clientFor(kubeconfig: string, opts: KubeClientOptions = {}): KubeClient {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return new KubeClient(kc, opts);
}

/** Starts kube-apiserver + etcd (no CRDs yet). */
export function startEnv(): Promise<TestEnv> {
  envPromise ??= (async () => {
    const t0 = Date.now();
    let out: string;
    try {
      out = execFileSync(join(ROOT, 'scripts/testenv/start.sh'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
    } catch (err) {
      const e = err as { stderr?: string };
      throw new Error(`scripts/testenv/start.sh failed:\n${(e.stderr ?? '').split('\n').slice(-30).join('\n')}`, { cause: err });
    }
    const dir = out.trim().split('\n').pop()!;
    stopDir = dir;
    const env = parseEnvFile(readFileSync(join(dir, 'env'), 'utf8'));
    const admin = clientFor(env.KUBECONFIG);
    const v = await admin.request('GET', '/version');
    let etcd = '';
    try {
      etcd = execFileSync(join(env.KUBEBUILDER_ASSETS, 'etcd'), ['--version'], { encoding: 'utf8' })
        .split('\n')[0]
        .replace(/^etcd Version:\s*/, 'etcd ');
    } catch {
      /* informative only */
    }
    const startSeconds = (Date.now() - t0) / 1000;
    console.log(
      `e2e: kube-apiserver ${v.gitVersion} (${v.goVersion}, ${v.platform})${etcd ? `, ${etcd}` : ''} at ${env.TESTENV_SERVER}; started in ${startSeconds.toFixed(1)}s`,
    );
    return { dir, server: env.TESTENV_SERVER, kubeconfig: env.KUBECONFIG, saKubeconfig: '', admin, version: v.gitVersion, startSeconds };
  })();
  return envPromise;
}

/** Walks a schema and lists the JSON paths of every x-kubernetes-* key (with its value). */
export function xKubernetesFields(schema: unknown, path = ''): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (v: unknown, p: string) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${p}[${i}]`));
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k.startsWith('x-kubernetes-')) out.set(`${p}.${k}`, JSON.stringify(x));
        else walk(x, `${p}.${k}`);
      }
    }
  };
  walk(schema, path);
  return out;
}

export function crdDocuments(): KObject[] {
  const out: KObject[] = [];
  for (const f of readdirSync(CRD_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    for (const d of parseAllDocuments(readFileSync(join(CRD_DIR, f), 'utf8'))) {
      const o = d.toJS();
      if (o) out.push(o);
    }
  }
  return out;
}

export interface CrdCheck {
  name: string;
  expected: number;
  missing: string[];
}

/** Creates the CRDs, waits until they are Established, and compares the stored x-kubernetes-* fields. */
export async function installCrds(admin: KubeClient): Promise<CrdCheck[]> {
  const crdType = resourceOf('apiextensions.k8s.io/v1', 'CustomResourceDefinition')!;
  const docs = crdDocuments();
  await Promise.all(
    docs.map(async (crd) => {
      try {
        await admin.request('POST', collectionPath(crdType), { body: crd });
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
      }
    }),
  );
  const checks: CrdCheck[] = [];
  for (const crd of docs) {
    const deadline = Date.now() + 30_000;
    let stored: any;
    for (;;) {
      stored = await admin.request('GET', objectPath(crdType, crd.metadata.name));
      if ((stored.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not Established after 30s: ${JSON.stringify(stored.status?.conditions)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const want = xKubernetesFields(crd.spec);
    const got = xKubernetesFields(stored.spec);
    const missing = [...want].filter(([p, v]) => got.get(p) !== v).map(([p]) => p);
    checks.push({ name: crd.metadata.name, expected: want.size, missing });
  }
  return checks;
}

function fakeUid(s: string): string {
  const h = createHash('sha1').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Creates an object, then writes its status through the status subresource. */
export async function createWithStatus(admin: KubeClient, obj: KObject): Promise<KObject> {
  const r = resourceOf(obj.apiVersion, obj.kind);
  if (!r) throw new Error(`unknown kind ${obj.kind}`);
  const { status, ...rest } = structuredClone(obj);
  const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, generation: _g, managedFields: _mf, ...metadata } = rest.metadata as any;
  // Snapshot builders leave owner uids out; the API requires one (no garbage collector runs here).
  if (metadata.ownerReferences) {
    metadata.ownerReferences = metadata.ownerReferences.map((o: any) => ({ ...o, uid: o.uid || fakeUid(`${o.kind}/${o.name}`) }));
  }
  let created: KObject = await admin.request('POST', collectionPath(r, metadata.namespace), { body: { ...rest, metadata } });
  if (status && Object.keys(status).length) {
    created = await admin.request('PATCH', `${objectPath(r, metadata.name, metadata.namespace)}/status`, {
      body: { status },
      contentType: 'application/merge-patch+json',
    });
  }
  return created;
}

export async function ensureNamespace(admin: KubeClient, name: string): Promise<void> {
  try {
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}

const RBAC_TYPES: Record<string, string> = {
  Namespace: '/api/v1/namespaces',
  ServiceAccount: '/api/v1/namespaces/{ns}/serviceaccounts',
  ClusterRole: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  ClusterRoleBinding: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
  Role: '/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles',
  RoleBinding: '/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings',
  ValidatingAdmissionPolicy: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
};

/** Creates the objects of examples/rbac.yaml (kubectl apply, for an empty cluster). */
export async function applyRbac(admin: KubeClient): Promise<string[]> {
  const created: string[] = [];
  for (const d of parseAllDocuments(readFileSync(join(ROOT, 'examples/rbac.yaml'), 'utf8'))) {
    const o = d.toJS() as KObject;
    if (!o) continue;
    const path = RBAC_TYPES[o.kind]?.replace('{ns}', o.metadata.namespace ?? '');
    if (!path) throw new Error(`examples/rbac.yaml: unexpected kind ${o.kind}`);
    // A namespace that exists on OpenShift (openshift-monitoring) but not in the test cluster.
    if (o.metadata.namespace && o.metadata.namespace !== 'openshift-bootcplan') await ensureNamespace(admin, o.metadata.namespace);
    try {
      await admin.request('POST', path, { body: o });
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
    created.push(`${o.kind}/${o.metadata.namespace ? o.metadata.namespace + '/' : ''}${o.metadata.name}`);
  }
  return created;
}

/** A token for the bootcplan ServiceAccount (TokenRequest API) and a kubeconfig that uses it. */
export async function serviceAccountKubeconfig(env: TestEnv): Promise<string> {
  const tr = await env.admin.request('POST', '/api/v1/namespaces/openshift-bootcplan/serviceaccounts/bootcplan/token', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 3600 } },
  });
  const ca = readFileSync(join(env.dir, 'ca.crt')).toString('base64');
  const dir = tempDir('bootcplan-e2e-');
  const path = join(dir, 'sa.kubeconfig');
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: testenv',
      '  cluster:',
      `    server: ${env.server}`,
      `    certificate-authority-data: ${ca}`,
      'users:',
      '- name: bootcplan',
      '  user:',
      `    token: ${tr.status.token}`,
      'contexts:',
      '- name: bootcplan@testenv',
      '  context:',
      '    cluster: testenv',
      '    user: bootcplan',
      '    namespace: openshift-bootcplan',
      'current-context: bootcplan@testenv',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return path;
}

/** The whole setup: apiserver, CRDs, namespaces, RBAC, ServiceAccount kubeconfig. */
export function setupEnv(): Promise<TestEnv & { crdChecks: CrdCheck[] }> {
  setupPromise ??= (async () => {
    const env = await startEnv();
    const crdChecks = await installCrds(env.admin);
    for (const ns of ['openshift-machine-api', 'openshift-machine-config-operator']) await ensureNamespace(env.admin, ns);
    await applyRbac(env.admin);
    env.saKubeconfig = await serviceAccountKubeconfig(env);
    return Object.assign(env, { crdChecks });
  })();
  return setupPromise as Promise<TestEnv & { crdChecks: CrdCheck[] }>;
}

/** Kinds a scenario creates; deleted between scenarios. */
const SCENARIO_KINDS = [
  'Node',
  'Pod',
  'MachineConfigPool',
  'MachineConfig',
  'BootcNodePool',
  'BootcNode',
  'MachineConfiguration',
  'ControlPlaneMachineSet',
  'MachineSet',
  'FeatureGate',
  'Infrastructure',
  'ClusterVersion',
  'ClusterOperator',
  'PodDisruptionBudget',
];
const SCENARIO_NAMESPACES = ['default', 'openshift-machine-api', 'openshift-machine-config-operator', 'openshift-bootcplan'];

/** Deletes every object a scenario may have created (deletecollection per resource). */
export async function resetCluster(admin: KubeClient): Promise<void> {
  const jobs: Promise<unknown>[] = [];
  for (const kind of SCENARIO_KINDS) {
    const r = RESOURCES.find((x) => x.kind === kind)!;
    const del = (ns?: string) =>
      admin.request('DELETE', collectionPath(r, ns), { query: { gracePeriodSeconds: 0 } }).catch((e) => {
        if (!(e instanceof NotFoundError)) throw e;
      });
    if (r.namespaced) for (const ns of SCENARIO_NAMESPACES) jobs.push(del(ns));
    else jobs.push(del());
  }
  const cm = RESOURCES.find((x) => x.kind === 'ConfigMap')!;
  const lease = RESOURCES.find((x) => x.kind === 'Lease')!;
  for (const [r, ns, name] of [
    [cm, 'openshift-bootcplan', 'bootcplan-progress'],
    [cm, 'openshift-machine-config-operator', 'coreos-bootimages'],
    [lease, 'openshift-bootcplan', 'bootcplan-lock'],
  ] as const) {
    jobs.push(
      admin.request('DELETE', objectPath(r, name, ns)).catch((e) => {
        if (!(e instanceof NotFoundError)) throw e;
      }),
    );
  }
  await Promise.all(jobs);
}

export async function loadObjects(admin: KubeClient, objects: KObject[]): Promise<void> {
  // Namespaced objects need their namespace. A snapshot's Namespace objects (kube-system: the
  // cluster's identity) are only made sure of: the API server's own uid is the live identity.
  const nss = new Set(objects.map((o) => o.metadata.namespace).filter((x): x is string => !!x));
  for (const o of objects) if (o.kind === 'Namespace') nss.add(o.metadata.name);
  for (const ns of nss) await ensureNamespace(admin, ns);
  await Promise.all(objects.filter((o) => o.kind !== 'Namespace').map((o) => createWithStatus(admin, o)));
}

export function driverFor(kubeconfig: string, opts: KubeDriverOptions = {}): KubeDriver {
  return new KubeDriver(clientFor(kubeconfig), { evictionRetrySeconds: 0.2, ...opts });
}
