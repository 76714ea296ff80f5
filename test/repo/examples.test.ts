import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, existsSync, mkdtempSync, mkdirSync, writeFileSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { parseAllDocuments, parse } from 'yaml';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { LUA, luaHealth } from '../support/lua-health.ts';
import { kustomizer, docsOf } from '../e2e/gitops-dry-run.ts';
import { renderFleetArgo, KEEP_SYNC_OPTIONS } from '../../src/fleet/argocd.ts';
import { testFleet, TEST_OPTIONS } from '../support/fleet-argocd.ts';
import { nodeInputs } from '../../src/app/inputs.ts';
import { openSavedPlan, readPlanFile } from '../../src/app/saved-plan.ts';
import { skipLocally } from '../support/skips.ts';

const s = suite('GitOps examples');

function k8sDocs(dir: string): { file: string; obj: any }[] {
  const out: { file: string; obj: any }[] = [];
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, f), 'utf8'))) {
      assert.equal(doc.errors, [], `${dir}/${f} parses`);
      const obj = doc.toJS();
      if (obj) out.push({ file: `${dir}/${f}`, obj });
    }
  }
  return out;
}

function jobSpecs(docs: { file: string; obj: any }[]) {
  return docs.flatMap(({ file, obj }) =>
    obj.kind === 'Job' ? [{ file, obj, job: obj.spec }] : obj.kind === 'CronJob' ? [{ file, obj, job: obj.spec.jobTemplate.spec }] : [],
  );
}

/** The repository layout (docs/gitops.md "Repository layout"), as the plan workflow writes it. */
const LAYOUT = { spec: 'clusters/prod-east/bootcplan.yaml', plan: 'clusters/prod-east/plans/bootcplan.json' };

/** The directories of the GitOps loop, and where each one's rendered files live in the repository. */
const ROLLOUT_DIRS = ['examples/argocd/clusters/prod-east', 'examples/flux/clusters/prod-east'];

for (const dir of ROLLOUT_DIRS) {
  s(`${dir}: every document is a Kubernetes object or a valid Rollout spec, every file a kustomization names exists`, () => {
    const docs = k8sDocs(dir);
    assert.ok(docs.length >= 4);
    for (const { file, obj } of docs) {
      assert.type(obj.apiVersion, 'string', file);
      assert.type(obj.kind, 'string', file);
      if (obj.kind === 'Rollout') {
        const r = parseRolloutSpec(readFileSync(file, 'utf8'), file);
        assert.equal(r.diagnostics, [], file);
        continue;
      }
      if (obj.kind === 'Kustomization' && obj.apiVersion.startsWith('kustomize.config.k8s.io')) {
        for (const r of obj.resources ?? []) assert.ok(existsSync(join(dir, r)), `${file}: resource ${r} exists`);
        for (const g of obj.configMapGenerator ?? [])
          for (const f of g.files ?? []) assert.ok(existsSync(join(dir, f.split('=').pop())), `${file}: ${f} exists`);
        continue;
      }
      assert.type(obj.metadata?.name, 'string', `${file}: metadata.name`);
    }
  });

  s(`${dir}: the Job and the CronJob apply the committed plan file (not -f), one step per run, from the files the plan records`, () => {
    const render = kustomizer();
    if (!render) {
      assert.not.ok(process.env.CI, 'kustomize must be built in CI (.ci/run)');
      return;
    }
    const rendered = docsOf(render(dir));
    const cm = rendered.find((o: any) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('bootcplan-rollout-'));
    const jobs = jobSpecs(rendered.map((obj: any) => ({ file: `kustomize build ${dir}: ${obj.kind}`, obj })));
    assert.equal(jobs.map((j) => j.obj.kind).sort(), ['CronJob', 'Job']);
    for (const { file, obj, job } of jobs) {
      assert.is(job.backoffLimit, 0, `${file}: backoffLimit 0`);
      assert.ok(job.activeDeadlineSeconds > 0, `${file}: activeDeadlineSeconds`);
      const pod = job.template.spec;
      assert.is(pod.serviceAccountName, 'bootcplan');
      assert.is(pod.restartPolicy, 'Never');
      const c = pod.containers[0];
      const args: string[] = c.args;
      assert.not.ok(args.includes('-f'), `${file}: no re-plan at sync time (${args.join(' ')})`);
      // --lock-timeout longer than the 300 s lease: a run that meets a dead apply's lock takes it over.
      assert.equal([args[0], args.slice(2)], ['apply', ['--auto-approve', '--step', '--lock-timeout', '6m']], `${file}: ${args.join(' ')}`);
      // The plan file and the spec it records are mounted at the paths the plan names,
      // relative to the working directory (the repository root as the Job sees it).
      const mount = c.volumeMounts.find((m: any) => m.mountPath === c.workingDir);
      assert.ok(mount, `${file}: the ConfigMap is mounted at the working directory`);
      const vol = pod.volumes.find((v: any) => v.name === mount.name);
      assert.is(vol.configMap.name, cm.metadata.name, `${file}: the ConfigMap of this kustomization`);
      const items = new Map<string, string>(vol.configMap.items.map((i: any) => [i.path, i.key]));
      const plan = JSON.parse(cm.data[items.get(args[1])!]);
      assert.is(plan.formatVersion, '1.0', `${file}: ${args[1]} is the plan`);
      const specKey = items.get(plan.spec.path);
      assert.ok(specKey, `${file}: the spec the plan records is mounted at ${plan.spec.path}`);
      assert.is(parseRolloutSpec(cm.data[specKey!], plan.spec.path).sha256, plan.spec.sha256, `${file}: the spec at ${plan.spec.path} is the planned one`);
      if (obj.kind === 'CronJob') assert.is(obj.spec.concurrencyPolicy, 'Forbid');
    }
  });

  s(`${dir}: the committed example plan is the plan of its spec (sha256 and provenance verify), read from the layout as the Job's mount holds it`, () => {
    // The mount: the layout's files under a directory outside git, the Job's working directory.
    const work = mkdtempSync(join(tmpdir(), 'bootcplan-mount-'));
    for (const p of [LAYOUT.spec, LAYOUT.plan]) {
      mkdirSync(dirname(join(work, p)), { recursive: true });
      writeFileSync(join(work, p), readFileSync(join(dir, p.slice('clusters/prod-east/'.length))));
    }
    const cwd = process.cwd();
    process.chdir(work);
    try {
      const saved = readPlanFile(nodeInputs, LAYOUT.plan);
      openSavedPlan(nodeInputs, saved);
      assert.ok(saved.summary.waves > 0, 'a plan with waves');
    } finally {
      process.chdir(cwd);
    }
  });
}

for (const dir of ROLLOUT_DIRS) {
  s(`${dir}: the layout's paths are written once (the Rollout's annotations), and kustomize puts them into both Jobs`, () => {
    const workflow = parse(readFileSync('examples/github-actions/plan.yml', 'utf8'));
    assert.equal({ spec: workflow.env.SPEC, plan: workflow.env.PLAN }, LAYOUT, 'plan.yml writes the plan where the Jobs read it');
    assert.ok(dir.endsWith(LAYOUT.spec.split('/').slice(0, -1).join('/')), `${dir} is the layout's cluster directory`);
    for (const f of readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml'))
      assert.not.ok(readFileSync(join(dir, f), 'utf8').includes('clusters/'), `${dir}/${f}: no path written by hand`);
    const kz = readFileSync(join(dir, 'kustomization.yaml'), 'utf8');
    for (const p of [LAYOUT.spec, LAYOUT.plan]) assert.is(kz.split(p).length - 1, 1, `${dir}/kustomization.yaml: ${p} once`);
    const render = kustomizer();
    if (!render) {
      assert.not.ok(process.env.CI, 'kustomize must be built in CI (.ci/run)');
      return;
    }
    const objs = docsOf(render(dir));
    const jobs = objs.filter((o: any) => o.kind === 'Job' || o.kind === 'CronJob');
    assert.is(jobs.length, 2);
    for (const o of jobs) {
      const pod = o.kind === 'CronJob' ? o.spec.jobTemplate.spec.template.spec : o.spec.template.spec;
      const c = pod.containers[0];
      assert.equal(c.args.slice(0, 2), ['apply', LAYOUT.plan], `${o.kind}: the command line`);
      const vol = pod.volumes.find((v: any) => v.name === c.volumeMounts.find((m: any) => m.mountPath === c.workingDir).name);
      assert.equal(
        vol.configMap.items.map((i: any) => `${i.key}=${i.path}`),
        [`bootcplan.yaml=${LAYOUT.spec}`, `plan.json=${LAYOUT.plan}`],
        `${o.kind}: the mount`,
      );
      // bootcplan reads no CI variable: a pod's output is no terminal, so it already writes lines, without colour or spinner.
      assert.not.ok(
        (c.env ?? []).some((e: any) => e.name === 'CI'),
        `${o.kind}: no CI variable nothing reads`,
      );
    }
    // The committed plan records the layout's spec path: what the mount holds.
    assert.is(JSON.parse(readFileSync(join(dir, 'plans/bootcplan.json'), 'utf8')).spec.path, LAYOUT.spec);
  });
}

s('bootcplan reads no CI variable (the examples set none): colour and progress follow the terminal and NO_COLOR', () => {
  const reads: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts') && /env(\.CI\b|\[['"]CI['"]\])/.test(readFileSync(p, 'utf8'))) reads.push(p);
    }
  };
  walk('src');
  assert.equal(reads, []);
});

s('Argo CD: sync waves RBAC and CRD (-1), spec and plan (1), then the Rollout, the Job and the CronJob (2, the last); no PostSync hook', () => {
  const setup = parse(readFileSync('examples/kustomization.yaml', 'utf8'));
  assert.is(setup.commonAnnotations['argocd.argoproj.io/sync-wave'], '-1');
  assert.equal(setup.resources, ['rbac.yaml', '../deploy']);
  const kz = parse(readFileSync('examples/argocd/clusters/prod-east/kustomization.yaml', 'utf8'));
  assert.is(kz.configMapGenerator[0].options.annotations['argocd.argoproj.io/sync-wave'], '1');
  assert.match(kz.patches[0].patch, /argocd\.argoproj\.io\/sync-wave: "2"/);
  for (const { obj } of jobSpecs(k8sDocs('examples/argocd/clusters/prod-east'))) {
    assert.is(obj.metadata.annotations['argocd.argoproj.io/sync-wave'], '2');
    assert.is(obj.metadata.annotations['argocd.argoproj.io/hook'], undefined, 'not a hook: it would wait for the Rollout to be Healthy');
  }
  const job = k8sDocs('examples/argocd/clusters/prod-east').find((d) => d.obj.kind === 'Job')!.obj;
  assert.is(job.metadata.annotations['argocd.argoproj.io/sync-options'], 'Force=true,Replace=true');
  assert.is(job.spec.ttlSecondsAfterFinished, undefined, 'Argo CD would re-create a deleted Job');
  const app = parse(readFileSync('examples/argocd/application.yaml', 'utf8'));
  assert.equal(
    app.spec.sources.map((x: any) => x.path),
    ['examples', 'clusters/prod-east'],
  );
  // The layout's cluster directory, as this tree holds it (copy examples/argocd/clusters/ to your repository's root).
  assert.ok(existsSync(join('examples/argocd', app.spec.sources[1].path, 'kustomization.yaml')));
  assert.is(app.spec.destination.namespace, 'openshift-bootcplan');
});

s('the setup (CRD, namespace, RBAC) is never pruned nor deleted with an Application: single-cluster and fleet agree', () => {
  const setup = parse(readFileSync('examples/kustomization.yaml', 'utf8'));
  assert.is(setup.commonAnnotations['argocd.argoproj.io/sync-options'], KEEP_SYNC_OPTIONS);
  assert.is(setup.commonAnnotations['kustomize.toolkit.fluxcd.io/prune'], 'disabled');
  // Both kinds of Application cascade (deleting one removes its Jobs, CronJob, ConfigMaps, Rollout).
  const app = parse(readFileSync('examples/argocd/application.yaml', 'utf8'));
  assert.equal(app.metadata.finalizers, ['resources-finalizer.argocd.argoproj.io']);
  const r = renderFleetArgo(testFleet([{ name: 'east-1', canary: true }, { name: 'west-1' }], 1), TEST_OPTIONS);
  const set = parse(r.files.find((f) => f.path === 'applicationset.yaml')!.content);
  assert.is(set.spec.syncPolicy.preserveResourcesOnDeletion, false, 'generated Applications carry the finalizer too');
  assert.is(set.spec.template.spec.sources[0].path, `${TEST_OPTIONS.path}/setup`, 'every Application syncs the wrapped setup first');
  // What each syncs as setup, rendered by kustomize: every object carries the sync options.
  const render = kustomizer();
  if (!render) {
    skipLocally('kustomize', '.ci/run builds it');
    return;
  }
  const repo = mkdtempSync(join(tmpdir(), 'bootcplan-setup-'));
  for (const d of ['examples', 'deploy']) symlinkSync(join(process.cwd(), d), join(repo, d));
  for (const f of r.files) {
    mkdirSync(dirname(join(repo, TEST_OPTIONS.path, f.path)), { recursive: true });
    writeFileSync(join(repo, TEST_OPTIONS.path, f.path), f.content);
  }
  const single = docsOf(render('examples'));
  const fleet = docsOf(render(join(repo, TEST_OPTIONS.path, 'setup')));
  const kinds = (objs: any[]) => objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();
  assert.equal(kinds(fleet), kinds(single), 'the same objects');
  for (const k of ['CustomResourceDefinition/rollouts.bootcplan.dev', 'Namespace/openshift-bootcplan', 'ServiceAccount/bootcplan'])
    assert.ok(kinds(single).includes(k), k);
  for (const o of [...single, ...fleet]) {
    assert.is(o.metadata.annotations?.['argocd.argoproj.io/sync-options'], KEEP_SYNC_OPTIONS, `${o.kind}/${o.metadata.name}`);
    assert.is(o.metadata.annotations?.['argocd.argoproj.io/sync-wave'], '-1', `${o.kind}/${o.metadata.name}`);
  }
  for (const o of single) assert.is(o.metadata.annotations['kustomize.toolkit.fluxcd.io/prune'], 'disabled', `${o.kind}/${o.metadata.name}`);
});

s('Flux: setup (never pruned), then the rollout (dependsOn); health is the Job and the Rollout, with a timeout longer than one step', () => {
  const ks = k8sDocs('examples/flux')
    .filter((d) => d.obj.apiVersion === 'kustomize.toolkit.fluxcd.io/v1')
    .map((d) => d.obj);
  assert.equal(
    ks.map((k) => [k.metadata.name, k.spec.path, k.spec.dependsOn?.[0]?.name ?? null]),
    [
      ['bootcplan-setup', './examples', null],
      ['bootcplan-rollout', './clusters/prod-east', 'bootcplan-setup'],
    ],
  );
  assert.ok(existsSync(join('examples/flux', ks[1].spec.path, 'kustomization.yaml')), 'the layout, as this tree holds it');
  assert.is(ks[0].spec.prune, false);
  const rollout = ks[1];
  assert.is(rollout.spec.wait, false);
  assert.equal(
    rollout.spec.healthChecks.map((h: any) => `${h.kind}/${h.name}`),
    ['Job/bootcplan-apply', 'Rollout/prod-east'],
  );
  assert.equal(
    rollout.spec.healthCheckExprs.map((h: any) => `${h.apiVersion} ${h.kind}`),
    ['bootcplan.dev/v1alpha1 Rollout'],
  );
  assert.is(rollout.spec.force, true);
  const seconds = (d: string) => [...d.matchAll(/(\d+)([hms])/g)].reduce((t, [, n, u]) => t + Number(n) * ({ h: 3600, m: 60, s: 1 } as any)[u], 0);
  const job = k8sDocs('examples/flux/clusters/prod-east').find((d) => d.obj.kind === 'Job')!.obj;
  assert.ok(seconds(rollout.spec.timeout) > job.spec.activeDeadlineSeconds, `${rollout.spec.timeout} > one step`);
  assert.not.match(readFileSync('examples/flux/README.md', 'utf8'), /Job's name carries/);
});

s('argocd-cm and the OpenShift GitOps ArgoCD CR embed the tested Lua health checks verbatim', () => {
  const cm = parse(readFileSync('examples/argocd/argocd-cm-health.yaml', 'utf8'));
  const cr = parse(readFileSync('examples/argocd/argocd-cr-health.yaml', 'utf8'));
  for (const [group, kind, file] of [
    ['node.bootc.dev', 'BootcNodePool', 'bootcnodepool'],
    ['machineconfiguration.openshift.io', 'MachineConfigPool', 'machineconfigpool'],
    ['bootcplan.dev', 'Rollout', 'rollout'],
  ]) {
    const lua = readFileSync(`examples/argocd/health/${file}.lua`, 'utf8');
    assert.is(cm.data[`resource.customizations.health.${group}_${kind}`], lua, `argocd-cm ${kind}`);
    assert.is(cr.spec.resourceHealthChecks.find((h: any) => h.group === group && h.kind === kind)?.check, lua, `ArgoCD CR ${kind}`);
  }
});

const health = luaHealth;

s('Lua health checks behave (run with lua5.4)', () => {
  if (!LUA) {
    skipLocally('lua5.4', '.ci/run installs it');
    return;
  }
  const bnp = 'examples/argocd/health/bootcnodepool.lua';
  assert.is(health(bnp, { spec: {} }).status, 'Progressing');
  assert.is(
    health(bnp, {
      status: {
        nodeCount: 9,
        updatedCount: 9,
        targetDigest: 'sha256:a',
        deployedDigest: 'sha256:a',
        conditions: [{ type: 'Degraded', status: 'False', reason: 'Healthy' }],
      },
    }).status,
    'Healthy',
  );
  const prog = health(bnp, {
    spec: { rollout: { paused: true } },
    status: { nodeCount: 9, updatedCount: 4, updatingCount: 2, targetDigest: 'sha256:b', deployedDigest: 'sha256:a' },
  });
  assert.equal(prog, { status: 'Progressing', message: '4/9 nodes updated, 2 updating, 0 degraded' });
  const deg = health(bnp, {
    status: { nodeCount: 9, conditions: [{ type: 'Degraded', status: 'True', reason: 'NodeDegraded', message: 'Degraded nodes: w-3' }] },
  });
  assert.equal(deg, { status: 'Degraded', message: 'NodeDegraded: Degraded nodes: w-3' });

  const mcp = 'examples/argocd/health/machineconfigpool.lua';
  const c = (t: string, st: string, msg = '') => ({ type: t, status: st, message: msg });
  assert.is(
    health(mcp, { status: { machineCount: 3, updatedMachineCount: 3, conditions: [c('Updated', 'True'), c('Updating', 'False'), c('Degraded', 'False')] } })
      .status,
    'Healthy',
  );
  assert.is(
    health(mcp, { status: { machineCount: 3, updatedMachineCount: 1, conditions: [c('Updated', 'False'), c('Updating', 'True'), c('Degraded', 'False')] } })
      .status,
    'Progressing',
  );
  assert.is(
    health(mcp, { spec: { paused: true }, status: { machineCount: 3, updatedMachineCount: 1, conditions: [c('Updated', 'False'), c('Updating', 'False')] } })
      .status,
    'Suspended',
  );
  assert.equal(
    health(mcp, {
      status: { conditions: [c('Updated', 'False'), c('NodeDegraded', 'True', 'Node w-1 is reporting: failed to drain'), c('Degraded', 'True', 'x')] },
    }),
    { status: 'Degraded', message: 'Node w-1 is reporting: failed to drain' },
  );
});

s.run();
