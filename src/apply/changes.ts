/**
 * Writing the plan's object changes (DESIGN §7): each change is written only when the
 * cluster still needs it (the fresh re-plan has it as a change), as a create or a JSON
 * patch whose `test` operations guard what the plan saw. A failed guard means the object
 * moved since the plan was made: the apply stops as stale (exit 3). A change's `waitAfter`
 * is honoured before the next one is written.
 */
import type { Operation } from 'fast-json-patch';
import type { Plan, PlanChange } from '../plan/types.ts';
import { isKObject } from '../cluster/kinds.ts';
import { StalePlanError, ClusterApiError, InputError } from '../base/errors.ts';
import { ConflictError, PreconditionFailedError, AlreadyExistsError } from './driver.ts';
import type { ApplyContext } from './context.ts';
import { remainingWorkDifference } from '../plan/saved/remaining-work.ts';
import { changeKey } from '../plan/changes.ts';
import { peek, withoutFingerprint } from './views.ts';

/** Retries transient conflicts (HTTP 409) a few times, at once. */
export async function retry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= 8) throw err;
    }
  }
}

/**
 * Writes change `c` of the saved plan unless `fresh` (the plan of the cluster as it is now)
 * has it in the cluster already. `dropPaused`: leave out the MachineConfigPool `spec.paused`
 * switch (the MCO runner pauses and unpauses the pool itself).
 */
export async function applyChange(ctx: ApplyContext, c: PlanChange, fresh: Plan, opts: { dropPaused?: boolean } = {}) {
  const key = changeKey(c);
  const f = fresh.changes.find((x) => changeKey(x) === key);
  const effective = (x: PlanChange) => (opts.dropPaused ? x.patch.filter((op) => op.path !== '/spec/paused') : x.patch);
  if (c.action === 'noop' || !f || f.action === 'noop' || (f.action === 'update' && effective(f).length === 0)) return; // in the cluster already
  await ctx.lease.assertHeld();
  try {
    if (c.action === 'create') {
      const object = c.object;
      if (!isKObject(object)) throw new InputError(`${c.address}: the plan's object to create is not a Kubernetes object (apiVersion, kind, metadata.name)`);
      try {
        await retry(() => ctx.driver.create(object));
      } catch (err) {
        if (!(err instanceof AlreadyExistsError)) throw err;
        throw new PreconditionFailedError(`${c.address} exists already`, '');
      }
    } else {
      const ops: Operation[] = effective(c);
      if (ops.length) await retry(() => ctx.driver.patch({ apiVersion: c.apiVersion, kind: c.kind, name: c.name, namespace: c.namespace }, ops));
    }
  } catch (err) {
    if (err instanceof PreconditionFailedError) {
      const diff = await peek(ctx.driver, (s) => remainingWorkDifference(ctx.plan, ctx.replan(withoutFingerprint(s)), s));
      throw new StalePlanError(`${c.address} changed since plan ${ctx.plan.id} was made (${err.message})`, diff.length ? diff : [`~ ${c.address}: ${err.message}`]);
    }
    throw err;
  }
  ctx.emit({ type: 'change', address: c.address, pool: c.pool ?? undefined, message: c.description ?? c.reason });
  const wait = c.waitAfter;
  if (wait) {
    ctx.emit({ type: 'wait', address: c.address, message: wait.description });
    const ok = await ctx.driver.waitFor((s) => {
      if (wait.kind === 'skew-enforcement-not-automatic') return s.machineConfiguration?.status?.bootImageSkewEnforcementStatus?.mode !== 'Automatic';
      return true;
    }, { timeoutSeconds: ctx.timeouts.waitAfterSeconds, description: wait.description });
    if (!ok) throw new ClusterApiError(`timed out after ${ctx.timeouts.waitAfterSeconds}s waiting until ${wait.description}`, 'check the machine-config ClusterOperator, then run apply again: it continues from here');
  }
}
