/**
 * The drain-forecast benchmark's snapshot (BENCHMARKS.md "Workloads (the drain forecast's snapshot, 2026-12-07)"): the 10,000-node bench
 * cluster with 300,000 pods and 20,000 PodDisruptionBudgets, written as `bootcplan snapshot`
 * writes it (src/app/snapshot.ts snapshotText: format 2, the WorkloadProjection item), generated
 * here and cached in the temp directory, never committed. Deterministic.
 *   20,000 Deployments (ReplicaSet, 15 pods each, spread over nodes) in 500 namespaces, each with
 *   a budget (maxUnavailable 1, minAvailable "50%" or minAvailable 14 in turn); 1 pod in 10
 *   with an emptyDir; every pod with the two default NoExecute tolerations.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCluster } from '../src/sim/generate.ts';
import { snapshotText } from '../src/app/snapshot.ts';
import type { DrainBudget, DrainPod, SnapshotWorkloads } from '../src/cluster/workloads.ts';
import { dataDir } from './snapshots.ts';

const TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists' as const, effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists' as const, effect: 'NoExecute' },
];

export function workloadsFor(nodes: string[], pods: number, budgets: number): SnapshotWorkloads {
  const perWorkload = Math.max(1, Math.floor(pods / budgets));
  const out: SnapshotWorkloads = { pods: [], budgets: [], controllers: [] };
  const hash = (i: number) => ((i * 2654435761) >>> 0).toString(36).slice(0, 9).padEnd(9, 'x');
  const suffix = (i: number) => ((i * 40503 + 12345) >>> 0).toString(36).slice(-5).padStart(5, 'b');
  let k = 0;
  for (let w = 0; w < budgets; w++) {
    const namespace = `team-${String(w % 500).padStart(3, '0')}`;
    const app = `app-${String(w).padStart(5, '0')}`;
    const rs = `${app}-${hash(w)}`;
    const labels = { app, 'pod-template-hash': hash(w) };
    out.controllers.push({ kind: 'Deployment', namespace, name: app, replicas: perWorkload });
    out.controllers.push({ kind: 'ReplicaSet', namespace, name: rs, replicas: perWorkload });
    const budget: DrainBudget = {
      namespace,
      name: app,
      minAvailable: w % 3 === 1 ? '50%' : w % 3 === 2 ? perWorkload - 1 : null,
      maxUnavailable: w % 3 === 0 ? 1 : null,
      unhealthyPodEvictionPolicy: null,
      generation: 1,
      selector: { matchLabels: { app } },
      status: { observedGeneration: 1, currentHealthy: perWorkload, desiredHealthy: perWorkload - 1, disruptionsAllowed: 1, expectedPods: perWorkload },
    };
    out.budgets.push(budget);
    for (let j = 0; j < perWorkload && k < pods; j++, k++) {
      const pod: DrainPod = {
        namespace,
        name: `${rs}-${suffix(k)}`,
        node: nodes[(w * 7 + j * 677) % nodes.length],
        labels,
        controller: { kind: 'ReplicaSet', name: rs },
        phase: 'Running',
        ready: true,
        deleting: false,
        mirror: false,
        emptyDir: k % 10 === 0,
        pinnedTo: null,
        requests: { cpuMillis: 100 + (w % 4) * 50, memoryBytes: (128 + (w % 4) * 64) * 2 ** 20 },
        nodeSelector: {},
        tolerations: TOLERATIONS,
      };
      out.pods.push(pod);
    }
  }
  return out;
}

/** The fixture file (JSON, as `bootcplan snapshot --out FILE.json` writes it) and its counts. */
export function workloadSnapshotFile(nodes: number, pods: number, budgets: number): { file: string; pods: number; workloadBytes: number } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, `cluster-${nodes}-pods-${pods}-pdbs-${budgets}.json`);
  const meta = join(dataDir, `cluster-${nodes}-pods-${pods}-pdbs-${budgets}.meta.json`);
  if (!existsSync(file) || !existsSync(meta)) {
    const items = generateCluster({ workers: nodes, stagedFraction: 0.3, softRebootCapableFraction: 0.5, cordoned: Math.ceil(nodes / 2000) });
    const names = items.filter((o) => o.kind === 'Node' && !o.metadata.name.startsWith('master-')).map((o) => o.metadata.name);
    const workloads = workloadsFor(names, pods, budgets);
    const m = { source: 'live:bench', server: 'https://api.bench.example:6443' };
    const text = snapshotText(items, workloads, m, true);
    const without = snapshotText(items, null, m, true);
    writeFileSync(file, text);
    writeFileSync(meta, JSON.stringify({ pods: workloads.pods.length, workloadBytes: Buffer.byteLength(text) - Buffer.byteLength(without) }));
  }
  return { file, ...(JSON.parse(readFileSync(meta, 'utf8')) as { pods: number; workloadBytes: number }) };
}
