/**
 * What the gates and the way back receive (src/apply/gates/): the run's context and what the
 * gates keep: the waves run (a wave gate counts them; apply --step stops after one), the
 * silences of the nodes in flight, and the one call into a rollback within this apply.
 */
import type { Plan } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import type { RunContext } from '../engine/context.ts';
import type { ApplyResult } from '../engine/result.ts';
import type { SilenceKeeper } from './silences.ts';

interface GateKept {
  /** Waves this run finished (apply --step stops after one); afterWave counts them. */
  wavesRun: number;
  /** The silences for the nodes in flight (ApplyOptions.silences); null for a plan without them. */
  readonly silences: SilenceKeeper | null;
  /**
   * Runs a rollback plan within this apply, under its lock, as the applier runs any plan
   * (src/apply/gates/rollback-runner.ts rollBackNow; no gates, soak, windows or --step).
   */
  readonly runRollback: (plan: Plan, replan: (s: ClusterSnapshot) => Plan) => Promise<ApplyResult>;
}

export interface GateContext extends RunContext, GateKept {}
