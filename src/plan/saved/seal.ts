/**
 * The seal of a saved plan (docs/design.md §6 "Sealed plans"): a saved plan travels from a pull request
 * to an apply job as a file anyone on the way could edit. Its `id` is the content hash of the
 * plan (plan/planner.ts planIdOf, given when the plan is made), so a file whose content no
 * longer hashes to its id was edited after it was made. Pure.
 */
import type { Plan } from '../types.ts';
import { planIdOf } from '../planner.ts';
import { StalePlanError } from '../../base/errors.ts';

/** A plan with errors saved for review (`plan --out --for-review`): marked, and sealed again. */
export function markForReview(plan: Plan): Plan {
  const marked: Plan = { ...plan, reviewOnly: true };
  return { ...marked, id: planIdOf(marked) };
}

/** The id the content of `plan` hashes to, when it is not the id the plan carries. */
export function tamperedId(plan: Plan): string | null {
  const actual = planIdOf(plan);
  return actual === plan.id ? null : actual;
}

/**
 * The seal checked (exit 3 when broken): `show`, `apply` and `rehearse` check it before they
 * act on anything else in the file (docs/design.md §2: show verifies the seal as apply does), so an
 * edited plan is never reviewed or run under the id of the plan it no longer is.
 */
export function checkPlanSeal(saved: Plan): void {
  const actual = tamperedId(saved);
  if (actual) {
    throw new StalePlanError('the plan file was modified after it was made', [
      `its content hashes to ${actual}, but it says it is plan ${saved.id}`,
      'use only the file `bootcplan plan --out` wrote, as it was reviewed',
    ]);
  }
}
