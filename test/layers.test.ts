/**
 * The one-way house (docs/architecture.md "The layers"): reads every import of src/ and
 * fails on a folder edge outside the allowed table, on any run-time import cycle between
 * files, and on any import of the CLI entry. TypeScript lets cycles through; this test is
 * the check a compiler with package rules would give for free.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, resolve, relative, sep } from 'node:path';

type Folder = 'base' | 'cluster' | 'domain' | 'spec' | 'plan' | 'render' | 'apply' | 'kube' | 'sim' | 'fleet' | 'cli';

interface Rule {
  /** Folders whose code this folder may load at run time. */
  runtime: readonly Folder[];
  /** Folders (or single files, `folder/file.ts`) this folder may import types from (erased at run time). */
  types?: readonly string[];
}

/**
 * The allowed edges. base is the leaf everything may use; domain holds the pure upstream
 * rules and sees only the shapes of a cluster and of the spec; the planner sits on domain;
 * renderers and the applier read plans; only the CLI loads the Kubernetes driver and the
 * simulator at run time, and nothing outside cli imports cli.
 */
export const LAYERS: Record<Folder, Rule> = {
  base: { runtime: [] },
  cluster: { runtime: ['base'] },
  domain: { runtime: ['base'], types: ['cluster/types.ts', 'spec/types.ts'] },
  spec: { runtime: ['base', 'domain'] },
  plan: { runtime: ['base', 'cluster', 'domain', 'spec'] },
  render: { runtime: ['base', 'cluster', 'domain', 'spec', 'plan'], types: ['apply', 'sim'] },
  apply: { runtime: ['base', 'cluster', 'domain', 'spec', 'plan'] },
  // The Kubernetes driver implements the applier's ClusterDriver port.
  kube: { runtime: ['base', 'cluster', 'domain', 'apply'] },
  sim: { runtime: ['base', 'cluster', 'domain', 'spec', 'plan', 'apply'] },
  fleet: { runtime: ['base', 'cluster', 'domain', 'spec', 'plan', 'render', 'apply', 'kube', 'sim'] },
  cli: { runtime: ['base', 'cluster', 'domain', 'spec', 'plan', 'render', 'apply', 'kube', 'sim', 'fleet'] },
};

export interface ImportEdge {
  from: string; // path below src/, e.g. "plan/planner.ts"
  to: string;
  typeOnly: boolean;
}

const IMPORT_RE = /(?:^|\n)[ \t]*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

/** The relative imports of one source file (static, re-exports and dynamic). */
export function importsOf(file: string, source: string): ImportEdge[] {
  const out: ImportEdge[] = [];
  for (const m of source.matchAll(IMPORT_RE)) {
    const spec = m[4] ?? m[5];
    if (!spec.startsWith('.')) continue;
    const to = relative('.', join(dirname(file), spec)).split(sep).join('/');
    // `import { type A, type B }` is erased like `import type`.
    const names = m[3] ?? '';
    const braces = /^\{([^}]*)\}$/.exec(names.trim());
    const allTypes = !!braces && braces[1].split(',').map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith('type '));
    out.push({ from: file, to, typeOnly: m[5] === undefined && (!!m[2] || allTypes) });
  }
  return out;
}

const folderOf = (p: string) => p.split('/')[0] as Folder;

/** Every edge that breaks the table, as "from -> to (why)". */
export function layerViolations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const a = folderOf(e.from);
    const b = folderOf(e.to);
    if (e.to === 'cli/main.ts') {
      out.push(`${e.from} -> ${e.to} (nothing imports the CLI entry)`);
      continue;
    }
    if (a === b) continue;
    const rule = LAYERS[a];
    if (!rule) {
      out.push(`${e.from} -> ${e.to} (folder src/${a} is not in the layer table)`);
      continue;
    }
    if (rule.runtime.includes(b)) continue;
    if (e.typeOnly && (rule.types ?? []).some((t) => t === b || t === e.to)) continue;
    out.push(`${e.from} -> ${e.to} (${a} may not ${e.typeOnly ? 'import types from' : 'import'} ${b})`);
  }
  return [...new Set(out)].sort();
}

/** Run-time import cycles between files (type-only imports are erased and do not count). */
export function runtimeCycles(edges: readonly ImportEdge[]): string[][] {
  const graph = new Map<string, string[]>();
  for (const e of edges) if (!e.typeOnly) graph.set(e.from, [...(graph.get(e.from) ?? []), e.to]);
  // Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) cycles.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return cycles;
}

function sourceEdges(): ImportEdge[] {
  const root = resolve('src');
  const edges: ImportEdge[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const rel = relative(root, p).split(sep).join('/');
        edges.push(...importsOf(rel, readFileSync(p, 'utf8')));
      }
    }
  };
  walk(root);
  return edges;
}

test('every import of src/ follows the layer table', () => {
  const found = layerViolations(sourceEdges());
  assert.equal(found, [], `imports that break the layers:\n  ${found.join('\n  ')}`);
});

test('no run-time import cycle between files of src/', () => {
  const found = runtimeCycles(sourceEdges()).map((c) => c.join(' <-> '));
  assert.equal(found, [], `run-time cycles:\n  ${found.join('\n  ')}`);
});

test('the checker reports a forbidden edge, a type import where only types are allowed, and a cycle', () => {
  const edges = [
    ...importsOf('domain/rules.ts', "import { buildPlan } from '../plan/planner.ts';\nimport type { KObject } from '../cluster/types.ts';\n"),
    ...importsOf('domain/other.ts', "import { type Plan, type PlanPool } from '../plan/types.ts';\nimport { viewNode } from '../cluster/snapshot.ts';"),
    ...importsOf('render/text.ts', "export { x } from '../cli/main.ts';\nconst k = await import('../kube/index.ts');"),
    ...importsOf('plan/a.ts', "import { b } from './b.ts';"),
    ...importsOf('plan/b.ts', "import { a } from './a.ts';\nimport type { A } from './a.ts';"),
  ];
  assert.equal(layerViolations(edges), [
    'domain/other.ts -> cluster/snapshot.ts (domain may not import cluster)',
    'domain/other.ts -> plan/types.ts (domain may not import types from plan)',
    'domain/rules.ts -> plan/planner.ts (domain may not import plan)',
    'render/text.ts -> cli/main.ts (nothing imports the CLI entry)',
    'render/text.ts -> kube/index.ts (render may not import kube)',
  ]);
  assert.equal(runtimeCycles(edges), [['plan/a.ts', 'plan/b.ts']]);
});

test('docs/architecture.md\'s map of src/ lists every file, and only files that exist', () => {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  const section = doc.slice(doc.indexOf('## One line per file'));
  const listed: string[] = [];
  let folder = '';
  for (const line of section.split('\n')) {
    const head = /^\| \*\*(\w+)\/\*\*/.exec(line);
    if (head) folder = head[1];
    const file = /^\| `([^`]+)` \|/.exec(line);
    if (file && folder) listed.push(`${folder}/${file[1]}`);
  }
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(relative('src', p).split(sep).join('/'));
    }
  };
  walk('src');
  assert.equal(files.filter((f) => !listed.includes(f)).sort(), [], 'files missing from the map in docs/architecture.md');
  assert.equal(listed.filter((f) => !files.includes(f)).sort(), [], 'entries of the map in docs/architecture.md that are no file');
});

test.run();
