/**
 * Helpers for the fleet runner's tests (fleet-apply's own; fleet-core's test/support/fleet.ts
 * builds FleetPlans from Fleet specs): a hand-made FleetPlan with stub cluster plans, a virtual
 * clock whose time moves only when every sleeper waits, and scripted cluster sessions that log
 * when each apply started and ended.
 */
import type { FleetProgressRecord } from '../../src/fleet/record.ts';
import { SleepClock } from '../../src/sim/sleep-clock.ts';
import type { FleetClusterSession } from '../../src/fleet/cluster-run.ts';
import type { FleetBatch, FleetClusterPlan, FleetPlan } from '../../src/fleet/plan-types.ts';
import type { Plan } from '../../src/plan/types.ts';
import type { BatchTimeoutAction } from '../../src/fleet/spec-types.ts';
import {
  InterruptedError,
  OutsideWindowError,
  RolloutHaltedError,
  StalePlanError,
  LockHeldError,
  PolicyBlockedError,
  InputError,
} from '../../src/base/errors.ts';

export const T0 = Date.parse('2026-03-02T10:00:00Z') / 1000;

/** The fleet rehearsal's clock (sim/sleep-clock.ts), starting at T0: time moves only when every sleeper waits. */
export class StepClock extends SleepClock {
  constructor() {
    super(T0);
  }
}

/** How a scripted cluster's apply ends. */
export type Script =
  | { kind: 'done'; seconds: number }
  | { kind: 'fail'; seconds: number; exit: 1 | 3 | 4 | 5 | 6 }
  /** Outside its window for `closedSeconds` first, then takes `seconds`. */
  | { kind: 'window'; closedSeconds: number; seconds: number }
  /** Its own progress says it is done: the apply answers at once. */
  | { kind: 'nothing-to-do' };

export interface LoggedApply {
  cluster: string;
  start: number;
  end: number | null;
  outcome: string;
}

export function errorOf(exit: 1 | 3 | 4 | 5 | 6, cluster: string): Error {
  switch (exit) {
    case 3:
      return new StalePlanError(`${cluster}: plan is stale`);
    case 4:
      return new LockHeldError('someone', '2026-03-02T09:00:00Z', 'lock-1', null);
    case 5:
      return new RolloutHaltedError(`${cluster}: node w-1 failed`);
    case 6:
      return new PolicyBlockedError(`${cluster}: control-plane replacement not allowed`);
    default:
      return new InputError(`${cluster}: plan has errors`);
  }
}

/** Scripted sessions over one clock: the log of applies, the records written, the most in flight. */
export class FakeFleet {
  readonly log: LoggedApply[] = [];
  readonly records = new Map<string, FleetProgressRecord>();
  readonly recordWrites: string[] = [];
  readonly opened: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** Clusters that cannot be opened (a kubeconfig without their context). */
  readonly unopenable = new Set<string>();
  /** Called when a cluster is opened (e.g. to send a stop request right then). */
  onOpen: ((cluster: string) => void) | null = null;

  constructor(
    readonly clock: StepClock,
    readonly scripts: Record<string, Script>,
  ) {}

  open = async (c: FleetClusterPlan): Promise<FleetClusterSession> => {
    this.opened.push(c.name);
    this.onOpen?.(c.name);
    if (this.unopenable.has(c.name)) throw new InputError(`context "${c.name}" is not in the kubeconfig`);
    const script = this.scripts[c.name] ?? { kind: 'done', seconds: 60 };
    let closedUntil = script.kind === 'window' ? this.clock.now() + script.closedSeconds : 0;
    return {
      readRecord: async () => this.records.get(c.name) ?? null,
      writeRecord: async (r) => {
        this.records.set(c.name, r);
        this.recordWrites.push(`${c.name}:${r.outcome}`);
      },
      apply: async (signal) => {
        if (closedUntil > this.clock.now()) {
          throw new OutsideWindowError(`${c.name}: outside every maintenance window`, undefined, {
            start: new Date(closedUntil * 1000).toISOString(),
            timezone: 'UTC',
          });
        }
        closedUntil = 0;
        if (script.kind === 'nothing-to-do') {
          this.log.push({ cluster: c.name, start: this.clock.now(), end: this.clock.now(), outcome: 'nothing-to-do' });
          return 'nothing-to-do';
        }
        const entry: LoggedApply = { cluster: c.name, start: this.clock.now(), end: null, outcome: 'running' };
        this.log.push(entry);
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        try {
          try {
            await this.clock.sleep(script.seconds, signal);
          } catch {
            entry.outcome = 'stopped';
            throw new InterruptedError('SIGTERM', 'at a safe point');
          }
          if (script.kind === 'fail') {
            entry.outcome = `exit ${script.exit}`;
            throw errorOf(script.exit, c.name);
          }
          entry.outcome = 'done';
          return 'done';
        } finally {
          entry.end = this.clock.now();
          this.inFlight--;
        }
      },
    };
  };
}

export interface FleetShape {
  canaries: string[];
  /** The other clusters' batches, in order. */
  batches: string[][];
  maxConcurrency?: number;
  batchSoakSeconds?: number;
  batchTimeoutSeconds?: number | null;
  batchTimeoutAction?: BatchTimeoutAction;
  /** Clusters in no batch: with an error, or with nothing to change. */
  unplanned?: string[];
  unchanged?: string[];
}

function stubPlan(name: string, errors = 0): Plan {
  return {
    id: `plan-${name}`,
    diagnostics: Array.from({ length: errors }, () => ({ severity: 'error', code: 'x', message: 'an error' })),
    spec: { name: 'fleet', path: 'fleet.yaml', ref: null, commit: null, sha256: 'f'.repeat(64), dirty: null, fleetCluster: name },
  } as unknown as Plan;
}

/** A FleetPlan made by hand (no planner): stub cluster plans, the batches given. */
export function fleetPlanOf(shape: FleetShape, id = 'fleet-1'): FleetPlan {
  const batches: FleetBatch[] = [
    ...shape.canaries.map((c) => ({ kind: 'canary' as const, clusters: [c] })),
    ...shape.batches.map((cs) => ({ kind: 'batch' as const, clusters: cs })),
  ].map((b, i) => ({ index: i + 1, ...b, estimatedSeconds: 60 }));
  const cluster = (name: string, batch: number | null, plan: Plan | null, error: FleetClusterPlan['error']): FleetClusterPlan => ({
    name,
    labels: {},
    source: { context: name, kubeconfig: null, snapshot: null },
    destination: { name: null, server: null },
    canary: shape.canaries.includes(name),
    batch,
    plan,
    error,
  });
  const clusters = [
    ...batches.flatMap((b) => b.clusters.map((c) => cluster(c, b.index, stubPlan(c), null))),
    ...(shape.unplanned ?? []).map((c) => cluster(c, null, null, { code: 'unreachable' as const, message: `${c} is unreachable` })),
    ...(shape.unchanged ?? []).map((c) => cluster(c, null, stubPlan(c), null)),
  ];
  const max = shape.maxConcurrency ?? Math.max(1, ...shape.batches.map((b) => b.length));
  return {
    formatVersion: '1.0',
    kind: 'FleetPlan',
    id,
    fleet: { name: 'fleet', path: 'fleet.yaml', ref: null, commit: null, sha256: 'f'.repeat(64), dirty: null },
    strategy: {
      canaries: shape.canaries,
      maxConcurrency: { value: max, resolved: max, rule: 'test' },
      batchSoakSeconds: shape.batchSoakSeconds ?? 0,
      batchTimeoutSeconds: shape.batchTimeoutSeconds ?? null,
      batchTimeoutAction: shape.batchTimeoutAction ?? 'abort',
    },
    batches,
    clusters,
    diagnostics: [],
    summary: {
      clusters: clusters.length,
      planned: clusters.length,
      withChanges: clusters.length,
      failed: 0,
      nodes: 0,
      batches: batches.length,
      estimatedSeconds: 0,
      errors: 0,
      warnings: 0,
    },
  };
}
