/**
 * Writing the plan's object changes (docs/design.md §7): each change is written only when the
 * cluster still needs it (the fresh re-plan has it as a change), as a create or a JSON
 * patch whose `test` operations guard what the plan saw. A failed guard means the object
 * moved since the plan was made: the apply stops as stale (exit 3). A change's `waitAfter`
 * is honoured before the next one is written.
 */
import type { Operation } from 'fast-json-patch';
import type { Plan, PlanChange } from '../../plan/types.ts';
import { isKObject } from '../../cluster/kinds.ts';
import type { KObject } from '../../cluster/types.ts';
import fjp from 'fast-json-patch';
import { StalePlanError, ClusterApiError, InputError, RolloutHaltedError } from '../../base/errors.ts';
import { retry } from './retry.ts';
import { PreconditionFailedError, AlreadyExistsError, NotFoundError } from '../ports/driver.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import { deepEqual } from '../../base/equal.ts';
import type { RunContext } from './context.ts';
import { remainingWorkDifference } from '../../plan/saved/remaining-work.ts';
import { changeKey } from '../../plan/changes.ts';
import { peek, withoutFingerprint } from '../ports/views.ts';

/**
 * Writes change `c` of the saved plan unless `fresh` (the plan of the cluster as it is now)
 * has it in the cluster already. `dropPaused`: leave out the MachineConfigPool `spec.paused`
 * switch (the MCO runner pauses and unpauses the pool itself).
 */
export async function applyChange(ctx: RunContext, c: PlanChange, fresh: Plan, opts: { dropPaused?: boolean } = {}) {
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
    } else if (c.action === 'delete') {
      await deleteGuarded(ctx, c);
    } else {
      const ops: Operation[] = effective(c);
      if (ops.length) await retry(() => ctx.driver.patch({ apiVersion: c.apiVersion, kind: c.kind, name: c.name, namespace: c.namespace }, ops));
    }
  } catch (err) {
    if (err instanceof PreconditionFailedError) {
      const diff = await peek(ctx.driver, (s) => remainingWorkDifference(ctx.plan, ctx.replan(withoutFingerprint(s)), s));
      throw new StalePlanError(
        `${c.address} changed since plan ${ctx.plan.id} was made (${err.message})`,
        diff.length ? diff : [`~ ${c.address}: ${err.message}`],
      );
    }
    throw err;
  }
  ctx.emit({ type: 'change', address: c.address, pool: c.pool ?? undefined, message: c.description ?? c.reason });
  if (c.waitAfter) {
    ctx.emit({ type: 'wait', address: c.address, message: c.waitAfter.description });
    const w = c.waitAfter;
    const ok = await ctx.driver.waitFor(
      (s) => {
        if (w.kind === 'skew-enforcement-not-automatic') return s.machineConfiguration?.status?.bootImageSkewEnforcementStatus?.mode !== 'Automatic';
        if (w.kind === 'pool-rendered') return renderedAgain(s, w.pool, w.rendered, c.before);
        return true;
      },
      { timeoutSeconds: ctx.timeouts.waitAfterSeconds, description: w.description },
    );
    if (typeof ok === 'string') await renderedElsewhere(ctx, c, ok);
    if (!ok)
      throw new ClusterApiError(
        `timed out after ${ctx.timeouts.waitAfterSeconds}s waiting until ${c.waitAfter.description}`,
        'check the machine-config ClusterOperator, then run apply again: it continues from here',
      );
  }
}

/**
 * A delete guarded like a patch: the object as the driver sees it now must pass the change's
 * `test` operations, and is deleted only at the resourceVersion read (DeleteOptions
 * preconditions), so an object someone changed in between is never deleted.
 */
async function deleteGuarded(ctx: RunContext, c: PlanChange): Promise<void> {
  const ref = { apiVersion: c.apiVersion, kind: c.kind, name: c.name, namespace: c.namespace };
  const obj = await peek(ctx.driver, (s) => structuredClone(objectIn(s, c)));
  if (!obj) return; // gone already: what the delete wanted
  for (const op of c.patch) {
    if (op.op !== 'test') continue;
    const actual: unknown = fjp.getValueByPointer(obj, op.path);
    if (!deepEqual(actual, op.value))
      throw new PreconditionFailedError(
        `${c.address}: ${op.path} is ${JSON.stringify(actual) ?? 'absent'}, the plan expected ${JSON.stringify(op.value)}`,
        op.path,
      );
  }
  await retry(() =>
    ctx.driver.delete(ref, { resourceVersion: obj.metadata.resourceVersion ?? null }).catch((err) => {
      if (err instanceof NotFoundError) return;
      throw err;
    }),
  );
}

/** The object a change is about, in a snapshot (the kinds a rollback deletes: MachineConfigs). */
function objectIn(s: ClusterSnapshot, c: PlanChange): KObject | undefined {
  return c.kind === 'MachineConfig' ? s.machineConfigs.find((m) => m.metadata.name === c.name) : undefined;
}

/**
 * After a rollback's MachineConfig write: true once the pool's rendered config is `rendered` (the
 * pre-run one) again; the name of another rendered config the MCO made instead (its content is
 * not the pre-run one: another MachineConfig of the pool changed since the run started); null
 * while the MCO has not rendered yet (the pool still names the run's config).
 */
function renderedAgain(s: ClusterSnapshot, pool: string, rendered: string, before: unknown): true | string | null {
  const mcp = s.machineConfigPools.find((p) => p.metadata.name === pool);
  const now: unknown = mcp?.spec?.configuration?.name;
  if (now === rendered) return true;
  if (typeof now !== 'string') return null;
  const runImage = (before as { spec?: { osImageURL?: unknown } } | null)?.spec?.osImageURL;
  const osImageURL = s.machineConfigs.find((m) => m.metadata.name === now)?.spec?.osImageURL;
  return osImageURL === runImage ? null : now;
}

/**
 * The MCO rendered another config than the pre-run one: none of the pool's nodes ran it, so the
 * rollback stops before any node moves. The pool is paused already (the MCO pool runner pauses
 * it before this write), and stays so: exit 5.
 */
async function renderedElsewhere(ctx: RunContext, c: PlanChange, got: string): Promise<never> {
  const w = c.waitAfter as Extract<NonNullable<PlanChange['waitAfter']>, { kind: 'pool-rendered' }>;
  const reason = `rollback stopped: the MCO rendered ${got}, not the pre-run ${w.rendered}: another MachineConfig of the pool changed since the run started, and no node of the pool ran that config`;
  ctx.book.pool(w.pool).halted = { node: null, reason };
  await ctx.book.save();
  ctx.emit({ type: 'halt', pool: w.pool, message: reason });
  throw new RolloutHaltedError(`pool ${w.pool}: ${reason}`, [
    `MachineConfigPool ${w.pool} is paused; no node moved`,
    'find the MachineConfig that changed (oc get machineconfig --sort-by=.metadata.creationTimestamp), then decide by hand',
  ]);
}
