/**
 * Comments cite what a reader has: a docs/design.md, README or docs/ section, or the upstream rule (an
 * API field, an operator's code). Never a tracker number: readers of the code have no access to
 * the tracker it came from (docs/development.md). Reads the comments of src/, scripts/, bench/
 * and test/ from TypeScript's syntax tree, so strings, regular expressions and code never count.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import ts from 'typescript';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * A tracker reference: the word issue (bug, ticket, PR, pull request) followed by a number, with
 * or without a hash; or a hash and a number standing alone (not in `code`, not in an entity).
 */
const TRACKER = [/\b(?:issues?|bugs?|tickets?|PRs?|pull requests?)\s*#?\d+/i, /(?:^|[\s(,])#\d+\b/];

/** Every comment of a file that cites a tracker number, as "file:line: the comment's line". */
export function trackerCitations(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.mjs') ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const seen = new Set<number>();
  const out: string[] = [];
  const take = (ranges: readonly ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      const first = sf.getLineAndCharacterOfPosition(r.pos).line + 1;
      text
        .slice(r.pos, r.end)
        .split('\n')
        .forEach((line, i) => {
          if (TRACKER.some((re) => re.test(line))) out.push(`${file}:${first + i}: ${line.trim()}`);
        });
    }
  };
  // Comments sit in the trivia before and after tokens: visit every token of the syntax tree.
  const visit = (n: ts.Node) => {
    const children = n.getChildren(sf);
    if (!children.length || n.kind === ts.SyntaxKind.EndOfFileToken) {
      take(ts.getLeadingCommentRanges(text, n.getFullStart()));
      take(ts.getTrailingCommentRanges(text, n.getEnd()));
    }
    for (const c of children) visit(c);
  };
  visit(sf);
  return out.sort((a, b) => Number(a.split(':')[1]) - Number(b.split(':')[1]));
}

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    if (e === 'node_modules' || e === 'golden' || e === 'fixtures') continue;
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (/\.(ts|mjs)$/.test(p)) out.push(relative('.', p).split(sep).join('/'));
  }
  return out.sort();
}

test('no comment in src/, scripts/, bench/ or test/ cites a tracker number', () => {
  const found = ['src', 'scripts', 'bench', 'test'].flatMap(sources).flatMap((f) => trackerCitations(f, readFileSync(f, 'utf8')));
  assert.equal(found, [], `cite the docs/design.md, README or docs/ section (or the upstream rule) instead:\n  ${found.join('\n  ')}`);
});

test('the check finds tracker numbers in comments only', () => {
  const src = [
    '/**',
    ' * Node health (issue 12 rule 7): the MCO rule.',
    ' * GitHub links `#123` to an issue; docs/safety.md rule 7.',
    ' */',
    "const a = 'issue 12'; // see #14",
    'const b = `issue ${a} #3`; /* bug 4 */',
    'const c = /issue 5/.test(a) ? 1 / 2 : 3; // PR 9',
    '// the 2nd review, no number',
  ].join('\n');
  assert.equal(
    trackerCitations('x.ts', src).map((l) => l.split(': ')[0]),
    ['x.ts:2', 'x.ts:5', 'x.ts:6', 'x.ts:7'],
  );
});

test.run();
