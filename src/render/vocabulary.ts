/**
 * The words the text, markdown and HTML renderers share (DESIGN §8): what a change does to
 * an object, the symbol in front of it, what a pool's backend object is called. One table,
 * with per-format overrides only where the formats really differ. Pure.
 */
import type { Backend, ChangeAction } from '../plan/types.ts';

/** The three plan renderers that share these words. */
export type RenderFormat = 'text' | 'markdown' | 'html';

/** "# MachineConfig/x will be updated in place" (the Terraform-like wording of `plan`). */
const ACTION_VERB = { create: 'created', update: 'updated in place', delete: 'deleted', noop: 'unchanged' } as const;
/** The prefix of a change (DESIGN §8: Terraform-like symbols `+ ~ -`). */
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
 * The kind of the object that rolls a pool out (DESIGN §7: bootc pools and MCO-only pools).
 * Takes a string because a rehearsal records its pools' backend as one.
 */
export function poolKind(backend: Backend | (string & {})): string {
  return backend === 'bootc' ? 'BootcNodePool' : 'MachineConfigPool';
}

/** "a -> b" with a real arrow, for the formats that are not plain text. */
export function withArrows(s: string): string {
  return s.replace(/ -> /g, ' → ');
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
 */
export function escapeHtml(s: string, quotes: 'both' | 'double' = 'both'): string {
  const t = escapeMarkup(s).replace(/"/g, '&quot;');
  return quotes === 'both' ? t.replace(/'/g, '&#39;') : t;
}

/** Markdown-safe inline text: HTML and the characters that start formatting or break tables. */
export function escapeMarkdown(s: string): string {
  return escapeMarkup(s).replace(/([\\`*_[\]|~])/g, '\\$1').replace(/\r?\n/g, ' ');
}

// ---------------------------------------------------------------------------- clipping

/** At most `max` characters: the first `max - 1` and "…" (labels, messages in a bounded comment). */
export function clipEnd(s: string, max: number): string {
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
