/**
 * A rehearsal: the applier run against a simulated cluster built from a snapshot, with
 * the plan's (or given) phase durations and optional faults. Same engine, same events,
 * same errors as `apply`; the result adds per-wave times and the most nodes of each
 * pool that were out of service at any instant. It says what happened; the exit code an
 * error stands for is the CLI's (base/errors.ts `exitCodeOf`).
 */
import type { Plan, PhaseDurations } from '../plan/types.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { apply, checkApplicable, type ApplyTimeouts } from '../apply/applier.ts';
import type { ApplyEvent } from '../apply/events.ts';
import { RolloutHaltedError } from '../base/errors.ts';
import { SimCluster, type FaultOptions } from './cluster.ts';

export interface RehearsalWave {
  wave: number;
  /** seconds since the start */
  start: number;
  end: number | null;
  nodes: string[];
}

export interface RehearsalPool {
  name: string;
  backend: string;
  maxUnavailable: number;
  peakUnavailable: number;
  waves: RehearsalWave[];
  failedNodes: string[];
}

export interface Rehearsal {
  planId: string;
  durationSeconds: number;
  /** The plan's estimate (same duration model), for comparison. */
  estimatedSeconds: number;
  halted: boolean;
  /** Why the rehearsal stopped early (halt, stale plan), or null. */
  stopped: string | null;
  durations: PhaseDurations;
  faults: FaultOptions | null;
  reboots: { soft: number; hard: number; failed: number };
  pools: RehearsalPool[];
  events: ApplyEvent[];
}

export interface RehearseInput {
  plan: Plan;
  replan: (s: ClusterSnapshot) => Plan;
  snapshot: ClusterSnapshot;
  durations?: PhaseDurations;
  faults?: FaultOptions | null;
  timeouts?: Partial<ApplyTimeouts>;
  onEvent?: (e: ApplyEvent) => void;
}

/**
 * Runs the rehearsal. A plan that must not be applied throws like apply does; an error
 * that stops the rehearsal (a stale plan, a halt) is part of the result: `stopped` is its
 * message, `halted` says whether it was a halt, and `error` is the error itself.
 */
export async function rehearse(input: RehearseInput): Promise<{ rehearsal: Rehearsal; error: unknown }> {
  checkApplicable(input.plan);
  const durations = input.durations ?? input.plan.durations;
  const sim = new SimCluster(input.snapshot, { durations, faults: input.faults ?? undefined });
  const events: ApplyEvent[] = [];
  let error: unknown = null;
  let duration = 0;
  try {
    const r = await apply({
      plan: input.plan, replan: input.replan, driver: sim.driver('rehearsal'), holder: 'bootcplan rehearse',
      timeouts: input.timeouts, onEvent: (e) => { events.push(e); input.onEvent?.(e); },
    });
    duration = r.durationSeconds;
  } catch (err) {
    error = err;
    duration = events.length ? events[events.length - 1].t : 0;
  }
  const pools: RehearsalPool[] = input.plan.pools.map((p) => {
    const waves: RehearsalWave[] = [];
    for (const e of events) {
      if (!('pool' in e) || e.pool !== p.name) continue;
      if (e.type === 'wave-start') waves.push({ wave: e.wave, start: e.t, end: null, nodes: e.nodes });
      if (e.type === 'wave-end') {
        const w = waves.find((x) => x.wave === e.wave && x.end === null);
        if (w) w.end = e.t;
      }
    }
    return {
      name: p.name, backend: p.backend, maxUnavailable: p.maxUnavailable.resolved,
      peakUnavailable: sim.peakUnavailable.get(p.name) ?? 0, waves,
      failedNodes: [...new Set(events.flatMap((e) => (e.type === 'node-failed' && e.pool === p.name ? [e.node] : [])))],
    };
  });
  const rehearsal: Rehearsal = {
    planId: input.plan.id,
    durationSeconds: Math.round(duration * 1000) / 1000,
    estimatedSeconds: input.plan.summary.estimatedSeconds,
    halted: error instanceof RolloutHaltedError,
    stopped: error ? (error as Error).message : null,
    durations,
    faults: input.faults ?? null,
    reboots: {
      soft: sim.reboots.filter((r) => r.kind === 'soft').length,
      hard: sim.reboots.filter((r) => r.kind === 'hard').length,
      failed: sim.reboots.filter((r) => r.failed).length,
    },
    pools,
    events,
  };
  return { rehearsal, error };
}
