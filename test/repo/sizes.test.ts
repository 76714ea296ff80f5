/**
 * One job per file: no file of src/ over 450 lines, no function over 80 lines, except the
 * ones listed with the reason they stay whole (docs/architecture.md "The layers").
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import ts from 'typescript';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 80;

/** Functions allowed over the limit, "file:name", with why they stay one piece. */
const LONG_FUNCTIONS_ALLOWED: Record<string, string> = {};

export function oversize(file: string, text: string): string[] {
  const out: string[] = [];
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_FILE_LINES) out.push(`${file}: ${lines} lines`);
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const nameOf = (n: ts.Node): string => {
    const named = (n as { name?: ts.Node }).name;
    if (named) return named.getText(sf);
    if (ts.isConstructorDeclaration(n)) return 'constructor';
    const p = n.parent;
    if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return p.name.getText(sf);
    return `(anonymous at line ${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1})`;
  };
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body) {
      const a = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const b = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      const len = b - a + 1;
      const key = `${file}:${nameOf(n)}`;
      if (len > MAX_FUNCTION_LINES && !LONG_FUNCTIONS_ALLOWED[key]) out.push(`${key}: ${len} lines`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function sourceFiles(dir = 'src'): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts')) out.push(relative('.', p).split(sep).join('/'));
  }
  return out.sort();
}

test(`no file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES} lines in src/`, () => {
  const found = sourceFiles().flatMap((f) => oversize(f, readFileSync(f, 'utf8')));
  assert.equal(found, [], `too long:\n  ${found.join('\n  ')}`);
});

test('the size check counts file lines and function lines', () => {
  const body = Array.from({ length: 81 }, (_, i) => `  const v${i} = ${i};`).join('\n');
  const text = `export function long() {\n${body}\n}\nconst short = () => 1;\n` + '// filler\n'.repeat(400);
  assert.equal(oversize('src/x.ts', text), ['src/x.ts: 484 lines', 'src/x.ts:long: 83 lines']);
  assert.equal(oversize('src/y.ts', 'export const f = () => {\n  return 1;\n};\n'), []);
});

test.run();
