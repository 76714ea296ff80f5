/**
 * README.md stays the front door (under 500 lines; the reference lives in docs/), and every
 * relative link in README.md and docs/*.md leads somewhere: to a file or folder of the
 * repository, and for `#anchor` links to a heading (or HTML anchor) that the target page has,
 * by GitHub's anchor rule.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { docFiles, parseDoc, readDoc, ROOT, type ParsedDoc } from '../support/doc-files.ts';

const s = suite('docs: the front door and its links');

const README_MAX_LINES = 500;

/** What is wrong with each relative link of `file`: a missing target or a missing anchor. */
export function brokenLinks(file: string, doc: ParsedDoc, pageOf: (path: string) => ParsedDoc | null, exists: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const { href, line } of doc.links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue; // https:, mailto:: not this repository's
    const [rawPath, fragment] = href.split('#', 2) as [string, string | undefined];
    const path = rawPath === '' ? file : normalize(join(dirname(file), decodeURIComponent(rawPath))).replace(/\/$/, '');
    const where = `${file}:${line}: (${href})`;
    if (path.startsWith('..')) {
      out.push(`${where} leaves the repository`);
      continue;
    }
    if (!exists(path)) {
      out.push(`${where} ${path} does not exist`);
      continue;
    }
    if (fragment === undefined || fragment === '') continue;
    if (!path.endsWith('.md')) continue; // GitHub's #L12 line anchors of other files
    const page = pageOf(path);
    if (!page?.anchors.has(decodeURIComponent(fragment))) out.push(`${where} ${path} has no heading with the anchor #${fragment}`);
  }
  return out;
}

const onDisk = (path: string) => existsSync(join(ROOT, path));
const pages = new Map<string, ParsedDoc | null>();
const pageOnDisk = (path: string) => {
  if (!pages.has(path)) pages.set(path, onDisk(path) && statSync(join(ROOT, path)).isFile() ? readDoc(path) : null);
  return pages.get(path)!;
};

s(`README.md is the front door: under ${README_MAX_LINES} lines`, () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length;
  assert.ok(lines < README_MAX_LINES, `README.md has ${lines} lines: move reference text to docs/`);
});

s('every relative link in README.md and docs/*.md resolves, anchors included', () => {
  const files = docFiles();
  assert.ok(files.length >= 10, files.join(', '));
  let checked = 0;
  const broken: string[] = [];
  for (const file of files) {
    const doc = pageOnDisk(file)!;
    checked += doc.links.filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.href)).length;
    broken.push(...brokenLinks(file, doc, pageOnDisk, onDisk));
  }
  assert.equal(broken, []);
  assert.ok(checked >= 30, `${checked} relative links checked`);
});

s('the checker finds a missing file, a missing anchor, a link out of the repository, and accepts what GitHub resolves', () => {
  const page = parseDoc(
    [
      '# Top',
      '',
      '## The `bootcplan` image',
      '',
      '## Top',
      '',
      '<a id="custom"></a>',
      '[ok](other.md#second-part) [ok](#the-bootcplan-image) [ok](#top-1) [ok](#custom) [ok](../examples/rbac.yaml)',
      '[ok](https://example.com/x#y) [ok](../src/cli/main.ts#L10) [ok](sub/)',
      '[bad](missing.md) [bad](other.md#nope) [bad](#not-here) [bad](../../outside.md)',
      '',
      '```sh',
      '[not a link](nowhere.md)',
      '```',
    ].join('\n'),
  );
  const other = parseDoc('# Other\n\n## Second part\n');
  const files = new Set(['docs/page.md', 'docs/other.md', 'examples/rbac.yaml', 'src/cli/main.ts', 'docs/sub']);
  const broken = brokenLinks(
    'docs/page.md',
    page,
    (p) => (p === 'docs/other.md' ? other : p === 'docs/page.md' ? page : null),
    (p) => files.has(p),
  );
  assert.equal(
    broken.map((b) => b.replace(/^docs\/page\.md:\d+: /, '')),
    [
      '(missing.md) docs/missing.md does not exist',
      '(other.md#nope) docs/other.md has no heading with the anchor #nope',
      '(#not-here) docs/page.md has no heading with the anchor #not-here',
      '(../../outside.md) leaves the repository',
    ],
  );
});

s.run();
