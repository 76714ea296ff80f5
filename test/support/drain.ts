/** Workloads for the drain forecast's suites (docs/apply.md "Drain forecast"): pods, budgets, a snapshot holding them. */
import { ClusterBuilder, nodes } from './cluster.ts';
import type { ClusterSnapshot } from '../../src/cluster/types.ts';
import type { DrainBudget, DrainPod, SnapshotWorkloads } from '../../src/cluster/workloads.ts';

export const pod = (name: string, node: string, extra: Partial<DrainPod> = {}): DrainPod => ({
  namespace: 'payments',
  name,
  node,
  labels: { app: 'api' },
  controller: { kind: 'ReplicaSet', name: 'api-7d9' },
  mirror: false,
  emptyDir: false,
  pinnedTo: null,
  requests: { cpuMillis: 100, memoryBytes: 64 << 20 },
  nodeSelector: {},
  tolerations: [],
  phase: 'Running',
  ready: true,
  deleting: false,
  ...extra,
});
export const budget = (name: string, spec: Partial<DrainBudget>, st: Partial<DrainBudget['status']> = {}): DrainBudget => ({
  namespace: 'payments',
  name,
  selector: { matchLabels: { app: 'api' } },
  minAvailable: null,
  maxUnavailable: null,
  unhealthyPodEvictionPolicy: null,
  generation: 1,
  ...spec,
  status: { observedGeneration: 1, currentHealthy: 3, desiredHealthy: 2, disruptionsAllowed: 1, expectedPods: 3, ...st },
});

/**
 * A bootc pool `worker` of `count` nodes (w-00 ...) with the given budget, a pool `infra` the
 * spec leaves alone (room for the evicted pods: `infra` nodes), and these workloads.
 */
export function snapshotWith(w: Partial<SnapshotWorkloads> | null, count = 3, maxUnavailable = 3, infra = 2): ClusterSnapshot {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', count), { maxUnavailable });
  if (infra) b.bootcPool('infra', nodes('i', infra));
  const snap = b.snapshot();
  snap.workloads = w === null ? null : { pods: [], budgets: [], controllers: [], ...w };
  return snap;
}
