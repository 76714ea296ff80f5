/**
 * Silences for the nodes in flight (docs/spec.md "Silences"; docs/design.md §11): the per-node matcher
 * templates of the spec, validated as Alertmanager reads matchers, and what they become for one
 * node: the matchers of the silence bootcplan creates, its comment, and which alerts it covers.
 * Pure.
 *
 * A template is one matcher (src/domain/alert-matchers.ts syntax) whose value holds placeholders
 * from a closed set: `{node}` (the node's name) and `{pool}` (its pool's name). Each template is
 * one silence per node; an alert is covered when it matches any of the node's silences.
 *
 * Rules, each a reason Alertmanager would refuse the silence or it would cover more than the node:
 * - the value names `{node}`: a silence without it covers every node, not the one in flight;
 * - the operator is `=` or `=~`: Alertmanager refuses a silence all of whose matchers match the
 *   empty string (api/v2 postSilences: "at least one matcher must not match the empty string"),
 *   and `!=` / `!~` alone always do;
 * - in a regular expression a name is quoted before it is put in (`w-1.lab` becomes `w-1\.lab`),
 *   so its dots match dots only; regexes are RE2 and fully anchored, as Alertmanager applies them
 *   (pkg/labels/matcher.go anchors with ^(?:...)$).
 * An unknown `{word}` is an error; RE2 repetitions such as `{2}` or `{1,3}` are digits and stay.
 */
import { parseMatcher, type Matcher, type MatcherParse, MatcherSet } from './alert-matchers.ts';

const SILENCE_PLACEHOLDERS = ['node', 'pool'] as const;
type SilencePlaceholder = (typeof SILENCE_PLACEHOLDERS)[number];
export type SilenceVars = Record<SilencePlaceholder, string>;
const isPlaceholder = (name: string): name is SilencePlaceholder => SILENCE_PLACEHOLDERS.some((x) => x === name);

export const SILENCE_TEMPLATE_EXPECTED =
  'one matcher per entry, label="value" or label=~"RE2", whose value names {node} (placeholders: {node}, {pool}); e.g. node="{node}" or instance=~"{node}(:.*)?"';

/** TTL bounds (minutes): long enough for a few missed extensions, short enough that a crashed apply's silences lapse soon. */
export const TTL_MIN_MINUTES = 2;
export const TTL_MAX_MINUTES = 120;
export const TTL_DEFAULT_MINUTES = 10;

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
/** A node name in the validation of a regex template: a DNS subdomain with every character class a name can hold. */
const SAMPLE: SilenceVars = { node: 'node-0.example', pool: 'pool-0' };

/** RE2 metacharacters quoted, so that a name matches only itself inside a regular expression. */
export function quoteRegex(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

/** The value with its placeholders filled in (quoted for a regex matcher). */
function fill(value: string, regex: boolean, vars: SilenceVars): string {
  return value.replace(PLACEHOLDER, (whole, name: string) => {
    if (!isPlaceholder(name)) return whole;
    const v = vars[name];
    return regex ? quoteRegex(v) : v;
  });
}

/** Parses and checks one template (see the file's header); `offset` is into `text`. */
export function parseSilenceTemplate(text: string): MatcherParse {
  const r = parseMatcher(text);
  if (!r.ok) return r;
  const m = r.matcher;
  const valueAt = Math.max(0, text.indexOf('"'));
  for (const p of m.value.matchAll(PLACEHOLDER)) {
    if (!isPlaceholder(p[1])) {
      const at = text.indexOf(p[0]);
      return {
        ok: false,
        offset: at < 0 ? valueAt : at,
        message: `unknown placeholder ${p[0]}`,
        hint: `the placeholders are ${SILENCE_PLACEHOLDERS.map((x) => `{${x}}`).join(', ')}`,
      };
    }
  }
  if (m.op !== '=' && m.op !== '=~') {
    return {
      ok: false,
      offset: text.indexOf(m.op, text.indexOf(m.label) + m.label.length),
      message: `${m.op} alone matches the empty string, and Alertmanager refuses such a silence`,
      hint: 'use = or =~ (a silence is scoped to its node by a positive match)',
    };
  }
  if (!/\{node\}/.test(m.value)) {
    return {
      ok: false,
      offset: valueAt,
      message: 'the value does not name {node}: the silence would cover every node, not the one in flight',
      hint: `e.g. ${m.label}${m.op}"{node}"${m.op === '=~' ? ' or instance=~"{node}(:.*)?"' : ''}`,
    };
  }
  if (m.op === '=~') {
    // The regex as it will be sent: compiled (RE2) with a name filled in.
    const filled = parseMatcher(`${m.label}=~${JSON.stringify(fill(m.value, true, SAMPLE))}`);
    if (!filled.ok) return { ok: false, offset: valueAt + 1, message: filled.message, hint: filled.hint };
  }
  return r;
}

/** Template texts the spec validated, parsed; throws on one that does not parse (a plan file bootcplan did not write). */
function parseSilenceTemplates(texts: readonly string[]): Matcher[] {
  return texts.map((t) => {
    const r = parseSilenceTemplate(t);
    if (!r.ok) throw new Error(`silence matcher ${JSON.stringify(t)}: ${r.message}`);
    return r.matcher;
  });
}

/** One template for one node: the matcher of its silence. */
function instantiate(template: Matcher, vars: SilenceVars): Matcher {
  return { label: template.label, op: template.op, value: fill(template.value, template.op === '=~', vars) };
}

/** A matcher in Alertmanager's API v2 form (api/v2/openapi.yaml `matcher`). */
export interface AlertmanagerMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual: boolean;
}

export function alertmanagerMatcher(m: Matcher): AlertmanagerMatcher {
  return { name: m.label, value: m.value, isRegex: m.op === '=~' || m.op === '!~', isEqual: m.op === '=' || m.op === '=~' };
}

/** The silences of one node: one per template, each a single matcher. */
export function nodeSilenceMatchers(templates: readonly string[], vars: SilenceVars): Matcher[] {
  return parseSilenceTemplates(templates).map((t) => instantiate(t, vars));
}

/** The comment of a node's silence: who made it and why (the Rollout, the plan, the node). */
export function silenceComment(rollout: string, planId: string, pool: string, node: string): string {
  return `bootcplan: node ${node} (pool ${pool}) is out of service in Rollout ${rollout}, plan ${planId}; expired when the node is back and its soak is over`;
}

export const SILENCE_CREATED_BY = 'bootcplan';

/**
 * Which of `alerts` the silences of the nodes in flight cover (for a `source: prometheus` alert
 * gate, which reads every alert, silenced or not): an alert matching all matchers of any one silence.
 */
export function coveredBy(silences: readonly (readonly Matcher[])[]): (labels: Readonly<Record<string, unknown>>) => boolean {
  const sets = silences.map((ms) => new MatcherSet(ms));
  return (labels) => sets.some((s) => s.test(labels));
}
