/** Wall time of an in-process rehearsal of a generated cluster (one bootc pool, 10% budget). */
import { stringify } from 'yaml';
import { imageRef } from '../src/sim/fake-ids.ts';
import { generateCluster } from '../src/sim/generate.ts';
import { snapshotFromObjects } from '../src/cluster/snapshot.ts';
import { parseRolloutSpec } from '../src/rollout-spec/load.ts';
import { buildPlan } from '../src/plan/planner.ts';
import { rehearse } from '../src/sim/rehearse.ts';
import type { ClusterSnapshot } from '../src/cluster/types.ts';

export async function benchRehearsal(sizes: number[]) {
  const rows: { nodes: number; wallMs: number; simulatedSeconds: number; events: number }[] = [];
  for (const n of sizes) {
    const snap = snapshotFromObjects(
      generateCluster({ workers: n, stagedFraction: 0.3, softRebootCapableFraction: 0.5, cordoned: Math.ceil(n / 2000) }),
      'bench',
    );
    const spec = parseRolloutSpec(
      stringify({
        apiVersion: 'bootcplan.dev/v1alpha1',
        kind: 'Rollout',
        metadata: { name: 'bench' },
        spec: { pools: [{ name: 'worker', image: imageRef('os-43.20261115.0'), maxUnavailable: '10%', rebootPolicy: 'AllowSoftReboot' }] },
      }),
      'bench.yaml',
    );
    const mk = (s: ClusterSnapshot) =>
      buildPlan({
        spec: spec.spec!,
        specMap: spec.map,
        snapshot: s,
        specInfo: { name: 'bench', path: 'bench.yaml', ref: null, commit: null, sha256: spec.sha256, dirty: null },
      });
    const t = performance.now();
    const { rehearsal } = await rehearse({ plan: mk(snap), replan: mk, snapshot: snap });
    rows.push({ nodes: n, wallMs: performance.now() - t, simulatedSeconds: rehearsal.durationSeconds, events: rehearsal.events.length });
    console.error(`rehearse ${n}: ${(rows.at(-1)!.wallMs / 1000).toFixed(1)} s for ${rehearsal.events.length} events`);
  }
  return rows;
}
