/**
 * Progress written by a full apply of a generated cluster on the simulator (docs/performance.md): the
 * real applier (src/apply) against src/sim, one bootc pool, maxUnavailable 10%. Reports the
 * largest progress object (the run record; a node entry), the writes and the bytes written.
 *   npx tsx bench/progress-sim.ts 10000,50000
 */
import { stringify } from 'yaml';
import { imageRef } from '../src/sim/fake-ids.ts';
import { generateCluster } from '../src/sim/generate.ts';
import { snapshotFromObjects } from '../src/cluster/snapshot.ts';
import { parseRolloutSpec } from '../src/rollout-spec/load.ts';
import { buildPlan } from '../src/plan/planner.ts';
import { SimCluster } from '../src/sim/cluster.ts';
import { apply } from '../src/apply/applier.ts';
import type { ClusterSnapshot } from '../src/cluster/types.ts';

export interface ProgressFigures {
  nodes: number;
  waves: number;
  wallSeconds: number;
  runWrites: number;
  largestRunBytes: number;
  nodeEntryWrites: number;
  largestNodeEntryBytes: number;
  totalBytes: number;
  bytesPerNode: number;
}

export async function progressOnSim(n: number): Promise<ProgressFigures> {
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
  const plan = mk(snap);
  const sim = new SimCluster(snap);
  const t = performance.now();
  await apply({ plan, replan: mk, driver: sim.driver(), holder: 'bench' });
  const w = sim.progress.writes;
  const totalBytes = w.runBytes + w.nodeBytes;
  return {
    nodes: n,
    waves: plan.pools.reduce((a, p) => a + p.waves.length, 0),
    wallSeconds: (performance.now() - t) / 1000,
    runWrites: w.runWrites,
    largestRunBytes: w.largestRun,
    nodeEntryWrites: w.nodeWrites,
    largestNodeEntryBytes: w.largestNodeEntry,
    totalBytes,
    bytesPerNode: totalBytes / n,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const n of (process.argv[2] ?? '10000,50000').split(',').map(Number)) console.log(JSON.stringify(await progressOnSim(n)));
}
