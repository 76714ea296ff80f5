/**
 * `plan` against its floor (BENCHMARKS.md "Workloads (the drain forecast's snapshot, 2026-12-07)"): the installed command
 * (bin/bootcplan.mjs plan -f bench/spec.yaml --cluster FILE -o json) against a bare read and
 * JSON.parse of the same file (`node -e`), each in a fresh process under GNU time, alternated,
 * so that each ratio compares two figures measured seconds apart on a loaded machine. Files: the
 * node-only 10,000-node snapshot (bench/snapshots.ts) and 10,000 nodes with 300,000 pods and
 * 20,000 PodDisruptionBudgets (bench/workload-fixture.ts), with the bytes of snapshot per pod.
 *   npx tsx bench/plan-floor.ts [runs=7]      BENCH_NODE=/path/to/node22: measure another runtime
 * Prints one JSON line.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { snapshotFile } from './snapshots.ts';
import { workloadSnapshotFile } from './workload-fixture.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMB: number;
}

function run(node: string, args: string[], okExits: number[]): Sample {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S %M', node, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  const wallMs = performance.now() - t;
  if (!okExits.includes(r.status ?? -1)) throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  const m = /cpu ([\d.]+) ([\d.]+) (\d+)\s*$/.exec(r.stderr);
  if (!m) throw new Error(`no GNU time line: ${r.stderr}`);
  return { wallMs, cpuMs: (Number(m[1]) + Number(m[2])) * 1000, rssMB: Number(m[3]) / 1024 };
}

export interface FloorRow {
  snapshot: string;
  sizeMB: number;
  pods: number;
  bytesPerPod: number | null;
  workloadBytesPerPod: number | null;
  floorWallMs: number;
  planWallMs: number;
  floorCpuMs: number;
  planCpuMs: number;
  /** Median of the per-pair ratios, and their range. */
  wallRatio: number;
  wallRatioRange: [number, number];
  cpuRatio: number;
  cpuRatioRange: [number, number];
  planPeakRssMB: number;
  target: number;
}

export function planAgainstFloor(runs: number, node = process.env.BENCH_NODE ?? process.execPath): { node: string; rows: FloorRow[] } {
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const nodeOnly = snapshotFile(10000, 'json');
  const heavy = workloadSnapshotFile(10000, 300000, 20000);
  const cases = [
    { snapshot: '10,000 nodes', file: nodeOnly, pods: 0, workloadBytes: 0, target: 2.0 },
    { snapshot: '10,000 nodes, 300,000 pods, 20,000 PDBs', file: heavy.file, pods: heavy.pods, workloadBytes: heavy.workloadBytes, target: 1.5 },
  ];
  const rows: FloorRow[] = [];
  for (const c of cases) {
    const floorArgs = ['-e', `JSON.parse(require('node:fs').readFileSync(${JSON.stringify(c.file)}, 'utf8'))`];
    const planArgs = [join(ROOT, 'bin/bootcplan.mjs'), 'plan', '-f', join(ROOT, 'bench/spec.yaml'), '--cluster', c.file, '-o', 'json'];
    run(node, floorArgs, [0]); // the file into the page cache
    const floor: Sample[] = [];
    const plan: Sample[] = [];
    for (let i = 0; i < runs; i++) {
      floor.push(run(node, floorArgs, [0]));
      plan.push(run(node, planArgs, [0, 2]));
    }
    const ratios = (k: 'wallMs' | 'cpuMs') => plan.map((p, i) => p[k] / floor[i][k]);
    const range = (xs: number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];
    const size = statSync(c.file).size;
    rows.push({
      snapshot: c.snapshot,
      sizeMB: size / 1e6,
      pods: c.pods,
      bytesPerPod: c.pods ? size / c.pods : null,
      workloadBytesPerPod: c.pods ? c.workloadBytes / c.pods : null,
      floorWallMs: median(floor.map((x) => x.wallMs)),
      planWallMs: median(plan.map((x) => x.wallMs)),
      floorCpuMs: median(floor.map((x) => x.cpuMs)),
      planCpuMs: median(plan.map((x) => x.cpuMs)),
      wallRatio: median(ratios('wallMs')),
      wallRatioRange: range(ratios('wallMs')),
      cpuRatio: median(ratios('cpuMs')),
      cpuRatioRange: range(ratios('cpuMs')),
      planPeakRssMB: median(plan.map((x) => x.rssMB)),
      target: c.target,
    });
  }
  return { node: version, rows };
}

export function floorTable(r: { node: string; rows: FloorRow[] }, runs: number): string {
  const lines = [
    `\`plan\` against a bare read + JSON.parse of the same file (Node.js ${r.node}, fresh processes alternated, median of ${runs}; ratio: median of the pairs, [range]):`,
    '',
    '| snapshot | size | bytes per pod (file / workloads item) | floor wall | `plan` wall | ratio wall | floor CPU | `plan` CPU | ratio CPU | target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const x = (v: number) => v.toFixed(2);
  for (const row of r.rows)
    lines.push(
      `| ${row.snapshot} | ${row.sizeMB.toFixed(1)} MB | ${row.bytesPerPod ? `${row.bytesPerPod.toFixed(0)} B / ${row.workloadBytesPerPod!.toFixed(0)} B` : '-'} | ${row.floorWallMs.toFixed(0)} ms | ${row.planWallMs.toFixed(0)} ms | **${x(row.wallRatio)}x** [${x(row.wallRatioRange[0])}-${x(row.wallRatioRange[1])}] | ${row.floorCpuMs.toFixed(0)} ms | ${row.planCpuMs.toFixed(0)} ms | **${x(row.cpuRatio)}x** [${x(row.cpuRatioRange[0])}-${x(row.cpuRatioRange[1])}] | ≤ ${row.target}x |`,
    );
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.argv[2] ?? 7);
  const r = planAgainstFloor(runs);
  console.error(floorTable(r, runs));
  console.log(JSON.stringify(r));
}
