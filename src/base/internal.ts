/**
 * Invariants the types cannot carry (docs/architecture.md "Types"): a lookup that the code's own
 * construction guarantees (a map filled from the same list it is read back with) is checked, and
 * a miss throws a named `internal: ...` error naming what was looked for, instead of a `!` that
 * would let `undefined` run on into a confusing failure further away.
 */
import { NamedError } from './errors.ts';

/** A broken invariant of bootcplan itself, never the user's input: the message starts `internal: `. */
export class InternalError extends NamedError {
  constructor(what: string) {
    super(`internal: ${what}`);
  }
}

/** `map.get(key)`, which the caller's construction guarantees is there; `what` names it for the error. */
export function mustGet<K, V>(map: ReadonlyMap<K, V>, key: K, what: string): V {
  const v = map.get(key);
  if (v === undefined) throw new InternalError(`${what} ${String(key)} is missing`);
  return v;
}

/** The first item of `items` that `match` holds for, which the caller guarantees exists. */
export function mustFind<T>(items: readonly T[], match: (item: T) => boolean, what: string): T {
  const found = items.find(match);
  if (found === undefined) throw new InternalError(`${what} is missing`);
  return found;
}
