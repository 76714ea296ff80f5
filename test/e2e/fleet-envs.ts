/**
 * Several real kube-apiservers at once for the fleet e2e suites: each its own etcd and
 * kube-apiserver (scripts/testenv/start.sh, started concurrently), bootcplan's CRDs, the
 * namespaces, the RBAC of examples/rbac.yaml and a ServiceAccount token; one kubeconfig with a
 * context per server (`ctx-NAME`, as the ServiceAccount). Stopped at process exit.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { NotFoundError } from '../../src/apply/ports/driver.ts';
import { objectPath, RESOURCES } from '../../src/kube/resources.ts';
import type { TestKubeClient as KubeClient } from '../support/fake-api.ts';
import { parseEnvFile, clientFor, installCrds, ensureNamespace, applyRbac, resetCluster, tempDir } from './env.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

export interface FleetEnv {
  name: string;
  context: string;
  server: string;
  admin: KubeClient;
  dir: string;
}

const started: string[] = [];
process.on('exit', () => {
  for (const d of started.splice(0)) spawnSync(join(ROOT, 'scripts/testenv/stop.sh'), [d], { stdio: 'ignore' });
});

async function startOne(name: string): Promise<FleetEnv> {
  const { stdout } = await run(join(ROOT, 'scripts/testenv/start.sh'), { encoding: 'utf8', maxBuffer: 64 << 20 });
  const dir = stdout.trim().split('\n').pop()!;
  started.push(dir);
  const env = parseEnvFile(readFileSync(join(dir, 'env'), 'utf8'));
  const admin = clientFor(env.KUBECONFIG);
  await installCrds(admin);
  for (const ns of ['openshift-machine-api', 'openshift-machine-config-operator']) await ensureNamespace(admin, ns);
  await applyRbac(admin);
  return { name, context: `ctx-${name}`, server: env.TESTENV_SERVER, admin, dir };
}

/** Starts one API server per name, all at once; resolves with them and the seconds it took. */
export async function startFleetEnvs(names: readonly string[]): Promise<{ envs: FleetEnv[]; seconds: number }> {
  const t0 = Date.now();
  const envs = await Promise.all(names.map(startOne));
  return { envs, seconds: (Date.now() - t0) / 1000 };
}

/** One kubeconfig, a context per server, each as that server's bootcplan ServiceAccount. */
export async function fleetKubeconfig(envs: FleetEnv[], dir = tempDir('bootcplan-fleet-kc-')): Promise<string> {
  const lines = ['apiVersion: v1', 'kind: Config', 'clusters:'];
  const users: string[] = [];
  const contexts: string[] = [];
  for (const e of envs) {
    const tr = await e.admin.request('POST', '/api/v1/namespaces/openshift-bootcplan/serviceaccounts/bootcplan/token', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 3600 } },
    });
    const ca = readFileSync(join(e.dir, 'ca.crt')).toString('base64');
    lines.push(`- name: ${e.name}`, '  cluster:', `    server: ${e.server}`, `    certificate-authority-data: ${ca}`);
    users.push(`- name: bootcplan-${e.name}`, '  user:', `    token: ${tr.status.token}`);
    contexts.push(`- name: ${e.context}`, '  context:', `    cluster: ${e.name}`, `    user: bootcplan-${e.name}`, '    namespace: openshift-bootcplan');
  }
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, [...lines, 'users:', ...users, 'contexts:', ...contexts, `current-context: ${envs[0].context}`, ''].join('\n'), { mode: 0o600 });
  return path;
}

/** The scenario reset of env.ts, and the fleet progress ConfigMap too. */
export async function resetFleetEnv(e: FleetEnv): Promise<void> {
  await resetCluster(e.admin);
  const cm = RESOURCES.find((x) => x.kind === 'ConfigMap')!;
  await e.admin.request('DELETE', objectPath(cm, 'bootcplan-fleet', 'openshift-bootcplan')).catch((err) => {
    if (!(err instanceof NotFoundError)) throw err;
  });
}
