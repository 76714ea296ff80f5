/**
 * A small declarative schema for YAML inputs that reports every violation with its
 * field path. Semantic rules that need more than one field live in `check` hooks.
 */
import { InternalError } from './internal.ts';
import { type Diagnostic, type DiagnosticInput, type SourceMap, diagnosticAt, joinPath } from './diagnostics.ts';

export interface Ctx {
  map: SourceMap | null;
  report(d: DiagnosticInput): void;
}

export type Schema = (
  | ObjectSchema
  | { type: 'array'; items: Schema; maxItems?: number; minItems?: number; check?: Hook<unknown[]> }
  | { type: 'string'; enum?: readonly string[]; pattern?: RegExp; patternText?: string; minLength?: number; maxLength?: number; check?: Hook<string> }
  | { type: 'integer'; min?: number; max?: number; check?: Hook<number> }
  | { type: 'number'; min?: number; max?: number }
  | { type: 'boolean' }
  | { type: 'map'; values: Schema }
  | { type: 'any'; expected: string; check: Hook }
) &
  SchemaCommon;

/** What every schema node may carry besides its type. */
interface SchemaCommon {
  /** `null` is a value here (JSON documents written by bootcplan itself, e.g. plan files). */
  nullable?: boolean;
  /** What the field means, for the JSON Schema and the spec reference in docs/ (json-schema.ts). */
  description?: string;
  /** The value an absent field stands for, when it is one value (JSON Schema `default`). */
  default?: unknown;
  /** The default in words, when it depends on something else (e.g. the pool's role). */
  defaultText?: string;
  /**
   * JSON Schema keywords for what a `check` hook enforces (enums, patterns, if/then rules), kept
   * next to the hook so that the published schema and the validator stay one source. Rules no
   * JSON Schema can state (duplicates, cron, time zones) stay with the hook alone.
   */
  json?: Record<string, unknown>;
}

export interface ObjectSchema extends SchemaCommon {
  type: 'object';
  fields: Record<string, Schema>;
  required?: readonly string[];
  /** Extra rules across fields (CEL-like). Runs only when the object itself has the right type. */
  check?: Hook<Record<string, unknown>>;
  /** Fields not listed are allowed and not checked (formats that may grow, e.g. plan files). */
  open?: boolean;
  /** Hint for unknown fields, e.g. the list of allowed names. */
}

/** Field `name` of `schema`, which the caller's own schema makes an object schema (checked: internal error if not). */
export function objectFieldOf(schema: ObjectSchema, name: string): ObjectSchema {
  const field = schema.fields[name];
  if (field?.type !== 'object') throw new InternalError(`schema field ${name} is not an object schema`);
  return field;
}

/**
 * The largest value of an int32, the type the Kubernetes API stores for counts and durations
 * (IntOrString maxUnavailable, *Seconds fields). A spec value above it could never be written.
 */
export const INT32_MAX = 2147483647;

type CountOrPercentParse = (raw: unknown) => { ok: true } | { ok: false; code: string; message: string; expected: string; hint?: string };

/**
 * A count or a percentage field, as Kubernetes' IntOrString budgets are written (a pool's and the
 * cluster's maxUnavailable, a Fleet's maxConcurrency): an int32 >= 1, or digits then "%" for 1..100
 * percent. One JSON Schema for all of them; the field's own parser reports what is wrong.
 */
export function countOrPercentSchema(o: {
  expected: string;
  parse: CountOrPercentParse;
  description: string;
  default?: unknown;
  defaultText?: string;
}): Schema {
  return {
    type: 'any',
    expected: o.expected,
    description: o.description,
    ...(o.default !== undefined ? { default: o.default } : {}),
    ...(o.defaultText !== undefined ? { defaultText: o.defaultText } : {}),
    json: {
      oneOf: [
        { type: 'integer', minimum: 1, maximum: INT32_MAX },
        { type: 'string', pattern: '^0*([1-9][0-9]?|100)%$' },
      ],
    },
    check(value, path, ctx) {
      const r = o.parse(value);
      if (!r.ok) ctx.report({ code: r.code, path, message: r.message, expected: r.expected, hint: r.hint });
    },
  };
}

/** A rule a schema node adds; it runs only on a value of the node's type (a string for a string node, a mapping for an object node). */
type Hook<T = unknown> = (value: T, path: string, ctx: Ctx) => void;

export function validate(schema: Schema, value: unknown, path: string, ctx: Ctx): void {
  switch (schema.type) {
    case 'object':
      return validateObject(schema, value, path, ctx);
    case 'array':
      return validateArray(schema, value, path, ctx);
    case 'string':
      return validateString(schema, value, path, ctx);
    case 'integer':
      return validateInteger(schema, value, path, ctx);
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        ctx.report({ code: 'wrong-type', path, message: `expected a number, got ${describeType(value)}`, expected: expectedOf(schema) });
      } else if ((schema.min !== undefined && value < schema.min) || (schema.max !== undefined && value > schema.max)) {
        ctx.report({ code: 'out-of-range', path, message: `${value} is out of range`, expected: expectedOf(schema) });
      }
      return;
    }
    case 'boolean': {
      if (typeof value !== 'boolean') {
        ctx.report({
          code: 'wrong-type',
          path,
          message: `expected true or false, got ${describeType(value)}`,
          expected: 'true or false',
          hint: typeof value === 'string' ? 'remove the quotes' : undefined,
        });
      }
      return;
    }
    case 'map': {
      if (!isPlainObject(value)) {
        ctx.report({ code: 'wrong-type', path, message: `expected a mapping, got ${describeType(value)}`, expected: 'a mapping' });
        return;
      }
      for (const [k, v] of Object.entries(value)) validate(schema.values, v, joinPath(path, k), ctx);
      return;
    }
    case 'any':
      schema.check(value, path, ctx);
      return;
  }
}

function validateObject(schema: Extract<Schema, { type: 'object' }>, value: unknown, path: string, ctx: Ctx): void {
  if (!isPlainObject(value)) {
    ctx.report({ code: 'wrong-type', path, message: `expected a mapping, got ${describeType(value)}`, expected: 'a mapping of fields' });
    return;
  }
  const allowed = Object.keys(schema.fields);
  for (const [k, v] of Object.entries(value)) {
    const child = joinPath(path, k);
    // Own properties only: a key such as "constructor" must not find Object.prototype's.
    const fieldSchema = Object.hasOwn(schema.fields, k) ? schema.fields[k] : undefined;
    if (!fieldSchema) {
      if (schema.open) continue;
      const near = nearest(k, allowed);
      ctx.report({
        code: 'unknown-field',
        path: child,
        atKey: true,
        message: `unknown field "${k}"`,
        expected: `one of: ${allowed.join(', ')}`,
        hint: near ? `did you mean "${near}"?` : 'remove it; unknown fields are rejected so typos cannot pass silently',
      });
      continue;
    }
    if (v === null && fieldSchema.nullable) continue;
    if (v === null || v === undefined) {
      ctx.report({
        code: 'wrong-type',
        path: child,
        message: `"${k}" has no value`,
        expected: expectedOf(fieldSchema),
        hint: 'give it a value or remove the line',
      });
      continue;
    }
    validate(fieldSchema, v, child, ctx);
  }
  for (const r of schema.required ?? []) {
    if (!Object.hasOwn(value, r)) {
      ctx.report({
        code: 'required-field',
        path: joinPath(path, r),
        message: `required field "${r}" is missing`,
        expected: expectedOf(schema.fields[r]),
      });
    }
  }
  schema.check?.(value, path, ctx);
}

function validateArray(schema: Extract<Schema, { type: 'array' }>, value: unknown, path: string, ctx: Ctx): void {
  if (!Array.isArray(value)) {
    ctx.report({ code: 'wrong-type', path, message: `expected a list, got ${describeType(value)}`, expected: `a list of ${expectedOf(schema.items)}` });
    return;
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    ctx.report({
      code: 'too-many-items',
      path,
      message: `Too many: ${value.length}: must have at most ${schema.maxItems} items`,
      expected: `at most ${schema.maxItems} entries`,
    });
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    ctx.report({ code: 'too-few-items', path, message: `must have at least ${schema.minItems} items`, expected: `at least ${schema.minItems} entries` });
  }
  value.forEach((item, i) => {
    const child = joinPath(path, i);
    if (item === null || item === undefined) {
      ctx.report({ code: 'wrong-type', path: child, message: 'empty list entry', expected: expectedOf(schema.items) });
      return;
    }
    validate(schema.items, item, child, ctx);
  });
  schema.check?.(value, path, ctx);
}

function validateString(schema: Extract<Schema, { type: 'string' }>, value: unknown, path: string, ctx: Ctx): void {
  if (typeof value !== 'string') {
    ctx.report({
      code: 'wrong-type',
      path,
      message: `expected a string, got ${describeType(value)}`,
      expected: expectedOf(schema),
      hint: typeof value === 'number' || typeof value === 'boolean' ? 'quote the value' : undefined,
    });
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    const near = nearest(value, schema.enum);
    ctx.report({
      code: 'invalid-enum',
      path,
      message: `Unsupported value: "${value}"`,
      expected: `one of ${schema.enum.map((e) => `"${e}"`).join(', ')}`,
      hint: near ? `did you mean "${near}"? (values are case-sensitive)` : undefined,
    });
    return;
  }
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    ctx.report({ code: 'too-short', path, message: `must be at least ${schema.minLength} characters long`, expected: expectedOf(schema) });
    return;
  }
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    ctx.report({ code: 'too-long', path, message: `Too long: may not be more than ${schema.maxLength} bytes`, expected: expectedOf(schema) });
    return;
  }
  if (schema.pattern && !schema.pattern.test(value)) {
    ctx.report({
      code: 'invalid-format',
      path,
      message: `"${value}" does not match the expected format`,
      expected: schema.patternText ?? String(schema.pattern),
    });
    return;
  }
  schema.check?.(value, path, ctx);
}

function validateInteger(schema: Extract<Schema, { type: 'integer' }>, value: unknown, path: string, ctx: Ctx): void {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    ctx.report({
      code: 'wrong-type',
      path,
      message: `expected a whole number, got ${describeType(value)}`,
      expected: expectedOf(schema),
      hint: typeof value === 'string' ? 'remove the quotes' : undefined,
    });
    return;
  }
  if (schema.min !== undefined && value < schema.min) {
    ctx.report({
      code: value < 0 ? 'negative-value' : 'out-of-range',
      path,
      message: `${value} is below the minimum of ${schema.min}`,
      expected: expectedOf(schema),
    });
    return;
  }
  if (schema.max !== undefined && value > schema.max) {
    ctx.report({ code: 'out-of-range', path, message: `${value} is above the maximum of ${schema.max}`, expected: expectedOf(schema) });
    return;
  }
  schema.check?.(value, path, ctx);
}

export function expectedOf(schema: Schema | undefined): string {
  if (!schema) return 'a value';
  switch (schema.type) {
    case 'object':
      return 'a mapping';
    case 'array':
      return `a list of ${expectedOf(schema.items)}`;
    case 'string':
      if (schema.enum) return `one of ${schema.enum.map((e) => `"${e}"`).join(', ')}`;
      return schema.patternText ?? 'a string';
    case 'integer':
      if (schema.min !== undefined && schema.max !== undefined) return `a whole number from ${schema.min} to ${schema.max}`;
      if (schema.min !== undefined) return `a whole number >= ${schema.min}`;
      return 'a whole number';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'map':
      return 'a mapping';
    case 'any':
      return schema.expected;
  }
}

/** How a value reads in an error message: "a list", "the string \"x\"", "number 3". */
export function describeType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the string "${v}"`;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- says to no-base-to-string that no object is left here
  return `${typeof v} ${String(v as number | boolean | bigint | symbol | undefined)}`;
}

/**
 * The index of each item's first appearance by its `name` (items without a string name are
 * skipped); `onRepeat` hears of every later item with a name seen before, and where the first is.
 */
export function firstIndexByName(list: readonly unknown[], onRepeat: (name: string, index: number, first: number) => void): Map<string, number> {
  const seen = new Map<string, number>();
  list.forEach((item, i) => {
    if (!isPlainObject(item) || typeof item.name !== 'string') return;
    const first = seen.get(item.name);
    if (first === undefined) seen.set(item.name, i);
    else onRepeat(item.name, i, first);
  });
  return seen;
}

/** The names of a list's entries that have one (`name`, a string), in order; none when it is no list. */
export function namesOf(list: unknown): string[] {
  return (Array.isArray(list) ? list : [])
    .filter(isPlainObject)
    .map((e) => e.name)
    .filter((n): n is string => typeof n === 'string');
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Closest candidate by edit distance, for "did you mean" hints (case-insensitive match first). */
export function nearest(word: string, candidates: readonly string[]): string | null {
  const lower = word.toLowerCase();
  const exact = candidates.find((c) => c.toLowerCase() === lower);
  if (exact) return exact;
  let best: string | null = null;
  let bestD = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const c of candidates) {
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best;
}

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
 * neighbouring letters cost 1 each, so the most common typo (`ymal`, `fsih`) is one step from
 * what was meant, and not two, as far as the other candidates.
 */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2] + 1);
      row.push(d);
    }
    before = prev;
    prev = row;
  }
  return prev[b.length];
}

export function collect(map: SourceMap | null): { ctx: Ctx; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  return { diagnostics, ctx: { map, report: (d) => diagnostics.push(diagnosticAt(map, d)) } };
}
