/**
 * `fleet render argocd` on the real API server (issue 17): with Argo CD's published
 * ApplicationSet and Application CRDs and bootcplan's Rollout CRD installed
 * (deploy/gitops-crds), the rendered ApplicationSet, each Application its generator makes,
 * and every object each cluster's kustomization renders (ConfigMap, Rollout, Job, CronJob)
 * pass a strict server-side dry-run (dryRun=All, fieldValidation=Strict).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { tempDir, setupEnv, type TestEnv } from './env.ts';
import { installGitopsCrds, docsOf, dryRun, kustomizer } from './gitops-dry-run.ts';
import { renderFleetArgo, type ArgoFleetRender } from '../../src/render/fleet-argocd.ts';
import { testFleetPlan, testInput, TEST_OPTIONS } from '../fleet-argocd-helpers.ts';

const t = suite('e2e: fleet render argocd, strict server-side dry-run');
let env: TestEnv;

t.before(async () => {
  env = await setupEnv();
  await installGitopsCrds(env.admin);
});

/** The Applications the list generator makes: the template with each element's values (goTemplate `{{.field}}`). */
function applicationsOf(set: any): any[] {
  const fill = (v: unknown, el: Record<string, string>): unknown => {
    if (typeof v === 'string') return v.replace(/\{\{\.(\w+)\}\}/g, (_, f) => el[f]);
    if (Array.isArray(v)) return v.map((x) => fill(x, el));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, el)]));
    return v;
  };
  return set.spec.generators[0].list.elements.map((el: Record<string, string>) => {
    const app = fill(set.spec.template, el) as any;
    const dest = app.spec.destination;
    for (const k of ['name', 'server']) if (dest[k] === '') delete dest[k];
    return { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', ...app, metadata: { ...app.metadata, namespace: set.metadata.namespace } };
  });
}

function writeRender(r: ArgoFleetRender): string {
  const dir = tempDir('bootcplan-fleet-argocd-');
  for (const f of r.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.content);
  }
  return dir;
}

t('the rendered ApplicationSet, its Applications and every object of each cluster directory pass a strict server-side dry-run', async () => {
  const render = kustomizer();
  if (!render) assert.not.ok(process.env.CI, 'kustomize must be built in CI (.ci/run)');
  const fp = testFleetPlan([
    { name: 'east-1', canary: true, labels: { region: 'east' } },
    { name: 'west-1', labels: { region: 'west' } },
    { name: 'east-2', labels: { region: 'east' }, destination: { name: null, server: 'https://api.east-2.example.com:6443' } },
  ], 2);
  const r = renderFleetArgo(testInput(fp), TEST_OPTIONS);
  const dir = writeRender(r);
  const set = parse(r.files.find((f) => f.path === 'applicationset.yaml')!.content);
  const objects: { from: string; o: any }[] = [{ from: 'applicationset.yaml', o: set }];
  for (const app of applicationsOf(set)) objects.push({ from: 'the generator', o: app });
  for (const a of r.applications) {
    const cdir = join(dir, 'clusters', a.cluster);
    if (render) for (const o of docsOf(render(cdir))) objects.push({ from: `kustomize build clusters/${a.cluster}`, o });
  }
  const kinds = objects.map((x) => x.o.kind);
  assert.is(kinds.filter((k) => k === 'Application').length, 3);
  if (render) for (const k of ['ConfigMap', 'Rollout', 'Job', 'CronJob']) assert.is(kinds.filter((x) => x === k).length, 3, k);
  for (const { from, o } of objects) {
    const res = await dryRun(env.admin, o, 'openshift-bootcplan').catch((e) => { throw new Error(`${from}: ${o.kind}/${o.metadata.name}: ${e.message}`); });
    assert.is(res.kind, o.kind);
  }
  // The ConfigMap holds the plan and the Fleet file, and the Jobs mount its hashed name.
  if (render) {
    const built = docsOf(render(join(dir, 'clusters/east-1')));
    const cm = built.find((o: any) => o.kind === 'ConfigMap');
    assert.match(cm.metadata.name, /^bootcplan-rollout-[a-z0-9]+$/);
    assert.equal(Object.keys(cm.data).sort(), ['fleet.yaml', 'plan.json']);
    assert.is(JSON.parse(cm.data['plan.json']).id, fp.clusters[0].plan!.id);
    const job = built.find((o: any) => o.kind === 'Job');
    assert.is(job.spec.template.spec.volumes[0].configMap.name, cm.metadata.name);
  }
  console.log(`e2e: ${objects.length} rendered objects passed a strict server-side dry-run (${[...new Set(kinds)].sort().join(', ')})`);
});

t('the dry-run can fail: a misplaced RollingSync field or a step without its label key is rejected by the published CRD', async () => {
  const r = renderFleetArgo(testInput(testFleetPlan([{ name: 'a', canary: true }, { name: 'b' }], 1)), TEST_OPTIONS);
  const set = parse(r.files.find((f) => f.path === 'applicationset.yaml')!.content);
  set.spec.strategy.rollingSync.steps[0].maxUpdates = 1;
  let err: any = null;
  await dryRun(env.admin, set, 'openshift-gitops').catch((e) => { err = e; });
  assert.ok(err, 'maxUpdates rejected');
  assert.match(String(err.message), /maxUpdates/);
});

t.run();
