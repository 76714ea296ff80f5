/**
 * The validator's schema (schema.ts) as a JSON Schema (draft-07, what editors' YAML servers read) and as reference rows,
 * so that editors, the spec reference (docs/spec.md) and bootcplan itself read one source. Each
 * schema node gives its type, bounds, enum, pattern, required fields, description and default;
 * a `check` hook contributes the JSON Schema keywords declared next to it (`json`). Rules only
 * the hooks can state (duplicate names, cron fields, time zones) are left to bootcplan.
 */
import type { Schema } from './schema.ts';
import { expectedOf } from './schema.ts';
import { valueText } from './json-text.ts';

export type JsonSchema = Record<string, unknown>;

export function toJsonSchema(schema: Schema): JsonSchema {
  const out: JsonSchema = {};
  // Editors show the description on hover: a default in words goes there (JSON Schema's
  // `default` takes only a value).
  const said = schema.defaultText ? `Default: ${schema.defaultText}.` : '';
  if (schema.description || said) out.description = [schema.description, said].filter(Boolean).join(' ');
  if (schema.default !== undefined) out.default = schema.default;
  Object.assign(out, typeKeywords(schema));
  for (const [k, v] of Object.entries(schema.json ?? {})) {
    const had = out.required;
    out[k] = k === 'required' && Array.isArray(had) && Array.isArray(v) ? union(had, v) : v;
  }
  if (schema.nullable && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/** The items of both lists, each once, in order (a `required` from the hook joins the fields'). */
const union = (a: readonly unknown[], b: readonly unknown[]): unknown[] => [...new Set([...a, ...b])];

function typeKeywords(schema: Schema): JsonSchema {
  switch (schema.type) {
    case 'object': {
      const properties: Record<string, JsonSchema> = {};
      for (const [k, v] of Object.entries(schema.fields)) properties[k] = toJsonSchema(v);
      return {
        type: 'object',
        properties,
        ...(schema.required?.length ? { required: [...schema.required] } : {}),
        ...(schema.open ? {} : { additionalProperties: false }),
      };
    }
    case 'array':
      return {
        type: 'array',
        items: toJsonSchema(schema.items),
        ...(schema.minItems !== undefined ? { minItems: schema.minItems } : {}),
        ...(schema.maxItems !== undefined ? { maxItems: schema.maxItems } : {}),
      };
    case 'string':
      return {
        type: 'string',
        ...(schema.enum ? { enum: [...schema.enum] } : {}),
        ...(schema.minLength !== undefined ? { minLength: schema.minLength } : {}),
        ...(schema.maxLength !== undefined ? { maxLength: schema.maxLength } : {}),
        ...(schema.pattern ? { pattern: schema.pattern.source } : {}),
      };
    case 'integer':
    case 'number':
      return {
        type: schema.type,
        ...(schema.min !== undefined ? { minimum: schema.min } : {}),
        ...(schema.max !== undefined ? { maximum: schema.max } : {}),
      };
    case 'boolean':
      return { type: 'boolean' };
    case 'map':
      return { type: 'object', additionalProperties: toJsonSchema(schema.values) };
    case 'any':
      return {};
  }
}

/** One field of the reference: its path (`spec.pools[].name`), type, default and meaning. */
interface ReferenceRow {
  path: string;
  type: string;
  required: boolean;
  default: string;
  description: string;
}

/** Every field below `schema`, depth first in declaration order. */
export function referenceRows(schema: Schema, path = ''): ReferenceRow[] {
  const rows: ReferenceRow[] = [];
  const walk = (s: Schema, p: string) => {
    if (s.type === 'object') {
      for (const [k, v] of Object.entries(s.fields)) {
        const child = p ? `${p}.${k}` : k;
        const extra = s.json?.required;
        const required = !!s.required?.includes(k) || (Array.isArray(extra) && extra.includes(k));
        rows.push({ path: child, type: typeText(v), required, default: defaultText(v), description: v.description ?? '' });
        walk(v, child);
      }
    } else if (s.type === 'array') {
      walk(s.items, `${p}[]`);
    }
  };
  walk(schema, path);
  return rows;
}

function typeText(s: Schema): string {
  switch (s.type) {
    case 'object':
      return 'mapping';
    case 'array':
      return s.items.type === 'object' ? 'list of mappings' : `list of ${typeText(s.items)}s`;
    case 'map':
      return `mapping of ${typeText(s.values)}s`;
    case 'string': {
      const listed = s.json?.enum;
      const values: readonly unknown[] | undefined = s.enum ?? (Array.isArray(listed) ? listed : undefined);
      return values ? values.map((v) => `\`${valueText(v)}\``).join(' \\| ') : 'string';
    }
    case 'integer':
      return s.min !== undefined && s.max !== undefined ? `integer ${s.min}..${s.max}` : 'integer';
    case 'any':
      return expectedOf(s);
    default:
      return s.type;
  }
}

function defaultText(s: Schema): string {
  if (s.defaultText) return s.defaultText;
  if (s.default === undefined) return '';
  return `\`${typeof s.default === 'string' ? s.default : JSON.stringify(s.default)}\``;
}
