/**
 * The golden-file helper (`golden()` of test/support/render.ts; docs/development.md "Test
 * layout"): a missing golden file fails the suite unless UPDATE_GOLDEN=1 asks for it to be
 * written, so a renderer's output is never compared with a file the same run just wrote; a
 * differing file fails naming its first differing line; and every file in test/support/golden/
 * is compared by some suite (one nobody reads checks nothing).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GOLDEN_DIR, ROOT, golden } from '../support/render.ts';

/** Runs `fn` with UPDATE_GOLDEN and CI as given (undefined: unset), restoring both after. */
function withEnv(env: { UPDATE_GOLDEN?: string; CI?: string }, fn: () => void): void {
  const saved = { UPDATE_GOLDEN: process.env.UPDATE_GOLDEN, CI: process.env.CI };
  for (const k of ['UPDATE_GOLDEN', 'CI'] as const) {
    if (env[k] === undefined) delete process.env[k];
    else process.env[k] = env[k];
  }
  try {
    fn();
  } finally {
    for (const k of ['UPDATE_GOLDEN', 'CI'] as const) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

function thrown(fn: () => void): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return '(nothing was thrown)';
}

for (const ci of [undefined, 'true']) {
  test(`a missing golden file fails and is not written (CI ${ci ?? 'unset'})`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'bootcplan-golden-'));
    try {
      withEnv({ CI: ci }, () => {
        const message = thrown(() => golden('missing.txt', 'output\n', dir));
        assert.match(message, /golden file .*missing\.txt is missing/);
        // The way to write it, with this suite's own file.
        assert.match(message, /UPDATE_GOLDEN=1 npx tsx test\/run\.ts test\/repo\/golden\.test\.ts/);
      });
      assert.not.ok(existsSync(join(dir, 'missing.txt')), 'nothing written without UPDATE_GOLDEN=1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('UPDATE_GOLDEN=1 writes a missing golden file, and rewrites one that differs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-golden-'));
  try {
    withEnv({ UPDATE_GOLDEN: '1' }, () => golden('new/out.txt', 'first\n', dir));
    assert.is(readFileSync(join(dir, 'new/out.txt'), 'utf8'), 'first\n');
    withEnv({ UPDATE_GOLDEN: '1' }, () => golden('new/out.txt', 'second\n', dir));
    assert.is(readFileSync(join(dir, 'new/out.txt'), 'utf8'), 'second\n');
    withEnv({}, () => golden('new/out.txt', 'second\n', dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a golden file that differs fails naming its first differing line, and is left as it was', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-golden-'));
  try {
    writeFileSync(join(dir, 'out.txt'), 'a\nb\nc\n');
    withEnv({}, () => {
      const message = thrown(() => golden('out.txt', 'a\nB\nc\n', dir));
      assert.match(message, /differs from .*out\.txt at line 2/);
      assert.match(message, /expected: "b"/);
      assert.match(message, /actual: {3}"B"/);
    });
    assert.is(readFileSync(join(dir, 'out.txt'), 'utf8'), 'a\nb\nc\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every file in test/support/golden/ is named by a suite', () => {
  const suites: string[] = [];
  const walk = (p: string) => {
    for (const e of readdirSync(p)) {
      const f = join(p, e);
      if (statSync(f).isDirectory()) {
        if (e !== 'golden' && e !== 'fixtures') walk(f);
      } else if (f.endsWith('.ts')) suites.push(readFileSync(f, 'utf8'));
    }
  };
  walk(join(ROOT, 'test'));
  const unread = readdirSync(GOLDEN_DIR).filter((name) => !suites.some((text) => text.includes(name)));
  assert.equal(unread, [], 'golden files no suite names (remove them, or compare them)');
});

test.run();
