/**
 * `fleet rehearse` of a generated fleet (docs/fleets.md "Figures"): N snapshot files of M nodes each (one bootc
 * worker pool, 10% budget), one canary, maxConcurrency 10%, a 10-minute soak, 30% per-node
 * jitter; the whole CLI command in a fresh process (bench/fleet-rehearse-once.ts), so the peak
 * RSS is this rehearsal's. The snapshot files are cached in the temp directory.
 *   npx tsx bench/fleet-rehearse.ts [CLUSTERS] [NODES]
 */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { stringify } from 'yaml';
import { imageRef } from '../src/sim/fake-ids.ts';
import { generateCluster } from '../src/sim/generate.ts';
import { dataDir } from './snapshots.ts';

export interface FleetRehearsalBench {
  clusters: number;
  nodes: number;
  wallMs: number;
  /** User + system CPU time of the process (the wall time depends on what else runs on the machine). */
  cpuMs: number;
  peakRssMB: number;
  makespanSeconds: number;
  estimatedSeconds: number;
  batches: number;
  exitCode: number;
}

/** The Fleet file of `clusters` generated clusters of `nodes` workers each (written once). */
export function fleetFile(clusters: number, nodes: number): string {
  const dir = join(dataDir, `fleet-${clusters}x${nodes}`);
  const file = join(dir, 'fleet.yaml');
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const items = generateCluster({ workers: nodes, stagedFraction: 0.3, softRebootCapableFraction: 0.5 });
  const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
  const names = Array.from({ length: clusters }, (_, i) => `site-${String(i).padStart(3, '0')}`);
  for (const n of names) writeFileSync(join(dir, `${n}.json`), text);
  writeFileSync(
    file,
    stringify({
      apiVersion: 'bootcplan.dev/v1alpha1',
      kind: 'Fleet',
      metadata: { name: `bench-${clusters}x${nodes}` },
      spec: {
        rollout: { pools: [{ name: 'worker', image: imageRef('os-43.20261115.0'), maxUnavailable: '10%', rebootPolicy: 'AllowSoftReboot' }] },
        clusters: names.map((n, i) => ({ name: n, snapshot: `${n}.json`, labels: { region: ['east', 'west', 'central'][i % 3] } })),
        strategy: { canaries: [names[0]], maxConcurrency: '10%', batchSoakSeconds: 600 },
      },
    }),
  );
  return file;
}

export function benchFleetRehearsal(clusters = 100, nodes = 100): FleetRehearsalBench {
  const file = fleetFile(clusters, nodes);
  const out = execFileSync(process.execPath, ['--import', 'tsx', new URL('./fleet-rehearse-once.ts', import.meta.url).pathname, file], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const r = JSON.parse(out.trim().split('\n').pop()!) as Omit<FleetRehearsalBench, 'clusters' | 'nodes'>;
  const row = { clusters, nodes, ...r };
  console.error(
    `fleet rehearse ${clusters} x ${nodes}: ${(row.wallMs / 1000).toFixed(1)} s (CPU ${(row.cpuMs / 1000).toFixed(1)} s), peak ${row.peakRssMB.toFixed(0)} MB, makespan ${row.makespanSeconds} s (estimate ${row.estimatedSeconds} s), ${row.batches} batches`,
  );
  return row;
}

export function fleetRehearsalLine(r: FleetRehearsalBench): string {
  return `Fleet rehearsal (\`fleet rehearse -f FLEET\`, ${r.clusters} clusters of ${r.nodes} nodes, one canary, maxConcurrency 10%, 30% jitter; planning included, in a fresh process): ${(r.wallMs / 1000).toFixed(1)} s wall, ${(r.cpuMs / 1000).toFixed(1)} s CPU, peak RSS ${r.peakRssMB.toFixed(0)} MB; simulated fleet makespan ${(r.makespanSeconds / 3600).toFixed(1)} h in ${r.batches} batches (fleet plan estimate ${(r.estimatedSeconds / 3600).toFixed(1)} h).`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [c, n] = process.argv.slice(2).map(Number);
  console.log(fleetRehearsalLine(benchFleetRehearsal(c || 100, n || 100)));
}
