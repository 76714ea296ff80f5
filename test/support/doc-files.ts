/**
 * The project's documentation as the docs tests read it: README.md and every docs/*.md, parsed
 * with markdown-it (CommonMark, as GitHub renders it) into fenced code blocks, links and
 * heading anchors (github-slugger: GitHub's own rule, duplicates numbered -1, -2 ...).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import MarkdownIt from 'markdown-it';
import GithubSlugger from 'github-slugger';

export const ROOT = resolve(import.meta.dirname, '../..');

/** README.md, then docs/*.md in name order (paths relative to the repository root). */
export function docFiles(root = ROOT): string[] {
  return [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}

const md = new MarkdownIt({ html: true });
type Token = ReturnType<typeof md.parse>[number];

export interface Fence {
  /** 1-based line of the opening fence. */
  line: number;
  /** The info string's first word (`sh`, `yaml`), '' for none. */
  lang: string;
  /** The block's lines, each with its 1-based line in the file. */
  lines: { text: string; line: number }[];
}

export interface Link {
  href: string;
  line: number;
}

export interface ParsedDoc {
  fences: Fence[];
  links: Link[];
  /** The anchors a `#fragment` may name: every heading's slug, and `id`/`name` of HTML anchors. */
  anchors: Set<string>;
  headings: string[];
}

export function parseDoc(text: string): ParsedDoc {
  const tokens = md.parse(text, {});
  const fences: Fence[] = [];
  const links: Link[] = [];
  const anchors = new Set<string>();
  const headings: string[] = [];
  const slugger = new GithubSlugger();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    const line = (t.map?.[0] ?? 0) + 1;
    if (t.type === 'fence') {
      // The content starts on the line after the opening fence.
      const body = t.content.replace(/\n$/, '').split('\n');
      fences.push({ line, lang: t.info.trim().split(/\s+/)[0] ?? '', lines: t.content === '' ? [] : body.map((text, k) => ({ text, line: line + 1 + k })) });
    } else if (t.type === 'heading_open') {
      const title = inlineText(tokens[i + 1]);
      headings.push(title);
      anchors.add(slugger.slug(title));
    } else if (t.type === 'inline') {
      for (const c of t.children ?? []) {
        if (c.type === 'link_open') links.push({ href: c.attrGet('href') ?? '', line });
        if (c.type === 'image') links.push({ href: c.attrGet('src') ?? '', line });
        if (c.type === 'html_inline') htmlAnchors(c.content, anchors);
      }
    } else if (t.type === 'html_block') htmlAnchors(t.content, anchors);
  }
  return { fences, links, anchors, headings };
}

/** A heading's text as GitHub slugs it: the text of its inline children, code spans included. */
function inlineText(t: Token): string {
  return (t.children ?? [])
    .filter((c) => c.type === 'text' || c.type === 'code_inline')
    .map((c) => c.content)
    .join('');
}

function htmlAnchors(html: string, into: Set<string>): void {
  for (const m of html.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) into.add(m[1]);
}

export function readDoc(file: string, root = ROOT): ParsedDoc {
  return parseDoc(readFileSync(join(root, file), 'utf8'));
}
