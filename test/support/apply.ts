/** Shared helpers for the apply, sim, rehearse and property tests. */
import type { BootcOperatorAbilities } from '../../src/domain/bootc-daemon.ts';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { buildPlan } from '../../src/plan/planner.ts';
import type { Plan, PhaseDurations } from '../../src/plan/types.ts';
import type { ClusterSnapshot } from '../../src/cluster/types.ts';
import { SimCluster, type SimOptions, type SimDriver } from '../../src/sim/cluster.ts';
import { apply, type ApplyOptions, type ApplyResult } from '../../src/apply/applier.ts';
import type { ApplyEvent } from '../../src/apply/ports/events.ts';
import { DEFAULT_DURATIONS } from '../../src/domain/timing.ts';
import { exitCodeOf } from '../../src/base/errors.ts';

export function planWith(
  specText: string,
  snapshot: ClusterSnapshot,
  durations: PhaseDurations = DEFAULT_DURATIONS,
  /** What the bootc-operator can do (PlanInput.bootcOperator); default the installed one. */
  bootcOperator?: BootcOperatorAbilities,
): { plan: Plan; replan: (s: ClusterSnapshot) => Plan } {
  const loaded = parseRolloutSpec(specText, 'spec.yaml');
  if (!loaded.spec) throw new Error('spec invalid: ' + JSON.stringify(loaded.diagnostics, null, 1));
  const specInfo = { name: 'test', path: 'spec.yaml', ref: null, commit: null, sha256: loaded.sha256, dirty: null };
  const mk = (s: ClusterSnapshot) =>
    buildPlan({ spec: loaded.spec!, specMap: loaded.map, snapshot: s, specDiagnostics: loaded.diagnostics, specInfo, durations, bootcOperator });
  return { plan: mk(snapshot), replan: mk };
}

export interface Run {
  result: ApplyResult | null;
  error: unknown;
  code: number;
  events: ApplyEvent[];
  driver: SimDriver;
}

export async function runApply(
  sim: SimCluster,
  plan: Plan,
  replan: (s: ClusterSnapshot) => Plan,
  o: Partial<ApplyOptions> & { onEventHook?: (e: ApplyEvent, d: SimDriver) => void; name?: string } = {},
): Promise<Run> {
  const driver = sim.driver(o.name);
  const events: ApplyEvent[] = [];
  try {
    const result = await apply({
      plan,
      replan,
      driver,
      holder: o.holder ?? `test@${driver.name}`,
      step: o.step,
      timeouts: o.timeouts,
      policy: o.policy,
      lockTimeoutSeconds: o.lockTimeoutSeconds,
      onLockWait: o.onLockWait,
      signal: o.signal,
      selfNode: o.selfNode,
      retry: o.retry,
      health: o.health,
      silences: o.silences,
      onEvent: (e) => {
        events.push(e);
        o.onEventHook?.(e, driver);
      },
    });
    return { result, error: null, code: 0, events, driver };
  } catch (error) {
    return { result: null, error, code: exitCodeOf(error), events, driver };
  }
}

export function newSim(snapshot: ClusterSnapshot, o: SimOptions = {}): SimCluster {
  return new SimCluster(snapshot, o);
}
