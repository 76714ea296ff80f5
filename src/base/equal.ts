/**
 * Structural equality of JSON-like values (objects, arrays, primitives). A key whose value
 * is `undefined` counts as absent, as it does once the value is written as JSON: the planner
 * compares what it would write with what it read, and the stale-plan check compares a saved
 * plan with a fresh one.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  const ea = definedEntries(a);
  const eb = new Map(definedEntries(b));
  return ea.length === eb.size && ea.every(([k, v]) => eb.has(k) && deepEqual(v, eb.get(k)));
}

/** The own enumerable entries of an object whose value is not undefined. */
function definedEntries(o: object): [string, unknown][] {
  return Object.entries(o).filter(([, v]) => v !== undefined);
}
