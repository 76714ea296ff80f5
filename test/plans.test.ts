import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { demoPlan } from '../scripts/demo-plan.ts';
import { renderJson } from '../src/render/json.ts';

const s = suite('saved demo plan');

s('plans/demo.json is exactly what the planner produces today (run `npm run plans:update`)', () => {
  const saved = readFileSync('plans/demo.json', 'utf8');
  assert.fixture(renderJson(demoPlan()), saved);
});

s('the demo plan has waves in both pools and no errors', () => {
  const plan = demoPlan();
  assert.is(plan.summary.errors, 0);
  assert.equal(plan.pools.map((p) => p.name), ['infra', 'worker']);
  assert.ok(plan.pools.every((p) => p.waves.length > 0));
  const worker = plan.pools.find((p) => p.name === 'worker')!;
  assert.equal(worker.maxUnavailable, { value: '40%', resolved: 3, rule: 'floor(percent x nodes), minimum 1' });
  assert.equal(worker.nodes.find((n) => n.name === 'worker-b-1')!.blockedBy, 'cordoned');
  assert.equal(worker.waves[0].sort(), ['worker-a-2', 'worker-b-2'], 'staged, soft-reboot capable nodes go first');
});

s.run();
