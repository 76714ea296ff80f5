/**
 * Hand-made fleets for the fleet rehearsal suites: each cluster a bootc worker pool of its own
 * size, planned with the same spec, gathered into a FleetPlan whose batches follow the fleet
 * rules (canaries first, each alone; then the others, by name, in batches of maxConcurrency).
 */
import type { ClusterSnapshot } from '../../src/cluster/types.ts';
import type { Plan } from '../../src/plan/types.ts';
import type { FleetPlan, FleetBatch, FleetClusterPlan } from '../../src/fleet/plan-types.ts';
import type { BatchTimeoutAction } from '../../src/fleet/spec-types.ts';
import type { FleetRehearsal } from '../../src/fleet/rehearsal-sim.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from './cluster.ts';
import { planWith } from './apply.ts';

export interface FleetClusterFixture {
  name: string;
  nodes: number;
  maxUnavailable?: number;
  canary?: boolean;
  labels?: Record<string, string>;
}

export interface FleetFixture {
  fleetPlan: FleetPlan;
  clusters: Map<string, () => { plan: Plan; replan: (s: ClusterSnapshot) => Plan; snapshot: ClusterSnapshot }>;
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
  const made = new Map(list.map((c) => [c.name, clusterFixture(c)]));
  const clusters = new Map([...made].map(([name, c]) => [name, () => c]));
  const canaries = list.filter((c) => c.canary).map((c) => c.name);
  const others = list
    .filter((c) => !c.canary)
    .map((c) => c.name)
    .sort();
  const per = s.maxConcurrency ?? 1;
  const groups: { kind: FleetBatch['kind']; names: string[] }[] = canaries.map((n) => ({ kind: 'canary', names: [n] }));
  for (let i = 0; i < others.length; i += per) groups.push({ kind: 'batch', names: others.slice(i, i + per) });
  const est = (n: string) => made.get(n)!.plan.summary.estimatedSeconds;
  const batches: FleetBatch[] = groups.map((g, i) => ({ index: i + 1, kind: g.kind, clusters: g.names, estimatedSeconds: Math.max(...g.names.map(est)) }));
  const soak = s.batchSoakSeconds ?? 0;
  const estimatedSeconds = batches.reduce((t, b) => t + b.estimatedSeconds, 0) + soak * Math.max(0, batches.length - 1);
  const cps: FleetClusterPlan[] = list.map((c) => ({
    name: c.name,
    labels: c.labels ?? {},
    source: { context: null, kubeconfig: null, snapshot: `${c.name}.yaml` },
    destination: { name: c.name, server: null },
    canary: !!c.canary,
    batch: batches.find((b) => b.clusters.includes(c.name))?.index ?? null,
    plan: made.get(c.name)!.plan,
    error: null,
  }));
  const nodesTotal = list.reduce((t, c) => t + c.nodes, 0);
  const fleetPlan: FleetPlan = {
    formatVersion: '1.0',
    kind: 'FleetPlan',
    id: 'fleet-test-id',
    fleet: { name: 'test-fleet', path: 'fleet.yaml', ref: null, commit: null, sha256: 'f'.repeat(64), dirty: null },
    strategy: {
      canaries,
      maxConcurrency: { value: per, resolved: per, rule: 'given' },
      batchSoakSeconds: soak,
      batchTimeoutSeconds: s.batchTimeoutSeconds ?? null,
      batchTimeoutAction: s.batchTimeoutAction ?? 'abort',
    },
    batches,
    clusters: cps,
    diagnostics: [],
    summary: {
      clusters: list.length,
      planned: list.length,
      withChanges: list.length,
      failed: 0,
      nodes: nodesTotal,
      batches: batches.length,
      estimatedSeconds,
      errors: 0,
      warnings: 0,
    },
  };
  return { fleetPlan, clusters };
}

/**
 * A fleet timeline built by hand, one of each case: a canary done; a soak; a batch with a
 * cluster done and one failed (halted, exit 5: the fleet goes on, as with `continue`); a batch whose second cluster hits the batch
 * timeout (abort: the fleet stops); a batch not started; a cluster in no batch (unplanned).
 */
export function fleetTimelineFixture(): FleetRehearsal {
  const summary = (nodes: number, failed = 0) => ({
    nodes,
    waves: Math.ceil(nodes / 2),
    reboots: { soft: 0, hard: nodes, failed },
    failedNodes: failed,
    peakOverMax: false,
  });
  const cl = (
    name: string,
    batch: number | null,
    outcome: FleetRehearsal['clusters'][number]['outcome'],
    start: number | null,
    end: number | null,
    extra: Partial<FleetRehearsal['clusters'][number]> = {},
  ): FleetRehearsal['clusters'][number] => ({
    name,
    batch,
    canary: false,
    outcome,
    exitCode: 0,
    start,
    end,
    durationSeconds: start !== null && end !== null ? end - start : null,
    estimatedSeconds: 3000,
    message: null,
    seed: 42,
    summary: start !== null ? summary(6) : null,
    ...extra,
  });
  return {
    fleetPlanId: 'fleet-test-id',
    fleetName: 'test-fleet',
    options: { durations: { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 }, failRate: 0.05, jitter: 0.3, seed: 1 },
    strategy: { batchSoakSeconds: 600, batchTimeoutSeconds: 7200, batchTimeoutAction: 'abort' },
    makespanSeconds: 14400,
    estimatedSeconds: 13200,
    stopped: 'batch-timeout',
    message: 'batch 3 did not finish within 7200 s (east-2 stopped at a safe point); batchTimeoutAction is abort',
    exitCode: 5,
    batches: [
      {
        index: 1,
        kind: 'canary',
        clusters: ['canary-1'],
        outcome: 'done',
        start: 0,
        end: 3000,
        timeoutAt: 7200,
        soak: { start: 3000, end: 3600 },
        estimatedSeconds: 3000,
      },
      {
        index: 2,
        kind: 'batch',
        clusters: ['east-1', 'west-1'],
        outcome: 'failed',
        start: 3600,
        end: 6600,
        timeoutAt: 10800,
        soak: { start: 6600, end: 7200 },
        estimatedSeconds: 3000,
      },
      {
        index: 3,
        kind: 'batch',
        clusters: ['east-2', 'west-2'],
        outcome: 'timed-out',
        start: 7200,
        end: 14400,
        timeoutAt: 14400,
        soak: null,
        estimatedSeconds: 3000,
      },
      { index: 4, kind: 'batch', clusters: ['west-3'], outcome: 'not-started', start: null, end: null, timeoutAt: null, soak: null, estimatedSeconds: 3000 },
    ],
    clusters: [
      cl('canary-1', 1, 'done', 0, 3000, { canary: true }),
      cl('east-1', 2, 'done', 3600, 6400),
      cl('west-1', 2, 'failed', 3600, 6600, {
        exitCode: 5,
        message: 'pool worker: node west-1-w-03 failed: Degraded after the reboot',
        summary: summary(6, 1),
      }),
      cl('east-2', 3, 'timed-out', 7200, 14400, {
        exitCode: 5,
        durationSeconds: 9000,
        message: 'its batch ran out of time; stopped at a safe point (aborted)',
      }),
      cl('west-2', 3, 'done', 7200, 9000),
      cl('west-3', 4, 'not-started', null, null),
      cl('broken', null, 'unplanned', null, null, {
        exitCode: 1,
        estimatedSeconds: null,
        seed: null,
        message: 'snapshot-invalid: broken.yaml: not a cluster snapshot',
      }),
    ],
  };
}
