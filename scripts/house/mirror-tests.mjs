#!/usr/bin/env node
/**
 * Moves test/ into the layout docs/development.md "Test layout" describes, and rewrites every
 * reference to a moved file. Idempotent: run it again after new flat files appear in test/ and it
 * moves those too (and fixes references to old paths that came in with them).
 *
 *   node scripts/house/mirror-tests.mjs [--dry-run]
 *
 * - A suite (test/NAME.test.ts) goes to test/FOLDER/, FOLDER a folder of src/ (the module the
 *   suite tests), `cli` (a command's behaviour through the CLI) or `repo` (checks of the
 *   repository as a whole); PLACES below says which, a suite it does not list is placed by
 *   placeOf() and printed for review. A leading `FOLDER-` is dropped from the name
 *   (test/kube-lease.test.ts -> test/kube/lease.test.ts) unless that name is taken.
 * - Any other file at the top of test/ is support and goes to test/support/ (SUPPORT names the
 *   new names; a file it does not list keeps its name, less a -harness, -helpers, -builders,
 *   -fixtures or -fakes suffix). test/golden/ goes to test/support/golden/. Left where they are:
 *   test/run.ts and test/runner-self-test.ts (the runner), test/e2e/, test/smoke/, test/tools/,
 *   test/fixtures/ (the runner's fixtures).
 * - Then, in test/, scripts/ and bench/: every relative import (static, dynamic, `import type`,
 *   `typeof import()`) and every `new URL('REL', import.meta.url)` / `resolve(import.meta.dirname,
 *   'REL')` is rewritten for the files' new places; and in every text file of the repository
 *   (docs, READMEs, package.json, .ci/run, comments in src/ ...) a path `test/OLD` becomes
 *   `test/NEW`. Generated outputs (plans/, schema/, golden files, fixtures) are left alone.
 *
 * The moves use `git mv`, so `git status` shows renames; nothing is committed.
 */
import ts from 'typescript';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
process.chdir(ROOT);
const DRY = process.argv.includes('--dry-run');

/** Where each suite of the flat layout goes: the folder of the module it tests. */
const PLACES = {
  apply: [
    'admin-pauses',
    'apply',
    'control-plane-cluster-wide',
    'lock',
    'lock-clocks',
    'mco-in-flight',
    'mid-apply-unavailable',
    'progress-resume',
    'properties',
    'sharing-availability-properties',
    'slots',
    'slots-properties',
    'soft-waves',
    'staging-clock',
    'staging-gate',
    'stopping',
    'stopping-properties',
    'windows-apply',
    'health-gates',
    'health-properties',
    'rollback',
    'rollback-on-failure',
    'rollback-properties',
    'rollback-record',
    'rollback-properties-resume',
    'rollback-resume',
  ],
  cluster: ['kind-shapes', 'snapshot'],
  domain: ['alert-matchers', 'bootimages-cluster', 'budget', 'health-condition', 'health-observe', 'health-verdict', 'waves', 'windows'],
  'rollout-spec': ['bootimages', 'health-schema', 'hostile-snapshot', 'schema', 'spec', 'spec-hostile'],
  plan: [
    'bootimages-effects',
    'bootimages-migration',
    'bootimages-sharing',
    'control-plane',
    'cpms',
    'node-health',
    'odd-cluster-data',
    'ordered-changes',
    'ownership',
    'planner',
    'pool-conflicts',
    'seed-gaps',
    'self-node',
    'sharing-properties',
    'skew',
    'rollback-forecast',
    'rollback-planner',
  ],
  kube: [
    'api-limits',
    'health-credentials',
    'health-source',
    'prometheus-client',
    'rollback-driver',
    'run-record-hostile',
    'kube-hostile-api',
    'kube-lease',
    'kube-pagination',
    'kube-proxy',
    'kube-timers',
    'kube-watch-list',
  ],
  sim: ['sim'],
  render: [
    'bootimages-demo',
    'browser',
    'fuzz-input',
    'progress',
    'render',
    'render-credentials',
    'render-diff',
    'render-hostile-html',
    'render-hostile-markdown',
    'render-html',
    'render-markdown',
    'render-progress',
    'render-rehearsal',
    'render-shapes',
    'render-slots',
    'render-terminal',
    'render-health',
    'render-rollback',
  ],
  fleet: [
    'fleet-argocd',
    'fleet-argocd-hostile',
    'fleet-batches',
    'fleet-hostile',
    'fleet-plan',
    'fleet-progress',
    'fleet-rehearse',
    'fleet-render',
    'fleet-runner',
    'fleet-schema',
    'fleet-spec',
    'render-fleet-rehearsal',
    'fleet-gates',
  ],
  cli: [
    'cli',
    'cli-manners',
    'cli-reference',
    'cli-unhappy',
    'cluster-identity',
    'completion',
    'files',
    'fleet-apply-cli',
    'fleet-argocd-cli',
    'fleet-cli',
    'fleet-cluster-apply',
    'fleet-identity',
    'fleet-kubeconfig',
    'fleet-live',
    'fleet-ref',
    'fleet-rehearse-cli',
    'fleet-trust',
    'flux-health',
    'gitops',
    'hints',
    'lock-cli',
    'notify',
    'rehearse',
    'sealed-plans',
    'step-status',
    'stopping-process',
    'apply-health-cli',
    'driver-errors',
    'rehearse-health',
    'rollback-cli',
  ],
  repo: ['comments', 'doc-commands', 'doc-links', 'examples', 'github-workflows', 'layers', 'package', 'plans', 'seeds', 'sizes', 'type-escapes'],
};

/** Support files of the flat layout and their names in test/support/ (one style: what they hold). */
const SUPPORT = {
  'apply-harness.ts': 'apply.ts',
  'bootimages-helpers.ts': 'bootimages.ts',
  'builders.ts': 'cluster.ts',
  'cwd.ts': 'cli.ts', // merged into test/support/cli.ts (inDir)
  'fleet-argocd-helpers.ts': 'fleet-argocd.ts',
  'fleet-builders.ts': 'fleet.ts',
  'fleet-rehearse-fixtures.ts': 'fleet-rehearsal.ts',
  'fleet-runner-helpers.ts': 'fleet-runner.ts',
  'fleet-sim-harness.ts': 'fleet-sim.ts',
  'hostile-fixtures.ts': 'hostile.ts',
  'kube-fakes.ts': 'fake-api.ts',
  'render-fixtures.ts': 'render.ts',
};

/** Directories moved whole. */
const DIRECTORIES = { golden: 'support/golden' };

/** What stays at the top of test/. */
const STAYS = new Set(['run.ts', 'runner-self-test.ts', 'e2e', 'smoke', 'tools', 'fixtures', 'support']);

const SUITE = /\.test\.ts$/;
const placed = new Map(Object.entries(PLACES).flatMap(([folder, names]) => names.map((n) => [n, folder])));
const srcFolders = () => readdirSync('src').filter((e) => statSync(join('src', e)).isDirectory());
const folders = () => new Set([...srcFolders(), 'cli', 'repo']);
const posixPath = (p) => p.split('\\').join('/');

// ---------------------------------------------------------------- placing

/** The relative import specifiers of a file, with their positions (from TypeScript's parser). */
function specifiersOf(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const out = [];
  const add = (lit, names = []) => {
    if (lit && ts.isStringLiteralLike(lit)) out.push({ text: lit.text, start: lit.getStart(sf) + 1, end: lit.getEnd() - 1, names });
  };
  const visit = (n) => {
    if (ts.isImportDeclaration(n)) {
      const b = n.importClause?.namedBindings;
      add(n.moduleSpecifier, b && ts.isNamedImports(b) ? b.elements.map((e) => (e.propertyName ?? e.name).text) : []);
    } else if (ts.isExportDeclaration(n)) add(n.moduleSpecifier);
    else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) add(n.arguments[0]);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) add(n.argument.literal);
    else if (ts.isNewExpression(n) && n.expression.getText(sf) === 'URL' && n.arguments?.length === 2 && n.arguments[1].getText(sf) === 'import.meta.url')
      add(n.arguments[0], ['*url']);
    else if (
      ts.isCallExpression(n) &&
      /^(path\.)?resolve$/.test(n.expression.getText(sf)) &&
      n.arguments.length === 2 &&
      n.arguments[0].getText(sf) === 'import.meta.dirname'
    )
      add(n.arguments[1], ['*dir']);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out.filter((s) => s.text === '.' || s.text === '..' || s.text.startsWith('./') || s.text.startsWith('../'));
}

/**
 * A suite PLACES does not list: a suite that runs the CLI (cli() of test/support/cli.ts, run() of
 * the CLI entry or of test/built.ts) goes to cli/; else the folder its name starts with; else
 * the highest folder of src/ it imports (sim/, the test double of the driver ports, only when it
 * imports nothing else); else repo/.
 */
function placeOf(file) {
  const order = ['base', 'cluster', 'domain', 'rollout-spec', 'plan', 'apply', 'kube', 'sim', 'render', 'fleet', 'app', 'cli'];
  const text = readFileSync(file, 'utf8');
  const imported = new Set();
  let runsCli = false;
  for (const s of specifiersOf(file, text)) {
    const target = posixPath(relative(ROOT, resolve(dirname(file), s.text)));
    if (target.startsWith('src/')) imported.add(target.split('/')[1]);
    if (target === 'src/cli/main.ts' && s.names.some((n) => n === 'run' || n === 'buildProgram')) runsCli = true;
    if (/^test\/(support\/)?built\.ts$/.test(target) && s.names.some((n) => n === 'run' || n === 'ensureBuilt')) runsCli = true;
    if (target === 'test/support/cli.ts' && s.names.includes('cli')) runsCli = true;
  }
  if (runsCli) return 'cli';
  const name = file.replace(/^test\//, '').replace(SUITE, '');
  const prefix = [...folders()].find((f) => name === f || name.startsWith(`${f}-`));
  if (prefix) return prefix;
  const ranked = [...imported].filter((f) => order.includes(f)).sort((a, b) => order.indexOf(b) - order.indexOf(a));
  const top = ranked.find((f) => f !== 'sim') ?? ranked[0];
  return top ?? 'repo';
}

/** The moves of this run: [from, to], paths from the repository root. */
function plannedMoves() {
  const moves = [];
  const taken = new Set();
  const unlisted = [];
  for (const e of readdirSync('test').sort()) {
    const from = `test/${e}`;
    if (STAYS.has(e)) continue;
    if (statSync(from).isDirectory()) {
      if (DIRECTORIES[e]) moves.push([from, `test/${DIRECTORIES[e]}`]);
      continue;
    }
    if (SUITE.test(e)) {
      const name = e.replace(SUITE, '');
      let folder = placed.get(name);
      if (!folder) {
        folder = placeOf(from);
        unlisted.push(`${from} -> test/${folder}/ (not in PLACES: placed by its imports; list it to keep it there)`);
      }
      const short = name.startsWith(`${folder}-`) ? name.slice(folder.length + 1) : name;
      const shortPath = `test/${folder}/${short}.test.ts`;
      const clash = taken.has(shortPath) || existsSync(shortPath) || placed.get(short) === folder;
      const to = short !== name && !clash ? shortPath : `test/${folder}/${e}`;
      taken.add(to);
      moves.push([from, to]);
    } else if (/\.(ts|mjs)$/.test(e)) {
      const named = SUPPORT[e] ?? e.replace(/-(harness|helpers|builders|fixtures|fakes)(\.ts)$/, '$2');
      const to = existsSync(`test/support/${named}`) || taken.has(`test/support/${named}`) ? `test/support/${e}` : `test/support/${named}`;
      taken.add(to);
      moves.push([from, to]);
    }
  }
  return { moves, unlisted };
}

/**
 * Every old path -> new path this script knows, from the tables (files already moved by an
 * earlier run included): references to them are rewritten whenever the old path is gone.
 */
function knownMoves(current) {
  const map = new Map(current);
  for (const [old, now] of Object.entries(SUPPORT)) map.set(`test/${old}`, `test/support/${now}`);
  for (const [old, now] of Object.entries(DIRECTORIES)) map.set(`test/${old}`, `test/${now}`);
  for (const [name, folder] of placed) {
    const short = name.startsWith(`${folder}-`) ? name.slice(folder.length + 1) : name;
    for (const candidate of [`test/${folder}/${short}.test.ts`, `test/${folder}/${name}.test.ts`]) {
      if (!map.has(`test/${name}.test.ts`) && existsSync(candidate)) map.set(`test/${name}.test.ts`, candidate);
    }
  }
  for (const old of [...map.keys()]) if (existsSync(old) && !current.some(([f]) => f === old)) map.delete(old);
  return map;
}

// ---------------------------------------------------------------- moving

function move(from, to) {
  if (DRY) return;
  mkdirSync(dirname(to), { recursive: true });
  try {
    execFileSync('git', ['mv', from, to], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch {
    renameSync(from, to); // not tracked (yet)
  }
}

/** The files below `dir` (recursively), skipping node_modules, dist and generated outputs. */
function walk(dir, keep) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir)) {
    const p = posixPath(join(dir, e));
    if (['node_modules', 'dist', '.git', 'golden', 'fixtures'].includes(e)) continue;
    if (statSync(p).isDirectory()) out.push(...walk(p, keep));
    else if (keep(p)) out.push(p);
  }
  return out;
}

/** Follows old -> new through the map (a file moved twice over two runs). */
function follow(map, p) {
  for (let i = 0; i < 10 && map.has(p) && !existsSync(p); i++) p = map.get(p);
  return p;
}

/** Rewrites the relative specifiers of the code files; `origin` maps a file's new path to where it was before this run. */
function rewriteImports(map, origin) {
  const code = [
    ...walk('test', (p) => /\.(ts|mjs)$/.test(p)),
    ...walk('scripts', (p) => /\.(ts|mjs)$/.test(p)),
    ...walk('bench', (p) => /\.(ts|mjs)$/.test(p)),
  ];
  let changed = 0;
  const dangling = [];
  for (const file of code) {
    const was = origin.get(file) ?? file;
    const text = readFileSync(file, 'utf8');
    let out = '';
    let at = 0;
    for (const s of specifiersOf(file, text)) {
      const slash = s.text.endsWith('/') ? '/' : '';
      const target = follow(map, posixPath(relative(ROOT, resolve(dirname(was), s.text))));
      let spec = posixPath(relative(dirname(file), target)) || '.';
      if (!spec.startsWith('.')) spec = `./${spec}`;
      spec += slash && !spec.endsWith('/') ? '/' : '';
      const isPath = s.names[0] === '*url' || s.names[0] === '*dir'; // may name an output yet to be written
      if ((!isPath || spec !== s.text) && !existsSync(resolve(dirname(file), spec))) dangling.push(`${file}: '${s.text}'`);
      if (spec === s.text) continue;
      out += text.slice(at, s.start) + spec;
      at = s.end;
    }
    if (at === 0) continue;
    changed++;
    if (!DRY) writeFileSync(file, out + text.slice(at));
  }
  return { changed, dangling };
}

/** The text files whose mentions of test/ paths are rewritten (generated outputs left alone). */
function textFiles() {
  const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  return tracked.filter(
    (p) =>
      existsSync(p) &&
      !statSync(p).isDirectory() &&
      /(\.(md|ts|mjs|js|sh|ya?ml)|^package\.json|^\.ci\/run|^\.prettierignore|^Containerfile)$/.test(p) &&
      !/^(plans|schema|dist|node_modules|scripts\/house)\/|\/(golden|fixtures)\/|package-lock\.json$/.test(p),
  );
}

function escape(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Rewrites `test/OLD` to `test/NEW` wherever a text names a moved path. */
function rewriteMentions(map) {
  const olds = [...map.keys()].filter((o) => !existsSync(o)).sort((a, b) => b.length - a.length);
  if (!olds.length) return 0;
  const pattern = new RegExp(`(?<![\\w.-])(${olds.map(escape).join('|')})(?![\\w-]|\\.\\w)`, 'g');
  let changed = 0;
  for (const file of textFiles()) {
    const text = readFileSync(file, 'utf8');
    const out = text.replace(pattern, (m) => follow(map, m));
    if (out === text) continue;
    changed++;
    if (!DRY) writeFileSync(file, out);
  }
  return changed;
}

// ---------------------------------------------------------------- run

const started = Date.now();
const { moves, unlisted } = plannedMoves();
for (const [from, to] of moves) move(from, to);
const map = knownMoves(moves);
const origin = new Map(
  moves.flatMap(([from, to]) => {
    if (!statSync(DRY ? from : to).isDirectory()) return [[to, from]];
    return walk(DRY ? from : to, () => true).map((p) => [p, `${from}${p.slice((DRY ? from : to).length)}`]);
  }),
);
const imports = DRY ? { changed: 0, dangling: [] } : rewriteImports(map, origin);
const mentions = DRY ? 0 : rewriteMentions(map);

for (const [from, to] of moves) console.log(`${DRY ? 'would move' : 'moved'} ${from} -> ${to}`);
for (const u of unlisted) console.log(`placed: ${u}`);
console.log(
  `${moves.length} moved, ${imports.changed} files with imports rewritten, ${mentions} files with paths rewritten (${((Date.now() - started) / 1000).toFixed(1)} s)`,
);
if (imports.dangling.length) {
  console.error(`relative paths that lead nowhere:\n  ${imports.dangling.join('\n  ')}`);
  process.exitCode = 1;
}
