/**
 * Builders for fleet tests: a Fleet in a few lines (YAML text, or files on disk with one
 * snapshot file per cluster), and a FleetPlan made by the real planner from in-memory
 * snapshots. Other fleet suites (apply, rehearse, argocd) build on these.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ClusterSnapshot } from '../../src/cluster/types.ts';
import { parseFleetSpec } from '../../src/fleet/spec-load.ts';
import { planFleet, type FleetClusterInput } from '../../src/fleet/plan.ts';
import type { FleetPlan, FleetClusterError } from '../../src/fleet/plan-types.ts';
import type { FleetStrategy } from '../../src/fleet/spec-types.ts';
import { ClusterBuilder, NEW, nodes } from './cluster.ts';
import { uidOf } from '../../src/sim/fake-ids.ts';

export { NEW };

export interface TestFleetCluster {
  name: string;
  labels?: Record<string, string>;
  /** The cluster's snapshot (default: a bootc `worker` pool of 3 nodes on the old image). */
  cluster?: ClusterBuilder;
  /** A live cluster by kubeconfig context instead of a snapshot file. */
  context?: string;
  kubeconfig?: string;
  /** Planned as this error instead of a snapshot (planFleet only). */
  error?: FleetClusterError;
  overrides?: Record<string, unknown>;
  destination?: { name?: string; server?: string };
}

/** A worker pool of `n` bootc nodes on the old image: something to change for every Fleet here. */
export function workerCluster(n = 3, prefix = 'w'): ClusterBuilder {
  return new ClusterBuilder().bootcPool('worker', nodes(prefix, n));
}

export class FleetBuilder {
  name = 'fleet';
  rollout: Record<string, unknown> = { pools: [{ name: 'worker', image: NEW, maxUnavailable: 1 }] };
  clusters: TestFleetCluster[] = [];
  labelOverrides: Record<string, unknown>[] = [];
  strategyFields: FleetStrategy = {};

  cluster(name: string, opts: Omit<TestFleetCluster, 'name'> = {}): this {
    this.clusters.push({ name, ...opts });
    return this;
  }
  /** `count` clusters named `${prefix}-NNN`, each with a worker pool of `nodesEach` nodes. */
  many(count: number, prefix = 'c', nodesEach = 3, labels: (i: number) => Record<string, string> = () => ({})): this {
    for (let i = 0; i < count; i++) this.cluster(`${prefix}-${String(i).padStart(3, '0')}`, { labels: labels(i), cluster: workerCluster(nodesEach) });
    return this;
  }
  override(o: Record<string, unknown>): this {
    this.labelOverrides.push(o);
    return this;
  }
  strategy(s: FleetStrategy): this {
    this.strategyFields = { ...this.strategyFields, ...s };
    return this;
  }
  withRollout(r: Record<string, unknown>): this {
    this.rollout = r;
    return this;
  }

  /** The Fleet document; snapshot clusters point at `${name}.yaml` next to the Fleet file. */
  doc(): Record<string, unknown> {
    const clusters = this.clusters.map((c) => {
      const out: Record<string, unknown> = { name: c.name };
      if (c.context) out.context = c.context;
      else out.snapshot = `${c.name}.yaml`;
      if (c.kubeconfig) out.kubeconfig = c.kubeconfig;
      if (c.labels && Object.keys(c.labels).length) out.labels = c.labels;
      if (c.overrides) out.overrides = c.overrides;
      if (c.destination) out.destination = c.destination;
      return out;
    });
    const spec: Record<string, unknown> = { rollout: this.rollout, clusters };
    if (this.labelOverrides.length) spec.overrides = this.labelOverrides;
    if (Object.keys(this.strategyFields).length) spec.strategy = this.strategyFields;
    return { apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Fleet', metadata: { name: this.name }, spec };
  }
  yaml(): string {
    return stringify(this.doc());
  }
  /** Writes fleet.yaml and one snapshot file per snapshot cluster into `dir` (default: a new temp dir). */
  write(dir = mkdtempSync(join(tmpdir(), 'bootcplan-fleet-'))): { dir: string; file: string } {
    for (const c of this.clusters) if (!c.context) writeFileSync(join(dir, `${c.name}.yaml`), clusterOf(c).yaml());
    const file = join(dir, 'fleet.yaml');
    writeFileSync(file, this.yaml());
    return { dir, file };
  }
  /** The FleetPlan the real planner makes from in-memory snapshots (no files). */
  plan(opts: { now?: number } = {}): FleetPlan {
    const text = this.yaml();
    const loaded = parseFleetSpec(text, 'fleet.yaml');
    if (!loaded.fleet) throw new Error('fleet invalid: ' + JSON.stringify(loaded.diagnostics, null, 1));
    const clusters = new Map<string, FleetClusterInput>();
    for (const c of this.clusters) clusters.set(c.name, c.error ? { error: c.error } : { snapshot: snapshotOf(c) });
    return planFleet({
      fleet: loaded.fleet,
      map: loaded.map,
      diagnostics: loaded.diagnostics,
      clusters,
      now: opts.now,
      info: { name: this.name, path: 'fleet.yaml', ref: null, commit: null, sha256: loaded.sha256, dirty: null },
    });
  }
}

/**
 * The cluster's objects, with an identity of its own: a builder's ClusterVersion carries the
 * generator's one clusterID, and the clusters of a Fleet are distinct clusters (a plan runs only
 * where its identity is found; src/fleet/plan.ts warns of entries that share one).
 */
function clusterOf(c: TestFleetCluster): ClusterBuilder {
  const b = c.cluster ?? workerCluster();
  const cv = b.objects.find((o) => o.kind === 'ClusterVersion');
  if (cv && cv.spec?.clusterID === uidOf('cluster')) cv.spec.clusterID = uidOf(`cluster/${c.name}`);
  return b;
}

function snapshotOf(c: TestFleetCluster): ClusterSnapshot {
  const s = clusterOf(c).snapshot();
  return { ...s, source: `file:${c.name}.yaml` };
}
