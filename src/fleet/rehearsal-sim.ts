/**
 * `fleet rehearse` (docs/design.md §10): the whole fleet on simulated clusters. Each cluster of a
 * batch is rehearsed on its own simulated cluster, built from its snapshot (src/sim/rehearse.ts, the
 * applier against src/sim), with a seed of its own derived from the fleet's seed and its name,
 * so a cluster's result does not depend on the order the clusters run in. The fleet runner
 * (src/fleet/runner.ts: batches in order, the clusters of a batch at the same time, the
 * soak between batches, the batch timeout and its action, a failed canary stops the fleet)
 * composes them on a virtual clock (src/sim/sleep-clock.ts): a cluster takes its rehearsal's
 * duration of fleet time. The result is the fleet timeline the renderers draw.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { FleetBatchKind, FleetPlan, FleetClusterPlan } from './plan-types.ts';
import type { FleetClusterOutcome, FleetEvent, FleetHaltReason } from './run-events.ts';
import type { FleetProgressRecord } from './record.ts';
import type { FleetClusterSession } from './cluster-run.ts';
import type { FleetBatchStatus, FleetRunResult } from './run-result.ts';
import type { runFleet } from './runner.ts';
import type { BatchTimeoutAction } from './spec-types.ts';
import { EXIT, InputError, RolloutHaltedError, exitCodeOf, type ExitCode, messageOf } from '../base/errors.ts';
import { SleepClock } from '../sim/sleep-clock.ts';
import { rehearse, type Rehearsal, type RehearsalWindows } from '../sim/rehearse.ts';
import type { WindowSpec } from '../domain/windows.ts';
import type { SimCluster } from '../sim/cluster.ts';
import { applyBatchGateFailure } from '../apply/applier.ts';
import { hashName } from '../sim/rng.ts';
import { SimHealthSource, type SimHealthOptions } from '../sim/health.ts';
import { sessionVerifier } from './gates.ts';

/** What the simulation is run with, for every cluster of the fleet. */
export interface FleetRehearseOptions {
  durations: PhaseDurations;
  /** Probability that a reboot fails (0: no faults). */
  failRate: number;
  /** Per-node duration jitter fraction (0: none). */
  jitter: number;
  /** The fleet's seed; each cluster rehearses with `clusterSeed(seed, name)`. */
  seed: number;
  /** Health faults (fleet rehearse --fail-check, --fail-check-rate); each cluster draws with its own seed. */
  health?: SimHealthOptions;
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
  /** The cluster's effective maintenance windows (its overrides and time zone applied), kept as fleet apply keeps them. */
  windows?: readonly WindowSpec[];
  /** When its apply starts, epoch seconds (the fleet's clock). */
  start?: number;
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
  /** The error that stopped it (its exit code is `exitCode`), or null. */
  error: unknown;
  /** Its simulated cluster as its apply left it (a canary's batch gate acts on it), or null. */
  sim?: SimCluster | null;
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
    const { rehearsal, error, sim } = await rehearse({
      plan,
      replan: input.replan,
      snapshot: input.snapshot,
      durations: o.durations,
      faults: o.failRate > 0 ? { seed, rebootFailRate: o.failRate } : null,
      jitter: o.jitter > 0 ? { fraction: o.jitter, seed } : null,
      health: clusterHealth(o, input.name),
      windows: input.windows,
      start: input.start,
    });
    const outcome: ClusterRehearsalOutcome = !error ? 'done' : error instanceof RolloutHaltedError ? 'halted' : 'stopped';
    return {
      ...base,
      outcome,
      exitCode: error ? exitCodeOf(error) : EXIT.ok,
      durationSeconds: rehearsal.durationSeconds,
      message: rehearsal.stopped,
      rehearsal,
      error,
      sim,
    };
  } catch (err) {
    // A plan that must not be applied (checkApplicable) stops at once, as apply would.
    return { ...base, outcome: 'stopped', exitCode: exitCodeOf(err), durationSeconds: 0, message: messageOf(err), rehearsal: null, error: err };
  }
}

/** One cluster's health faults: the fleet's rules for it (CLUSTER/ prefixes), its own seed for the rate. */
function clusterHealth(o: FleetRehearseOptions, name: string): SimHealthOptions {
  return { ...(o.health ?? {}), cluster: name, seed: clusterSeed(o.seed, name) };
}

// ---------------------------------------------------------------------------- the fleet timeline

/**
 * A cluster in the fleet timeline: the fleet runner's outcome (src/fleet/run-events.ts:
 * done, nothing-to-do, failed, timed-out, interrupted, not-started, unplanned, unchanged).
 */
export type FleetRehearsalClusterOutcome = FleetClusterOutcome;

/** A batch in the fleet timeline: the runner's status of it. */
export type FleetRehearsalBatchOutcome = FleetBatchStatus;

/** Why the fleet stopped before its last batch (the runner's halt reason), or null when every batch ran. */
export type FleetStop = FleetHaltReason;

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
  /**
   * Its maintenance windows as its rehearsal kept them (absent without windows): each wait in
   * fleet seconds (the cluster's start + the wait's own times), inside [start, end].
   */
  windows?: RehearsalWindows & { fleetWaits: { start: number; end: number }[]; firstWave: { at: string; fleetSeconds: number } | null };
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
  /** The worst exit code of the clusters (the runner's order: 130, 143, then 1 > 6 > 5 > 4 > 3 > 2 > 0). */
  exitCode: ExitCode;
  batches: FleetRehearsalBatch[];
  /** Every cluster of the fleet, in the Fleet's order. */
  clusters: FleetRehearsalCluster[];
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

// ---------------------------------------------------------------------------- the composition

/** What the rehearsal of a cluster in a batch needs: the plan it applies, its snapshot, its re-plan. */
export interface FleetRehearsalClusterInput {
  plan: Plan;
  snapshot: ClusterSnapshot;
  replan: (s: ClusterSnapshot) => Plan;
  /** Its effective maintenance windows (fleet/effective-spec.ts), none: apply at any time. */
  windows?: readonly WindowSpec[];
}

export interface FleetRehearsalInput {
  fleetPlan: FleetPlan;
  /**
   * The clusters in a batch, by name (the others are not rehearsed): what each needs, loaded in
   * its turn (a saved plan is confirmed against its snapshot then); a throw fails that cluster.
   */
  clusters: ReadonlyMap<string, () => FleetRehearsalClusterInput>;
  options: FleetRehearseOptions;
  /** The fleet runner (src/fleet/runner.ts runFleet; the CLI loads it with the command). */
  runner: typeof runFleet;
  /** Each cluster's rehearsal as it ends (progress). */
  onCluster?: (r: ClusterRehearsalResult) => void;
  /** The runner's events, on the fleet's virtual clock (progress). */
  onEvent?: (e: FleetEvent) => void;
  /** The fleet's virtual start, epoch seconds (fleet rehearse --start; default FLEET_START). */
  start?: number;
}

/** The virtual start of a fleet rehearsal (the simulated clusters' own start, sim/cluster.ts). */
const FLEET_START = Date.parse('2026-09-14T08:00:00Z') / 1000;

/**
 * Rehearses the fleet: the runner drives the batches on a virtual clock; a cluster's apply is
 * its own rehearsal (run while the clock stands still), then its duration of fleet time, then
 * its error if it stopped. The batch timeout cuts that time short like a real apply's.
 */
export async function rehearseFleet(input: FleetRehearsalInput): Promise<FleetRehearsal> {
  const clock = new SleepClock(input.start ?? FLEET_START);
  const results = new Map<string, ClusterRehearsalResult>();
  const inputs = new Map<string, FleetRehearsalClusterInput>();
  // One cluster simulation at a time: they take no fleet time (the clock stands still while
  // any runs), and interleaved they only share the event loop, slower.
  let lane: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = lane.then(fn);
    lane = p.catch(() => undefined);
    return p;
  };
  const open = async (c: FleetClusterPlan): Promise<FleetClusterSession> => {
    const load = input.clusters.get(c.name);
    if (!load) throw new InputError(`fleet rehearse: no snapshot of cluster ${c.name}`, [], 'every cluster in a batch needs its snapshot file');
    let record: FleetProgressRecord | null = null;
    return {
      readRecord: async () => record,
      writeRecord: async (r) => {
        record = r;
      },
      apply: async (signal) => {
        const loaded = load();
        inputs.set(c.name, loaded);
        const r = await clock.hold(() =>
          oneAtATime(async () =>
            rehearseCluster({
              name: c.name,
              ...loaded,
              options: input.options,
              // With windows the cluster starts at fleet time (its windows are evaluated then); without, the simulator's own start.
              ...(loaded.windows?.length ? { start: clock.now() } : {}),
            }),
          ),
        );
        results.set(c.name, r);
        input.onCluster?.(r);
        await clock.sleep(r.durationSeconds, signal);
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the cluster's error, passed on as it came
        if (r.error) throw r.error;
        return 'done';
      },
      // The canary batch gate takes its interval x (successes - 1) of fleet time.
      verify: sessionVerifier(clock, () => new SimHealthSource(clusterHealth(input.options, c.name))),
      // A failed batch gate acts on the canary's simulated cluster as fleet apply acts on the real
      // one; the rollback takes its simulated time of fleet time.
      onGateFailure: async (failure, signal, onEvent) => {
        const sim = results.get(c.name)?.sim;
        const loaded = inputs.get(c.name);
        if (!sim || !loaded) throw new InputError(`fleet rehearse: canary ${c.name} was not rehearsed: nothing to act on`);
        const driver = sim.driver('rehearsal');
        const t0 = driver.clock.now();
        const error = await clock.hold(() =>
          oneAtATime(() =>
            applyBatchGateFailure({ plan: loaded.plan, replan: loaded.replan, driver, holder: 'bootcplan fleet rehearse', onEvent }, failure).catch(
              (e: unknown) => e,
            ),
          ),
        );
        await clock.sleep(driver.clock.now() - t0, signal);
        throw error;
      },
    };
  };
  const run = await input.runner({ plan: input.fleetPlan, clock, open, onEvent: input.onEvent });
  return fleetTimeline(input.fleetPlan, input.options, run, results);
}

/**
 * A cluster's windows with its waits on the fleet's time axis (its start + their own times),
 * cut where the fleet stopped it (a batch timeout): what came after did not happen.
 */
function fleetWindows(r: Rehearsal, w: RehearsalWindows, start: number, end: number | null): NonNullable<FleetRehearsalCluster['windows']> {
  const until = end ?? Infinity;
  const first = r.events.find((e) => e.type === 'wave-start' && !e.rollback && start + e.t < until);
  const waits = w.waits.filter((x) => start + x.start < until);
  return {
    ...w,
    waits,
    waitedSeconds: waits.reduce((n, x) => n + Math.min(start + x.end, until) - (start + x.start), 0),
    fleetWaits: waits.map((x) => ({ start: start + x.start, end: Math.min(start + x.end, until) })),
    firstWave: first ? { at: new Date(Date.parse(w.start) + first.t * 1000).toISOString(), fleetSeconds: start + first.t } : null,
  };
}

/** The fleet timeline from the runner's result and the clusters' own rehearsals. */
export function fleetTimeline(
  fp: FleetPlan,
  options: FleetRehearseOptions,
  run: FleetRunResult,
  results: ReadonlyMap<string, ClusterRehearsalResult>,
): FleetRehearsal {
  const timeout = fp.strategy.batchTimeoutSeconds;
  const batches: FleetRehearsalBatch[] = run.batches.map((b, i) => {
    const next = run.batches[i + 1];
    const soak = b.finishedAt !== null && next && next.soakSeconds > 0 ? { start: b.finishedAt, end: b.finishedAt + next.soakSeconds } : null;
    return {
      index: b.index,
      kind: b.kind,
      clusters: b.clusters,
      outcome: b.status,
      start: b.startedAt,
      end: b.finishedAt,
      timeoutAt: b.startedAt !== null && timeout !== null ? b.startedAt + timeout : null,
      soak,
      estimatedSeconds: fp.batches.find((x) => x.index === b.index)?.estimatedSeconds ?? 0,
    };
  });
  const clusters: FleetRehearsalCluster[] = run.clusters.map((c) => {
    const r = results.get(c.name);
    return {
      name: c.name,
      batch: c.batch,
      canary: c.canary,
      outcome: c.outcome,
      exitCode: c.exitCode,
      start: c.startedAt,
      end: c.finishedAt,
      durationSeconds: r ? r.durationSeconds : null,
      estimatedSeconds: fp.clusters.find((x) => x.name === c.name)?.plan?.summary.estimatedSeconds ?? null,
      message: c.message,
      seed: r ? r.seed : null,
      ...(r?.rehearsal?.windows && c.startedAt !== null ? { windows: fleetWindows(r.rehearsal, r.rehearsal.windows, c.startedAt, c.finishedAt) } : {}),
      summary: clusterSummary(r?.rehearsal ?? null),
    };
  });
  return {
    fleetPlanId: fp.id,
    fleetName: fp.fleet.name,
    options,
    strategy: { batchSoakSeconds: fp.strategy.batchSoakSeconds, batchTimeoutSeconds: timeout, batchTimeoutAction: fp.strategy.batchTimeoutAction },
    makespanSeconds: run.durationSeconds,
    estimatedSeconds: fp.summary.estimatedSeconds,
    stopped: run.halted?.reason ?? null,
    message: run.halted?.message ?? null,
    exitCode: run.exitCode,
    batches,
    clusters,
  };
}
