/**
 * `onFailure: rollback` (DESIGN §11; docs/apply.md "Health gates"): the one place the applier
 * hands a failed gate over to a rollback. The rollback itself (a rollback plan from the run
 * record, carried out under the same lock: the nodes this run updated back to the image each
 * booted before) is not part of this build; until it is, a rollback is refused the way a
 * rollback plan with an error is: the pool halts as for `onFailure: halt`, and the message says
 * that no node was rolled back.
 */
import type { PlanPool } from '../plan/types.ts';
import type { ApplyContext } from './context.ts';
import type { GateFailure } from './health-gates.ts';

/** How a refused rollback halts (gate-failure.ts haltForGate; passed in, so the two files do not import each other). */
export type HaltForGate = (ctx: ApplyContext, pool: PlanPool, f: GateFailure, why: string) => Promise<never>;

export async function rollbackAfterGate(ctx: ApplyContext, pool: PlanPool, f: GateFailure, halt: HaltForGate): Promise<never> {
  return halt(ctx, pool, f, `rollback refused: this bootcplan cannot roll back (onFailure: rollback, scope ${f.check.scope}); no node was rolled back`);
}
