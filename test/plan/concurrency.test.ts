/**
 * Plan.concurrency (docs/apply.md "Pools in parallel"): opt-in through the spec, formatVersion
 * "1.3", the groups of equal priority, the cluster budget over the nodes the rollout touches, each
 * node's spread value, the plan-time diagnostics at the spec's line and column, the text line,
 * the plan file read back, and apply refusing it until the applier runs pools in parallel.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBuilder, nodes, NEW, planFor, specYaml } from '../support/cluster.ts';
import { planConcurrency } from '../../src/plan/concurrency.ts';
import { renderText } from '../../src/render/text.ts';
import { planFileText } from '../../src/plan/saved/writer.ts';
import { parsePlanFile } from '../../src/plan/saved/reader.ts';
import { run } from '../../src/cli/main.ts';
import { io } from '../support/cli.ts';

const s = suite('pools in parallel: the plan');
const cluster = () => new ClusterBuilder().bootcPool('infra', nodes('i', 3)).bootcPool('worker', nodes('w', 9), { maxUnavailable: 2 });
const pools = (workerMu?: number) => [
  { name: 'infra', image: NEW, priority: 10 },
  { name: 'worker', image: NEW, priority: 10, ...(workerMu ? { maxUnavailable: workerMu } : {}) },
];
const ZONE = 'topology.kubernetes.io/zone';

s('without the spec fields: no concurrency, no spread values, the old format', () => {
  const plan = planFor(specYaml(pools()), cluster().snapshot());
  assert.is(plan.concurrency, undefined);
  assert.is(plan.formatVersion, '1.0');
  assert.ok(plan.pools.every((p) => p.nodes.every((n) => !('spreadValue' in n))));
  assert.is(
    planConcurrency({ spec: {} } as never, cluster().snapshot(), plan.pools, () => {}),
    undefined,
  );
});

s('with them: 1.3, groups by priority, the budget over the touched nodes, spread values, one text line', () => {
  const plan = planFor(specYaml(pools(), { maxUnavailable: '25%', spread: { key: ZONE, maxPerValue: 1 } }), cluster().snapshot());
  assert.is(plan.formatVersion, '1.3');
  assert.equal(plan.concurrency, {
    maxUnavailable: { value: '25%', resolved: 3, rule: 'floor(percent x nodes the rollout touches), minimum 1' },
    spread: { key: ZONE, maxPerValue: 1 },
    onPoolFailure: 'haltAll',
    groups: [['infra', 'worker']],
  });
  assert.equal(
    plan.pools[0].nodes.map((n) => n.spreadValue),
    ['us-east-1a', 'us-east-1b', 'us-east-1c'],
  );
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning'),
    [],
  );
  assert.match(
    renderText(plan),
    /\npools in parallel: infra\+worker, cluster budget 3 of 12, spread topology\.kubernetes\.io\/zone ≤1, on pool failure haltAll\n/,
  );
  assert.match(renderText(plan, { ascii: true }), /zone <=1,/);
});

s('different priorities are separate groups, in rollout order', () => {
  const spec = specYaml(
    [
      { name: 'worker', image: NEW, priority: 20 },
      { name: 'infra', image: NEW, priority: 10 },
    ],
    { onPoolFailure: 'haltPool' },
  );
  const plan = planFor(spec, cluster().snapshot());
  assert.equal(plan.concurrency?.groups, [['infra'], ['worker']]);
  assert.is(plan.concurrency?.maxUnavailable, null);
  assert.match(renderText(plan), /pools in parallel: none \(no two pools share a priority\), no cluster budget, on pool failure haltPool/);
});

const at = (spec: string, code: string) => {
  const d = planFor(spec, cluster().snapshot()).diagnostics.find((x) => x.code === code);
  assert.ok(d, code);
  return d;
};
const lineOf = (spec: string, needle: string) => spec.split('\n').findIndex((l) => l.includes(needle)) + 1;

s('a cluster budget below 1 after rounding: an error at spec.maxUnavailable', () => {
  const spec = specYaml(pools(), { maxUnavailable: '5%' });
  const d = at(spec, 'cluster-budget-below-one');
  assert.is(d.severity, 'error');
  assert.is(d.path, 'spec.maxUnavailable');
  assert.is(d.file, 'spec.yaml');
  assert.is(d.line, lineOf(spec, 'maxUnavailable: 5%'));
  assert.ok((d.column ?? 0) > 1);
  assert.match(d.message, /5% of the 12 nodes .* rounds down to 0/);
  assert.match(d.expected ?? '', /9%/);
  assert.ok(d.hint);
});

s('a spread key no node carries: an error at spec.spread.key', () => {
  const spec = specYaml(pools(), { spread: { key: 'example.com/rack', maxPerValue: 1 } });
  const d = at(spec, 'spread-key-absent');
  assert.is(d.severity, 'error');
  assert.is(d.line, lineOf(spec, 'key: example.com/rack'));
  assert.match(d.message, /example\.com\/rack/);
  assert.ok(d.hint);
});

s("a pool budget above the cluster budget: a warning at the pool's maxUnavailable, the smaller holds", () => {
  const spec = specYaml(pools(5), { maxUnavailable: 2 });
  const d = at(spec, 'pool-budget-above-cluster');
  assert.is(d.severity, 'warning');
  assert.is(d.path, 'spec.pools[1].maxUnavailable');
  assert.is(d.line, lineOf(spec, 'maxUnavailable: 5'));
  assert.match(d.message, /worker .* 5 .* cluster budget of 2: the smaller holds/);
});

s('a 1.3 plan file with concurrency reads back; a broken section is refused', () => {
  const plan = planFor(specYaml(pools(), { maxUnavailable: 3, spread: { key: ZONE, maxPerValue: 1 } }), cluster().snapshot());
  const text = planFileText(plan);
  const back = parsePlanFile(text, 'p.json');
  assert.equal(back.diagnostics, []);
  assert.equal(back.plan?.concurrency, plan.concurrency);
  const broken = JSON.parse(text);
  broken.concurrency.onPoolFailure = 'sometimes';
  assert.ok(parsePlanFile(JSON.stringify(broken), 'p.json').diagnostics.length > 0);
});

s('apply refuses a plan with pools in parallel, exit 1, before touching a cluster', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-concurrency-'));
  writeFileSync(join(dir, 'cluster.yaml'), cluster().yaml());
  writeFileSync(join(dir, 'rollout.yaml'), specYaml(pools(), { maxUnavailable: 3 }));
  const p = io();
  const planCode = await run(['plan', '-f', join(dir, 'rollout.yaml'), '--cluster', join(dir, 'cluster.yaml'), '--out', join(dir, 'plan.json')], { io: p });
  assert.ok(planCode === 0 || planCode === 2, p.err);
  const o = io();
  const code = await run(['apply', join(dir, 'plan.json')], { io: o });
  assert.is(code, 1, o.err);
  assert.match(o.err, /pools in parallel are planned but not yet applied by this version/);
  assert.not.match(o.err, / {4}at /);
  // A rehearsal would roll the pools one after another too: refused the same way.
  const r = io();
  const rehearsed = await run(['rehearse', join(dir, 'plan.json'), '--cluster', join(dir, 'cluster.yaml')], { io: r });
  assert.is(rehearsed, 1, r.err);
  assert.match(r.err, /pools in parallel are planned but not yet applied by this version/);
});

s.run();
