/**
 * The label matchers of an `alerts` health check (docs/spec.md "Health checks"), in Prometheus'
 * own syntax: `severity="critical"`, `alertname=~"Kube.*"`, `team!="db"`, `namespace!~"test-.*"`.
 * Pure.
 *
 *   matcher = ws label ws op ws '"' chars '"' ws
 *   label   = [a-zA-Z_][a-zA-Z0-9_]*
 *   op      = "=" | "!=" | "=~" | "!~"
 *   chars   = Go string escapes \" \\ \n \t, no raw newline, at most 1024 characters
 *
 * Semantics as Prometheus and Alertmanager have them: the matchers of one check are AND-ed; a
 * missing label is "" (so `team!="db"` matches an alert without `team`); regular expressions are
 * RE2 and fully anchored ("Regex matches are fully anchored. A match of env=~"foo" is treated as
 * env=~"^foo$"", and "All regular expressions in Prometheus use RE2 syntax": prometheus
 * docs/querying/basics.md). They run on the `re2js` port of RE2, in linear time: label values come
 * from the cluster's tenants (pod names, namespaces), and a backtracking engine on a pattern such
 * as `(a+)+` would let one of them stall the applier. Label values are cut at 4 KiB first.
 */
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';
import type * as Re2Module from 're2js';
import { messageOf } from '../base/errors.ts';

/**
 * re2js, loaded on first use: only specs with a regex matcher pay for it. It is 260 kB of
 * JavaScript, and a static import would put it in the start-up of every command that reads a
 * spec (some 10 ms of CPU on the demo plan; BENCHMARKS.md "Start-up"). A plain require keeps it
 * out of the bundle (scripts/build.mjs) and synchronous, as spec validation is.
 */
let re2: typeof Re2Module | null = null;
function RE2(): typeof RE2JS {
  re2 ??= createRequire(import.meta.url)('re2js') as typeof Re2Module;
  return re2.RE2JS;
}

export const MATCHER_OPS = ['=', '!=', '=~', '!~'] as const;
type MatcherOp = (typeof MATCHER_OPS)[number];

export interface Matcher {
  label: string;
  op: MatcherOp;
  value: string;
}

export type MatcherParse =
  | { ok: true; matcher: Matcher }
  /** `offset`: 0-based character of the matcher text where it went wrong. */
  | { ok: false; offset: number; message: string; hint: string };

export const MATCHER_EXPECTED = 'label OP "value", OP one of = != =~ !~ (e.g. severity="critical" or alertname=~"Kube.*")';
const MAX_VALUE = 1024;
/** Label values longer than this are cut before matching (a hostile answer cannot make matching slow). */
export const MAX_LABEL_VALUE = 4096;

const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t' };

/** Parses one matcher and, for =~ and !~, compiles its RE2 expression (an invalid one is an error here). */
export function parseMatcher(text: string): MatcherParse {
  let i = 0;
  const skip = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  const fail = (offset: number, message: string, hint = `write ${MATCHER_EXPECTED}`): MatcherParse => ({ ok: false, offset, message, hint });
  skip();
  const l = LABEL.exec(text.slice(i));
  if (!l) return fail(i, i >= text.length ? 'the matcher is empty' : 'expected a label name');
  const label = l[0];
  i += label.length;
  skip();
  const op = (['=~', '!~', '!=', '='] as const).find((o) => text.startsWith(o, i));
  if (!op) return fail(i, 'expected one of = != =~ !~ after the label');
  if (text.startsWith('==', i)) return fail(i, 'expected one of = != =~ !~ after the label', 'equality is a single "="');
  i += op.length;
  skip();
  if (text[i] !== '"') return fail(i, 'expected a double-quoted value', `quote it: ${label}${op}"${text.slice(i).trim()}"`);
  const start = i;
  i++;
  let value = '';
  for (;;) {
    if (i >= text.length) return fail(start, 'the quoted value is not closed', 'end it with "');
    const ch = text[i];
    if (ch === '"') {
      i++;
      break;
    }
    if (ch === '\n' || ch === '\r') return fail(i, 'a line break inside the value', 'write \\n for a newline');
    if (ch === '\\') {
      const e = ESCAPES[text[i + 1] ?? ''];
      if (e === undefined)
        return fail(i, `unknown escape \\${text[i + 1] ?? ''}`, 'escapes: \\" \\\\ \\n \\t (a regex backslash is written \\\\, e.g. "\\\\d+")');
      value += e;
      i += 2;
      continue;
    }
    value += ch;
    i++;
  }
  if (value.length > MAX_VALUE) return fail(start, `the value is ${value.length} characters long`, `at most ${MAX_VALUE}`);
  skip();
  if (i < text.length)
    return fail(
      i,
      `unexpected ${JSON.stringify(text.slice(i, i + 20))} after the matcher`,
      'one matcher per list entry; the entries are AND-ed (write two checks for OR)',
    );
  if (op === '=~' || op === '!~') {
    const err = regexError(value);
    if (err)
      return fail(
        start + 1,
        `not an RE2 regular expression: ${err}`,
        'RE2 syntax as Prometheus uses it: no lookaround or backreferences; (?i) for case-insensitive',
      );
  }
  return { ok: true, matcher: { label, op, value } };
}

/** Why `re` is no RE2 expression, or null. */
function regexError(re: string): string | null {
  try {
    RE2().compile(re);
    return null;
  } catch (err) {
    return messageOf(err).replace(/^error parsing regexp: /, '');
  }
}

/** The matcher as Prometheus prints it. */
export function matcherText(m: Matcher): string {
  return `${m.label}${m.op}${JSON.stringify(m.value)}`;
}

/** Matchers compiled once; `test` says whether an alert's labels satisfy all of them. */
export class MatcherSet {
  private readonly compiled: { label: string; holds: (value: string) => boolean }[];

  constructor(readonly matchers: readonly Matcher[]) {
    this.compiled = matchers.map((m) => ({ label: m.label, holds: valueTest(m) }));
  }

  /** From matcher texts the spec validated; throws on one that does not parse (a plan file bootcplan did not write). */
  static parse(texts: readonly string[]): MatcherSet {
    return new MatcherSet(
      texts.map((t) => {
        const r = parseMatcher(t);
        if (!r.ok) throw new Error(`matcher ${JSON.stringify(t)}: ${r.message}`);
        return r.matcher;
      }),
    );
  }

  test(labels: Readonly<Record<string, unknown>>): boolean {
    return this.compiled.every(({ label, holds }) => {
      const raw = labels[label];
      return holds((typeof raw === 'string' ? raw : '').slice(0, MAX_LABEL_VALUE));
    });
  }
}

/** What a matcher asks of a label's value (a regular expression compiled once). */
function valueTest(m: Matcher): (value: string) => boolean {
  switch (m.op) {
    case '=':
      return (v) => v === m.value;
    case '!=':
      return (v) => v !== m.value;
    case '=~':
    case '!~': {
      // Whole-string matching (RE2JS.matches) is the anchoring Prometheus applies: ^(?:re)$.
      const re = RE2().compile(m.value);
      return m.op === '=~' ? (v) => re.matches(v) : (v) => !re.matches(v);
    }
  }
}

/** An alert as both alert APIs give it (labels, and Prometheus' state). */
export interface AlertSample {
  labels: Readonly<Record<string, string>>;
  state: string;
}

interface AlertRules {
  matchers: MatcherSet;
  /** Alert names that never block. */
  ignore: readonly string[];
  /** The states that block (Prometheus source); null: every alert given blocks (Alertmanager's active list). */
  states: readonly string[] | null;
}

/** The alerts that block a gate: in a blocking state, not ignored by name, matching every matcher. */
export function blockingAlerts(alerts: readonly AlertSample[], rules: AlertRules): AlertSample[] {
  return alerts.filter(
    (a) => (rules.states === null || rules.states.includes(a.state)) && !rules.ignore.includes(a.labels.alertname ?? '') && rules.matchers.test(a.labels),
  );
}

/** `KubeNodeNotReady{node="w-1",namespace="x"}`: the alert name, then up to 4 labels other than severity. */
export function alertText(a: AlertSample): string {
  const labels = Object.keys(a.labels)
    .filter((k) => k !== 'alertname' && k !== 'severity')
    .sort()
    .slice(0, 4);
  const text = `${a.labels.alertname ?? '(no alertname)'}{${labels.map((k) => `${k}=${JSON.stringify(a.labels[k].slice(0, 60))}`).join(',')}}`;
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
