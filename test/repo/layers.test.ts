/**
 * The one-way house (docs/architecture.md "The layers"): reads every import of src/ with
 * TypeScript's parser and fails on an import of a folder that is not below the importing one
 * (types count as much as code: `import type` too), on an import of fleet/ from the
 * single-cluster core, on an import of a higher room of apply/ (APPLY_ROOMS), on any import cycle
 * between files (of code or of types alike), and on any import of the CLI entry; and keeps commander in cli/, in every file of it. TypeScript lets all of these through; this test is the check a compiler with package
 * rules would give for free.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import ts from 'typescript';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, relative, sep } from 'node:path';

/**
 * The folders of src/, lowest first: a folder may import (at run time or for types) only the
 * folders of a lower rank. kube/ and sim/ share a rank: two implementations of the driver ports,
 * neither imports the other. app/ holds one function per command, cli/ their commander wiring.
 */
export const ORDER: readonly (readonly string[])[] = [
  ['base'],
  ['cluster'],
  ['domain'],
  ['rollout-spec'],
  ['plan'],
  ['apply'],
  ['kube', 'sim'],
  ['render'],
  ['fleet'],
  ['app'],
  ['cli'],
];

/**
 * The rooms of src/apply, lowest first, by the same rule: a room imports only the rooms below it.
 * ports/ is what kube/ and sim/ implement and read (the driver, health, policy, events, API limits,
 * views) and imports nothing else of apply/; engine/ is what a run is given and keeps (context,
 * lease, progress, changes, stops); gates/ (the gates and the way back) and report/ (the rollout
 * status and report) share a rank and never import each other; pools/ are the pool runners. The
 * files at the top of apply/ (applier.ts, the door) stand above every room.
 */
export const APPLY_ROOMS: readonly (readonly string[])[] = [['ports'], ['engine'], ['gates', 'report'], ['pools']];

/** The fleet is a slice above the single-cluster core: only these folders may import fleet/. */
export const FLEET_IMPORTERS: readonly string[] = ['fleet', 'app', 'cli'];

const rankOf = (folder: string): number => ORDER.findIndex((rank) => rank.includes(folder));

export interface ImportEdge {
  from: string; // path below src/, e.g. "plan/planner.ts"
  to: string;
  /** Erased at run time: `import type`, `import { type A }` only, `export type`, `typeof import()`. */
  typeOnly: boolean;
}

/** The relative imports of one source file (static, re-exports, dynamic and in types), from its syntax tree. */
export function importsOf(file: string, source: string): ImportEdge[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: ImportEdge[] = [];
  const add = (spec: ts.Node | undefined, typeOnly: boolean) => {
    if (!spec || !ts.isStringLiteralLike(spec) || !spec.text.startsWith('.')) return;
    out.push({
      from: file,
      to: relative('.', join(dirname(file), spec.text))
        .split(sep)
        .join('/'),
      typeOnly,
    });
  };
  const visit = (n: ts.Node) => {
    if (ts.isImportDeclaration(n)) add(n.moduleSpecifier, importIsTypeOnly(n.importClause));
    else if (ts.isExportDeclaration(n))
      add(
        n.moduleSpecifier,
        n.isTypeOnly ||
          (!!n.exportClause && ts.isNamedExports(n.exportClause) && n.exportClause.elements.length > 0 && n.exportClause.elements.every((e) => e.isTypeOnly)),
      );
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) add(n.moduleReference.expression, n.isTypeOnly);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) add(n.arguments[0], false);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) add(n.argument.literal, true);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** `import type X`, or named imports that are all `type` (with no default or namespace import): erased. */
function importIsTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false; // `import './x.ts'`: for its effects
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return !clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

const folderOf = (p: string) => p.split('/')[0];

/** The room of a file of apply/ ('' for the files at its top, the door), else null. */
const roomOf = (p: string): string | null => {
  const parts = p.split('/');
  return parts[0] !== 'apply' ? null : parts.length > 2 ? parts[1] : '';
};
/** A room's rank: the files at the top of apply/ above every room; -1 for a room not in APPLY_ROOMS. */
const roomRank = (room: string): number => (room === '' ? APPLY_ROOMS.length : APPLY_ROOMS.findIndex((rank) => rank.includes(room)));

/** Every edge that breaks the order or the fleet rule, as "from -> to (why)". */
export function layerViolations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const a = folderOf(e.from);
    const b = folderOf(e.to);
    if (e.to === 'cli/main.ts') {
      out.push(`${e.from} -> ${e.to} (nothing imports the CLI entry)`);
      continue;
    }
    if (a === b) {
      const [ra, rb] = [roomOf(e.from), roomOf(e.to)];
      if (ra === null || rb === null || ra === rb) continue;
      if (roomRank(ra) < 0) out.push(`${e.from} -> ${e.to} (room apply/${ra} is not in the rooms' order)`);
      else if (roomRank(rb) < 0) out.push(`${e.from} -> ${e.to} (room apply/${rb} is not in the rooms' order)`);
      else if (roomRank(rb) >= roomRank(ra))
        out.push(`${e.from} -> ${e.to} (apply/${ra} may not import ${rb ? `apply/${rb}` : 'the top of apply/'}${e.typeOnly ? ', types included' : ''})`);
      continue;
    }
    if (rankOf(a) < 0) out.push(`${e.from} -> ${e.to} (folder src/${a} is not in the layer order)`);
    else if (rankOf(b) < 0) out.push(`${e.from} -> ${e.to} (folder src/${b} is not in the layer order)`);
    else if (b === 'fleet' && !FLEET_IMPORTERS.includes(a)) out.push(`${e.from} -> ${e.to} (only ${FLEET_IMPORTERS.join('/, ')}/ import fleet/)`);
    else if (rankOf(b) >= rankOf(a)) out.push(`${e.from} -> ${e.to} (${a} may not import ${b}${e.typeOnly ? ', types included' : ''})`);
  }
  return [...new Set(out)].sort();
}

/**
 * Import cycles between files; `types` false: run-time edges only (type-only imports are erased),
 * true: every edge. A circle of types runs nothing, but its files can only be read, moved and
 * tested together, so the house has none of either kind.
 */
export function importCycles(edges: readonly ImportEdge[], types: boolean): string[][] {
  const graph = new Map<string, string[]>();
  for (const e of edges) if (types || !e.typeOnly) graph.set(e.from, [...(graph.get(e.from) ?? []), e.to]);
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

/** The .ts files below src/, as paths below it. */
function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(relative('src', p).split(sep).join('/'));
    }
  };
  walk('src');
  return files;
}

/** The text of a section of a Markdown document: from its heading to the next heading of its level. */
function sectionOf(doc: string, heading: string): string {
  const start = doc.indexOf(heading + '\n');
  assert.ok(start >= 0, `no section "${heading}"`);
  const end = doc.indexOf('\n## ', start + heading.length);
  return doc.slice(start, end < 0 ? doc.length : end);
}

/** Whether the source imports the package `name` (code or types). */
export function importsPackage(file: string, source: string, name: string): boolean {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  return sf.statements.some(
    (n) =>
      (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) &&
      !!n.moduleSpecifier &&
      ts.isStringLiteralLike(n.moduleSpecifier) &&
      n.moduleSpecifier.text === name,
  );
}

const sourceEdges = (): ImportEdge[] => sourceFiles().flatMap((f) => importsOf(f, readFileSync(join('src', f), 'utf8')));

test('every import of src/ goes down the layer order, types included; only fleet/, app/ and cli/ import fleet/', () => {
  const found = layerViolations(sourceEdges());
  assert.equal(found, [], `imports that break the layers:\n  ${found.join('\n  ')}`);
});

test('no import cycle between files of src/: none at run time, none of types', () => {
  const edges = sourceEdges();
  const runtime = importCycles(edges, false).map((c) => c.join(' <-> '));
  assert.equal(runtime, [], `run-time cycles:\n  ${runtime.join('\n  ')}`);
  const all = importCycles(edges, true).map((c) => c.join(' <-> '));
  assert.equal(all, [], `import cycles (types included):\n  ${all.join('\n  ')}`);
});

test('the checker reports a back edge of types, a sibling, the fleet from the core, the CLI entry, the rooms of apply/ and cycles of code and of types', () => {
  const edges = [
    ...importsOf('domain/rules.ts', "import { buildPlan } from '../plan/planner.ts';\nimport type { KObject } from '../cluster/types.ts';\n"),
    ...importsOf(
      'domain/other.ts',
      "import { type Plan, type PlanPool } from '../plan/types.ts';\nimport type { RolloutSpec } from '../rollout-spec/types.ts';\nimport { viewNode } from '../cluster/snapshot.ts';",
    ),
    ...importsOf(
      'render/text.ts',
      "export { x } from '../cli/main.ts';\nconst k = await import('../kube/index.ts');\ntype R = typeof import('../fleet/runner.ts');",
    ),
    ...importsOf('kube/driver.ts', "import type { SimCluster } from '../sim/cluster.ts';"),
    ...importsOf('app/fleet-apply.ts', "import { runFleet } from '../fleet/runner.ts';"),
    ...importsOf('sim/driver.ts', "export type { FleetRecordStore } from '../fleet/record.ts';"),
    ...importsOf('plan/a.ts', "import { b } from './b.ts';"),
    ...importsOf('plan/b.ts', "import { a } from './a.ts';\nimport type { A } from './a.ts';"),
    ...importsOf('plan/c.ts', "import { type B } from './b.ts';\n// import { x } from '../cli/main.ts';\nconst s = \"import { y } from '../cli/main.ts'\";"),
    ...importsOf('plan/d.ts', "import { c } from './c.ts';"),
    // A circle of types alone: erased at run time, still a circle.
    ...importsOf('plan/e.ts', "import type { F } from './f.ts';"),
    ...importsOf('plan/f.ts', "export type { E } from './e.ts';"),
    // The rooms of apply/: the port room imports no other room, a room no higher one, siblings not each other, none the door.
    ...importsOf('apply/ports/driver.ts', "import type { ApplyContext } from '../engine/context.ts';"),
    ...importsOf('apply/engine/lease.ts', "import { halt } from '../gates/wave-gates.ts';\nimport { isoOf } from '../ports/driver.ts';"),
    ...importsOf('apply/gates/holds.ts', "import type { RolloutStatus } from '../report/rollout-status.ts';"),
    ...importsOf('apply/pools/mco-pool.ts', "import { apply } from '../applier.ts';\nimport { halt } from '../gates/wave-gates.ts';"),
    ...importsOf('apply/staging.ts', "import { x } from './lobby/x.ts';"),
    ...importsOf('apply/applier.ts', "import { runBootcPool } from './pools/bootc-pool.ts';"),
  ];
  assert.equal(layerViolations(edges), [
    'apply/engine/lease.ts -> apply/gates/wave-gates.ts (apply/engine may not import apply/gates)',
    'apply/gates/holds.ts -> apply/report/rollout-status.ts (apply/gates may not import apply/report, types included)',
    'apply/pools/mco-pool.ts -> apply/applier.ts (apply/pools may not import the top of apply/)',
    'apply/ports/driver.ts -> apply/engine/context.ts (apply/ports may not import apply/engine, types included)',
    "apply/staging.ts -> apply/lobby/x.ts (room apply/lobby is not in the rooms' order)",
    'domain/other.ts -> plan/types.ts (domain may not import plan, types included)',
    'domain/other.ts -> rollout-spec/types.ts (domain may not import rollout-spec, types included)',
    'domain/rules.ts -> plan/planner.ts (domain may not import plan)',
    'kube/driver.ts -> sim/cluster.ts (kube may not import sim, types included)',
    'render/text.ts -> cli/main.ts (nothing imports the CLI entry)',
    'render/text.ts -> fleet/runner.ts (only fleet/, app/, cli/ import fleet/)',
    'sim/driver.ts -> fleet/record.ts (only fleet/, app/, cli/ import fleet/)',
  ]);
  // At run time only a.ts <-> b.ts: c.ts imports b.ts for types alone (erased), and e.ts <-> f.ts are types.
  assert.equal(importCycles(edges, false), [['plan/a.ts', 'plan/b.ts']]);
  // Types included, the circle of types too (d -> c -> b is still no circle: b imports nothing of c).
  assert.equal(importCycles(edges, true), [
    ['plan/a.ts', 'plan/b.ts'],
    ['plan/e.ts', 'plan/f.ts'],
  ]);
});

test('cli/ is the commander wiring: every file of it imports commander, and no file outside it does', () => {
  const files = sourceFiles();
  const uses = (f: string) => importsPackage(f, readFileSync(join('src', f), 'utf8'), 'commander');
  assert.equal(
    files.filter((f) => folderOf(f) === 'cli' && !uses(f)),
    [],
    'files of cli/ that do not touch commander: their logic belongs in app/ or below',
  );
  assert.equal(
    files.filter((f) => folderOf(f) !== 'cli' && uses(f)),
    [],
    'files outside cli/ that import commander',
  );
});

test("docs/architecture.md's map of src/ lists every file, and only files that exist", () => {
  const section = sectionOf(readFileSync('docs/architecture.md', 'utf8'), '## One line per file');
  const listed: string[] = [];
  let folder = '';
  for (const line of section.split('\n')) {
    const head = /^\| \*\*([\w-]+)\/\*\*/.exec(line);
    if (head) folder = head[1];
    const file = /^\| `([^`]+)` \|/.exec(line);
    if (file && folder) listed.push(`${folder}/${file[1]}`);
  }
  const files = sourceFiles();
  assert.equal(files.filter((f) => !listed.includes(f)).sort(), [], 'files missing from the map in docs/architecture.md');
  assert.equal(listed.filter((f) => !files.includes(f)).sort(), [], 'entries of the map in docs/architecture.md that are no file');
});

test("docs/architecture.md's table of the layers is the order this test enforces", () => {
  const section = sectionOf(readFileSync('docs/architecture.md', 'utf8'), '## The layers');
  const names = (cell: string) => [...cell.matchAll(/`([\w-]+)\/`/g)].map((m) => m[1]);
  const rows = [...section.matchAll(/^\| ([^|]+) \| ([^|]*) \|/gm)].map((m) => [m[1], m[2]]).filter(([folders]) => names(folders).length > 0);
  assert.equal(
    rows.map(([folders]) => names(folders)),
    ORDER.map((rank) => [...rank]),
    'one row per rank, lowest first',
  );
  rows.forEach(([, below], i) => assert.equal(names(below), ORDER.slice(0, i).flat(), `row ${i + 1} names every folder below it`));
});

test.run();
