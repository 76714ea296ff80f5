/**
 * Hand-made fleet plans for the `fleet render argocd` suites: each cluster a small bootc
 * cluster planned from the same Rollout spec (planFor), the batches cut as the fleet contract
 * says (each canary alone, in order; then the others by labels, then name, in batches of
 * maxConcurrency). Until fleet-core's planFleet is merged, this stands in for it.
 */
import { createHash } from 'node:crypto';
import { parse } from 'yaml';
import { ClusterBuilder, specYaml, planFor, nodes, NEW } from './builders.ts';
import type { FleetPlan, FleetClusterPlan, FleetBatch } from '../src/plan/fleet-types.ts';
import type { RolloutSpec } from '../src/spec/types.ts';
import type { Plan } from '../src/plan/types.ts';
import type { ArgoFleetInput, ArgoFleetOptions } from '../src/render/fleet-argocd.ts';

export interface TestFleetCluster {
  name: string;
  labels?: Record<string, string>;
  canary?: boolean;
  destination?: { name: string | null; server: string | null };
  /** No plan: an unreachable cluster (no batch). */
  unreachable?: boolean;
  nodes?: number;
}

export const FLEET_PATH = 'fleets/prod/fleet.yaml';
export const FLEET_TEXT = 'apiVersion: bootcplan.dev/v1alpha1\nkind: Fleet\nmetadata:\n  name: prod\n# (the test fleet file)\n';
const FLEET_SHA = createHash('sha256').update(FLEET_TEXT).digest('hex');
const SPEC = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1, soakSeconds: 0 }]).replace('name: test', 'name: prod');

const planCache = new Map<number, Plan>();
function clusterPlan(n: number): Plan {
  let p = planCache.get(n);
  if (!p) {
    const snap = new ClusterBuilder().bootcPool('worker', nodes('w', n)).snapshot();
    const base = planFor(SPEC, snap);
    p = { ...base, spec: { ...base.spec, name: 'prod', path: FLEET_PATH, sha256: FLEET_SHA } };
    planCache.set(n, p);
  }
  return p;
}

const labelKey = (l: Record<string, string> | undefined) => Object.entries(l ?? {}).map(([k, v]) => `${k}=${v}`).sort().join(',');

/** The batches of the fleet contract (FLEET.md "Batches"). */
export function batchesOf(clusters: TestFleetCluster[], maxConcurrency: number): string[][] {
  const canaries = clusters.filter((c) => c.canary && !c.unreachable).map((c) => [c.name]);
  const rest = clusters.filter((c) => !c.canary && !c.unreachable)
    .sort((a, b) => (labelKey(a.labels) < labelKey(b.labels) ? -1 : labelKey(a.labels) > labelKey(b.labels) ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out = [...canaries];
  for (let i = 0; i < rest.length; i += maxConcurrency) out.push(rest.slice(i, i + maxConcurrency).map((c) => c.name));
  return out;
}

export function testFleetPlan(clusters: TestFleetCluster[], maxConcurrency: number, strategy: Partial<FleetPlan['strategy']> = {}): FleetPlan {
  const groups = batchesOf(clusters, maxConcurrency);
  const batchOf = new Map<string, number>();
  const batches: FleetBatch[] = groups.map((g, i) => {
    for (const n of g) batchOf.set(n, i + 1);
    const canary = clusters.find((c) => c.name === g[0])?.canary === true;
    return { index: i + 1, kind: canary ? 'canary' : 'batch', clusters: g, estimatedSeconds: 600 };
  });
  const planned: FleetClusterPlan[] = clusters.map((c) => ({
    name: c.name,
    labels: c.labels ?? {},
    source: { context: null, kubeconfig: null, snapshot: `snapshots/${c.name}.yaml` },
    destination: c.destination ?? { name: null, server: null },
    canary: c.canary === true,
    batch: batchOf.get(c.name) ?? null,
    plan: c.unreachable ? null : clusterPlan(c.nodes ?? 3),
    error: c.unreachable ? { code: 'unreachable', message: 'connection refused' } : null,
  }));
  return {
    formatVersion: '1.0', kind: 'FleetPlan', id: 'f'.repeat(64),
    fleet: { name: 'prod', path: FLEET_PATH, ref: null, commit: null, sha256: FLEET_SHA, dirty: false },
    strategy: {
      canaries: clusters.filter((c) => c.canary).map((c) => c.name),
      maxConcurrency: { value: maxConcurrency, resolved: maxConcurrency, rule: 'integer' },
      batchSoakSeconds: 0, batchTimeoutSeconds: null, batchTimeoutAction: 'abort',
      ...strategy,
    },
    batches,
    clusters: planned,
    diagnostics: [],
    summary: { clusters: clusters.length, planned: planned.filter((c) => c.plan).length, withChanges: batchOf.size, failed: planned.filter((c) => c.error).length, nodes: 0, batches: batches.length, estimatedSeconds: 600 * batches.length, errors: 0, warnings: 0 },
  };
}

/** The effective spec of every cluster (here: the shared spec). */
export function testRollouts(fp: FleetPlan): Record<string, RolloutSpec> {
  const spec = parse(SPEC) as RolloutSpec;
  return Object.fromEntries(fp.clusters.map((c) => [c.name, spec]));
}

export function testInput(fp: FleetPlan): ArgoFleetInput {
  return { fleetPlan: fp, fleetText: FLEET_TEXT, rollouts: testRollouts(fp) };
}

export const TEST_OPTIONS: ArgoFleetOptions = {
  repoURL: 'https://git.example.com/platform/fleet.git', revision: 'main', path: 'fleets/prod/argocd', setupPath: 'examples',
  namespace: 'openshift-gitops', project: 'default', image: 'quay.io/example/bootcplan:0.1.0', name: 'bootcplan-prod',
};
