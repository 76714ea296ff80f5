/** The generated snapshot files the benchmarks plan against, cached in the temp directory. */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { stringify } from 'yaml';
import { generateCluster } from '../src/sim/generate.ts';

export const dataDir = join(tmpdir(), 'bootcplan-bench');

export function snapshotFile(n: number, format: 'json' | 'yaml'): string {
  mkdirSync(dataDir, { recursive: true });
  const f = join(dataDir, `cluster-${n}.${format}`);
  if (!existsSync(f)) {
    const items = generateCluster({ workers: n, stagedFraction: 0.3, softRebootCapableFraction: 0.5, cordoned: Math.ceil(n / 2000) });
    const list = { apiVersion: 'v1', kind: 'List', items };
    writeFileSync(f, format === 'json' ? JSON.stringify(list) : stringify(list, { lineWidth: 0 }));
  }
  return f;
}
