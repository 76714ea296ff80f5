/**
 * Golden output for the demo (examples/rollout.yaml against examples/cluster.yaml): the legacy
 * migration, the boot-image effects and the CPMS line. Only the boot-image parts are compared,
 * so pool or renderer work elsewhere does not churn this file. A missing golden file fails.
 * Update with: UPDATE_GOLDEN=1 npx tsx test/run.ts test/render/bootimages-demo.test.ts
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { buildPlan } from '../../src/plan/planner.ts';
import { renderText } from '../../src/render/text.ts';
import { golden } from '../support/render.ts';

const s = suite('bootimages: demo golden');
const root = new URL('../../', import.meta.url);

function demoPlan() {
  const spec = parseRolloutSpec(readFileSync(new URL('examples/rollout.yaml', root), 'utf8'), 'examples/rollout.yaml');
  const snap = parseSnapshot(readFileSync(new URL('examples/cluster.yaml', root), 'utf8'), 'examples/cluster.yaml');
  assert.ok(spec.spec && snap.snapshot);
  return buildPlan({
    spec: spec.spec!,
    specMap: spec.map,
    snapshot: snap.snapshot!,
    specDiagnostics: spec.diagnostics,
    specInfo: { name: 'prod-east', path: 'examples/rollout.yaml', ref: null, commit: null, sha256: spec.sha256, dirty: null },
  });
}

/** The blocks of the text output that belong to boot images. */
function bootImageText(text: string): string {
  const blocks = text.split('\n\n');
  return blocks.filter((b) => /# (MachineConfiguration|ControlPlaneMachineSet)\//.test(b) || b.startsWith('Boot images')).join('\n\n') + '\n';
}

s('the demo plan migrates the legacy opt-out first, and shows the effects and the CPMS line', () => {
  const plan = demoPlan();
  const mc = plan.changes[0];
  assert.equal([mc.order, mc.kind, mc.reason, mc.action], [1, 'MachineConfiguration', 'migrate-legacy-empty-machinemanagers', 'update']);
  assert.equal(mc.patch[0], { op: 'test', path: '/spec/managedBootImages/machineManagers', value: [] });
  assert.equal(plan.bootImages.machineSets.length, 6);
  assert.ok(plan.bootImages.controlPlaneMachineSet);
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );

  const actual =
    [
      bootImageText(renderText(plan, { color: false })),
      JSON.stringify({ change: { ...mc, description: undefined }, bootImages: plan.bootImages }, null, 2),
    ].join('\n') + '\n';
  golden('bootimages-demo.txt', actual);
});

s.run();
