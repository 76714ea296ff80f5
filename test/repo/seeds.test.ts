/**
 * Every property in test/ runs with a fixed seed (test/support/seeds.ts, docs/development.md "Seeds"):
 * each fc.assert call passes seeded(SEED, RUNS), or a literal seed for a kept counterexample.
 * Without one, fast-check draws a new seed on every run and CI can fail on a machine where it
 * passed before.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { seeded } from '../support/seeds.ts';

const s = suite('property seeds');

/** Each `fc.assert(...)` call in `source` (TypeScript's parser) and whether it has a fixed seed. */
export function assertCalls(source: string, file = 'x.ts'): { text: string; seeded: boolean }[] {
  const calls: { text: string; seeded: boolean }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.expression.getText() === 'fc.assert') {
      const opts = node.arguments[1];
      const isSeeded = (e: ts.Expression) => ts.isCallExpression(e) && e.expression.getText() === 'seeded';
      const fixed =
        !!opts &&
        (isSeeded(opts) ||
          (ts.isObjectLiteralExpression(opts) &&
            opts.properties.some(
              (p) =>
                (ts.isSpreadAssignment(p) && isSeeded(p.expression)) ||
                (ts.isPropertyAssignment(p) && p.name.getText() === 'seed' && ts.isNumericLiteral(p.initializer)),
            )));
      calls.push({ text: node.getText(), seeded: fixed });
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
    assertCalls(
      'fc.assert(p, { numRuns: 5 }); fc.assert(p, { seed: 3, numRuns: 5 }); fc.assert(p, { ...seeded(3, 5), verbose: 1 }); fc.assert(p, { seed: Date.now() });',
    ).map((c) => c.seeded),
    [false, true, true, false],
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
  assert.equal(unseeded, [], 'each passes seeded(SEED, RUNS) from test/support/seeds.ts');
});

s('seeded(): the fixed seed and run count unless FC_SEED / FC_RUNS are set', () => {
  if (process.env.FC_SEED || process.env.FC_RUNS) return; // npm run test:properties:fresh
  assert.equal(seeded(42, 7), { seed: 42, numRuns: 7 });
});

s.run();
