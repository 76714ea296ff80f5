/**
 * Which suites test a source file (docs/development.md "Test layout"): the suites that import it,
 * themselves or through the shared helpers of test/support/; for a module no suite imports (one
 * tested through its callers), the suites of the nearest modules of src/ that import it. Read
 * from the import statements (type-only imports left out: they run no code), so the index is
 * never stale. `npx tsx test/run.ts --for src/FILE.ts` runs what it finds;
 * test/repo/test-index.test.ts checks that every module of src/ is reached by some suite.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

// `import x from '...'`, `export { x } from '...'`, `import '...'` and `import('...')`; a
// `type` right after import/export marks a type-only import.
const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) {
      if (e !== 'fixtures' && e !== 'golden' && e !== 'node_modules') walk(p, out);
    } else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** The files of this repository a file imports at run time (absolute paths). */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    if (m[1]) continue;
    const spec = m[2] ?? m[3];
    if (spec.startsWith('.')) out.push(resolve(dirname(file), spec));
  }
  return out;
}

export interface TestIndex {
  /** Every module of src/, relative to the root. */
  sources: string[];
  /** Every suite (test/**\/*.test.ts, fixtures left out), relative to the root. */
  suites: string[];
  /** Module of src/ -> the suites importing it, directly or through test/support/. */
  direct: Map<string, string[]>;
  /** Module of src/ -> the modules of src/ importing it at run time. */
  importers: Map<string, string[]>;
}

export function buildIndex(root = ROOT): TestIndex {
  const rel = (p: string) => relative(root, p);
  const sources = walk(join(root, 'src')).map(rel);
  const suites = walk(join(root, 'test'))
    .filter((f) => f.endsWith('.test.ts'))
    .map(rel);
  const srcSet = new Set(sources);
  const isSrc = (f: string) => srcSet.has(f);
  const isHelper = (f: string) => f.startsWith('test/') && !f.endsWith('.test.ts');
  // What a suite runs of src/: its own imports, and those of the helpers it imports (and theirs).
  const reached = (suite: string): Set<string> => {
    const out = new Set<string>();
    const seen = new Set<string>();
    const visit = (f: string) => {
      if (seen.has(f)) return;
      seen.add(f);
      let imports: string[];
      try {
        imports = runtimeImports(join(root, f)).map(rel);
      } catch {
        return; // a path a suite builds on purpose (a fixture of a check), not a module
      }
      for (const i of imports) {
        if (isSrc(i)) out.add(i);
        else if (isHelper(i)) visit(i);
      }
    };
    visit(suite);
    return out;
  };
  const direct = new Map<string, string[]>();
  for (const s of suites) for (const f of reached(s)) direct.set(f, [...(direct.get(f) ?? []), s]);
  const importers = new Map<string, string[]>();
  for (const f of sources) for (const i of runtimeImports(join(root, f)).map(rel)) if (isSrc(i)) importers.set(i, [...(importers.get(i) ?? []), f]);
  return { sources, suites, direct, importers };
}

export interface Found {
  /** The modules whose suites these are: the file itself, or the nearest modules importing it. */
  via: string[];
  /** How many imports away those modules are (0: the file itself). */
  distance: number;
  suites: string[];
}

/**
 * The suites nearest to a module of src/: those importing it, else those importing the modules
 * that import it, one step further each time. Null when none reaches it.
 */
export function suitesFor(index: TestIndex, file: string): Found | null {
  let level = [file];
  const seen = new Set(level);
  for (let distance = 0; level.length; distance++) {
    const suites = [...new Set(level.flatMap((f) => index.direct.get(f) ?? []))].sort();
    if (suites.length) return { via: level, distance, suites };
    const next: string[] = [];
    for (const f of level)
      for (const i of index.importers.get(f) ?? [])
        if (!seen.has(i)) {
          seen.add(i);
          next.push(i);
        }
    level = next.sort();
  }
  return null;
}
