/**
 * Counts the places in src/ where the code steps outside the type checker, per folder:
 * explicit `any` (every `any` keyword in a type: `: any`, `as any`, `any[]`, `Record<string, any>`),
 * `as` assertions (`as const` excluded: it narrows, it asserts nothing) and non-null `!` assertions.
 * Read with TypeScript's own parser, so strings and comments never count.
 *
 *   npx tsx scripts/type-escapes.ts          # table per folder
 *   npx tsx scripts/type-escapes.ts --list   # and every place, file:line
 */
import ts from 'typescript';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface Escape {
  kind: 'any' | 'as' | '!';
  file: string; // path below src/
  line: number;
  text: string;
}

/** The escapes of one source file. */
export function escapesOf(file: string, source: string): Escape[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: Escape[] = [];
  const add = (kind: Escape['kind'], n: ts.Node) => {
    const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
    out.push({ kind, file, line, text: n.getText(sf).replace(/\s+/g, ' ').slice(0, 100) });
  };
  const visit = (n: ts.Node) => {
    if (n.kind === ts.SyntaxKind.AnyKeyword) add('any', n);
    else if (ts.isAsExpression(n) || ts.isTypeAssertionExpression(n)) {
      const t = n.type;
      const isConst = ts.isTypeReferenceNode(t) && ts.isIdentifier(t.typeName) && t.typeName.text === 'const';
      if (!isConst) add('as', n);
    } else if (ts.isNonNullExpression(n)) add('!', n);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** Every escape below a source root (src/ by default), paths relative to it. */
export function escapesIn(root = 'src'): Escape[] {
  return tsFiles(root).flatMap((p) => escapesOf(relative(root, p).split('\\').join('/'), readFileSync(p, 'utf8')));
}

function table(escapes: readonly Escape[]): string {
  const folders = [...new Set(escapes.map((e) => e.file.split('/')[0]))].sort();
  const count = (f: string | null, k: Escape['kind']) => escapes.filter((e) => (f === null || e.file.split('/')[0] === f) && e.kind === k).length;
  const rows = [...folders.map((f) => [f, count(f, 'any'), count(f, 'as'), count(f, '!')]), ['total', count(null, 'any'), count(null, 'as'), count(null, '!')]];
  return [['folder', 'any', 'as', '!'], ...rows]
    .map(([f, a, s, b]) => `${String(f).padEnd(10)}${String(a).padStart(6)}${String(s).padStart(6)}${String(b).padStart(6)}`)
    .join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const all = escapesIn('src');
  console.log(table(all));
  if (process.argv.includes('--list')) {
    for (const e of all) console.log(`${e.kind.padEnd(4)}src/${e.file}:${e.line}  ${e.text}`);
  }
}
