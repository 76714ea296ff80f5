/**
 * Regenerates plans/demo.json, the saved plan of the demo (examples/rollout.yaml against
 * examples/cluster.yaml). test/repo/plans.test.ts fails when the file drifts from what the
 * planner produces, so run `npm run plans:update` after a planner change and review the diff.
 */
import { writeFileSync } from 'node:fs';
import { demoPlan } from './demo-plan.ts';
import { planFileText } from '../src/plan/saved/writer.ts';

writeFileSync(new URL('../plans/demo.json', import.meta.url), planFileText(demoPlan()));
console.log('wrote plans/demo.json');
