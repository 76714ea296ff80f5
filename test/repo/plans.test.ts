import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, mkdtempSync, mkdirSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { examplePlans, LAYOUT } from '../../scripts/example-plans.ts';
import { demoPlan } from '../../scripts/demo-plan.ts';
import { planFileText } from '../../src/plan/saved/writer.ts';
import { spawnSync } from 'node:child_process';
import { ensureBuilt, ROOT } from '../support/built.ts';

const s = suite('saved demo plan');

s('plans/demo.json is exactly what the planner produces today (run `npm run plans:update`)', () => {
  const saved = readFileSync('plans/demo.json', 'utf8');
  assert.fixture(planFileText(demoPlan()), saved);
});

s('the demo plan has waves in both pools and no errors', () => {
  const plan = demoPlan();
  assert.is(plan.summary.errors, 0);
  assert.equal(
    plan.pools.map((p) => p.name),
    ['infra', 'worker'],
  );
  assert.ok(plan.pools.every((p) => p.waves.length > 0));
  const worker = plan.pools.find((p) => p.name === 'worker')!;
  assert.equal(worker.maxUnavailable, { value: '40%', resolved: 3, rule: 'floor(percent x nodes), minimum 1' });
  assert.equal(worker.nodes.find((n) => n.name === 'worker-b-1')!.blockedBy, 'cordoned');
  assert.equal(worker.waves[0].sort(), ['worker-a-2', 'worker-b-2'], 'staged, soft-reboot capable nodes go first');
});

for (const { file, plan } of examplePlans()) {
  s(`${file} is exactly what the planner produces today for the documented layout (run \`npm run plans:update\`)`, () => {
    assert.fixture(readFileSync(file, 'utf8'), planFileText(plan));
  });
}

s("the Argo CD example's committed plan is still current: rehearsed where the Job reads it (the layout, outside git), it re-plans the same decisions", () => {
  // The example Job applies clusters/prod-east/plans/bootcplan.json from its mount; a planner or
  // plan-format change (the cluster identity, say) makes it stale, and the Job would exit 3 on every run.
  const work = mkdtempSync(join(tmpdir(), 'bootcplan-layout-'));
  for (const p of [LAYOUT.spec, LAYOUT.plan]) {
    mkdirSync(dirname(join(work, p)), { recursive: true });
    cpSync(join(ROOT, 'examples/argocd', p), join(work, p));
  }
  const r = spawnSync(process.execPath, [ensureBuilt(), 'rehearse', LAYOUT.plan, '--cluster', join(ROOT, 'examples/cluster.yaml'), '-o', 'json'], {
    cwd: work,
    encoding: 'utf8',
  });
  assert.is(r.status, 0, `regenerate it: npm run plans:update\n${r.stderr}`);
});

s.run();
