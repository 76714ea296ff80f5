#!/usr/bin/env node
/**
 * The files of src/ that Prettier would push over test/sizes.test.ts's caps (450 lines a file,
 * 80 lines a function), measured on the formatted text. With --write they become the list
 * between the markers of .prettierignore, so `prettier --write` leaves them as they are until
 * they are split by responsibility; without, the list is printed (exit 1 when it is not the
 * one .prettierignore holds).
 *
 *   node scripts/house/prettier-caps.mjs [--write]
 */
import * as prettier from 'prettier';
import ts from 'typescript';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
process.chdir(ROOT);
const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 80;
const IGNORE = '.prettierignore';
const BEGIN = '# BEGIN over the size caps once formatted (scripts/house/prettier-caps.mjs --write)';
const END = '# END over the size caps';

const files = (d) =>
  readdirSync(d).flatMap((e) => {
    const p = join(d, e);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });

/** What is over a cap in `text`, as test/sizes.test.ts counts it. */
function oversize(file, text) {
  const out = [];
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_FILE_LINES) out.push(`${lines} lines`);
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (n) => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const a = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const b = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      if (b - a + 1 > MAX_FUNCTION_LINES) out.push(`${n.name?.getText(sf) ?? `function at line ${a + 1}`}: ${b - a + 1} lines`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const over = [];
for (const file of files('src').sort()) {
  const options = { ...(await prettier.resolveConfig(file)), filepath: file };
  const found = oversize(file, await prettier.format(readFileSync(file, 'utf8'), options));
  if (found.length) over.push(`${file} # ${found.join(', ')}`);
}
const text = readFileSync(IGNORE, 'utf8');
const head = text.slice(0, text.indexOf(BEGIN));
const tail = text.slice(text.indexOf(END) + END.length);
const section = [BEGIN, ...over.map((l) => l.replace(' # ', '\n# ').split('\n').reverse().join('\n')), END].join('\n');
const wanted = head + section + tail;
console.log(over.length ? over.join('\n') : 'no file of src/ goes over a cap once formatted');
if (process.argv.includes('--write')) writeFileSync(IGNORE, wanted);
else if (wanted !== text) {
  console.error(`${IGNORE} lists other files: run node scripts/house/prettier-caps.mjs --write`);
  process.exitCode = 1;
}
