/**
 * `fleet render argocd` on the real API server (docs/gitops.md "Fleets from an Argo CD hub"):
 * - with Argo CD's published ApplicationSet and Application CRDs and bootcplan's Rollout CRD
 *   installed (deploy/gitops-crds), the rendered ApplicationSet, each Application its generator
 *   makes, and every object each cluster's kustomization renders (ConfigMap, Rollout, Job,
 *   CronJob) pass a strict server-side dry-run (dryRun=All, fieldValidation=Strict);
 * - the canary's directory through the loop, as Argo CD would sync it: `fleet plan` and
 *   `fleet render argocd` in a git checkout, the ConfigMap and the Rollout object as kustomize
 *   builds them created in the cluster, the Job's own command run (with the ConfigMap's files as
 *   its pod sees them) until the rollout is applied: the Rollout health check says Healthy
 *   (observedGeneration taken: the object holds the cluster's effective spec); a plan that went
 *   stale: Degraded, which holds Argo CD's next step.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { tempDir, setupEnv, type TestEnv } from './env.ts';
import { installGitopsCrds, docsOf, dryRun, kustomizer } from './gitops-dry-run.ts';
import { freshCluster, runJobToHealthy, twoZoneWorkers } from './helpers.ts';
import type { NodeAgent } from './agent.ts';
import { cli } from '../support/cli.ts';
import { NEW } from '../support/cluster.ts';
import { LUA, luaHealth } from '../support/lua-health.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { AlreadyExistsError } from '../../src/apply/ports/driver.ts';
import { renderFleetArgo, type ArgoFleetRender } from '../../src/fleet/argocd.ts';
import { testFleet, TEST_OPTIONS } from '../support/fleet-argocd.ts';
import { git } from '../support/git.ts';
import { skipLocally } from '../support/skips.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const t = suite('e2e: fleet render argocd');
let env: TestEnv;
let agent: NodeAgent | null = null;

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

/** The render at TEST_OPTIONS.path of a repository whose examples/ and deploy/ are this checkout's (the setup's kustomization reaches them). */
function writeRender(r: ArgoFleetRender): string {
  const repo = tempDir('bootcplan-fleet-argocd-');
  for (const d of ['examples', 'deploy']) symlinkSync(join(ROOT, d), join(repo, d));
  const dir = join(repo, TEST_OPTIONS.path);
  for (const f of r.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.content);
  }
  return dir;
}

t('the rendered ApplicationSet, its Applications and every object of each cluster directory pass a strict server-side dry-run', async () => {
  const render = kustomizer();
  if (!render) assert.not.ok(process.env.CI, 'kustomize must be built in CI (.ci/run)');
  const input = testFleet(
    [
      { name: 'east-1', canary: true, labels: { region: 'east' } },
      { name: 'west-1', labels: { region: 'west' } },
      { name: 'east-2', labels: { region: 'east' }, destination: { server: 'https://api.east-2.example.com:6443' } },
    ],
    2,
  );
  const fp = input.fleetPlan;
  const r = renderFleetArgo(input, TEST_OPTIONS);
  const dir = writeRender(r);
  const set = parse(r.files.find((f) => f.path === 'applicationset.yaml')!.content);
  const objects: { from: string; o: any }[] = [{ from: 'applicationset.yaml', o: set }];
  for (const app of applicationsOf(set)) objects.push({ from: 'the generator', o: app });
  for (const a of r.applications) {
    const cdir = join(dir, 'clusters', a.cluster);
    if (render) for (const o of docsOf(render(cdir))) objects.push({ from: `kustomize build clusters/${a.cluster}`, o });
  }
  // The setup every Application syncs first: bootcplan's CRD, namespace and RBAC, each kept (Prune=false,Delete=false).
  if (render) {
    const setup = docsOf(render(join(dir, 'setup')));
    assert.ok(setup.some((o: any) => o.kind === 'CustomResourceDefinition') && setup.some((o: any) => o.kind === 'Namespace'));
    for (const o of setup) {
      assert.is(o.metadata.annotations['argocd.argoproj.io/sync-options'], 'Prune=false,Delete=false', `${o.kind}/${o.metadata.name}`);
      objects.push({ from: 'kustomize build setup', o });
    }
  }
  const kinds = objects.map((x) => x.o.kind);
  assert.is(kinds.filter((k) => k === 'Application').length, 3);
  if (render) for (const k of ['ConfigMap', 'Rollout', 'Job', 'CronJob']) assert.is(kinds.filter((x) => x === k).length, 3, k);
  for (const { from, o } of objects) {
    const res = await dryRun(env.admin, o, 'openshift-bootcplan').catch((e) => {
      throw new Error(`${from}: ${o.kind}/${o.metadata.name}: ${e.message}`);
    });
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
  const r = renderFleetArgo(testFleet([{ name: 'a', canary: true }, { name: 'b' }], 1), TEST_OPTIONS);
  const set = parse(r.files.find((f) => f.path === 'applicationset.yaml')!.content);
  set.spec.strategy.rollingSync.steps[0].maxUpdates = 1;
  let err: any = null;
  await dryRun(env.admin, set, 'openshift-gitops').catch((e) => {
    err = e;
  });
  assert.ok(err, 'maxUpdates rejected');
  assert.match(String(err.message), /maxUpdates/);
});

// ------------------------------------------------------------------ the canary through the loop

const NS = 'openshift-bootcplan';
const ROLLOUTS = `/apis/bootcplan.dev/v1alpha1/namespaces/${NS}/rollouts`;
const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4'];

/** The pull-request side: snapshot the live cluster, a Fleet over it (canary east-1), fleet plan, fleet render argocd; committed. */
async function planAndRender(repo: string, image: string): Promise<string> {
  const snap = await cli(['snapshot', '--kubeconfig', env.saKubeconfig, '--out', 'fleets/prod/east-1.yaml'], { cwd: repo });
  assert.is(snap.code, 0, snap.err);
  const fleet = {
    apiVersion: 'bootcplan.dev/v1alpha1',
    kind: 'Fleet',
    metadata: { name: 'e2e-fleet' },
    spec: {
      rollout: { pools: [{ name: 'worker', image, maxUnavailable: 2, soakSeconds: 0, drainTimeoutSeconds: 60 }] },
      clusters: [{ name: 'east-1', snapshot: 'east-1.yaml', labels: { region: 'east' } }],
      overrides: [{ clusterSelector: { matchLabels: { region: 'east' } }, pools: [{ name: 'worker', maxUnavailable: 1 }] }],
      strategy: { canaries: ['east-1'] },
    },
  };
  writeFileSync(join(repo, 'fleets/prod/fleet.yaml'), stringify(fleet));
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'fleet');
  const plan = await cli(['fleet', 'plan', '-f', 'fleets/prod/fleet.yaml', '--out', 'plans/fleet-plan.json'], { cwd: repo });
  assert.is(plan.code, 0, plan.err);
  const render = await cli(
    [
      'fleet',
      'render',
      'argocd',
      'plans/fleet-plan.json',
      '--out-dir',
      'fleets/prod/argocd',
      '--repo-url',
      'https://git.example.com/fleet.git',
      '--image',
      'REPLACE-ME.example/bootcplan:0.1.0',
    ],
    { cwd: repo },
  );
  assert.is(render.code, 0, render.err);
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'render');
  return join(repo, 'fleets/prod/argocd/clusters/east-1');
}

/** The sync side, as Argo CD applies the kustomization: the ConfigMap and the Rollout object created; the Job's pod materialised. */
async function syncCluster(dir: string): Promise<{ podDir: string; args: string[] }> {
  const objects = docsOf(kustomizer()!(dir));
  const cm = objects.find((o: any) => o.kind === 'ConfigMap');
  const rollout = objects.find((o: any) => o.kind === 'Rollout');
  const job = objects.find((o: any) => o.kind === 'Job');
  await env.admin.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: cm }).catch((e) => {
    if (!(e instanceof AlreadyExistsError)) throw e;
  });
  try {
    await env.admin.request('POST', ROLLOUTS, { body: rollout });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    await env.admin.request('PATCH', `${ROLLOUTS}/${rollout.metadata.name}`, { body: { spec: rollout.spec }, contentType: 'application/merge-patch+json' });
  }
  const pod = job.spec.template.spec;
  const c = pod.containers[0];
  const vol = pod.volumes.find((v: any) => v.name === c.volumeMounts[0].name);
  assert.is(vol.configMap.name, cm.metadata.name, 'the Job mounts the ConfigMap kustomize generated');
  const podDir = tempDir('bootcplan-fleet-job-');
  for (const item of vol.configMap.items) {
    mkdirSync(join(podDir, dirname(item.path)), { recursive: true });
    writeFileSync(join(podDir, item.path), cm.data[item.key]);
  }
  return { podDir, args: c.args };
}

/** One run of the Job's command in its pod's directory, as the ServiceAccount. */
const runPod = (pod: { podDir: string; args: string[] }) =>
  cli([...pod.args, '--kubeconfig', env.saKubeconfig], { cwd: pod.podDir, io: { env: { NO_COLOR: '1', BOOTCPLAN_HOLDER: 'bootcplan-apply-e2e' } } });

const health = (o: unknown) => luaHealth(join(ROOT, 'examples/argocd/health/rollout.lua'), o);

t('the canary through the loop: rendered, synced, its Job applies the plan to Healthy (the health Argo CD waits for); a stale plan is Degraded', async () => {
  if (!kustomizer()) {
    skipLocally('kustomize', '.ci/run builds it');
    return;
  }
  await env.admin.request('DELETE', `${ROLLOUTS}/e2e-fleet`).catch(() => undefined);
  agent = await freshCluster(env, twoZoneWorkers(WORKERS), agent);
  const repo = tempDir('bootcplan-fleet-gitops-');
  git(repo, 'init', '-q', '-b', 'main');
  mkdirSync(join(repo, 'fleets/prod'), { recursive: true });

  const pod = await syncCluster(await planAndRender(repo, NEW));
  const phases = await runJobToHealthy(
    () => runPod(pod),
    async () => (await env.admin.request('GET', `${ROLLOUTS}/e2e-fleet`)).status,
  );
  const done = await env.admin.request('GET', `${ROLLOUTS}/e2e-fleet`);
  assert.is(done.status.phase, 'Healthy', phases.join('\n'));
  assert.is(done.status.observedGeneration, done.metadata.generation, 'the Rollout object is the effective spec apply planned with');
  assert.ok(
    phases.some((p) => /^Progressing: wave 1\/4 of pool worker/.test(p)),
    `maxUnavailable 1 from the label override: ${phases.join('\n')}`,
  );
  if (LUA) assert.equal(health(done), { status: 'Healthy', message: done.status.message });

  // A second plan, then the cluster changes before the Job runs: exit 3, Degraded (Argo CD's step never completes).
  const pod2 = await syncCluster(await planAndRender(repo, imageRef('e2e-fleet-v2')));
  for (const n of ['w-1', 'w-2'])
    await env.admin.request('PATCH', `/api/v1/nodes/${n}`, { body: { spec: { unschedulable: true } }, contentType: 'application/merge-patch+json' });
  const stale = await runPod(pod2);
  assert.is(stale.code, 3, stale.err);
  const obj = await env.admin.request('GET', `${ROLLOUTS}/e2e-fleet`);
  assert.equal([obj.status.phase, obj.status.reason], ['Degraded', 'Stale']);
  if (LUA) assert.equal(health(obj).status, 'Degraded');
  else assert.not.ok(process.env.CI, 'lua5.4 must be installed in CI');
  for (const n of ['w-1', 'w-2'])
    await env.admin.request('PATCH', `/api/v1/nodes/${n}`, { body: { spec: { unschedulable: null } }, contentType: 'application/merge-patch+json' });
  console.log(
    `e2e: the canary's Job applied its fleet plan in ${phases.length} runs (${phases.map((p) => p.split(':')[0]).join(', ')}); a stale plan made it Degraded`,
  );
});

t.after(() => {
  agent?.stop();
  agent = null;
});

t.run();
