#!/usr/bin/env node
/**
 * npm run build (and npm's `prepack` before `npm pack` / `npm publish`; `prepare` on `npm install`
 * of a clone or a git URL): bundles the TypeScript sources with esbuild into dist/bundle/, the one
 * build the package ships and the bins run, then records what was built in dist/build-info.json:
 * the package version and the git commit of the checkout (`bootcplan version` prints both).
 *   node scripts/build.mjs              build; fails without esbuild
 *   node scripts/build.mjs --prepare    as npm's prepare: in a production install (no esbuild)
 *                                       an existing build is kept
 *   node scripts/build.mjs --sourcemap  also write source maps (for debugging a checkout;
 *                                       package.json "files" never packs them)
 * BOOTCPLAN_COMMIT overrides the commit (a container build without .git).
 *
 * One module per entry (cli/main, cli/version) and one chunk per lazily imported part, with the
 * libraries the CLI always needs (yaml, commander, js-yaml) inside: loading ~170 files one by one
 * cost more CPU at start-up than the demo plan itself (BENCHMARKS.md "Start-up"). The Kubernetes
 * client stays a package import, loaded by the live commands only. Type checking is
 * `npm run typecheck` (tsc); esbuild only strips the types. The package ships no source maps
 * (docs/development.md "What ships").
 */
import { rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleOptions } from './bundle-options.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const prepare = process.argv.includes('--prepare');
const sourcemap = process.argv.includes('--sourcemap');

let esbuild;
try {
  esbuild = await import(pathToFileURL(createRequire(import.meta.url).resolve('esbuild')).href);
} catch {
  if (prepare && existsSync(new URL('../dist/bundle/main.js', import.meta.url))) {
    console.error('bootcplan: esbuild is not installed (production install); keeping the existing build in dist/');
    process.exit(0);
  }
  console.error('bootcplan: esbuild is not installed; run `npm install` (with dev dependencies) to build dist/bundle/');
  process.exit(1);
}

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

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await esbuild.build(bundleOptions(root, ['src/cli/main.ts', 'src/cli/version.ts'], 'dist/bundle', { sourcemap }));

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
writeFileSync(new URL('../dist/build-info.json', import.meta.url), JSON.stringify({ name: pkg.name, version: pkg.version, ...gitState() }, null, 2) + '\n');
