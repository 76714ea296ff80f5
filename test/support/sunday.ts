/**
 * The Sunday-only example rehearsed in process (`rehearse -f examples/sunday.yaml --cluster
 * examples/cluster.yaml`), with the spec's provenance fixed (no git) and the start given: the
 * window opens on Sundays 01:00 Asia/Singapore for 8 hours (docs/apply.md "Rehearsal and
 * maintenance windows").
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { ROOT } from './render.ts';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { buildPlan } from '../../src/plan/planner.ts';
import type { ClusterSnapshot } from '../../src/cluster/types.ts';
import { rehearse } from '../../src/sim/rehearse.ts';
import { rehearsalReport } from '../../src/render/rehearsal.ts';

/** Monday 2026-12-07 10:00 UTC: the next window is 5d7h away. */
export const MONDAY = Date.parse('2026-12-07T10:00:00Z');

export async function sundayRehearsal(startMs = MONDAY) {
  const specPath = 'examples/sunday.yaml';
  const loaded = parseRolloutSpec(readFileSync(join(ROOT, specPath), 'utf8'), specPath);
  const snapshot = parseSnapshot(readFileSync(join(ROOT, 'examples/cluster.yaml'), 'utf8'), 'examples/cluster.yaml').snapshot!;
  const specInfo = { name: loaded.spec!.metadata.name, path: specPath, ref: null, commit: null, sha256: loaded.sha256, dirty: null };
  const replan = (snap: ClusterSnapshot) =>
    buildPlan({ spec: loaded.spec!, specMap: loaded.map, specInfo, snapshot: snap, specDiagnostics: loaded.diagnostics });
  const plan = replan(snapshot);
  const windows = loaded.spec!.spec.maintenanceWindows;
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot, windows, start: startMs / 1000 });
  assert.is(error, null, String(error));
  return { plan, report: rehearsalReport(rehearsal, error) };
}
