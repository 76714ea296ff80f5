/**
 * The GitOps example manifests are valid Kubernetes objects for a real API server:
 * every Job, CronJob and the spec-and-plan ConfigMap of the examples goes through a
 * server-side dry-run create with strict field validation (unknown or misplaced fields are
 * rejected). 09-gitops.test.ts dry-runs everything else (kustomize output, the Argo CD and
 * Flux objects with their published CRDs).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { setupEnv, type TestEnv } from './env.ts';

const t = suite('e2e: GitOps example manifests on the API server');
let env: TestEnv;

t.before(async () => {
  env = await setupEnv();
});

const PATHS: Record<string, (ns: string) => string> = {
  Job: (ns) => `/apis/batch/v1/namespaces/${ns}/jobs`,
  CronJob: (ns) => `/apis/batch/v1/namespaces/${ns}/cronjobs`,
  ConfigMap: (ns) => `/api/v1/namespaces/${ns}/configmaps`,
};

async function ensureNamespace(name: string) {
  try {
    await env.admin.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  } catch (e: any) {
    if (!/already exists/i.test(String(e?.message))) throw e;
  }
}

function manifests(dir: string): any[] {
  const out: any[] = [];
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    for (const d of parseAllDocuments(readFileSync(join(dir, f), 'utf8'))) {
      const o = d.toJS();
      if (o && PATHS[o.kind]) out.push(o);
    }
  }
  return out;
}

for (const dir of ['examples/argocd/clusters/prod-east', 'examples/flux/clusters/prod-east']) {
  t(`${dir}: Jobs and CronJobs pass a strict server-side dry-run, and so does the spec ConfigMap kustomize renders`, async () => {
    const objs = manifests(dir);
    assert.ok(objs.some((o) => o.kind === 'Job') && objs.some((o) => o.kind === 'CronJob'), 'a Job and a CronJob');
    // What the kustomization's configMapGenerator produces from the spec file.
    objs.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'bootcplan-rollout', namespace: 'openshift-bootcplan' },
      data: { 'bootcplan.yaml': readFileSync(join(dir, 'bootcplan.yaml'), 'utf8'), 'plan.json': readFileSync(join(dir, 'plans/bootcplan.json'), 'utf8') },
    });
    for (const o of objs) {
      const ns = o.metadata.namespace ?? 'openshift-bootcplan';
      await ensureNamespace(ns);
      const created = await env.admin.request('POST', PATHS[o.kind](ns), { body: o, query: { dryRun: 'All', fieldValidation: 'Strict' } });
      assert.is(created.kind, o.kind, `${dir}: ${o.kind}/${o.metadata.name}`);
      if (o.kind !== 'ConfigMap') {
        const pod = o.kind === 'Job' ? created.spec.template.spec : created.spec.jobTemplate.spec.template.spec;
        assert.is(pod.serviceAccountName, 'bootcplan');
      }
    }
  });
}

t('a misplaced field is rejected by the same dry-run (the check can fail)', async () => {
  const job = manifests('examples/argocd/clusters/prod-east').find((o) => o.kind === 'Job');
  const bad = structuredClone(job);
  bad.spec.template.spec.containers[0].argz = bad.spec.template.spec.containers[0].args;
  let err: any = null;
  try {
    await env.admin.request('POST', PATHS.Job('openshift-bootcplan'), { body: bad, query: { dryRun: 'All', fieldValidation: 'Strict' } });
  } catch (e) {
    err = e;
  }
  assert.ok(err, 'rejected');
  assert.match(String(err.message), /argz/);
});

t.run();
