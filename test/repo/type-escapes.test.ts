/**
 * The budgets of src/ for the places that step outside the type checker (docs/architecture.md
 * "Types"): explicit `any`, `as` assertions and non-null `!`, counted by scripts/type-escapes.ts.
 * Each budget is the count src/ has reached: a change may lower a count, never raise it. A change
 * that lowers one lowers its budget here in the same commit, so the count cannot creep back.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { escapesIn, escapesOf, type Escape } from '../../scripts/type-escapes.ts';

/** The most of each kind src/ may hold. */
const BUDGETS: Record<Escape['kind'], number> = { any: 0, as: 33, '!': 2 };

const escapes = escapesIn('src');

for (const [kind, budget] of Object.entries(BUDGETS)) {
  test(`src/ holds at most ${budget} \`${kind}\``, () => {
    const found = escapes.filter((e) => e.kind === kind);
    const places = found.map((e) => `src/${e.file}:${e.line}  ${e.text}`).join('\n');
    assert.ok(
      found.length <= budget,
      `${found.length} \`${kind}\` in src/, the budget is ${budget}: narrow with a check or a better type instead ` +
        `(docs/architecture.md "Types"); \`npx tsx scripts/type-escapes.ts --list\` names each:\n${places}`,
    );
  });
}

test('docs/architecture.md "Types" states these budgets', () => {
  const section = readFileSync('docs/architecture.md', 'utf8').split('\n## Types\n')[1]?.split('\n## ')[0] ?? '';
  const stated = Object.fromEntries([...section.matchAll(/^\| `([^`]+)` \| (\d+) \|$/gm)].map((m) => [m[1], Number(m[2])]));
  assert.equal(stated, BUDGETS);
});

test('the counter reads escapes from the syntax tree: strings and comments never count, `as const` is no assertion', () => {
  const kinds = (src: string) => escapesOf('x.ts', src).map((e) => e.kind);
  assert.equal(kinds('const a: any = 1; const b = a as string; const c = b!; const d = [1] as const;'), ['any', 'as', '!']);
  assert.equal(kinds('// any as x!\nconst s = "v as any!";'), []);
});

test.run();
