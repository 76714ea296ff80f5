/**
 * `fleet rehearse` (DESIGN §10): the whole fleet on simulated clusters. Each cluster of a
 * batch is rehearsed on its own simulated cluster, built from its snapshot (./rehearse.ts, the
 * applier against src/sim), with a seed of its own derived from the fleet's seed and its name,
 * so a cluster's result does not depend on the order the clusters run in. The fleet runner
 * (src/apply/fleet-runner.ts: batches in order, the clusters of a batch at the same time, the
 * soak between batches, the batch timeout and its action, a failed canary stops the fleet)
 * composes them on a virtual clock (./sleep-clock.ts): a cluster takes its rehearsal's
 * duration of fleet time. The result is the fleet timeline the renderers draw.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { FleetBatchKind } from '../plan/fleet-types.ts';
import type { BatchTimeoutAction } from '../spec/fleet-types.ts';
import { EXIT, RolloutHaltedError, exitCodeOf } from '../base/errors.ts';
import { rehearse, type Rehearsal } from './rehearse.ts';
import { hashName } from './rng.ts';

/** What the simulation is run with, for every cluster of the fleet. */
export interface FleetRehearseOptions {
  durations: PhaseDurations;
  /** Probability that a reboot fails (0: no faults). */
  failRate: number;
  /** Per-node duration jitter fraction (0: none). */
  jitter: number;
  /** The fleet's seed; each cluster rehearses with `clusterSeed(seed, name)`. */
  seed: number;
}

/**
 * How a cluster's rehearsal ended. `done`: rolled out; `halted`: the rollout halted (a failed
 * node, exit 5); `stopped`: another error stopped it (its exit code says which).
 */
export const CLUSTER_REHEARSAL_OUTCOMES = ['done', 'halted', 'stopped'] as const;
export type ClusterRehearsalOutcome = (typeof CLUSTER_REHEARSAL_OUTCOMES)[number];

export interface ClusterRehearsalInput {
  name: string;
  plan: Plan;
  replan: (s: ClusterSnapshot) => Plan;
  snapshot: ClusterSnapshot;
  options: FleetRehearseOptions;
}

export interface ClusterRehearsalResult {
  name: string;
  outcome: ClusterRehearsalOutcome;
  exitCode: number;
  /** Simulated seconds from the cluster's start to its end (done or stopped). */
  durationSeconds: number;
  /** The cluster plan's estimate. */
  estimatedSeconds: number;
  /** Why it stopped early, or null. */
  message: string | null;
  /** The seed its faults and jitter were drawn with. */
  seed: number;
  rehearsal: Rehearsal | null;
}

/** The seed of one cluster: the fleet's seed mixed with the cluster's name (order-independent). */
export function clusterSeed(fleetSeed: number, name: string): number {
  return hashName(fleetSeed >>> 0, `cluster/${name}`);
}

/** One cluster's rehearsal: its plan against its own simulated cluster, with its own seed. */
export async function rehearseCluster(input: ClusterRehearsalInput): Promise<ClusterRehearsalResult> {
  const { options: o, plan } = input;
  const seed = clusterSeed(o.seed, input.name);
  const base = { name: input.name, estimatedSeconds: plan.summary.estimatedSeconds, seed };
  try {
    const { rehearsal, error } = await rehearse({
      plan, replan: input.replan, snapshot: input.snapshot, durations: o.durations,
      faults: o.failRate > 0 ? { seed, rebootFailRate: o.failRate } : null,
      jitter: o.jitter > 0 ? { fraction: o.jitter, seed } : null,
    });
    const outcome: ClusterRehearsalOutcome = !error ? 'done' : error instanceof RolloutHaltedError ? 'halted' : 'stopped';
    return { ...base, outcome, exitCode: error ? exitCodeOf(error) : EXIT.ok, durationSeconds: rehearsal.durationSeconds, message: rehearsal.stopped, rehearsal };
  } catch (err) {
    // A plan that must not be applied (checkApplicable) stops at once, as apply would.
    return { ...base, outcome: 'stopped', exitCode: exitCodeOf(err), durationSeconds: 0, message: (err as Error).message, rehearsal: null };
  }
}

// ---------------------------------------------------------------------------- the fleet timeline

/**
 * A cluster in the fleet timeline. The first three as a cluster rehearsal ends; `timed-out`:
 * the batch timeout came first (the runner's outcome); `not-started`: the fleet stopped
 * before its batch; `no-batch`: the fleet plan put it in no batch (an error, or nothing to change).
 */
export const FLEET_REHEARSAL_CLUSTER_OUTCOMES = [...CLUSTER_REHEARSAL_OUTCOMES, 'timed-out', 'not-started', 'no-batch'] as const;
export type FleetRehearsalClusterOutcome = (typeof FLEET_REHEARSAL_CLUSTER_OUTCOMES)[number];

export const FLEET_REHEARSAL_BATCH_OUTCOMES = ['done', 'failed', 'timed-out', 'not-started'] as const;
export type FleetRehearsalBatchOutcome = (typeof FLEET_REHEARSAL_BATCH_OUTCOMES)[number];

/** Why the fleet stopped before its last batch, or null when every batch ran. */
export const FLEET_STOPS = ['canary-failed', 'batch-timeout'] as const;
export type FleetStop = (typeof FLEET_STOPS)[number];

export interface FleetRehearsalCluster {
  name: string;
  /** 1-based batch, or null (no batch). */
  batch: number | null;
  canary: boolean;
  outcome: FleetRehearsalClusterOutcome;
  exitCode: number;
  /** Fleet seconds; null when it did not start. */
  start: number | null;
  end: number | null;
  /** Its own rehearsal's duration (may run past `end - start` when the batch timed out). */
  durationSeconds: number | null;
  estimatedSeconds: number | null;
  message: string | null;
  seed: number | null;
  /** The figures of its own rehearsal (its events stay out of the fleet's result). */
  summary: { nodes: number; waves: number; reboots: Rehearsal['reboots']; failedNodes: number; peakOverMax: boolean } | null;
}

export interface FleetRehearsalBatch {
  index: number;
  kind: FleetBatchKind;
  clusters: string[];
  outcome: FleetRehearsalBatchOutcome;
  start: number | null;
  end: number | null;
  /** When the batch timeout falls (start + batchTimeoutSeconds), or null without a timeout. */
  timeoutAt: number | null;
  /** The soak after this batch, [end, end + batchSoakSeconds], when another batch follows. */
  soak: { start: number; end: number } | null;
  /** The fleet plan's estimate of the batch. */
  estimatedSeconds: number;
}

export interface FleetRehearsal {
  fleetPlanId: string;
  fleetName: string;
  options: FleetRehearseOptions;
  strategy: { batchSoakSeconds: number; batchTimeoutSeconds: number | null; batchTimeoutAction: BatchTimeoutAction };
  /** From the start of the first batch to the end of the last one that ran. */
  makespanSeconds: number;
  /** The fleet plan's estimate (batches one after another, each its longest cluster, plus the soaks). */
  estimatedSeconds: number;
  stopped: FleetStop | null;
  /** Why the fleet stopped, in words, or null. */
  message: string | null;
  /** The worst exit code of the clusters (1 > 6 > 5 > 4 > 3 > 2 > 0). */
  exitCode: number;
  batches: FleetRehearsalBatch[];
  /** Every cluster of the fleet, in the Fleet's order. */
  clusters: FleetRehearsalCluster[];
}

/** The order of severity of exit codes: the worst one of a fleet wins. */
const SEVERITY: readonly number[] = [EXIT.error, EXIT.policy, EXIT.halted, EXIT.locked, EXIT.stale, EXIT.changes, EXIT.ok];

/** The worst of some exit codes (an unknown code counts as an error). */
export function worstExit(codes: Iterable<number>): number {
  let worst: number = EXIT.ok;
  const rank = (c: number) => { const i = SEVERITY.indexOf(c); return i < 0 ? 0 : i; };
  for (const c of codes) if (rank(c) < rank(worst)) worst = SEVERITY.includes(c) ? c : EXIT.error;
  return worst;
}

/** The figures of a cluster rehearsal kept in the fleet timeline. */
export function clusterSummary(r: Rehearsal | null): FleetRehearsalCluster['summary'] {
  if (!r) return null;
  return {
    nodes: r.pools.reduce((s, p) => s + p.waves.reduce((n, w) => n + w.nodes.length, 0), 0),
    waves: r.pools.reduce((s, p) => s + p.waves.length, 0),
    reboots: r.reboots,
    failedNodes: r.pools.reduce((s, p) => s + p.failedNodes.length, 0),
    peakOverMax: r.pools.some((p) => p.peakUnavailable > p.maxUnavailable),
  };
}
