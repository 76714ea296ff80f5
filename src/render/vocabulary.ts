/**
 * The words the text, markdown and HTML renderers share (docs/design.md §8): what a change does to
 * an object, the symbol in front of it, what a pool's backend object is called. One table,
 * with per-format overrides only where the formats really differ. Pure.
 */
import type { Backend, ChangeAction, PlanPool } from '../plan/types.ts';

/** The three plan renderers that share these words. */
type RenderFormat = 'text' | 'markdown' | 'html';

/** "# MachineConfig/x will be updated in place" (the Terraform-like wording of `plan`). */
const ACTION_VERB = { create: 'created', update: 'updated in place', delete: 'deleted', noop: 'unchanged' } as const;
/** The prefix of a change (docs/design.md §8: Terraform-like symbols `+ ~ -`). */
const ACTION_SYMBOL = { create: '+', update: '~', delete: '-', noop: ' ' } as const;

export const VERB: Record<RenderFormat, Record<ChangeAction, string>> = {
  // The text plan reads as a sentence: "will be left unchanged".
  text: { ...ACTION_VERB, noop: 'left unchanged' },
  markdown: ACTION_VERB,
  html: ACTION_VERB,
};

export const SYMBOL: Record<RenderFormat, Record<ChangeAction, string>> = {
  text: ACTION_SYMBOL,
  markdown: ACTION_SYMBOL,
  // HTML sets the symbol in its own coloured box: a typographic minus (as wide as '+') and
  // '=' for an object that stays, where a blank box would look like a missing symbol.
  html: { ...ACTION_SYMBOL, delete: '−', noop: '=' },
};

/**
 * The word (`VERB`) or symbol (`SYMBOL`) of an action. A crafted plan's action may be any
 * string: it reads as itself (the caller escapes it), never as a property every object
 * inherits (`constructor`, `toString`).
 */
export function wordOf(table: Record<RenderFormat, Record<ChangeAction, string>>, format: RenderFormat, action: unknown): string {
  const words = table[format];
  return typeof action === 'string' && Object.hasOwn(words, action) ? words[action as ChangeAction] : String(action);
}

/**
 * The kind of the object that rolls a pool out (docs/design.md §7: bootc pools and MCO-only pools).
 * Takes a string because a rehearsal records its pools' backend as one.
 */
/**
 * The node that runs bootcplan's own pod when the plan was made (PlanNode.runsBootcplan), in
 * words: it goes last in its pool (docs/design.md §7 "Stopping"); null when the plan names none.
 */
export function selfNodeSentence(pool: PlanPool): string | null {
  const n = pool.nodes.find((x) => x.runsBootcplan === true);
  if (!n) return null;
  return `${n.name} runs bootcplan's own pod (NODE_NAME): it goes last, ${pool.rollout === 'slots' ? 'admitted after every other node' : `in wave ${n.wave}`}, since its drain evicts bootcplan`;
}

export function poolKind(backend: Backend | (string & {})): string {
  return backend === 'bootc' ? 'BootcNodePool' : 'MachineConfigPool';
}

/** "a -> b" with a real arrow, for the formats that are not plain text. */
export function withArrows(s: string): string {
  return s.replace(/ -> /g, ' → ');
}

// ---------------------------------------------------------------------------- data made visible

/**
 * Characters that must not reach a terminal, a log or a reviewer's eyes as they are
 * (docs/safety.md "What is masked in outputs"): the C0 controls (ESC starts ANSI and OSC
 * sequences that recolour, retitle, hide text or write hyperlinks; CR and BS overwrite what was
 * printed; a newline forges a line), DEL, the C1 controls (U+009B is CSI on terminals that read
 * 8-bit controls), the Unicode format characters (category Cf: the bidi embeddings, overrides
 * and isolates U+202A–U+202E and U+2066–U+2069 and the marks U+200E, U+200F, U+061C that
 * reorder what a reviewer reads, "Trojan Source", CVE-2021-42574; zero-width characters, the
 * BOM, tag characters), the line and paragraph separators U+2028/U+2029, and lone surrogates
 * (which no encoder writes faithfully).
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'gu');

/** `\u001b`: the JavaScript and JSON spelling; code points above U+FFFF as `\u{e0041}`. */
function escapeCodePoint(ch: string): string {
  const cp = ch.codePointAt(0)!;
  return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
}

/**
 * `s` with every control, bidi and other invisible format character written as its escape
 * (`\x1b` reads `\u001b`, U+202E reads `\u202e`), so data can neither drive a terminal nor
 * hide or reorder text. Newlines and tabs in data are escaped too: only a renderer writes line
 * breaks (split multi-line data first and make each line visible). Backslashes stay as they
 * are: the escape makes a character harmless, it is not meant to be decoded back. For one
 * value or a line; `forDisplay` (./secrets.ts) applies it to every string of a plan or event.
 */
export function visible(s: string): string {
  return INVISIBLE.test(s) ? s.replace(INVISIBLE_ALL, escapeCodePoint) : s;
}

// ---------------------------------------------------------------------------- escaping

/** The characters that start markup, in both HTML and markdown (`&` first, so no entity is escaped twice). */
function escapeMarkup(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * HTML text and attribute values. 'both' (the HTML report) also escapes apostrophes, so any
 * attribute is safe whatever its quotes; 'double' (the inline HTML of the markdown comment,
 * which writes only element content and double-quoted attributes) keeps them as typed.
 * Takes any value: a crafted plan may hold a string (or an object) where a number belongs,
 * and whatever it holds is written as text.
 */
export function escapeHtml(s: unknown, quotes: 'both' | 'double' = 'both'): string {
  const t = escapeMarkup(String(s)).replace(/"/g, '&quot;');
  return quotes === 'both' ? t.replace(/'/g, '&#39;') : t;
}

/**
 * GitHub links `#123` to an issue and notifies `@user` and `@org/team` wherever they stand in
 * text. A zero-width space (as the entity `&#8203;`, readable in the comment's source) after
 * `#` and `@` breaks both patterns and renders the same; bots that post data into comments
 * do the same (Renovate, Dependabot). Mentions inside code spans and blocks are not linked
 * by GitHub, so only text outside them goes through this. Applied to text already escaped
 * (where a `&` of data reads `&amp;`), so an entity's own `&#` is never taken for a link, and
 * applying it twice changes nothing.
 */
export function neutraliseMentions(escaped: string): string {
  return escaped.replace(/(?<!&)#(?=\d)/g, '#&#8203;').replace(/(^|[^A-Za-z0-9_])@(?=[A-Za-z0-9])/g, '$1@&#8203;');
}

/**
 * Markdown-safe inline text: HTML and the characters that start formatting or break tables;
 * mentions and issue links broken (`neutraliseMentions`). Takes any value, like `escapeHtml`.
 */
export function escapeMarkdown(s: unknown): string {
  return neutraliseMentions(
    escapeMarkup(String(s))
      .replace(/([\\`*_[\]|~])/g, '\\$1')
      .replace(/\r?\n/g, ' '),
  );
}

// ---------------------------------------------------------------------------- clipping

/** At most `max` characters: the first `max - 1` and "…" (labels, messages in a bounded comment). Any value is clipped as its text. */
export function clipEnd(value: string, max: number): string {
  const s = String(value);
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/**
 * A long diff line cut in its middle, so the key at its start and the end of its value both
 * stay: "head … (N characters cut) … tail". 0 means no limit.
 */
export function clipMiddle(s: string, max: number): string {
  if (!max || s.length <= max) return s;
  const keep = Math.max(20, max - 40);
  const head = Math.ceil(keep * 0.6);
  const tail = keep - head;
  return `${s.slice(0, head)} … (${s.length - keep} characters cut) … ${s.slice(s.length - tail)}`;
}
