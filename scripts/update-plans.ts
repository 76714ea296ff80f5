/**
 * Regenerates plans/demo.json, the saved plan of the demo (examples/rollout.yaml against
 * examples/cluster.yaml), and the committed plans of the GitOps examples
 * (scripts/example-plans.ts). test/repo/plans.test.ts fails when a file drifts from what the
 * planner produces, so run `npm run plans:update` after a planner change and review the diff.
 */
import { writeFileSync } from 'node:fs';
import { demoPlan } from './demo-plan.ts';
import { examplePlans } from './example-plans.ts';
import { planFileText } from '../src/plan/saved/writer.ts';

writeFileSync(new URL('../plans/demo.json', import.meta.url), planFileText(demoPlan()));
console.log('wrote plans/demo.json');
for (const { file, plan } of examplePlans()) {
  writeFileSync(new URL(`../${file}`, import.meta.url), planFileText(plan));
  console.log(`wrote ${file}`);
}
