/**
 * Every pointer to a section leads to one (docs/development.md "Docs that execute" checks the
 * pointers commands print; this checks the ones written down). A comment, an example or a page
 * that says `README "GitOps"`, `README section "GitOps"`, the `README's "GitOps" section` or `docs/safety.md "Least privilege"`
 * names a heading the reader will look for: when the README was cut to a front door and its
 * reference moved to docs/, such pointers were left behind, sending readers to sections that no
 * longer exist. Checked in src/, bin/, scripts/, test/, examples/, deploy/, docs/, README.md,
 * BENCHMARKS.md and the Unreleased part of CHANGELOG.md: a released entry keeps the names the
 * docs had when it was released. A pointer may wrap over comment lines (` * `, `//`, `#`, `--`)
 * and list more sections (`docs/apply.md "Rollback", "Holds"`); `A: B` cites section A's part
 * B (both must be headings).
 *
 * The design is cited by number: `docs/design.md §7`, `docs/design.md §5, §6`, or with the part of
 * the section quoted, `docs/design.md §7 "Stopping"`. Each number must be a `## N.` heading of
 * docs/design.md, and a quoted part a heading or run-in title inside that section. The contract the
 * design came from was cited as `DESIGN §N` before docs/design.md existed; that form names a file a
 * reader does not have, so it fails wherever it is written.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { parseDoc, ROOT } from '../support/doc-files.ts';

const s = suite('section pointers lead to sections');

/** Where the pointers are looked for: folders (walked) and files, relative to the repository root. */
const SCANNED = ['src', 'bin', 'scripts', 'bench', 'test', 'examples', 'deploy', 'docs', 'README.md', 'BENCHMARKS.md', 'CHANGELOG.md'];

/** Pages of other projects, cited by their own paths: not this repository's files. */
const UPSTREAM = new Map([
  ['docs/ARCHITECTURE.md', 'bootc-operator'],
  ['docs/PRD.md', 'bootc-operator'],
  ['docs/querying/api.md', 'Prometheus'],
  ['user-guide/sync-options.md', 'Argo CD'],
]);

/** Pointers that are not pointers: `file` -> the text quoted, with why. */
const NOT_POINTERS: Record<string, Record<string, string>> = {
  'test/e2e/12-docs.test.ts': { Title: 'the form of the pointers it checks in command output' },
  'test/repo/section-citations.test.ts': { '*': "this checker's own examples" },
};

export interface Citation {
  /** As written: README, docs/apply.md, safety.md. */
  page: string;
  /** The section named, one line (a wrapped pointer joined with single spaces). */
  title: string;
  line: number;
}

/** A line break inside a wrapped comment or paragraph, with the next line's comment leader. */
const BREAK = String.raw`[ \t]*\r?\n[ \t]*(?:\*(?!\/)|\/\/|#+|--)?[ \t]*`;
const GAP = String.raw`(?:${BREAK}|[ \t]+)`;
const QUOTED = String.raw`"((?:[^"\n]|${BREAK}){1,160}?)"`;
const PAGE = String.raw`\b(README(?:\.md)?|(?:[\w.-]+\/)*[\w.-]+\.md)`;
const POINTER = new RegExp(`${PAGE}(?:'s)?(?: sections?)?${GAP}${QUOTED}((?:(?:,|;? and|;? or)${GAP}${QUOTED})*)`, 'g');
const MORE = new RegExp(`(?:,|;? and|;? or)${GAP}${QUOTED}`, 'g');

const oneLine = (quoted: string) => quoted.replace(new RegExp(BREAK, 'g'), ' ').trim();

/** Every section pointer in `text`. */
export function citations(text: string): Citation[] {
  const out: Citation[] = [];
  for (const m of text.matchAll(POINTER)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ page: m[1], title: oneLine(m[2]), line });
    for (const more of (m[3] ?? '').matchAll(MORE)) out.push({ page: m[1], title: oneLine(more[1]), line });
  }
  return out;
}

/** Text as a reader compares titles: no markdown marks, one space, lower case. */
const plain = (t: string) => t.replace(/[`*_]/g, '').replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * Whether `title` names a heading of `headings`: the whole heading, or one of its parts
 * (`Start-up` for "Start-up (compiled CLI against tsx)", `round 4` for "The 10,000-node JSON
 * plan, round 4 (...)"); `A: B` names section A's part B, so both must be there.
 */
export function namesHeading(title: string, headings: string[]): boolean {
  const t = plain(title);
  const parts = (h: string) => [h, ...h.split(/, |: | \(|\)| - | — /).map((p) => p.trim())];
  const all = new Set(headings.flatMap((h) => parts(plain(h))));
  if (all.has(t)) return true;
  const pieces = t.split(': ');
  return pieces.length > 1 && pieces.every((p) => all.has(p));
}

/** The repository file a pointer in `from` names, or null for another project's page. */
function pageFile(from: string, page: string): string | null {
  if (page === 'README') return 'README.md';
  if (UPSTREAM.has(page)) return null;
  if (existsSync(join(ROOT, page))) return page;
  const near = normalize(join(dirname(from), page))
    .split(sep)
    .join('/');
  return existsSync(join(ROOT, near)) ? near : page;
}

function files(path: string): string[] {
  const abs = join(ROOT, path);
  if (!statSync(abs).isDirectory()) return [path];
  return readdirSync(abs)
    .filter((e) => e !== 'node_modules')
    .flatMap((e) => files(relative(ROOT, join(abs, e)).split(sep).join('/')));
}

/** The text of a scanned file; for CHANGELOG.md its Unreleased part only; null for a binary or a huge file. */
function scannedText(file: string): string | null {
  const abs = join(ROOT, file);
  if (statSync(abs).size > 2 * 2 ** 20) return null;
  const text = readFileSync(abs, 'utf8');
  if (text.includes('\0')) return null;
  if (file !== 'CHANGELOG.md') return text;
  const released = text.search(/^## (?!Unreleased)/m);
  return released < 0 ? text : text.slice(0, released);
}

/** What is wrong with the pointers of `file`: a page that is not there, or a section the page lacks. */
export function brokenCitations(file: string, text: string, headingsOf: (page: string) => string[] | null): string[] {
  const skip = NOT_POINTERS[file] ?? {};
  const out: string[] = [];
  for (const c of citations(text)) {
    if (skip['*'] || skip[c.title]) continue;
    const page = pageFile(file, c.page);
    if (page === null) continue;
    const headings = headingsOf(page);
    const where = `${file}:${c.line}: ${c.page} "${c.title}"`;
    if (headings === null) out.push(`${where}: there is no ${page}`);
    else if (!namesHeading(c.title, headings)) out.push(`${where}: ${page} has no such heading`);
  }
  return out;
}

/** The page of the numbered design sections. */
export const DESIGN_PAGE = 'docs/design.md';

export interface DesignCitation {
  /** The section number after `§`. */
  section: number;
  /** The part of the section quoted after the number, one line; null for none. */
  title: string | null;
  line: number;
}

const SECTION = String.raw`§(\d+)(?:${GAP}${QUOTED})?`;
const DESIGN_POINTER = new RegExp(String.raw`\bdocs\/design\.md${GAP}${SECTION}((?:(?:,|;? and|;? or)${GAP}${SECTION})*)`, 'g');
const MORE_SECTIONS = new RegExp(String.raw`(?:,|;? and|;? or)${GAP}${SECTION}`, 'g');
/** The old form, `DESIGN §N` (or `DESIGN section N`), possibly wrapped after the word. */
const BARE_DESIGN = new RegExp(String.raw`\bDESIGN(?:${BREAK}|[ \t])*(?:§[ \t]?\d+|sections?[ \t]+\d+)`, 'g');

/** Every `docs/design.md §N` citation in `text`, a list of sections giving one each. */
export function designCitations(text: string): DesignCitation[] {
  const out: DesignCitation[] = [];
  for (const m of text.matchAll(DESIGN_POINTER)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ section: Number(m[1]), title: m[2] === undefined ? null : oneLine(m[2]), line });
    for (const more of (m[3] ?? '').matchAll(MORE_SECTIONS)) {
      out.push({ section: Number(more[1]), title: more[2] === undefined ? null : oneLine(more[2]), line });
    }
  }
  return out;
}

/**
 * The numbered sections of the design page: number -> the section's own title and the headings
 * and run-in titles inside it. A number written twice is an error.
 */
export function designSections(markdown: string): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const chunk of markdown.split(/^(?=## )/m)) {
    const m = /^## (\d+)\. (.+)$/m.exec(chunk.split('\n')[0] ?? '');
    if (!m) continue;
    const n = Number(m[1]);
    if (out.has(n)) throw new Error(`${DESIGN_PAGE} has two sections numbered ${n}`);
    out.set(
      n,
      sectionsOf(chunk).map((h) => (h === `${m[1]}. ${m[2]}` ? m[2] : h)),
    );
  }
  return out;
}

/** What is wrong with the design citations of `file`: a bare `DESIGN §N`, a number or a part the page lacks. */
export function brokenDesignCitations(file: string, text: string, sections: Map<number, string[]>): string[] {
  if (NOT_POINTERS[file]?.['*']) return [];
  const out: string[] = [];
  for (const m of text.matchAll(BARE_DESIGN)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push(`${file}:${line}: ${oneLine(m[0])}: cite ${DESIGN_PAGE} §N instead (DESIGN is not in the repository)`);
  }
  for (const c of designCitations(text)) {
    const where = `${file}:${c.line}: ${DESIGN_PAGE} §${c.section}${c.title === null ? '' : ` "${c.title}"`}`;
    const parts = sections.get(c.section);
    if (!parts) out.push(`${where}: ${DESIGN_PAGE} has no section ${c.section} (no "## ${c.section}." heading)`);
    else if (c.title !== null && !namesHeading(c.title, parts)) out.push(`${where}: section ${c.section} has no such part`);
  }
  return out;
}

/**
 * The sections of a page: its headings, and the run-in ones the docs use for a part of a section
 * (a paragraph or list item that opens in bold: `**Clocks and skew.** Times in the cluster ...`).
 */
export function sectionsOf(markdown: string): string[] {
  const doc = parseDoc(markdown);
  const inFence = new Set(doc.fences.flatMap((f) => [f.line, ...f.lines.map((l) => l.line), f.line + f.lines.length + 1]));
  const runIn = markdown
    .split('\n')
    .flatMap((line, i) => (inFence.has(i + 1) ? [] : [/^\s*(?:[-*+]\s+|\d+\.\s+)?\*\*([^*]+?)[.:]?\*\*/.exec(line)?.[1]]))
    .filter((x): x is string => x !== undefined);
  return [...doc.headings, ...runIn];
}

const pages = new Map<string, string[] | null>();
const headingsOnDisk = (page: string) => {
  if (!pages.has(page)) pages.set(page, existsSync(join(ROOT, page)) ? sectionsOf(readFileSync(join(ROOT, page), 'utf8')) : null);
  return pages.get(page)!;
};

s('the finder: wrapped pointers, lists of sections, README section "X", pages beside the citing file', () => {
  const text = [
    '/**',
    ' * The lock (README "GitOps"; docs/apply.md "Rollback", "Holds" and',
    ' * "Stopping"). Start-up: README',
    ' * "Performance: the',
    ' * start-up"; see README section "Install", the README\'s "Fleets" section.',
    ' */',
    '# docs/safety.md "Least',
    '# privilege"',
    '-- [safety.md "Bounded I/O"](safety.md#bounded-io)',
    'not a pointer: README.md, "quoted" text; a file "x.md"',
  ].join('\n');
  assert.equal(
    citations(text).map((c) => `${c.line} ${c.page} ${c.title}`),
    [
      '2 README GitOps',
      '2 docs/apply.md Rollback',
      '2 docs/apply.md Holds',
      '2 docs/apply.md Stopping',
      '3 README Performance: the start-up',
      '5 README Install',
      '5 README Fleets',
      '7 docs/safety.md Least privilege',
      '9 safety.md Bounded I/O',
    ],
  );
});

s('the matcher: a whole heading or a part of one, any case and markdown; A: B needs both', () => {
  const headings = [
    'Start-up (compiled CLI against tsx)',
    'The 10,000-node JSON plan, round 4 (2026-12-03 evening)',
    '`fleet render` never deletes',
    'Fleets',
    'The fleet plan',
  ];
  assert.ok(namesHeading('Start-up', headings));
  assert.ok(namesHeading('round 4', headings));
  assert.ok(namesHeading('fleet render never deletes', headings));
  assert.ok(namesHeading('FLEETS: the fleet plan', headings));
  assert.not.ok(namesHeading('Fleets: fleet apply', headings));
  assert.not.ok(namesHeading('Performance', headings));
  assert.not.ok(namesHeading('Start', headings));
});

s('the sections of a page: headings, and paragraphs or list items that open in bold; not in code', () => {
  const page = [
    '# Apply',
    '',
    '## Health gates',
    '',
    '**Clocks and skew.** Times ...',
    '',
    '- **Who goes back** (src):',
    '',
    '```md',
    '**Not here.**',
    '```',
    'a **bold** word',
  ];
  assert.equal(sectionsOf(page.join('\n')), ['Apply', 'Health gates', 'Clocks and skew', 'Who goes back']);
});

s('the checker: a missing page and a missing heading are found; upstream pages are not ours', () => {
  const pagesOf: Record<string, string[]> = { 'README.md': ['Install'], 'docs/safety.md': ['Least privilege'] };
  const text = 'README "Install", README "GitOps", docs/safety.md "Least privilege", docs/gone.md "X", bootc-operator docs/PRD.md "Y"';
  assert.equal(
    brokenCitations('src/x.ts', text, (p) => pagesOf[p] ?? null),
    ['src/x.ts:1: README "GitOps": README.md has no such heading', 'src/x.ts:1: docs/gone.md "X": there is no docs/gone.md'],
  );
});

s('the design finder: numbers, lists, a quoted part, a wrapped citation', () => {
  const text = [
    '/**',
    ' * Staging (docs/design.md §7 "Pools and waves"; docs/design.md §5, §6 and §11), the lock',
    ' * (docs/design.md',
    ' * §7 "Apply is',
    ' * resumable").',
    ' */',
    'not a citation: docs/design.md alone, § 7, RFC 6902 §4.6',
  ].join('\n');
  assert.equal(
    designCitations(text).map((c) => `${c.line} §${c.section} ${c.title ?? '-'}`),
    ['2 §7 Pools and waves', '2 §5 -', '2 §6 -', '2 §11 -', '3 §7 Apply is resumable'],
  );
});

s('the design checker: a bare DESIGN §N fails, so do a missing number and a missing part', () => {
  const sections = designSections(
    [
      '# Design',
      '',
      '## 1. Layers',
      '',
      '## 7. Domain rules',
      '',
      '**Pools and waves.** ...',
      '',
      '**Apply is resumable, one apply at a time.** ...',
      '',
      '### Stopping',
      '',
      '## 10. Fleets',
    ].join('\n'),
  );
  assert.equal([...sections.keys()], [1, 7, 10]);
  assert.equal(sections.get(7), ['Domain rules', 'Stopping', 'Pools and waves', 'Apply is resumable, one apply at a time']);
  const text = [
    '// docs/design.md §7 "Stopping", docs/design.md §7 "one apply at a time", docs/design.md §1, §10',
    '// DESIGN §7 and DESIGN',
    '//   §10; the CRD (DESIGN section 4)',
    '// docs/design.md §9; docs/design.md §7 "Fleets"; docs/design.md §10 "Fleets"',
  ].join('\n');
  assert.equal(brokenDesignCitations('src/x.ts', text, sections), [
    'src/x.ts:2: DESIGN §7: cite docs/design.md §N instead (DESIGN is not in the repository)',
    'src/x.ts:2: DESIGN §10: cite docs/design.md §N instead (DESIGN is not in the repository)',
    'src/x.ts:3: DESIGN section 4: cite docs/design.md §N instead (DESIGN is not in the repository)',
    'src/x.ts:4: docs/design.md §9: docs/design.md has no section 9 (no "## 9." heading)',
    'src/x.ts:4: docs/design.md §7 "Fleets": section 7 has no such part',
  ]);
  assert.throws(() => designSections('## 2. CLI\n\n## 2. Exit codes\n'), /two sections numbered 2/);
});

s('the design page: sections 1 to 14, no 9, each cited; every design citation resolves', () => {
  const sections = designSections(readFileSync(join(ROOT, DESIGN_PAGE), 'utf8'));
  assert.equal([...sections.keys()], [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14]);
  const cited = new Set<number>();
  const broken: string[] = [];
  for (const file of SCANNED.flatMap(files).sort()) {
    const text = scannedText(file);
    if (text === null) continue;
    for (const c of designCitations(text)) cited.add(c.section);
    broken.push(...brokenDesignCitations(file, text, sections));
  }
  assert.equal(broken, []);
  // The code cites these (today §12-§14 are planned, not built, so nothing implements them yet).
  for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 10, 11]) assert.ok(cited.has(n), `no citation of §${n}`);
});

s('every section pointer in the repository names a heading of its page', () => {
  let checked = 0;
  const broken: string[] = [];
  for (const file of SCANNED.flatMap(files).sort()) {
    const text = scannedText(file);
    if (text === null) continue;
    checked += citations(text).length;
    broken.push(...brokenCitations(file, text, headingsOnDisk));
  }
  assert.equal(broken, []);
  assert.ok(checked >= 300, `${checked} pointers checked`);
});

s.run();
