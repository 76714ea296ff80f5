/**
 * Every export of src/ is imported by something (src/, bin/, bench/, scripts/ or test/): an
 * export nothing imports is either dead or used only by its own file, and then it is no export
 * (docs/architecture.md "One line per file": a file's exports are what other files use of it).
 * Read from the text: `export` declarations and `export { ... }` lists of src/; named,
 * namespace (`* as`, which counts as using all) and re-export imports, static and dynamic.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** Exports public on purpose although nothing in the repository imports them, each with why. */
const ALLOWED: Record<string, string> = {
  'src/domain/alert-matchers.ts#MATCHER_OPS': 'the list the MatcherOp union is spelled from (one list, no second spelling)',
  'src/domain/health-verdict.ts#MEASUREMENT_OUTCOMES': 'the list the MeasurementOutcome union is spelled from',
  'src/domain/health-verdict.ts#HEALTH_ERROR_KINDS': 'the list the HealthErrorKind union is spelled from',
  'src/fleet/run-events.ts#FLEET_CLUSTER_OUTCOMES': 'the list the FleetClusterOutcome union is spelled from',
  'src/fleet/run-events.ts#FLEET_HALT_REASONS': 'the list the FleetHaltReason union is spelled from',
};

function files(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) {
      if (e !== 'node_modules' && e !== 'fixtures' && e !== 'golden') files(p, out);
    } else if (/\.(ts|mts|mjs|js)$/.test(p)) out.push(p);
  }
  return out;
}

const DECL = /^export\s+(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;
const LIST = /^export\s+(?:type\s+)?\{([^}]*)\}(?!\s*from)/gm;
const IMPORT = /(?:import|export)\s+(?:type\s+)?([\s\S]*?)\s+from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function exportsOf(text: string): string[] {
  const names = [...text.matchAll(DECL)].map((m) => m[1]);
  for (const m of text.matchAll(LIST))
    for (const part of m[1].split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()
        ?.trim();
      if (name) names.push(name);
    }
  return names;
}

/** `${file}#${name}` for every name imported from a file of the repository; `${file}#*` for a namespace or dynamic import. */
function importsOf(file: string, text: string, into: Set<string>): void {
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[2] ?? m[3];
    if (!spec.startsWith('.')) continue;
    const target = relative(ROOT, resolve(dirname(file), spec));
    const clause = m[1];
    if (clause === undefined || /\*/.test(clause)) {
      into.add(`${target}#*`);
      continue;
    }
    const braces = /\{([^}]*)\}/.exec(clause)?.[1] ?? '';
    for (const part of braces.split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]
        ?.trim();
      if (name) into.add(`${target}#${name}`);
    }
    const dflt = clause
      .replace(/\{[^}]*\}/, '')
      .replace(/,/g, '')
      .trim();
    if (dflt && dflt !== 'type') into.add(`${target}#default`);
  }
}

const all = ['src', 'bin', 'bench', 'scripts', 'test'].flatMap((d) => files(join(ROOT, d)));
const imported = new Set<string>();
for (const f of all) importsOf(f, readFileSync(f, 'utf8'), imported);

const unimported: string[] = [];
for (const f of all.filter((f) => relative(ROOT, f).startsWith('src/'))) {
  const rel = relative(ROOT, f);
  if (Object.keys(ALLOWED).some((a) => rel === a || (a.endsWith('/') && rel.startsWith(a)))) continue;
  if (imported.has(`${rel}#*`)) continue;
  for (const name of exportsOf(readFileSync(f, 'utf8')))
    if (!imported.has(`${rel}#${name}`) && !(`${rel}#${name}` in ALLOWED)) unimported.push(`${rel}#${name}`);
}

test('every export of src/ is imported somewhere, or allowed with a reason', () => {
  assert.equal(
    unimported,
    [],
    `${unimported.length} exports nothing imports: un-export what only its own file uses, remove what nothing uses:\n${unimported.join('\n')}`,
  );
});

test('the reader finds exports and imports of every form', () => {
  assert.equal(exportsOf('export const a = 1;\nexport async function b() {}\nexport type C = 1;\nexport { d, e as f };\nexport { g } from "./x.ts";'), [
    'a',
    'b',
    'C',
    'd',
    'f',
  ]);
  const into = new Set<string>();
  importsOf(
    join(ROOT, 'src/x/y.ts'),
    "import { a, type B, c as d } from './z.ts';\nimport * as n from '../w.ts';\nexport { e } from './v.ts';\nconst m = await import('./u.ts');",
    into,
  );
  assert.equal([...into].sort(), ['src/w.ts#*', 'src/x/u.ts#*', 'src/x/v.ts#e', 'src/x/z.ts#B', 'src/x/z.ts#a', 'src/x/z.ts#c'].sort());
});

test('every allowed entry still names something', () => {
  for (const a of Object.keys(ALLOWED)) {
    const path = a.split('#')[0];
    assert.ok(
      all.some((f) => relative(ROOT, f) === path || relative(ROOT, f).startsWith(path)),
      `${a}: nothing of src/ is there any more`,
    );
  }
});

test.run();
