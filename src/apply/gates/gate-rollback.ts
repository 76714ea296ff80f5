/**
 * `onFailure: rollback` (docs/design.md §11; docs/apply.md "Health gates", "Rollback"): the one place the
 * applier hands a failed gate over to a rollback. The rollback runner (rollback-runner.ts) plans
 * the way back from the run record and the cluster (the nodes this run updated, back to the image
 * each booted before) and carries it out under the same lock; a rollback it cannot plan without
 * an error is refused the way `onFailure: halt` halts, saying why no node was rolled back.
 */
import type { PlanPool } from '../../plan/types.ts';
import type { GateContext } from './context.ts';
import type { GateFailure } from './health-gates.ts';
import { rollBackNow } from './rollback-runner.ts';

/** How a refused rollback halts (gate-failure.ts haltForGate; passed in, so the two files do not import each other). */
type HaltForGate = (ctx: GateContext, pool: PlanPool, f: GateFailure, why: string) => Promise<never>;

export async function rollbackAfterGate(ctx: GateContext, pool: PlanPool, f: GateFailure, halt: HaltForGate): Promise<never> {
  const request = { check: f.check.name, observed: f.observed, scope: f.check.scope, pool: pool.name, wave: f.position.wave };
  return rollBackNow(ctx, request, (why) => halt(ctx, pool, f, `rollback refused: ${why}; no node was rolled back`));
}
