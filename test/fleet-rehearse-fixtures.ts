/**
 * Hand-made fleets for the fleet rehearsal suites: each cluster a bootc worker pool of its own
 * size, planned with the same spec, gathered into a FleetPlan whose batches follow the fleet
 * rules (canaries first, each alone; then the others, by name, in batches of maxConcurrency).
 */
import type { ClusterSnapshot } from '../src/cluster/types.ts';
import type { Plan } from '../src/plan/types.ts';
import type { FleetPlan, FleetBatch, FleetClusterPlan } from '../src/plan/fleet-types.ts';
import type { BatchTimeoutAction } from '../src/spec/fleet-types.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from './builders.ts';
import { planWith } from './apply-harness.ts';

export interface FleetClusterFixture {
  name: string;
  nodes: number;
  maxUnavailable?: number;
  canary?: boolean;
  labels?: Record<string, string>;
}

export interface FleetFixture {
  fleetPlan: FleetPlan;
  clusters: Map<string, { plan: Plan; replan: (s: ClusterSnapshot) => Plan; snapshot: ClusterSnapshot }>;
}

export interface StrategyFixture {
  maxConcurrency?: number;
  batchSoakSeconds?: number;
  batchTimeoutSeconds?: number | null;
  batchTimeoutAction?: BatchTimeoutAction;
}

export function clusterFixture(c: FleetClusterFixture) {
  const snapshot = new ClusterBuilder().bootcPool('worker', nodes(`${c.name}-w`, c.nodes)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: c.maxUnavailable ?? 2 }]), snapshot);
  return { plan, replan, snapshot };
}

export function fleetFixture(list: FleetClusterFixture[], s: StrategyFixture = {}): FleetFixture {
  const clusters = new Map(list.map((c) => [c.name, clusterFixture(c)]));
  const canaries = list.filter((c) => c.canary).map((c) => c.name);
  const others = list.filter((c) => !c.canary).map((c) => c.name).sort();
  const per = s.maxConcurrency ?? 1;
  const groups: { kind: FleetBatch['kind']; names: string[] }[] = canaries.map((n) => ({ kind: 'canary', names: [n] }));
  for (let i = 0; i < others.length; i += per) groups.push({ kind: 'batch', names: others.slice(i, i + per) });
  const est = (n: string) => clusters.get(n)!.plan.summary.estimatedSeconds;
  const batches: FleetBatch[] = groups.map((g, i) => ({ index: i + 1, kind: g.kind, clusters: g.names, estimatedSeconds: Math.max(...g.names.map(est)) }));
  const soak = s.batchSoakSeconds ?? 0;
  const estimatedSeconds = batches.reduce((t, b) => t + b.estimatedSeconds, 0) + soak * Math.max(0, batches.length - 1);
  const cps: FleetClusterPlan[] = list.map((c) => ({
    name: c.name, labels: c.labels ?? {}, source: { context: null, kubeconfig: null, snapshot: `${c.name}.yaml` },
    destination: { name: c.name, server: null }, canary: !!c.canary,
    batch: batches.find((b) => b.clusters.includes(c.name))?.index ?? null,
    plan: clusters.get(c.name)!.plan, error: null,
  }));
  const nodesTotal = list.reduce((t, c) => t + c.nodes, 0);
  const fleetPlan: FleetPlan = {
    formatVersion: '1.0', kind: 'FleetPlan', id: 'fleet-test-id',
    fleet: { name: 'test-fleet', path: 'fleet.yaml', ref: null, commit: null, sha256: 'f'.repeat(64), dirty: null },
    strategy: {
      canaries, maxConcurrency: { value: per, resolved: per, rule: 'given' }, batchSoakSeconds: soak,
      batchTimeoutSeconds: s.batchTimeoutSeconds ?? null, batchTimeoutAction: s.batchTimeoutAction ?? 'abort',
    },
    batches, clusters: cps, diagnostics: [],
    summary: { clusters: list.length, planned: list.length, withChanges: list.length, failed: 0, nodes: nodesTotal, batches: batches.length, estimatedSeconds, errors: 0, warnings: 0 },
  };
  return { fleetPlan, clusters };
}
