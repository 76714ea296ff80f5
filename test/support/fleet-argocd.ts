/**
 * Fleets for the `fleet render argocd` suites, planned by the real planner (fleet-core's
 * FleetBuilder and planFleet), with each cluster's effective spec as the CLI computes it; and a
 * crafted fleet plan (a cluster renamed after planning) for names the Fleet parser would refuse.
 */
import { FleetBuilder, workerCluster } from './fleet.ts';
import { parseFleetSpec, effectiveSpecs } from '../../src/fleet/spec-load.ts';
import type { FleetStrategy } from '../../src/fleet/spec-types.ts';
import type { FleetPlan } from '../../src/fleet/plan-types.ts';
import type { RolloutSpec } from '../../src/rollout-spec/types.ts';
import type { ArgoFleetInput, ArgoFleetOptions } from '../../src/fleet/argocd.ts';

export interface ArgoTestCluster {
  name: string;
  labels?: Record<string, string>;
  canary?: boolean;
  destination?: { name?: string; server?: string };
  /** No plan: an unreachable cluster (no batch). */
  unreachable?: boolean;
  nodes?: number;
}

export const FLEET_PATH = 'fleet.yaml';

export function testFleet(clusters: ArgoTestCluster[], maxConcurrency: number, strategy: FleetStrategy = {}): ArgoFleetInput {
  const b = new FleetBuilder();
  b.name = 'prod';
  for (const c of clusters) {
    b.cluster(c.name, {
      labels: c.labels,
      destination: c.destination,
      cluster: workerCluster(c.nodes ?? 3),
      error: c.unreachable ? { code: 'unreachable', message: 'connection refused' } : undefined,
    });
  }
  const canaries = clusters.filter((c) => c.canary).map((c) => c.name);
  b.strategy({ ...(canaries.length ? { canaries } : {}), maxConcurrency, ...strategy });
  const fleetPlan = b.plan({ now: Date.parse('2026-09-01T00:00:00Z') });
  const text = b.yaml();
  const loaded = parseFleetSpec(text, FLEET_PATH);
  const specs = effectiveSpecs(loaded.fleet!, loaded.map);
  const rollouts: Record<string, RolloutSpec> = {};
  loaded.fleet!.spec.clusters.forEach((c, i) => {
    rollouts[c.name] = specs[i].spec;
  });
  return { fleetPlan, fleetText: text, rollouts };
}

/** The fleet plan with cluster `from` called `to` everywhere a renderer reads the name (a crafted file). */
export function renamed(input: ArgoFleetInput, from: string, to: string): ArgoFleetInput {
  const fp: FleetPlan = {
    ...input.fleetPlan,
    batches: input.fleetPlan.batches.map((b) => ({ ...b, clusters: b.clusters.map((n) => (n === from ? to : n)) })),
    clusters: input.fleetPlan.clusters.map((c) => (c.name === from ? { ...c, name: to } : c)),
  };
  const rollouts = { ...input.rollouts, [to]: input.rollouts[from] };
  return { ...input, fleetPlan: fp, rollouts };
}

/** The fleet plan with one cluster changed (a crafted file). */
export function withCluster(input: ArgoFleetInput, name: string, change: Partial<FleetPlan['clusters'][number]>): ArgoFleetInput {
  return { ...input, fleetPlan: { ...input.fleetPlan, clusters: input.fleetPlan.clusters.map((c) => (c.name === name ? { ...c, ...change } : c)) } };
}

export const TEST_OPTIONS: ArgoFleetOptions = {
  repoURL: 'https://git.example.com/platform/fleet.git',
  revision: 'main',
  path: 'fleets/prod/argocd',
  setupPath: 'examples',
  namespace: 'openshift-gitops',
  project: 'default',
  image: 'REPLACE-ME.example/bootcplan:0.1.0',
  name: 'bootcplan-prod',
};
