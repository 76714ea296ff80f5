/**
 * Every property in test/ runs with a fixed seed (test/support/seeds.ts, docs/development.md "Seeds"):
 * each fc.assert call passes seeded(SEED, RUNS). Without one, fast-check draws a new seed on every
 * run and CI can fail on a machine where it passed before; with a literal seed instead,
 * FC_SEED=fresh cannot reach the property. A literal seed is allowed only to replay a kept
 * counterexample, in a test whose name says "counterexample".
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { seeded } from '../support/seeds.ts';

const s = suite('property seeds');

/** How an fc.assert call gets its seed: seeded(...), a number literal, or not at all. */
type SeedKind = 'seeded' | 'literal' | 'none';

/** The name of the uvu test a node is in: the nearest enclosing call `x('name', fn)`. */
function testName(node: ts.Node): string | null {
  for (let n = node.parent; n; n = n.parent) {
    if (!ts.isCallExpression(n) || n.arguments.length < 2) continue;
    const [name, fn] = n.arguments;
    if (ts.isStringLiteralLike(name) && (ts.isArrowFunction(fn) || ts.isFunctionExpression(fn))) return name.text;
  }
  return null;
}

function seedKind(opts: ts.Expression | undefined, seededNames: Set<string>): SeedKind {
  if (!opts) return 'none';
  const isSeeded = (e: ts.Expression) => (ts.isCallExpression(e) && e.expression.getText() === 'seeded') || (ts.isIdentifier(e) && seededNames.has(e.text));
  if (isSeeded(opts)) return 'seeded';
  if (!ts.isObjectLiteralExpression(opts)) return 'none';
  if (opts.properties.some((p) => ts.isSpreadAssignment(p) && isSeeded(p.expression))) return 'seeded';
  const literal = opts.properties.some((p) => ts.isPropertyAssignment(p) && p.name.getText() === 'seed' && ts.isNumericLiteral(p.initializer));
  return literal ? 'literal' : 'none';
}

/**
 * Each `fc.assert(...)` call in `source` (TypeScript's parser) and whether it has a fixed seed the
 * FC_SEED variable can override: seeded(...) (directly, spread, or a const set to it), or a
 * literal seed in a test whose name says "counterexample".
 */
export function assertCalls(source: string, file = 'x.ts'): { text: string; seeded: boolean; kind: SeedKind }[] {
  const calls: { text: string; seeded: boolean; kind: SeedKind }[] = [];
  const seededNames = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && seedKind(node.initializer, seededNames) === 'seeded')
      seededNames.add(node.name.text);
    if (ts.isCallExpression(node) && node.expression.getText() === 'fc.assert') {
      const kind = seedKind(node.arguments[1], seededNames);
      const counterexample = /counterexample/i.test(testName(node) ?? '');
      calls.push({ text: node.getText(), kind, seeded: kind === 'seeded' || (kind === 'literal' && counterexample) });
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true));
  return calls;
}

function suites(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) return e === 'fixtures' || e === 'golden' ? [] : suites(p);
    return p.endsWith('.ts') && e !== 'seeds.test.ts' ? [p] : [];
  });
}

s('the check finds an unseeded call and a seeded one ', () => {
  const src = "fc.assert(fc.property(a, (x) => { f(')'); }));\nfc.assert(fc.property(a, (x) => g(x)), seeded(7, 10));";
  const calls = assertCalls(src);
  assert.is(calls.length, 2);
  assert.equal(
    calls.map((c) => c.seeded),
    [false, true],
  );
  assert.equal(
    assertCalls('fc.assert(p, { numRuns: 5 }); fc.assert(p, { ...seeded(3, 5), verbose: 1 }); fc.assert(p, { seed: Date.now() });').map((c) => c.seeded),
    [false, true, false],
  );
  const opts = "const opts = seeded(3, 80);\ns('gates fail', async () => { await fc.assert(p, opts); });";
  assert.equal(
    assertCalls(opts).map((c) => c.seeded),
    [true],
    'a const set to seeded(...)',
  );
});

s('a literal seed FC_SEED cannot override is refused, except in a kept counterexample', () => {
  const src = `s('property: cuts fit', () => { fc.assert(p, { seed: 7, numRuns: 300 }); });
s('kept counterexample (fresh seed 751318129): the rerun halts', async () => {
  await fc.assert(p, { seed: 751318129, numRuns: 60 });
});`;
  assert.equal(
    assertCalls(src).map((c) => [c.kind, c.seeded]),
    [
      ['literal', false],
      ['literal', true],
    ],
  );
});

s('every fc.assert in test/ has a fixed seed', () => {
  const unseeded: string[] = [];
  let total = 0;
  for (const file of suites('test')) {
    for (const call of assertCalls(readFileSync(file, 'utf8'), file)) {
      total++;
      if (!call.seeded) unseeded.push(`${file}: ${call.text.slice(0, 80).replace(/\s+/g, ' ')}...`);
    }
  }
  assert.ok(total >= 17, `${total} fc.assert calls found`);
  assert.equal(unseeded, [], 'each passes seeded(SEED, RUNS) from test/support/seeds.ts (a literal seed only in a test named "kept counterexample ...")');
});

s('seeded(): the fixed seed and run count unless FC_SEED / FC_RUNS are set', () => {
  if (process.env.FC_SEED || process.env.FC_RUNS) return; // npm run test:properties:fresh
  assert.equal(seeded(42, 7), { seed: 42, numRuns: 7 });
});

s.run();
