/**
 * The node running bootcplan's own pod goes last in its pool (docs/design.md §7 "Stopping"; docs/apply.md
 * "Stopping"), as the MCO defers the node of its own operator pod: bootcplan's drain of that node
 * evicts bootcplan itself, which stops there and leaves the rest to a rerun.
 * - the planner, given the node (NODE_NAME at plan time), places it last in its bootc pool with
 *   the same wave sizes, and the plan says so (node entry, text, markdown, HTML);
 * - the applier, given the node it runs on, takes it last among its pool's remaining nodes, in
 *   waves and in slots, with a plan made in a pull request (no NODE_NAME), and that is not stale;
 * - a saved plan made on one node is re-planned on that node (its reviewed waves), whatever node
 *   the Job runs on later;
 * - the example Jobs and CronJobs (and `fleet render argocd`'s) set NODE_NAME from spec.nodeName,
 *   and the example Job's own command, run step by step, updates its own node last.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { kustomizer, docsOf } from '../e2e/gitops-dry-run.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { runApply, newSim } from '../support/apply.ts';
import { ROOT } from '../support/built.ts';
import { inDir, io } from '../support/cli.ts';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { buildPlan, selfNodeOf } from '../../src/plan/planner.ts';
import type { Plan } from '../../src/plan/types.ts';
import type { ClusterSnapshot } from '../../src/cluster/types.ts';
import { confirmSavedPlan } from '../../src/plan/saved/compare.ts';
import { run } from '../../src/cli/main.ts';
import { StalePlanError } from '../../src/base/errors.ts';
import { readSnapshotFile, nodeInputs } from '../../src/app/inputs.ts';
import { renderPlan } from '../../src/render/formats.ts';

const s = suite('self node last');

function planner(rollout: 'waves' | 'slots' = 'waves') {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 7)).mcoPool('infra', nodes('i', 3)).snapshot();
  const loaded = parseRolloutSpec(
    specYaml([
      { name: 'worker', image: NEW, maxUnavailable: 2, ...(rollout === 'slots' ? { rollout } : {}) },
      { name: 'infra', image: NEW, maxUnavailable: 1 },
    ]),
    'spec.yaml',
  );
  const mk = (selfNode: string | null) => (sn: ClusterSnapshot) =>
    buildPlan({
      spec: loaded.spec!,
      specMap: loaded.map,
      snapshot: sn,
      specDiagnostics: loaded.diagnostics,
      specInfo: { name: 'test', path: 'spec.yaml', ref: null, commit: null, sha256: loaded.sha256, dirty: null },
      selfNode,
    });
  return { snap, mk };
}

const pool = (p: Plan, name: string) => p.pools.find((x) => x.name === name)!;

s('planner: the given node goes last in its bootc pool, same nodes and wave sizes, the others in the same order; the plan says so', async () => {
  const { snap, mk } = planner();
  const pr = mk(null)(snap);
  const before = pool(pr, 'worker').waves;
  const self = before[0][0];
  const job = mk(self)(snap);
  const after = pool(job, 'worker').waves;
  assert.equal(
    after.map((w) => w.length),
    before.map((w) => w.length),
    'same wave sizes',
  );
  assert.equal(after.flat(), [...before.flat().filter((n) => n !== self), self], 'last; the others in the same order');
  assert.equal(
    pool(job, 'worker')
      .nodes.filter((n) => n.runsBootcplan)
      .map((n) => [n.name, n.wave]),
    [[self, after.length]],
  );
  assert.not.ok(
    pool(pr, 'worker').nodes.some((n) => 'runsBootcplan' in n),
    'no field without NODE_NAME',
  );
  assert.is(selfNodeOf(job), self);
  assert.is(selfNodeOf(pr), null);
  const line = `${self} runs bootcplan's own pod (NODE_NAME): it goes last, in wave ${after.length}, since its drain evicts bootcplan`;
  assert.ok((await renderPlan(job, 'text', { color: false })).includes(`  last: ${line}`));
  assert.ok((await renderPlan(job, 'markdown', { color: false })).includes(`Last: ${line.replace('NODE_NAME', 'NODE\\_NAME')}`));
  assert.ok((await renderPlan(job, 'html', { color: false })).includes(`<p>Last: ${line.replace("'", '&#39;')}</p>`));
  assert.not.match(await renderPlan(pr, 'text', { color: false }), /runs bootcplan's own pod/);
  // An MCO pool's node: the MCO picks its nodes, the plan predicts its order unchanged.
  const mcoSelf = pool(pr, 'infra').waves[0][0];
  const onInfra = mk(mcoSelf)(snap);
  assert.equal(pool(onInfra, 'infra').waves, pool(pr, 'infra').waves);
  assert.is(selfNodeOf(onInfra), null);
  // A node of no pool (or of another cluster): the plan of a pull request, id and all.
  assert.is(mk('elsewhere-7')(snap).id, pr.id);
});

s('planner, slots: the given node is admitted last', () => {
  const { snap, mk } = planner('slots');
  const pr = pool(mk(null)(snap), 'worker');
  const self = pr.waves[0][1];
  const job = pool(mk(self)(snap), 'worker');
  assert.equal(job.waves.flat().at(-1), self);
  assert.equal(
    job.waves.map((w) => w.length),
    pr.waves.map((w) => w.length),
  );
});

for (const rollout of ['waves', 'slots'] as const) {
  s(
    `applier (${rollout}): a plan made in a pull request, applied from a pod on one of its first nodes, updates that node last; same waves, never stale`,
    async () => {
      const { snap, mk } = planner(rollout);
      const replan = mk(null);
      const plan = replan(snap);
      const self = pool(plan, 'worker').waves[0][0];
      const sim = newSim(snap);
      const r = await runApply(sim, plan, replan, { selfNode: self });
      assert.is(r.code, 0, String((r.error as Error)?.stack ?? r.error));
      const bootcReboots = sim.reboots.filter((x) => x.node.startsWith('w-')).map((x) => x.node);
      assert.is(bootcReboots.at(-1), self, `rebooted in this order: ${bootcReboots.join(' ')}`);
      assert.is(bootcReboots.length, 7);
      for (const [node, n] of sim.rebootCounts()) assert.is(n, 1, node);
      const starts = r.events.flatMap((e) => (e.type === 'wave-start' && e.pool === 'worker' ? [e] : []));
      assert.is(starts.length, pool(plan, 'worker').waves.length, 'as many waves (batches) as planned');
      if (rollout === 'waves')
        assert.equal(
          starts.map((e) => e.nodes.length),
          pool(plan, 'worker').waves.map((w) => w.length),
          'the planned wave sizes',
        );
      assert.ok(starts.at(-1)!.nodes.includes(self), 'in the last wave');
    },
  );
}

s('a saved plan made on a node is re-planned on that node: its reviewed waves hold wherever the Job runs later; re-planned without it, they would not', () => {
  const { snap, mk } = planner();
  const saved = mk(pool(mk(null)(snap), 'worker').waves[0][0])(snap);
  const fresh = mk(selfNodeOf(saved))(snap);
  assert.is(confirmSavedPlan(saved, fresh, snap, { compareDurations: true }).id, saved.id);
  try {
    confirmSavedPlan(saved, mk(null)(snap), snap, { compareDurations: true });
    assert.unreachable('the same waves without the node');
  } catch (err) {
    assert.instance(err, StalePlanError);
  }
});

const JOBS: [string, (o: any) => any][] = [
  ['examples/argocd/clusters/prod-east/apply-job.yaml', (o) => o.spec.template.spec],
  ['examples/argocd/clusters/prod-east/apply-cronjob.yaml', (o) => o.spec.jobTemplate.spec.template.spec],
  ['examples/flux/clusters/prod-east/apply-job.yaml', (o) => o.spec.template.spec],
  ['examples/flux/clusters/prod-east/apply-cronjob.yaml', (o) => o.spec.jobTemplate.spec.template.spec],
];

s('the example Jobs and CronJobs set NODE_NAME from the downward API (spec.nodeName)', () => {
  for (const [file, podOf] of JOBS) {
    const env = podOf(parse(readFileSync(join(ROOT, file), 'utf8'))).containers[0].env;
    assert.equal(
      env.find((e: any) => e.name === 'NODE_NAME'),
      { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      file,
    );
  }
});

s("the example Job's own command, run step by step on a node of its first wave (NODE_NAME as the kubelet resolves it), updates that node last", async () => {
  // The Job as kustomize renders it: its command line and mount carry the layout's paths.
  const render = kustomizer();
  if (!render) {
    assert.not.ok(process.env.CI, 'kustomize must be built in CI (.ci/run)');
    return;
  }
  const pod = docsOf(render(join(ROOT, 'examples/argocd/clusters/prod-east'))).find((o: any) => o.kind === 'Job').spec.template.spec;
  const ctr = pod.containers[0];
  // The ConfigMap volume as the kubelet mounts it: the repository's files at their paths.
  // The plan is made as the pull-request workflow makes it: against the cluster, no NODE_NAME.
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-job-'));
  const items: { key: string; path: string }[] = pod.volumes[0].configMap.items;
  const spec = items.find((it) => it.key === 'bootcplan.yaml')!.path;
  const planPath = items.find((it) => it.key === 'plan.json')!.path;
  mkdirSync(join(work, dirname(spec)), { recursive: true });
  mkdirSync(join(work, dirname(planPath)), { recursive: true });
  cpSync(join(ROOT, 'examples/argocd/clusters/prod-east/bootcplan.yaml'), join(work, spec));
  const made = io();
  assert.is(await inDir(work, () => run(['plan', '-f', spec, '--cluster', join(ROOT, 'examples/cluster.yaml'), '--out', planPath], { io: made })), 0, made.err);
  const saved: Plan = JSON.parse(readFileSync(join(work, planPath), 'utf8'));
  const self = saved.pools[0].waves[0][0];
  // The pod's spec.nodeName and metadata.name, as the downward API resolves the env.
  const fields: Record<string, string> = { 'spec.nodeName': self, 'metadata.name': 'bootcplan-apply-x7k2p' };
  const env: Record<string, string> = { NO_COLOR: '1' };
  for (const e of ctr.env) env[e.name] = e.value ?? fields[e.valueFrom.fieldRef.fieldPath];
  assert.is(env.NODE_NAME, self);
  // Inside the spec's maintenance window (22:00-03:00 Europe/Berlin).
  const sim = newSim(readSnapshotFile(nodeInputs, join(ROOT, 'examples/cluster.yaml')), { start: '2026-09-14T20:05:00Z' });
  const job = io({ env });
  for (let i = 0; i < 30 && !sim.progress.read(sim.nodes.values()).run?.done; i++) {
    const code = await inDir(join(work, ctr.workingDir.replace(/^\/work/, '')), () =>
      run(ctr.args, { io: job, openDriver: async () => ({ driver: sim.driver(`job-${i}`), holder: env.BOOTCPLAN_HOLDER }) }),
    );
    assert.is(code, 0, job.err);
    sim.advance(900); // the CronJob's next run
  }
  assert.ok(sim.progress.read(sim.nodes.values()).run?.done, `not done: ${job.err.slice(-2000)}`);
  const order = sim.reboots.map((x) => x.node);
  assert.is(order.at(-1), self, `rebooted in this order: ${order.join(' ')}`);
  assert.is(order.length, saved.pools[0].waves.flat().length);
});

s.run();
