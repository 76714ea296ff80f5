/**
 * Data written into the pull-request comment (src/render/markdown.ts and its head and detail
 * blocks, the fleet comment too): inline HTML, code spans, a title's code span.
 */
import { escapeHtml, neutraliseMentions } from './vocabulary.ts';

/**
 * Data in the comment's inline HTML (`<summary>`, `<code>`): escaped as HTML (element content
 * and double-quoted attributes only); the characters markdown gives a meaning to written as
 * character references, which read the same whether GitHub takes the line as an HTML block or
 * as inline HTML in a paragraph (CommonMark: a character reference never starts a link,
 * emphasis or code span); mentions and issue links broken (GitHub links neither inside a code
 * element, but HTML decodes the entity there too, so it costs nothing).
 */
export function inlineHtml(s: unknown): string {
  return neutraliseMentions(escapeHtml(s, 'double').replace(/[\\`*_[\]|!]/g, (ch) => `&#${ch.charCodeAt(0)};`));
}

/** An inline code span that survives backticks and table pipes in its content. */
export function code(s: string): string {
  const t = String(s).replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  const longest = Math.max(0, ...(t.match(/`+/g) ?? []).map((m) => m.length));
  const ticks = '`'.repeat(longest + 1);
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${t}${pad}${ticks}`;
}

/** Text for a single-backtick code span (the comment's title): backticks become quotes. */
export function mdCodeSafe(s: string): string {
  return String(s).replace(/`/g, "'");
}

/** A table row of data: each cell escaped as `inlineHtml` (a `|` in a name stays in its cell), trimmed. */
export function tableRow(cells: readonly string[]): string {
  return `| ${cells.map((x) => inlineHtml(x.trim())).join(' | ')} |`;
}

/** The head row of a table and its rule: `| a | b |` and `| --- | --- |`. */
export function tableHead(head: readonly string[]): string[] {
  return [tableRow(head), `|${head.map(() => ' --- |').join('')}`];
}
