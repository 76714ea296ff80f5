/**
 * The change constructors: a plan change drafted from a live object and the managed fields
 * bootcplan wants on it. `order` is assigned once every change is drafted
 * (src/plan/planner.ts); the patches and their preconditions come from src/plan/patch.ts.
 */
import type { KObject } from '../cluster/types.ts';
import { isPlainObject } from '../base/schema.ts';
import { deepEqual } from '../base/equal.ts';
import { buildPatch, pickPaths, pickPathsWithParents, leafPaths, jsonPointer } from './patch.ts';
import type { PlanChange, ChangeReason, Risk } from './types.ts';

/**
 * The identity of a change within a plan: its object and the fields it manages (two levels
 * down, e.g. `spec.bootImageSkewEnforcement`). Several changes to one object are separate,
 * ordered steps that manage different fields (the skew-enforcement step, then the managers
 * step once the status left Automatic: MachineConfiguration CEL rules), so a saved plan and a
 * fresh one match them one to one, whichever of the steps are in the cluster already.
 */
export function changeKey(c: Pick<PlanChange, 'address' | 'after' | 'before'>): string {
  const managed = c.after ?? c.before;
  const fields = isPlainObject(managed)
    ? Object.entries(managed)
        .flatMap(([k, v]) => (isPlainObject(v) ? Object.keys(v).map((k2) => `${k}.${k2}`) : [k]))
        .sort()
    : [];
  return `${c.address} ${fields.join(',')}`;
}

/** Changes built so far, before `order` is assigned. */
export type DraftChange = Omit<PlanChange, 'order'>;

/** An update (or noop) of the managed fields `after` on an existing object. */
export function updateChange(
  obj: KObject,
  after: Record<string, unknown>,
  pool: string | null,
  riskIfChanged: Risk,
  reasonOf: (changedPaths: string[]) => ChangeReason,
  description: string,
): DraftChange {
  const paths = leafPaths(after);
  const before = pickPathsWithParents(obj, paths);
  const patch = buildPatch(before, after);
  const changed = paths.filter((pp) => !deepEqual(pickPaths(before, [pp]), pickPaths(after, [pp]))).map((pp) => pp.join('.'));
  const action = patch.length ? 'update' : 'noop';
  return {
    address: obj.metadata.namespace ? `${obj.kind}/${obj.metadata.namespace}/${obj.metadata.name}` : `${obj.kind}/${obj.metadata.name}`,
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? null,
    name: obj.metadata.name,
    action,
    reason: reasonOf(changed.length ? changed : paths.map((x) => x.join('.'))),
    patch,
    before,
    after,
    risk: action === 'noop' ? 'none' : riskIfChanged,
    pool,
    description,
  };
}

/**
 * An update of one field of `obj`, replaced as a whole (lists and unions such as
 * bootImageSkewEnforcement must not be merged field by field: a stale `manual` next to
 * `mode: None` breaks the CEL rule). The patch tests the old value first; when the field
 * or its parents are missing, it adds the first missing parent (never a whole `spec`).
 */
export function fieldChange(obj: KObject, path: string[], value: unknown, reason: ChangeReason, description: string): DraftChange {
  const after: Record<string, unknown> = {};
  let cur = after;
  path.forEach((k, i) => {
    if (i === path.length - 1) {
      cur[k] = value;
      return;
    }
    const child: Record<string, unknown> = {};
    cur[k] = child;
    cur = child;
  });
  const draft = updateChange(obj, after, null, 'none', () => reason, description);
  // The live object's existing parents, so that buildPatch adds below them.
  const skeleton: Record<string, unknown> = pickPaths(obj, [path]);
  let src: unknown = obj;
  let dst = skeleton;
  for (const k of path.slice(0, -1)) {
    src = isPlainObject(src) ? src[k] : undefined;
    if (!isPlainObject(src)) break;
    const child = dst[k];
    if (isPlainObject(child)) dst = child;
    else {
      const made: Record<string, unknown> = {};
      dst[k] = made;
      dst = made;
    }
  }
  const oldValue = pickPaths(obj, [path]);
  const leafBefore = path.reduce<unknown>((o, k) => (isPlainObject(o) ? o[k] : undefined), oldValue);
  const patch =
    leafBefore !== undefined && !deepEqual(leafBefore, value)
      ? [
          { op: 'test' as const, path: jsonPointer(path), value: leafBefore },
          { op: 'replace' as const, path: jsonPointer(path), value },
        ]
      : buildPatch(skeleton, after);
  draft.patch = patch;
  draft.action = patch.length ? 'update' : 'noop';
  draft.risk = 'none';
  return draft;
}
