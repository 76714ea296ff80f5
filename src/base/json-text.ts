/**
 * JSON text that data cannot turn against the terminal or viewer it is shown in: the plan file
 * (plan/saved/writer.ts), every `-o json` and NDJSON output. A leaf: the renderers and the
 * saved-plan writer both use it.
 */

/**
 * Characters JSON may carry raw that a terminal or a viewer would act on: DEL, the C1 controls
 * and the format characters above (JSON.stringify already escapes C0 and lone surrogates).
 */
const JSON_INVISIBLE = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * JSON.stringify, with the characters above written as `\uXXXX` escapes: the same JSON value
 * (every parser reads it back exactly, so a plan stays exact for apply), but `cat plan.json`
 * or a CI log of `apply --json` cannot be driven by data.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(JSON_INVISIBLE, escapeCodeUnits);
}

/** `\uXXXX` per UTF-16 code unit: JSON has no escape for a code point above U+FFFF. */
function escapeCodeUnits(ch: string): string {
  let out = '';
  for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/**
 * A value read from a file or an answer, as text for a message: a string as it is, a number,
 * boolean or bigint as usual, absent (undefined, null) as '', anything else as its JSON: never
 * "[object Object]", which would hide what the value was.
 */
export function valueText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return jsonText(v) ?? typeof v;
}
