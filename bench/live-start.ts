/**
 * Start-up of a live command (BENCHMARKS.md "Live start"): `bootcplan plan` against the test
 * kube-apiserver (test/e2e/env.ts) and `bootcplan plan` of a snapshot of the same cluster, each
 * in fresh processes of the installed command (bin/bootcplan.mjs), measured alternately, median
 * wall time and CPU (user + sys, GNU time). The live plan reads the kubeconfig, lists the
 * cluster and plans; the target is within 1.3x of the snapshot plan.
 *   KUBEBUILDER_ASSETS=... npx tsx bench/live-start.ts [runs=11]       (npm run bench with BENCH_LIVE_START=1)
 *   BENCH_LIVE_START_BIN=/other/checkout/bin/bootcplan.mjs: measure another build the same way
 * Prints one JSON line.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setupEnv, resetCluster, loadObjects, tempDir } from '../test/e2e/env.ts';
import { ClusterBuilder, nodes } from '../test/support/cluster.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export interface LiveStart {
  nodes: number;
  runs: number;
  liveMs: number;
  liveCpuMs: number | null;
  snapshotMs: number;
  snapshotCpuMs: number | null;
  ratio: number;
  cpuRatio: number | null;
  target: number;
}

function measure(bin: string, args: string[]): { wallMs: number; cpuMs: number | null } {
  const [cmd, argv] = TIME ? [TIME, ['-f', 'cpu %U %S', process.execPath, bin, ...args]] : [process.execPath, [bin, ...args]];
  const t = performance.now();
  const r = spawnSync(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const wallMs = performance.now() - t;
  // plan exits 0 (nothing to do) or 2 (changes planned); anything else is a broken measurement.
  if (r.status !== 0 && r.status !== 2) throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wallMs, cpuMs: m ? (Number(m[1]) + Number(m[2])) * 1000 : null };
}

export async function liveStart(runs = 11, nodeCount = 50): Promise<LiveStart> {
  const bin = process.env.BENCH_LIVE_START_BIN ?? join(ROOT, 'bin/bootcplan.mjs');
  if (!process.env.BENCH_LIVE_START_BIN) {
    const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const env = await setupEnv();
  await resetCluster(env.admin);
  await loadObjects(env.admin, new ClusterBuilder().bootcPool('worker', nodes('w', nodeCount), { maxUnavailable: 3 }).objects);
  const dir = tempDir('bootcplan-bench-live-start-');
  const snapshot = join(dir, 'cluster.yaml');
  const spec = join(ROOT, 'bench/spec.yaml');
  const snap = spawnSync(process.execPath, [bin, 'snapshot', '--kubeconfig', env.saKubeconfig, '--out', snapshot], { cwd: ROOT, encoding: 'utf8' });
  if (snap.status !== 0) throw new Error(`snapshot: exit ${snap.status}\n${snap.stderr}`);
  writeFileSync(join(dir, 'README'), 'bench/live-start.ts\n');
  const live: { wallMs: number; cpuMs: number | null }[] = [];
  const fromFile: { wallMs: number; cpuMs: number | null }[] = [];
  measure(bin, ['plan', '-f', spec, '--kubeconfig', env.saKubeconfig]); // warm the file cache
  for (let i = 0; i < runs; i++) {
    live.push(measure(bin, ['plan', '-f', spec, '--kubeconfig', env.saKubeconfig]));
    fromFile.push(measure(bin, ['plan', '-f', spec, '--cluster', snapshot]));
  }
  const cpu = (xs: { cpuMs: number | null }[]) => (xs.every((x) => x.cpuMs !== null) ? median(xs.map((x) => x.cpuMs!)) : null);
  const liveMs = median(live.map((x) => x.wallMs));
  const snapshotMs = median(fromFile.map((x) => x.wallMs));
  const liveCpuMs = cpu(live);
  const snapshotCpuMs = cpu(fromFile);
  return {
    nodes: nodeCount,
    runs,
    liveMs,
    liveCpuMs,
    snapshotMs,
    snapshotCpuMs,
    ratio: liveMs / snapshotMs,
    cpuRatio: liveCpuMs !== null && snapshotCpuMs ? liveCpuMs / snapshotCpuMs : null,
    target: 1.3,
  };
}

export const liveStartLine = (r: LiveStart) =>
  `Live start (${r.nodes} Nodes, median of ${r.runs}): live \`plan\` ${r.liveMs.toFixed(0)} ms (CPU ${r.liveCpuMs?.toFixed(0) ?? '?'} ms), snapshot \`plan\` ${r.snapshotMs.toFixed(0)} ms (CPU ${r.snapshotCpuMs?.toFixed(0) ?? '?'} ms): ${r.ratio.toFixed(2)}x wall, ${r.cpuRatio?.toFixed(2) ?? '?'}x CPU (target: within ${r.target}x)`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const r = await liveStart(Number(process.argv[2] ?? 11));
  console.error(liveStartLine(r));
  console.log(JSON.stringify(r));
  process.exit(0);
}
