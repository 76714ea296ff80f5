/**
 * A live `bootcplan snapshot` of many pods from the real test kube-apiserver (BENCHMARKS.md
 * "Workloads"): creates N pods (bound to 50 nodes, owned by 1 ReplicaSet in 20, a budget per
 * ReplicaSet), then runs the installed command (bin/bootcplan.mjs snapshot --out FILE.json) in
 * a fresh process under GNU time: wall time and peak RSS. The peak is compared with the
 * projection's size in memory: the heap a process holds for the file's workloads once read
 * (measured with --expose-gc), over the baseline RSS of the command doing nothing
 * (`bootcplan --version`). Prints one JSON line.
 *   npx tsx bench/live-snapshot.ts [pods=100000]     (npm run bench with BENCH_LIVE_SNAPSHOT=N)
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setupEnv, resetCluster, loadObjects, tempDir, ensureNamespace } from '../test/e2e/env.ts';
import { ClusterBuilder, nodes } from '../test/support/cluster.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface LiveSnapshot {
  pods: number;
  createSeconds: number;
  createPerSecond: number;
  snapshotSeconds: number;
  peakRssMB: number;
  baselineRssMB: number;
  projectionHeapMB: number;
  fileMB: number;
  /** (peak RSS - baseline RSS) / projection heap. */
  ratio: number;
}

function timed(args: string[]): { seconds: number; rssMB: number; stderr: string } {
  const r = spawnSync('/usr/bin/time', ['-f', 'time %e %M', process.execPath, ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  const m = /time ([\d.]+) (\d+)\s*$/.exec(r.stderr);
  if (!m) throw new Error(`no GNU time line: ${r.stderr}`);
  return { seconds: Number(m[1]), rssMB: Number(m[2]) / 1024, stderr: r.stderr };
}

export async function liveSnapshot(pods: number): Promise<LiveSnapshot> {
  const env = await setupEnv();
  await resetCluster(env.admin);
  const testNodes = nodes('w', 50);
  const nodeNames = testNodes.map((n) => n.name);
  await loadObjects(env.admin, new ClusterBuilder().bootcPool('worker', testNodes, { maxUnavailable: 3 }).objects);
  const ns = 'bench-pods';
  await ensureNamespace(env.admin, ns);
  const t0 = performance.now();
  let next = 0;
  const create = async () => {
    for (let i = next++; i < pods; i = next++) {
      const rs = `app-${Math.floor(i / 20)}-5d8f7c9b4`;
      await env.admin.request('POST', `/api/v1/namespaces/${ns}/pods`, {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: `${rs}-${String(i).padStart(6, '0')}`,
            labels: { app: `app-${Math.floor(i / 20)}`, 'pod-template-hash': '5d8f7c9b4' },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: '00000000-0000-0000-0000-000000000001', controller: true }],
          },
          spec: {
            nodeName: nodeNames[i % nodeNames.length],
            containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '100m', memory: '128Mi' } } }],
          },
        },
      });
    }
  };
  await Promise.all(Array.from({ length: 32 }, create));
  for (let b = 0; b < pods / 20; b += 1) {
    if (b >= 2000) break; // budgets: at most 2,000
    await env.admin.request('POST', `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
      body: {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: `app-${b}` },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app: `app-${b}` } } },
      },
    });
  }
  const createSeconds = (performance.now() - t0) / 1000;
  const dir = tempDir('bootcplan-bench-live-snapshot-');
  const out = join(dir, 'cluster.json');
  const bin = join(ROOT, 'bin/bootcplan.mjs');
  const snap = timed([bin, 'snapshot', '--kubeconfig', env.kubeconfig, '--out', out]);
  if (!/workloads: \d+ pods/.test(snap.stderr)) throw new Error(`snapshot read no workloads:\n${snap.stderr}`);
  const baseline = timed([bin, '--version']);
  const heap = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(ROOT, 'bench/projection-heap.ts'), out], { cwd: ROOT, encoding: 'utf8' });
  if (heap.status !== 0) throw new Error(`heap probe: ${heap.stderr}`);
  const projectionHeapMB = Number(heap.stdout.trim().split('\n').pop()) / 2 ** 20;
  return {
    pods,
    createSeconds,
    createPerSecond: pods / createSeconds,
    snapshotSeconds: snap.seconds,
    peakRssMB: snap.rssMB,
    baselineRssMB: baseline.rssMB,
    projectionHeapMB,
    fileMB: statSync(out).size / 1e6,
    ratio: (snap.rssMB - baseline.rssMB) / projectionHeapMB,
  };
}

export const liveSnapshotLine = (r: LiveSnapshot) =>
  `Live \`snapshot\` of ${r.pods.toLocaleString('en-US')} pods from the test kube-apiserver: ${r.snapshotSeconds.toFixed(1)} s, peak RSS ${r.peakRssMB.toFixed(0)} MB (the command alone ${r.baselineRssMB.toFixed(0)} MB; the projection holds ${r.projectionHeapMB.toFixed(1)} MB of heap: ${r.ratio.toFixed(2)}x, target at most 2x), file ${r.fileMB.toFixed(1)} MB; creating the pods took ${r.createSeconds.toFixed(0)} s (${r.createPerSecond.toFixed(0)} per second).`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await liveSnapshot(Number(process.argv[2] ?? 100000));
  console.error(liveSnapshotLine(r));
  console.log(JSON.stringify(r));
  process.exit(0);
}
