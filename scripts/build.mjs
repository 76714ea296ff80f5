#!/usr/bin/env node
/**
 * npm run build (and npm's `prepare` on `npm install` of a clone): compiles src/ to dist/ with
 * tsc (tsconfig.build.json: ESM, source maps with the sources inlined, `.ts` imports rewritten
 * to `.js`), then records what was built into dist/build-info.json: the package version and the
 * git commit of the checkout (`bootcplan version` prints both).
 *   node scripts/build.mjs            build, fail if TypeScript is missing
 *   node scripts/build.mjs --prepare  as npm's prepare: without TypeScript (npm ci --omit=dev)
 *                                     an existing build is kept
 * BOOTCPLAN_COMMIT overrides the commit (a container build without .git).
 *
 * The bins run dist/bundle/: tsc's output bundled with esbuild (a dev dependency, as tsc) into
 * one module per entry (cli/main, cli/version) and one chunk per lazily imported part, with the
 * libraries the CLI always needs (yaml, commander, js-yaml) inside. Loading ~170 files one by
 * one cost more CPU at start-up than the demo plan itself (BENCHMARKS.md "Start-up"). The
 * Kubernetes client stays a package import, loaded by the live commands only; the source maps
 * lead back to the TypeScript sources through tsc's.
 */
import { rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const prepare = process.argv.includes('--prepare');

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  if (prepare && existsSync(new URL('../dist/bundle/main.js', import.meta.url))) {
    console.error('bootcplan: TypeScript is not installed (production install); keeping the existing build in dist/');
    process.exit(0);
  }
  console.error('bootcplan: TypeScript is not installed; run `npm install` (with dev dependencies) to build dist/');
  process.exit(1);
}

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);

/** The commit of the checkout and whether tracked files differ from it; null outside git. */
function gitState() {
  if (process.env.BOOTCPLAN_COMMIT) return { commit: process.env.BOOTCPLAN_COMMIT, dirty: false };
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const commit = git('rev-parse', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no').length > 0;
    return { commit, dirty };
  } catch {
    return { commit: null, dirty: false };
  }
}

let esbuild;
try {
  esbuild = await import(pathToFileURL(createRequire(import.meta.url).resolve('esbuild')).href);
} catch {
  console.error('bootcplan: esbuild is not installed; run `npm install` (with dev dependencies) to build dist/bundle/');
  process.exit(1);
}
await esbuild.build({
  absWorkingDir: root, entryPoints: ['dist/cli/main.js', 'dist/cli/version.js'], outdir: 'dist/bundle',
  bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20', chunkNames: '[name]-[hash]',
  sourcemap: true, legalComments: 'eof', logLevel: 'warning',
  external: ['@kubernetes/client-node'],
  // CommonJS libraries inside an ES module call require() for Node.js built-ins.
  banner: { js: "import { createRequire as __bootcplanRequire } from 'node:module'; const require = __bootcplanRequire(import.meta.url);" },
});

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
writeFileSync(new URL('../dist/build-info.json', import.meta.url), JSON.stringify({ name: pkg.name, version: pkg.version, ...gitState() }, null, 2) + '\n');
