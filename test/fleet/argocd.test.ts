/**
 * `fleet render argocd` (docs/gitops.md "Fleets from an Argo CD hub"): the ApplicationSet's RollingSync steps are the fleet's
 * batches (one step per canary with maxUpdate 1, then a step per batch with maxUpdate =
 * maxConcurrency), each Application carries its batch label and its cluster's directory, and
 * each directory holds the sealed plan, the Fleet file, the Rollout object and the apply Job
 * and CronJob of the single-cluster example (examples/argocd).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { renderFleetArgo, FLEET_BATCH_LABEL, type ArgoFleetRender } from '../../src/fleet/argocd.ts';
import { planFileText } from '../../src/plan/saved/writer.ts';
import { golden } from '../support/render.ts';
import { testFleet, TEST_OPTIONS, FLEET_PATH, type ArgoTestCluster } from '../support/fleet-argocd.ts';
import { seeded } from '../support/seeds.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const s = suite('fleet render argocd');

const THREE: ArgoTestCluster[] = [
  { name: 'east-1', canary: true, labels: { region: 'east' } },
  { name: 'west-1', labels: { region: 'west' } },
  { name: 'east-2', labels: { region: 'east' }, destination: { server: 'https://api.east-2.example.com:6443' } },
];

const render = (clusters: ArgoTestCluster[], maxConcurrency: number) => renderFleetArgo(testFleet(clusters, maxConcurrency), TEST_OPTIONS);
function fileOf(r: ArgoFleetRender, path: string): string {
  const f = r.files.find((x) => x.path === path);
  if (!f) throw new Error(`no ${path} in the render`);
  return f.content;
}

/** Which Applications each step selects, as Argo CD's buildAppDependencyList matches labels (In). */
function stepsOf(r: ArgoFleetRender): { apps: string[]; maxUpdate: unknown }[] {
  const set = parse(fileOf(r, 'applicationset.yaml'));
  const elements = set.spec.generators[0].list.elements;
  const label = (el: any) =>
    Object.fromEntries(
      Object.entries(set.spec.template.metadata.labels as Record<string, string>).map(([k, v]) => [k, v.replace(/\{\{\.(\w+)\}\}/g, (_, f) => el[f])]),
    );
  return set.spec.strategy.rollingSync.steps.map((step: any) => ({
    apps: elements
      .filter((el: any) => step.matchExpressions.every((m: any) => m.operator === 'In' && m.values.includes(label(el)[m.key])))
      .map((el: any) => el.cluster),
    maxUpdate: step.maxUpdate,
  }));
}

s('golden: 3 clusters, 1 canary, maxConcurrency 2 (the ApplicationSet and every YAML file of each cluster)', () => {
  const r = render(THREE, 2);
  golden(
    'fleet-argocd-3.yaml',
    r.files
      .filter((f) => f.path.endsWith('.yaml') && !f.path.endsWith('/fleet.yaml'))
      .map((f) => `### ${f.path}\n${f.content}`)
      .join(''),
  );
  assert.equal(stepsOf(r), [
    { apps: ['east-1'], maxUpdate: 1 },
    { apps: ['east-2', 'west-1'], maxUpdate: 2 },
  ]);
  assert.equal(
    r.applications.map((a) => `${a.step}:${a.application}`),
    ['1:bootcplan-prod-east-1', '2:bootcplan-prod-east-2', '2:bootcplan-prod-west-1'],
  );
  const set = parse(fileOf(r, 'applicationset.yaml'));
  assert.equal(set.spec.strategy.type, 'RollingSync');
  assert.equal(set.spec.template.spec.syncPolicy.automated, undefined, 'RollingSync syncs each step itself');
  const el = (c: string) => set.spec.generators[0].list.elements.find((e: any) => e.cluster === c);
  assert.equal([el('east-1').destinationName, el('east-1').destinationServer], ['east-1', ''], 'default destination: the cluster name');
  assert.equal([el('east-2').destinationName, el('east-2').destinationServer], ['', 'https://api.east-2.example.com:6443']);
});

s('each cluster directory: the sealed plan as plan --out writes it, the Fleet file byte for byte, the Job mounting both at their repository paths', () => {
  const input = testFleet(THREE, 2);
  const r = renderFleetArgo(input, TEST_OPTIONS);
  for (const c of input.fleetPlan.clusters) {
    const dir = `clusters/${c.name}`;
    assert.is(fileOf(r, `${dir}/plan.json`), planFileText(c.plan!));
    assert.is(fileOf(r, `${dir}/fleet.yaml`), input.fleetText);
    const job = parse(fileOf(r, `${dir}/apply-job.yaml`));
    const ctr = job.spec.template.spec.containers[0];
    assert.equal(ctr.args, ['apply', `fleets/prod/argocd/${dir}/plan.json`, '--auto-approve', '--step', '--lock-timeout', '6m']);
    assert.equal(job.spec.template.spec.volumes[0].configMap.items, [
      { key: 'fleet.yaml', path: FLEET_PATH },
      { key: 'plan.json', path: `fleets/prod/argocd/${dir}/plan.json` },
    ]);
    const k = parse(fileOf(r, `${dir}/kustomization.yaml`));
    assert.equal(k.configMapGenerator[0].files, ['fleet.yaml', 'plan.json']);
    const rollout = parse(fileOf(r, `${dir}/rollout.yaml`));
    assert.equal(rollout.spec, input.rollouts[c.name].spec, 'the Rollout object holds exactly the effective spec');
  }
});

s("the Job and CronJob are the single-cluster example's (examples/argocd), but for the plan and the Fleet file", () => {
  const r = render(THREE, 2);
  for (const [file, rendered, strip] of [
    ['apply-job.yaml', 'apply-job.yaml', (o: any) => o.spec.template.spec],
    ['apply-cronjob.yaml', 'apply-cronjob.yaml', (o: any) => o.spec.jobTemplate.spec.template.spec],
  ] as const) {
    const example = parse(readFileSync(join(ROOT, 'examples/argocd/clusters/prod-east', file), 'utf8'));
    const ours = parse(fileOf(r, `clusters/east-1/${rendered}`));
    for (const o of [example, ours]) {
      const pod = strip(o);
      delete pod.containers[0].args;
      delete pod.volumes[0].configMap.items;
      delete o.spec.timeZone;
    }
    assert.equal(ours, example, file);
  }
});

s('clusters in no batch get no Application: nothing to change or no plan (reported as skipped)', () => {
  const r = render([...THREE, { name: 'down-1', unreachable: true }], 2);
  assert.equal(r.skipped, [{ cluster: 'down-1', reason: 'no plan (unreachable): connection refused' }]);
  assert.not.ok(r.files.some((f) => f.path.startsWith('clusters/down-1/')));
  assert.not.ok(stepsOf(r).some((st) => st.apps.includes('down-1')));
});

s('soak and batch timeout have no RollingSync counterpart: notes, not silence', () => {
  const r = renderFleetArgo(testFleet(THREE, 2, { batchSoakSeconds: 600, batchTimeoutSeconds: 3600, batchTimeoutAction: 'continue' }), TEST_OPTIONS);
  assert.is(r.notes.length, 2);
  assert.match(r.notes[0], /batchSoakSeconds 600 is not enforced by Argo CD/);
  assert.match(r.notes[1], /batchTimeoutSeconds 3600 \(continue\)/);
  assert.equal(render(THREE, 2).notes, []);
});

const names = fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/), { minLength: 1, maxLength: 12 });
const fleets = names.chain((ns) =>
  fc.record({
    clusters: fc.tuple(
      ...ns.map((name) =>
        fc.record({ name: fc.constant(name), canary: fc.boolean(), labels: fc.dictionary(fc.constantFrom('region', 'tier'), fc.constantFrom('a', 'b', 'c')) }),
      ),
    ),
    maxConcurrency: fc.integer({ min: 1, max: 5 }),
  }),
);

s("property: the steps are the batches in order, each selecting exactly its batch's clusters; canaries maxUpdate 1, others maxConcurrency", () => {
  fc.assert(
    fc.property(fleets, ({ clusters, maxConcurrency }) => {
      const input = testFleet(clusters, maxConcurrency);
      const r = renderFleetArgo(input, TEST_OPTIONS);
      const batches = input.fleetPlan.batches.map((b) => b.clusters);
      const steps = stepsOf(r);
      assert.is(steps.length, batches.length);
      const canaries = clusters.filter((c) => c.canary).map((c) => c.name);
      steps.forEach((st, i) => {
        assert.equal(st.apps.slice().sort(), batches[i].slice().sort(), `step ${i + 1}`);
        // Canaries first, in the order listed, one per step.
        if (i < canaries.length) assert.equal(st.apps, [canaries[i]]);
        assert.is(st.maxUpdate, i < canaries.length ? 1 : maxConcurrency);
        assert.ok(st.apps.length <= (st.maxUpdate as number));
      });
      // Every Application is selected by exactly one step (Argo CD warns on two, and leaves an unselected one alone).
      const selected = steps.flatMap((st) => st.apps);
      assert.is(new Set(selected).size, selected.length);
      assert.is(selected.length, clusters.length);
      const set = parse(fileOf(r, 'applicationset.yaml'));
      for (const el of set.spec.generators[0].list.elements) assert.is(el.batch, String(r.applications.find((a) => a.cluster === el.cluster)!.batch));
      assert.is(set.spec.template.metadata.labels[FLEET_BATCH_LABEL], '{{.batch}}');
    }),
    seeded(3101, 60),
  );
});

s.run();
