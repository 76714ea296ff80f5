/**
 * What the pool runners receive (src/apply/pools/): the gates' context and what the runners and
 * the observer keep between them while the run lasts.
 */
import type { GateContext } from '../gates/context.ts';

interface PoolKept {
  /** Nodes whose update bootcplan is driving now (not reported as node-unavailable). */
  readonly inFlight: Set<string>;
  /** node -> was it out of service when last looked at (nodes bootcplan does not drive). */
  readonly lastAvailability: Map<string, boolean>;
  /** MCO pools: node -> the last of its update steps reported (trackMco). */
  readonly mcoPhase: Map<string, number>;
}

/** Everything one apply has: the applier makes it (apply/applier.ts) and hands it to the pool runners. */
export interface PoolContext extends GateContext, PoolKept {}
