/**
 * JSON patches with preconditions. Every `replace` and `remove` is preceded by a `test` of
 * the value the plan saw, so a write against a cluster that moved since the plan fails
 * instead of overwriting someone else's change (RFC 6902 §4.6; the API server applies
 * `application/json-patch+json` atomically). Lists are replaced whole, guarded by a test
 * of the old list: custom resources have no strategic merge, and index paths into a list
 * that someone reordered would hit the wrong entry.
 */
import type { Operation } from 'fast-json-patch';
import { isPlainObject } from '../base/schema.ts';
import { deepEqual } from '../base/equal.ts';

/** One key as a JSON pointer token (RFC 6901 §3: `~` is written `~0`, `/` is written `~1`). */
function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The JSON pointer (RFC 6901) of a field path, e.g. ['spec', 'a/b'] -> `/spec/a~1b`. */
export function jsonPointer(path: readonly string[]): string {
  return '/' + path.map(escapePointer).join('/');
}

/** Patch turning `before` into `after` (both the managed subset of one object). */
export function buildPatch(before: unknown, after: unknown, base = ''): Operation[] {
  const ops: Operation[] = [];
  walk(before, after, base, ops);
  return ops;
}

function walk(before: unknown, after: unknown, path: string, ops: Operation[]) {
  if (isPlainObject(before) && isPlainObject(after)) {
    for (const [k, v] of Object.entries(after)) {
      if (v === undefined) continue;
      const p = `${path}/${escapePointer(k)}`;
      if (!(k in before) || before[k] === undefined) ops.push({ op: 'add', path: p, value: v });
      else walk(before[k], v, p, ops);
    }
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined || (k in after && after[k] !== undefined)) continue;
      const p = `${path}/${escapePointer(k)}`;
      ops.push({ op: 'test', path: p, value: v }, { op: 'remove', path: p });
    }
    return;
  }
  if (deepEqual(before, after)) return;
  ops.push({ op: 'test', path, value: before }, { op: 'replace', path, value: after });
}

/** The subset of `obj` at the given paths (only those present). */
export function pickPaths(obj: unknown, paths: readonly (readonly string[])[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    let src: unknown = obj;
    for (const k of path) src = isPlainObject(src) ? src[k] : undefined;
    if (src === undefined) continue;
    let dst: Record<string, unknown> = out;
    path.forEach((k, i) => {
      if (i === path.length - 1) {
        dst[k] = structuredClone(src);
        return;
      }
      dst = childObject(dst, k);
    });
  }
  return out;
}

/**
 * Like pickPaths, but also keeps (as empty objects) every parent object that exists on
 * `obj` along each path. A patch built against this `before` adds new fields below the
 * parents that exist (`add /spec/maxUnavailable`) instead of adding a whole parent
 * (`add /spec`), which would replace everything else in it.
 */
export function pickPathsWithParents(obj: unknown, paths: readonly (readonly string[])[]): Record<string, unknown> {
  const out = pickPaths(obj, paths);
  for (const path of paths) {
    let src: unknown = obj;
    let dst: Record<string, unknown> = out;
    for (const k of path.slice(0, -1)) {
      src = isPlainObject(src) ? src[k] : undefined;
      if (!isPlainObject(src)) break;
      dst = childObject(dst, k);
    }
  }
  return out;
}

/** The mapping under `k` of `o`, made (empty) when there is none. */
function childObject(o: Record<string, unknown>, k: string): Record<string, unknown> {
  const child = o[k];
  if (isPlainObject(child)) return child;
  const made: Record<string, unknown> = {};
  o[k] = made;
  return made;
}

/** Paths of all leaves of a nested object (arrays are leaves). */
export function leafPaths(obj: unknown, prefix: string[] = []): string[][] {
  if (!isPlainObject(obj)) return [prefix];
  return Object.entries(obj).flatMap(([k, v]) => (v === undefined ? [] : leafPaths(v, [...prefix, k])));
}
