/** The demo plan, built in-process with fixed provenance (no git), for plans/ and golden tests. */
import { readFileSync } from 'node:fs';
import { parseRolloutSpec } from '../src/rollout-spec/load.ts';
import { parseSnapshot } from '../src/cluster/snapshot-file.ts';
import { buildPlan } from '../src/plan/planner.ts';
import type { Plan } from '../src/plan/types.ts';

const root = new URL('../', import.meta.url);

export function demoPlan(): Plan {
  const specPath = 'examples/rollout.yaml';
  const clusterPath = 'examples/cluster.yaml';
  const spec = parseRolloutSpec(readFileSync(new URL(specPath, root), 'utf8'), specPath);
  const snap = parseSnapshot(readFileSync(new URL(clusterPath, root), 'utf8'), clusterPath);
  if (!spec.spec || !snap.snapshot) throw new Error('the demo inputs are invalid');
  return buildPlan({
    spec: spec.spec,
    specMap: spec.map,
    snapshot: snap.snapshot,
    specDiagnostics: spec.diagnostics,
    specInfo: { name: spec.spec.metadata.name, path: specPath, ref: null, commit: null, sha256: spec.sha256, dirty: null },
  });
}
