/**
 * Whether a saved plan may be carried out (docs/design.md §6 "Sealed plans"; docs/safety.md "Security model"),
 * in the order `apply PLANFILE` and `rehearse PLANFILE` check it:
 * 1. the file's content must hash to its id (./seal.ts; else it was modified: exit 3);
 * 2. a plan saved for review only, or with errors, is never carried out;
 * 3. the files and commit it names must be well formed (checkProvenanceFields; that its spec
 *    path is inside the repository is src/app/saved-plan.ts's to check: it needs the disk);
 * 4. the spec it was made from must still hash to what it recorded (checkSpecHash, on the text
 *    src/app/saved-plan.ts read again: exit 3);
 * 5. and 6. (once the cluster is read) are ./compare.ts's: the cluster the plan was made for,
 *    then the saved plan against a fresh one.
 * Pure: the application layer reads the files and hands them in.
 */
import { createHash } from 'node:crypto';
import type { Plan } from '../types.ts';
import { InputError, PolicyBlockedError, StalePlanError } from '../../base/errors.ts';
import { checkPlanSeal } from './seal.ts';

/** Steps 1 and 2, and the plan's own consistency: what can be checked of the file alone. */
export function checkSavedPlan(saved: Plan): void {
  checkPlanSeal(saved);
  if (saved.reviewOnly) {
    throw new InputError(
      `plan ${saved.id} was saved for review only (plan --for-review): it has errors and is never applied`,
      saved.diagnostics.filter((d) => d.severity === 'error'),
      'fix the spec, plan again, and apply the new plan',
    );
  }
  checkApplicable(saved);
  const inconsistent = waveEntryDifference(saved);
  if (inconsistent.length) {
    throw new InputError(
      `plan ${saved.id}: its waves and its node entries disagree (${inconsistent.slice(0, 5).join('; ')})`,
      [],
      'bootcplan never writes such a plan: plan again instead of editing the file',
    );
  }
}

/**
 * A plan with errors is never carried out, saved or made now (the applier checks every plan it
 * is given): a control-plane replacement the spec does not allow is exit 6, any other error 1.
 */
export function checkApplicable(plan: Plan): void {
  refuseUnapplied(plan);
  const errors = plan.diagnostics.filter((d) => d.severity === 'error');
  if (!errors.length) return;
  const policy = errors.find((d) => d.code === 'cpms-replacement-not-allowed');
  if (policy) {
    throw new PolicyBlockedError(
      `plan ${plan.id} replaces control-plane machines and the spec does not allow it: ${policy.message}`,
      policy.hint ?? 'set spec.controlPlaneMachineSet.allowReplacement: true, plan again, and review the plan',
    );
  }
  throw new InputError(
    `plan ${plan.id} has ${errors.length} error${errors.length === 1 ? '' : 's'} and cannot be applied`,
    errors,
    'fix the spec, plan again, and apply the new plan',
  );
}

/**
 * What this version plans but does not apply yet (pools in parallel, skipped drains): refused
 * by checkApplicable, and by `apply -f` before its rollout status is opened.
 */
export function refuseUnapplied(plan: Plan): void {
  refuseConcurrent(plan);
  refuseSkip(plan);
}

/**
 * A plan with pools in parallel (Plan.concurrency) is planned, but this applier would roll its
 * pools one after another, without the cluster budget and the spread: refused as a plan it cannot
 * run, exit 1, on every way in (apply, rehearse, fleet apply), before the lock or any write
 * (docs/apply.md "Pools in parallel").
 */
function refuseConcurrent(plan: Plan): void {
  if (!plan.concurrency) return;
  throw new InputError(
    'pools in parallel are planned but not yet applied by this version',
    [],
    'remove spec.maxUnavailable, spec.spread and spec.onPoolFailure to apply the pools one after another, or review the plan with bootcplan show',
  );
}

/**
 * A plan whose pool skips blocked drains (PlanPool.drain onBlocked: skip) is planned, but this
 * applier would halt at such a drain instead: refused as a plan it cannot run, exit 1, on every
 * way in, before the lock or any write, as refuseConcurrent (docs/apply.md "Drain forecast").
 */
function refuseSkip(plan: Plan): void {
  const skipping = plan.pools.filter((p) => p.drain?.onBlocked === 'skip').map((p) => p.name);
  if (!skipping.length) return;
  throw new InputError(
    `drain onBlocked: skip is planned (pool${skipping.length === 1 ? '' : 's'} ${skipping.join(', ')}) but not yet applied by this version`,
    [],
    'set drain.onBlocked: halt (or remove it) to apply with blocked drains halting the rollout, or review the plan with bootcplan show',
  );
}

/**
 * A plan's waves and its node entries must tell the same story: every name in a wave is a
 * node entry of that pool with that wave number, once; every scheduled entry is in its wave.
 * (The runner reads the waves; the checks read the entries: a node smuggled into the waves
 * only must not get past them.)
 */
function waveEntryDifference(plan: Plan): string[] {
  const out: string[] = [];
  for (const p of plan.pools) {
    const entries = new Map(p.nodes.map((n) => [n.name, n]));
    const seen = new Set<string>();
    p.waves.forEach((wave, i) => {
      for (const name of wave) {
        const n = entries.get(name);
        if (seen.has(name)) out.push(`pool ${p.name}: ${name} is in more than one wave`);
        seen.add(name);
        if (!n) out.push(`pool ${p.name}: ${name} is in wave ${i + 1} of waves but is not a node of the pool`);
        else if (n.wave !== i + 1) out.push(`pool ${p.name}: ${name} is in wave ${i + 1} of waves but its node entry says wave ${n.wave}`);
      }
    });
    for (const n of p.nodes) if (n.wave !== null && !seen.has(n.name)) out.push(`pool ${p.name}: ${n.name} has wave ${n.wave} but is in no wave`);
  }
  return out;
}

/** A full git object id: SHA-1 (40 hex) or SHA-256 (64 hex). Never an option, a ref or a range. */
const FULL_OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * The fields of a plan file that make bootcplan read files or run git (docs/safety.md "What a
 * plan file can and cannot make bootcplan do"): the spec commit must be a full hex object id (a commit such as `--output=<path>` would
 * be an option to git), and the spec path a file path.
 */
export function checkProvenanceFields(plan: Plan): void {
  const { commit, path } = plan.spec;
  if (commit !== null && (typeof commit !== 'string' || !FULL_OBJECT_ID.test(commit))) {
    throw new InputError(
      `plan ${plan.id}: spec.commit ${JSON.stringify(commit).slice(0, 80)} is not a full git object id`,
      [],
      'plan files record the commit as 40 (or 64) hex digits; plan again instead of editing the file',
    );
  }
  if (typeof path !== 'string' || path === '' || path.includes('\0')) {
    throw new InputError(`plan ${plan.id}: spec path is not a file path`, [], 'plan again instead of editing the file');
  }
}

/**
 * "What was reviewed is what runs": the spec a saved plan was made from, read again (`text`,
 * from `where`), must hash to the sha256 the plan recorded (exit 3 otherwise).
 */
export function checkSpecHash(plan: Plan, text: string, where: string): void {
  const sha = createHash('sha256').update(text).digest('hex');
  if (sha !== plan.spec.sha256) {
    throw new StalePlanError(`the spec changed since the plan was made`, [
      `plan ${plan.id} was made from a spec with sha256 ${plan.spec.sha256.slice(0, 16)}…`,
      `${where} now has sha256 ${sha.slice(0, 16)}…`,
    ]);
  }
}
