/**
 * The GitOps engines' CRDs on the test API server and the strict server-side dry-run of
 * manifests (09-gitops: the examples; 10-fleet-argocd: what `fleet render argocd` writes).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { parseAllDocuments } from 'yaml';
import { sleep } from './helpers.ts';
import { AlreadyExistsError } from '../../src/apply/ports/driver.ts';
import type { TestKubeClient as KubeClient } from '../support/fake-api.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TOOLS = process.env.BOOTCPLAN_TOOLS ?? join(homedir(), '.cache/bootcplan-tools/bin');
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export async function installCrd(admin: KubeClient, crd: any) {
  try {
    await admin.request('POST', CRD_PATH, { body: crd });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    const stored = await admin.request('GET', `${CRD_PATH}/${crd.metadata.name}`);
    if ((stored.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} not Established`);
    await sleep(100);
  }
}

/** bootcplan's Rollout CRD and every CRD of deploy/gitops-crds. */
export async function installGitopsCrds(admin: KubeClient) {
  for (const f of [
    'deploy/rollout-crd.yaml',
    ...readdirSync(join(ROOT, 'deploy/gitops-crds'))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => `deploy/gitops-crds/${f}`),
  ]) {
    for (const crd of docsOf(readFileSync(join(ROOT, f), 'utf8'))) await installCrd(admin, crd);
  }
}

export const docsOf = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter(Boolean);

/** REST collection of a kind (the kinds the examples hold). */
const KINDS: Record<string, [string, boolean]> = {
  Namespace: ['/api/v1/namespaces', false],
  ServiceAccount: ['/api/v1/namespaces/{ns}/serviceaccounts', true],
  ConfigMap: ['/api/v1/namespaces/{ns}/configmaps', true],
  Job: ['/apis/batch/v1/namespaces/{ns}/jobs', true],
  CronJob: ['/apis/batch/v1/namespaces/{ns}/cronjobs', true],
  ClusterRole: ['/apis/rbac.authorization.k8s.io/v1/clusterroles', false],
  ClusterRoleBinding: ['/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', false],
  Role: ['/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles', true],
  RoleBinding: ['/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings', true],
  ValidatingAdmissionPolicy: ['/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', false],
  ValidatingAdmissionPolicyBinding: ['/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', false],
  CustomResourceDefinition: [CRD_PATH, false],
  Rollout: ['/apis/bootcplan.dev/v1alpha1/namespaces/{ns}/rollouts', true],
  Application: ['/apis/argoproj.io/v1alpha1/namespaces/{ns}/applications', true],
  ApplicationSet: ['/apis/argoproj.io/v1alpha1/namespaces/{ns}/applicationsets', true],
  ArgoCD: ['/apis/argoproj.io/v1beta1/namespaces/{ns}/argocds', true],
  Kustomization: ['/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/{ns}/kustomizations', true],
  GitRepository: ['/apis/source.toolkit.fluxcd.io/v1/namespaces/{ns}/gitrepositories', true],
};

async function ensureNs(admin: KubeClient, name: string) {
  try {
    await admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
  }
}

/** Server-side apply, dry-run, strict field validation: creates and updates alike are checked. */
export async function dryRun(admin: KubeClient, o: any, defaultNs: string): Promise<any> {
  const entry = KINDS[o.kind];
  if (!entry) throw new Error(`no REST path for ${o.kind}`);
  const ns = entry[1] ? (o.metadata.namespace ?? defaultNs) : '';
  if (ns) await ensureNs(admin, ns);
  const path = `${entry[0].replace('{ns}', ns)}/${encodeURIComponent(o.metadata.name)}`;
  return admin.request('PATCH', path, {
    body: entry[1] ? { ...o, metadata: { ...o.metadata, namespace: ns } } : o,
    contentType: 'application/apply-patch+yaml',
    query: { dryRun: 'All', fieldValidation: 'Strict', fieldManager: 'e2e-dry-run', force: true },
  });
}

/** kustomize (built by .ci/run) or kubectl kustomize; null when neither is there. */
export function kustomizer(): ((dir: string) => string) | null {
  const bin = join(TOOLS, 'kustomize');
  if (existsSync(bin)) return (dir) => execFileSync(bin, ['build', dir], { encoding: 'utf8' });
  if (spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0)
    return (dir) => execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  return null;
}
