import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
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

s("the Argo CD example's committed plan is still current: rehearsing it against the example cluster re-plans the same decisions", () => {
  // The example Job applies examples/argocd/plans/bootcplan.json; a planner or plan-format
  // change (the cluster identity, say) makes it stale, and the Job would exit 3 on every run.
  const r = spawnSync(
    process.execPath,
    [ensureBuilt(), 'rehearse', 'examples/argocd/plans/bootcplan.json', '--cluster', 'examples/cluster.yaml', '-o', 'json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  assert.is(
    r.status,
    0,
    `regenerate it: bootcplan plan -f examples/argocd/bootcplan.yaml --cluster examples/cluster.yaml --out examples/argocd/plans/bootcplan.json\n${r.stderr}`,
  );
});

s.run();
