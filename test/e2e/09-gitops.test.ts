/**
 * The GitOps loop on the real API server (docs/gitops.md "The loop"):
 * - every example manifest (rendered by kustomize where it is a kustomization) passes a strict
 *   server-side dry-run, with bootcplan's Rollout CRD and the engines' published CRDs
 *   (deploy/gitops-crds: Argo CD Application and ArgoCD, Flux Kustomization and GitRepository);
 * - a temporary git repository holds the spec, the plan made for it (as the pull-request
 *   workflow makes it) is committed; the spec and the plan go into the ConfigMap the example
 *   kustomization generates, mounted as the example Job mounts it, and the example Job's own
 *   command applies that plan file step by step to the end; the Rollout object's status says
 *   where it is; Events are visible through the API;
 * - a second plan, then the cluster changes: the Job's run exits 3 and the status says
 *   "stale: re-plan needed";
 * - a plan whose maintenance window is closed: the run exits 0 and the status is Suspended
 *   until the next window.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync, cpSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { inDir, io } from '../support/cli.ts';
import { tempDir, setupEnv, type TestEnv } from './env.ts';
import { freshCluster, runJobToHealthy, twoZoneWorkers } from './helpers.ts';
import { installGitopsCrds, docsOf, dryRun, kustomizer } from './gitops-dry-run.ts';
import type { NodeAgent } from './agent.ts';
import { specYaml, NEW } from '../support/cluster.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { requestStats, resetRequestStats } from '../../src/kube/rest.ts';
import { AlreadyExistsError } from '../../src/apply/ports/driver.ts';
import { run, ensureBuilt } from '../support/built.ts'; // the bundle, as the package ships it
import type { TestObject } from '../support/cluster.ts';
import { git } from '../support/git.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const t = suite('e2e: the GitOps loop');
let env: TestEnv;
let agent: NodeAgent | null = null;

const NS = 'openshift-bootcplan';
const ROLLOUTS = `/apis/bootcplan.dev/v1alpha1/namespaces/${NS}/rollouts`;

t.before(async () => {
  env = await setupEnv();
  await installGitopsCrds(env.admin);
});

t.after(() => {
  agent?.stop();
  agent = null;
});

t('every example manifest passes a strict server-side dry-run (kustomizations rendered), with the published Argo CD and Flux CRDs', async () => {
  const render = kustomizer();
  if (!render) assert.not.ok(process.env.CI, 'kustomize must be built in CI (.ci/run)');
  const objects: { from: string; o: any }[] = [];
  for (const dir of ['examples', 'examples/argocd/clusters/prod-east', 'examples/flux/clusters/prod-east']) {
    if (render) for (const o of docsOf(render(join(ROOT, dir)))) objects.push({ from: `kustomize build ${dir}`, o });
  }
  for (const f of [
    'examples/argocd/application.yaml',
    'examples/argocd/argocd-cm-health.yaml',
    'examples/argocd/argocd-cr-health.yaml',
    'examples/flux/gitrepository.yaml',
    'examples/flux/kustomizations.yaml',
  ]) {
    for (const o of docsOf(readFileSync(join(ROOT, f), 'utf8'))) objects.push({ from: f, o });
  }
  const kinds = new Set(objects.map((x) => x.o.kind));
  for (const k of ['Application', 'ArgoCD', 'Kustomization', 'GitRepository', 'ConfigMap']) assert.ok(kinds.has(k), k);
  if (render) for (const k of ['Rollout', 'Job', 'CronJob', 'CustomResourceDefinition', 'ClusterRole']) assert.ok(kinds.has(k), k);
  for (const { from, o } of objects) {
    const r = await dryRun(env.admin, o, NS).catch((e) => {
      throw new Error(`${from}: ${o.kind}/${o.metadata.name}: ${e.message}`);
    });
    assert.is(r.kind, o.kind, `${from}: ${o.kind}/${o.metadata.name}`);
  }
  console.log(`e2e: ${objects.length} example objects passed a strict server-side dry-run (${[...kinds].sort().join(', ')})`);
});

t('the dry-run can fail: a misplaced field of an Application or a Flux Kustomization is rejected', async () => {
  const app = parse(readFileSync(join(ROOT, 'examples/argocd/application.yaml'), 'utf8'));
  app.spec.syncPolicy.automated.selfHeel = true;
  const flux = docsOf(readFileSync(join(ROOT, 'examples/flux/kustomizations.yaml'), 'utf8'))[1];
  flux.spec.healthCheck = flux.spec.healthChecks;
  for (const [o, field] of [
    [app, 'selfHeel'],
    [flux, 'healthCheck'],
  ] as const) {
    let err: any = null;
    try {
      await dryRun(env.admin, o, NS);
    } catch (e) {
      err = e;
    }
    assert.ok(err, `${o.kind} with ${field} rejected`);
    assert.match(String(err.message), new RegExp(field));
  }
});

// ------------------------------------------------------------------ the loop

const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4'];
const ARGOCD = 'examples/argocd';
const FLUX = 'examples/flux';

/** The plan workflow as copied: its SPEC and PLAN (the layout, docs/gitops.md "Repository layout") and its plan command. */
const workflow = parse(readFileSync(join(ROOT, 'examples/github-actions/plan.yml'), 'utf8'));
const SPEC_PATH: string = workflow.env.SPEC;
const PLAN_PATH: string = workflow.env.PLAN;
const PLAN_COMMAND: string = (() => {
  const step = workflow.jobs.plan.steps.find((x: any) => x.id === 'plan');
  const line = (step.run as string)
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('bootcplan plan '));
  if (!line) throw new Error('plan.yml: no `bootcplan plan` line in the step of id plan');
  return line;
})();

function spec(image: string, extra: Record<string, unknown> = {}): string {
  return specYaml([{ name: 'worker', image, maxUnavailable: 2, soakSeconds: 0, drainTimeoutSeconds: 60 }], extra).replace('name: test', 'name: e2e-loop');
}

/**
 * A config repository laid out as documented, made from an example tree as copied: the tree's
 * clusters/ at the root (its kustomization, Job and CronJob; the spec and the plan come from the
 * pull request below).
 */
function layoutRepo(tree: string): string {
  const repo = tempDir('bootcplan-gitops-');
  git(repo, 'init', '-q', '-b', 'main');
  const dir = dirname(SPEC_PATH);
  mkdirSync(join(repo, dir), { recursive: true });
  for (const f of ['kustomization.yaml', 'apply-job.yaml', 'apply-cronjob.yaml']) cpSync(join(ROOT, tree, dir, f), join(repo, dir, f));
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'the cluster directory, copied from the example');
  return repo;
}

/**
 * The pull-request side, as plan.yml runs it: the spec at SPEC, the workflow's own `bootcplan plan`
 * line run by a shell with SPEC, PLAN and RUNNER_TEMP set (bootcplan on PATH: the built bundle,
 * as the image runs it), then the plan committed with the spec.
 */
async function planAndCommit(repo: string, text: string): Promise<{ commit: string; planId: string }> {
  mkdirSync(join(repo, dirname(SPEC_PATH)), { recursive: true });
  writeFileSync(join(repo, SPEC_PATH), text);
  const temp = tempDir('bootcplan-runner-');
  mkdirSync(join(temp, 'bin'));
  writeFileSync(join(temp, 'bin/bootcplan'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(ensureBuilt())} "$@"\n`, { mode: 0o755 });
  cpSync(env.saKubeconfig, join(temp, 'kubeconfig'));
  const r = spawnSync('bash', ['-c', `${PLAN_COMMAND}`], {
    cwd: repo,
    encoding: 'utf8',
    env: { ...process.env, SPEC: SPEC_PATH, PLAN: PLAN_PATH, RUNNER_TEMP: temp, NO_COLOR: '1', PATH: `${join(temp, 'bin')}:${process.env.PATH}` },
  });
  assert.is(r.status, 2, `${PLAN_COMMAND}: ${r.stderr}`);
  assert.match(readFileSync(join(temp, 'plan.md'), 'utf8'), `<!-- bootcplan:plan spec=${SPEC_PATH} -->`);
  git(repo, 'add', SPEC_PATH, PLAN_PATH);
  git(repo, 'commit', '-qm', 'rollout');
  return { commit: git(repo, 'rev-parse', 'HEAD'), planId: JSON.parse(readFileSync(join(repo, PLAN_PATH), 'utf8')).id };
}

/**
 * The sync side: `kustomize build` of the cluster's directory at the commit (what Argo CD or Flux
 * renders), the ConfigMap and the Rollout object written to the API server; the Job as rendered.
 */
async function sync(repo: string, commit: string): Promise<{ cmName: string; job: any }> {
  const render = kustomizer();
  if (!render) throw new Error('kustomize is needed (BOOTCPLAN_TOOLS, or kubectl)');
  const at = tempDir('bootcplan-sync-');
  execFileSync('git', ['--work-tree', at, 'checkout', commit, '--', '.'], { cwd: repo });
  const objs = docsOf(render(join(at, dirname(SPEC_PATH))));
  const rollout = objs.find((o: any) => o.kind === 'Rollout');
  const cm = objs.find((o: any) => o.kind === 'ConfigMap');
  try {
    await env.admin.request('POST', ROLLOUTS, { body: rollout });
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    await env.admin.request('PATCH', `${ROLLOUTS}/e2e-loop`, { body: { spec: rollout.spec }, contentType: 'application/merge-patch+json' });
  }
  await env.admin.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { body: cm }).catch((err) => {
    if (!(err instanceof AlreadyExistsError)) throw err;
  });
  return { cmName: cm.metadata.name, job: objs.find((o: any) => o.kind === 'Job') };
}

/** The rendered Job's pod, with its ConfigMap volume materialised from the API as the kubelet would. */
async function jobPod({ cmName, job }: { cmName: string; job: any }): Promise<{ dir: string; args: string[] }> {
  const pod = job.spec.template.spec;
  const c = pod.containers[0];
  const mount = c.volumeMounts.find((m: any) => m.mountPath === c.workingDir);
  const vol = pod.volumes.find((v: any) => v.name === mount.name);
  assert.is(vol.configMap.name, cmName, 'the Job mounts the ConfigMap of its own render');
  const cm = await env.admin.request('GET', `/api/v1/namespaces/${NS}/configmaps/${cmName}`);
  const dir = tempDir('bootcplan-job-');
  for (const item of vol.configMap.items) {
    mkdirSync(join(dir, dirname(item.path)), { recursive: true });
    writeFileSync(join(dir, item.path), cm.data[item.key]);
  }
  return { dir, args: c.args };
}

async function runJob(pod: { dir: string; args: string[] }) {
  const cap = io({ env: { NO_COLOR: '1', BOOTCPLAN_HOLDER: 'bootcplan-apply-e2e' } });
  const code = await inDir(pod.dir, () => run([...pod.args, '--kubeconfig', env.saKubeconfig], { io: cap }));
  return { code, out: cap.out, err: cap.err };
}

const rolloutObject = () => env.admin.request('GET', `${ROLLOUTS}/e2e-loop`);

t(
  'the loop: the committed plan applied step by step by the example Job to Healthy; then stale (exit 3); then outside the window (exit 0, Suspended)',
  async () => {
    await env.admin.request('DELETE', `${ROLLOUTS}/e2e-loop`).catch(() => undefined);
    agent = await freshCluster(env, twoZoneWorkers(WORKERS), agent);
    const repo = layoutRepo(ARGOCD);

    // 1. Review: plan once, commit. 2. Sync: the Rollout object and the ConfigMap. 3. The Job, run after run.
    const first = await planAndCommit(repo, spec(NEW));
    const pod = await jobPod(await sync(repo, first.commit));
    // A new Rollout before any run: the CRD's default status {} (deploy/rollout-crd.yaml), which
    // the Flux health checks' has() guards read as InProgress (test/cli/flux-health.test.ts).
    assert.equal((await rolloutObject()).status, {});
    assert.equal(pod.args.slice(0, 2), ['apply', PLAN_PATH]);
    resetRequestStats();
    const phases = await runJobToHealthy(
      () => runJob(pod),
      async () => (await rolloutObject()).status,
      (r) => assert.not.match(r.err, /warning/, 'the status and every Event were written'),
    );
    const st = (await rolloutObject()).status;
    assert.is(st.phase, 'Healthy', phases.join('\n'));
    assert.is(st.planId, first.planId);
    assert.is(st.observedGeneration, (await rolloutObject()).metadata.generation);
    assert.ok(
      phases.some((p) => /^Progressing: wave 1\/2 of pool worker/.test(p)),
      phases.join('\n'),
    );
    assert.equal(
      st.conditions.map((c: any) => `${c.type}=${c.status}`),
      ['Ready=True', 'Reconciling=False', 'Stalled=False'],
    );
    const stats = requestStats();
    const events = stats.byResource.events ?? 0;
    console.log(
      `e2e: the Job applied plan ${first.planId} in ${phases.length} runs (${phases.map((p) => p.split(':')[0]).join(', ')}); status writes ${stats.byResource.rollouts ?? 0}, Events ${events} (${(events / WORKERS.length).toFixed(1)} per node) of ${stats.total} requests`,
    );

    // Events through the API, as kubectl get events / describe node read them (core v1 view).
    // One Event per node, its outcome (docs/gitops.md "Events": at most 8 API requests per node); it says when
    // and how the node's reboot was requested.
    const ev = await env.admin.request('GET', '/api/v1/namespaces/default/events', { query: { fieldSelector: 'involvedObject.kind=Node,reason=NodeUpdated' } });
    // Earlier suites on this API server had Nodes of the same names: this run's are told by their uid.
    const uids = new Set((await env.admin.request('GET', '/api/v1/nodes')).items.map((n: any) => n.metadata.uid));
    const mine = ev.items.filter((e: any) => uids.has(e.involvedObject.uid));
    assert.equal(mine.map((e: any) => e.involvedObject.name).sort(), WORKERS);
    const node = await env.admin.request('GET', '/api/v1/nodes/w-1');
    const e1 = mine.find((e: any) => e.involvedObject.name === 'w-1');
    assert.equal([e1.involvedObject.uid, e1.reportingComponent, e1.type, e1.action], [node.metadata.uid, 'bootcplan.dev/apply', 'Normal', 'Uncordon']);
    assert.match(e1.message, /^cordoned and drained, (soft|hard) reboot requested at \S+Z; booted the target and Ready/);
    const perNode = await env.admin.request('GET', '/api/v1/namespaces/default/events', {
      query: { fieldSelector: 'involvedObject.kind=Node,reportingComponent=bootcplan.dev/apply' },
    });
    assert.is(perNode.items.filter((e: any) => uids.has(e.involvedObject.uid)).length, WORKERS.length, 'one Event per node');
    const onRollout = await env.admin.request('GET', `/api/v1/namespaces/${NS}/events`, {
      query: { fieldSelector: 'involvedObject.kind=Rollout,reason=RolloutApplied' },
    });
    assert.is(onRollout.items.length, 1);

    // A second plan (a new image); the cluster changes before the Job runs (two nodes cordoned by
    // someone else: the reviewed waves no longer fit): exit 3, "stale: re-plan needed".
    const second = await planAndCommit(repo, spec(imageRef('e2e-v2')));
    const pod2 = await jobPod(await sync(repo, second.commit));
    for (const n of ['w-1', 'w-2'])
      await env.admin.request('PATCH', `/api/v1/nodes/${n}`, { body: { spec: { unschedulable: true } }, contentType: 'application/merge-patch+json' });
    const stale = await runJob(pod2);
    assert.is(stale.code, 3, stale.err);
    assert.match(stale.err, /error: stale plan/);
    const st2 = (await rolloutObject()).status;
    assert.equal([st2.phase, st2.reason, st2.lastExitCode, st2.planId], ['Degraded', 'Stale', 3, second.planId]);
    assert.match(st2.message, /^stale: re-plan needed \(/);
    assert.equal(
      st2.conditions.map((c: any) => `${c.type}=${c.status}`),
      ['Ready=False', 'Reconciling=False', 'Stalled=True'],
    );
    for (const n of ['w-1', 'w-2'])
      await env.admin.request('PATCH', `/api/v1/nodes/${n}`, { body: { spec: { unschedulable: null } }, contentType: 'application/merge-patch+json' });

    // A plan whose only window opens in about 12 hours (UTC): the Job exits 0, Suspended.
    const hour = (new Date().getUTCHours() + 12) % 24;
    const third = await planAndCommit(
      repo,
      spec(imageRef('e2e-v2'), { maintenanceWindows: [{ schedule: `0 ${hour} * * *`, duration: '1h', timezone: 'UTC' }] }),
    );
    const pod3 = await jobPod(await sync(repo, third.commit));
    const outside = await runJob(pod3);
    assert.is(outside.code, 0, outside.err);
    assert.match(outside.out, new RegExp(`nothing to do now: outside window until ${String(hour).padStart(2, '0')}:00 UTC`));
    const obj3 = await rolloutObject();
    assert.equal(
      [obj3.status.phase, obj3.status.reason, obj3.status.message, obj3.status.planId],
      ['Suspended', 'OutsideWindow', `outside window until ${String(hour).padStart(2, '0')}:00 UTC`, third.planId],
    );
    assert.match(obj3.status.nextWindow, new RegExp(`T${String(hour).padStart(2, '0')}:00:00`));
    assert.is(obj3.status.observedGeneration, obj3.metadata.generation);
    assert.equal(
      obj3.status.conditions.map((c: any) => `${c.type}=${c.status}`),
      ['Ready=False', 'Reconciling=True', 'Stalled=False'],
    );
    const nodes = (await env.admin.request('GET', '/api/v1/nodes')).items as TestObject[];
    assert.ok(
      nodes.every((n) => !n.spec?.unschedulable),
      'no node left cordoned',
    );
  },
);

t("the Flux tree as copied: the workflow's plan, the rendered Flux Job's command line and mount, run to Healthy", async () => {
  await env.admin.request('DELETE', `${ROLLOUTS}/e2e-loop`).catch(() => undefined);
  agent = await freshCluster(env, twoZoneWorkers(WORKERS), agent);
  const repo = layoutRepo(FLUX);
  const made = await planAndCommit(repo, spec(NEW));
  const synced = await sync(repo, made.commit);
  assert.not.ok('argocd.argoproj.io/sync-options' in (synced.job.metadata.annotations ?? {}), "the Flux tree's Job");
  const pod = await jobPod(synced);
  assert.equal(pod.args.slice(0, 2), ['apply', PLAN_PATH]);
  const phases = await runJobToHealthy(
    () => runJob(pod),
    async () => (await rolloutObject()).status,
  );
  const st = (await rolloutObject()).status;
  assert.is(st.phase, 'Healthy', phases.join('\n'));
  assert.is(st.planId, made.planId);
  console.log(`e2e: the Flux Job applied plan ${made.planId} in ${phases.length} runs`);
});

t.run();
