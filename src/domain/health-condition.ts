/**
 * The condition of a `prometheus` health check (docs/spec.md "Health checks"): a closed grammar
 * of seven forms, parsed once when the spec is validated and kept in the plan as text and parsed
 * form; never evaluated as code. Pure.
 *
 *   condition = ws ( "empty" | "not" ws1 "empty" | subject ws op ws number ) ws
 *   subject   = ("every" | "any") ws1 "sample" | "value" | "count" | "min" | "max" | "sum" | "avg"
 *   op        = "<" | "<=" | ">" | ">=" | "==" | "!="
 *   number    = ["-" | "+"] ( digits ["." digits] | "." digits ) [("e" | "E") ["-" | "+"] digits]
 *
 * Semantics on an instant query's answer (Prometheus HTTP API `/api/v1/query`, result type
 * vector or scalar): see evaluateCondition. NaN satisfies no comparison, `!=` included: IEEE
 * makes `NaN != 0` true, and a NaN error ratio must never pass a gate.
 */

export const CONDITION_OPS = ['<', '<=', '>', '>=', '==', '!='] as const;
type ConditionOp = (typeof CONDITION_OPS)[number];
export const CONDITION_SUBJECTS = ['every', 'any', 'value', 'count', 'min', 'max', 'sum', 'avg'] as const;
type ConditionSubject = (typeof CONDITION_SUBJECTS)[number];

/** The parsed form the plan carries. */
export type ParsedCondition = { subject: 'empty' } | { subject: 'not-empty' } | { subject: ConditionSubject; op: ConditionOp; value: number };

type ConditionParse =
  | { ok: true; parsed: ParsedCondition }
  /** `offset`: 0-based character of the condition where it went wrong. */
  | { ok: false; offset: number; message: string; hint: string };

export const CONDITION_EXPECTED =
  'one of: empty, not empty, every sample OP N, any sample OP N, value OP N, count OP N, min|max|sum|avg OP N (OP: < <= > >= == !=)';
const COMBINE_HINT = 'combine in PromQL (e.g. max(...), or vector(0)) and compare one number';

const WORD = /^[A-Za-z_][A-Za-z0-9_]*/;
const NUMBER = /^[-+]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?/;

/** Parses a condition; the error names the character where it went wrong. */
export function parseCondition(text: string): ConditionParse {
  let i = 0;
  const skip = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  const fail = (offset: number, message: string, hint = `write ${CONDITION_EXPECTED}`): ConditionParse => ({ ok: false, offset, message, hint });
  const word = (): { w: string; at: number } | null => {
    const m = WORD.exec(text.slice(i));
    if (!m) return null;
    const at = i;
    i += m[0].length;
    return { w: m[0], at };
  };
  const end = (parsed: ParsedCondition): ConditionParse => {
    skip();
    if (i < text.length)
      return fail(
        i,
        `unexpected ${quote(text.slice(i))} after the condition`,
        /^(and|or|unless)\b/i.test(text.slice(i)) ? COMBINE_HINT : `remove it; ${CONDITION_EXPECTED}`,
      );
    return { ok: true, parsed };
  };
  skip();
  const first = word();
  if (!first) return fail(i, i >= text.length ? 'the condition is empty' : `unexpected ${quote(text.slice(i))}`, text[i] === '(' ? COMBINE_HINT : undefined);
  if (first.w === 'empty') return end({ subject: 'empty' });
  if (first.w === 'not') {
    const gap = i;
    skip();
    const next = word();
    if (!next || next.w !== 'empty' || next.at === gap) return fail(next?.at ?? i, 'expected "empty" after "not"', 'write: not empty');
    return end({ subject: 'not-empty' });
  }
  if (!(CONDITION_SUBJECTS as readonly string[]).includes(first.w)) {
    const lower = first.w.toLowerCase();
    const known = [...CONDITION_SUBJECTS, 'empty', 'not'].includes(lower);
    return fail(first.at, `unknown word "${first.w}"`, known ? `keywords are lower case: "${lower}"` : `write ${CONDITION_EXPECTED}`);
  }
  const subject = first.w as ConditionSubject;
  if (subject === 'every' || subject === 'any') {
    const gap = i;
    skip();
    const next = word();
    if (!next || next.w !== 'sample' || next.at === gap) return fail(next?.at ?? i, `expected "sample" after "${subject}"`, `write: ${subject} sample < 0.01`);
  }
  skip();
  const op = CONDITION_OPS.filter((o) => text.startsWith(o, i)).sort((a, b) => b.length - a.length)[0];
  if (!op)
    return fail(
      i,
      i >= text.length
        ? `a comparison is missing after "${text.slice(first.at, i).trim()}"`
        : `expected a comparison (< <= > >= == !=), got ${quote(text.slice(i))}`,
      text[i] === '=' ? 'equality is "=="' : undefined,
    );
  i += op.length;
  skip();
  const at = i;
  const m = NUMBER.exec(text.slice(i));
  if (!m || /^[A-Za-z_%]/.test(text.slice(i + m[0].length))) {
    const rest = text.slice(i);
    const special = /^[-+]?(inf|nan)/i.test(rest) ? 'Inf and NaN are no limits a sample can be held to' : null;
    return fail(
      at,
      rest ? `expected a number, got ${quote(rest)}` : 'a number is missing after the comparison',
      special
        ? `${special}; ${COMBINE_HINT}`
        : /^[0-9.]+\s*[%a-zA-Z]/.test(rest)
          ? `a plain number, no unit (0.01, not 1%); ${COMBINE_HINT}`
          : 'a decimal number such as 0.01, 5 or 1e-3',
    );
  }
  i += m[0].length;
  const value = Number(m[0]);
  if (!Number.isFinite(value)) return fail(at, `${m[0]} is not a finite number`, 'a decimal number such as 0.01, 5 or 1e-3');
  return end({ subject, op, value });
}

function quote(rest: string): string {
  const s = rest.length > 20 ? `${rest.slice(0, 20)}...` : rest;
  return JSON.stringify(s);
}

/** The condition as text, from its parsed form (for messages). */
export function conditionText(c: ParsedCondition): string {
  if (c.subject === 'empty') return 'empty';
  if (c.subject === 'not-empty') return 'not empty';
  const subject = c.subject === 'every' || c.subject === 'any' ? `${c.subject} sample` : c.subject;
  return `${subject} ${c.op} ${c.value}`;
}

/** Whether `onEmpty` decides anything for this condition (not for empty, not empty, count). */
export function usesOnEmpty(c: ParsedCondition): boolean {
  return c.subject !== 'empty' && c.subject !== 'not-empty' && c.subject !== 'count';
}

// ---------------------------------------------------------------------------------------
// Evaluation

export interface Sample {
  metric: Readonly<Record<string, string>>;
  value: number;
}
/** An instant query's answer, sample values already numbers (NaN, ±Infinity allowed). */
export type QueryResult = { type: 'vector'; samples: readonly Sample[] } | { type: 'scalar'; value: number };

interface ConditionOutcome {
  pass: boolean;
  observed: string;
}

/** NaN satisfies no comparison (`!=` included); ±Infinity compare as numbers. */
function compare(v: number, op: ConditionOp, n: number): boolean {
  if (Number.isNaN(v)) return false;
  switch (op) {
    case '<':
      return v < n;
    case '<=':
      return v <= n;
    case '>':
      return v > n;
    case '>=':
      return v >= n;
    case '==':
      return v === n;
    case '!=':
      return v !== n;
  }
}

/**
 * The verdict of a condition on an answer (docs/spec.md "Health checks", the semantics table):
 * `empty` passes on an empty vector only; `not empty` on any sample (a scalar is one value);
 * `every`/`any`/`min`/`max`/`sum`/`avg` on an empty vector follow `onEmpty`; `value` needs exactly
 * one sample (more is a failure: aggregate in the query); `count` counts (a scalar is one).
 */
export function evaluateCondition(r: QueryResult, c: ParsedCondition, onEmpty: 'fail' | 'pass'): ConditionOutcome {
  const text = conditionText(c);
  const samples = r.type === 'vector' ? r.samples : [{ metric: {}, value: r.value }];
  const n = samples.length;
  if (c.subject === 'empty') {
    return n === 0 ? { pass: true, observed: 'empty result' } : { pass: false, observed: `${countOf(r)}: ${seriesList(samples)}` };
  }
  if (c.subject === 'not-empty') return n === 0 ? { pass: false, observed: 'empty result' } : { pass: true, observed: countOf(r) };
  if (c.subject === 'count') {
    const ok = compare(n, c.op, c.value);
    return { pass: ok, observed: `count ${n}${ok ? '' : `, not ${c.op} ${c.value}`}` };
  }
  if (n === 0) return { pass: onEmpty === 'pass', observed: `empty result (onEmpty: ${onEmpty})` };
  if (c.subject === 'value' && n > 1) return { pass: false, observed: `expected one sample, got ${n} (aggregate in the query): ${seriesList(samples)}` };
  if (c.subject === 'every' || c.subject === 'value' || c.subject === 'any') {
    const bad = samples.filter((s) => !compare(s.value, c.op, c.value));
    const ok = c.subject === 'any' ? bad.length < n : bad.length === 0;
    if (ok)
      return {
        pass: true,
        observed: `${text}: ${c.subject === 'any' ? `${n - bad.length} of ${n}` : countOf(r)} ${c.subject === 'any' ? 'do' : 'ok'}${n === 1 ? ` (${numberText(samples[0].value)})` : ''}`,
      };
    return {
      pass: false,
      observed: `${c.subject === 'any' ? `no sample ${c.op} ${c.value}` : `${bad.length} of ${n} not ${c.op} ${c.value}`}: ${seriesList(bad.length ? bad : samples)}`,
    };
  }
  const v = aggregate(
    c.subject,
    samples.map((s) => s.value),
  );
  const ok = compare(v, c.op, c.value);
  return { pass: ok, observed: `${c.subject} ${numberText(v)} over ${n} sample${n === 1 ? '' : 's'}${ok ? '' : `, not ${c.op} ${c.value}`}` };
}

function aggregate(kind: 'min' | 'max' | 'sum' | 'avg', vs: number[]): number {
  // An aggregate over a NaN is NaN (Math.min/max, and a sum, propagate it): it fails every comparison.
  if (kind === 'min') return Math.min(...vs);
  if (kind === 'max') return Math.max(...vs);
  const sum = vs.reduce((a, b) => a + b, 0);
  return kind === 'sum' ? sum : sum / vs.length;
}

function countOf(r: QueryResult): string {
  if (r.type === 'scalar') return 'a scalar';
  const n = r.samples.length;
  return `${n} sample${n === 1 ? '' : 's'}`;
}

/** A sample value as Prometheus writes it: NaN, +Inf, -Inf, or the number. */
function numberText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** `name{l1="v1",l2="v2"}=value`, labels sorted, cut to 80 characters. */
function seriesText(s: Sample): string {
  const name = s.metric.__name__ ?? '';
  const labels = Object.keys(s.metric)
    .filter((k) => k !== '__name__')
    .sort()
    .map((k) => `${k}=${JSON.stringify(s.metric[k])}`);
  const series = `${name}${labels.length || !name ? `{${labels.join(',')}}` : ''}`;
  const cut = series.length > 70 ? `${series.slice(0, 67)}...` : series;
  return `${cut}=${numberText(s.value)}`;
}

/** The first 3 series, then "… and k more". */
function seriesList(samples: readonly Sample[]): string {
  const shown = samples.slice(0, 3).map(seriesText).join(', ');
  return samples.length > 3 ? `${shown} ... and ${samples.length - 3} more` : shown;
}
