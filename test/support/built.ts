/**
 * The built CLI, what the package ships (docs/development.md "What the tests run"): builds
 * dist/bundle/ with `npm run build` (scripts/build.mjs) when it is missing or older than a
 * source, so no suite runs a stale build.
 * - ensureBuilt(): the path of the bin, for suites that start the command as a process;
 * - runBin(): the installed command run as a process (NO_COLOR=1), its exit code and output;
 * - run: the bundle's run(), for suites that call the CLI in the test process. A call that hands
 *   it a driver (deps.openDriver) goes to the sources' run() instead: such a driver is built from
 *   src/ and throws the sources' error classes, which the bundle (with its own copies) would not
 *   recognise. BOOTCPLAN_TEST_CLI=sources runs the sources for every call (no build; for
 *   stepping through src/ in a debugger).
 */
import { statSync, readdirSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { execFileSync, spawnSync } from 'node:child_process';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const RECORD = join(ROOT, 'dist/build-info.json');

function newestInput(): number {
  let newest = 0;
  const walk = (p: string) => {
    const st = statSync(p);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    else newest = Math.max(newest, st.mtimeMs);
  };
  walk(join(ROOT, 'src'));
  for (const f of ['package.json', 'tsconfig.json', 'scripts/build.mjs', 'scripts/bundle-options.mjs']) walk(join(ROOT, f));
  return newest;
}

let checked = false;

const stale = () => !existsSync(RECORD) || statSync(RECORD).mtimeMs < newestInput();

/**
 * One build at a time per checkout: the runner's worker processes (test/run.ts) each reach this
 * first thing, and two builds writing dist/bundle/ at once would hand a suite half a bundle. The
 * lock is a directory (mkdir either creates it or fails, atomically), in the temporary
 * directory so a build cannot remove it; the process that gets it checks again, so the others
 * find the build done. A lock older than any build (its process killed) is taken over.
 */
function buildOnce(): void {
  const lock = join(tmpdir(), `bootcplan-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 16)}.lock`);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; ; waited += 100) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const held = statSync(lock, { throwIfNoEntry: false });
    if (waited > 120_000 || (held && Date.now() - held.mtimeMs > 120_000)) rmSync(lock, { recursive: true, force: true });
    Atomics.wait(pause, 0, 0, 100);
  }
  try {
    if (stale()) execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds dist/bundle/ unless it is up to date; returns the path of the bin that runs it. */
export function ensureBuilt(): string {
  if (!checked) {
    if (stale()) buildOnce();
    checked = true;
  }
  return join(ROOT, 'bin/bootcplan.mjs');
}

/**
 * The installed command (the bin through node, built first when stale) as a process with
 * NO_COLOR=1: `input` on its stdin, run in `cwd` (default: this one), under `umask` when given (a
 * test of file modes must not depend on the caller's). Its exit code and output.
 */
export function runBin(
  args: readonly string[],
  opts: { input?: string; cwd?: string; umask?: string } = {},
): { code: number | null; out: string; err: string } {
  const bin = ensureBuilt();
  const command =
    opts.umask === undefined ? [process.execPath, bin, ...args] : ['sh', '-c', `umask ${opts.umask}; exec "$@"`, 'sh', process.execPath, bin, ...args];
  const r = spawnSync(command[0], command.slice(1), { input: opts.input, cwd: opts.cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/**
 * One module of src/ compiled as the bundle compiles it (scripts/bundle-options.mjs), alone, into
 * a temporary directory: for a test that runs shipped code in a process of its own without the
 * TypeScript loader. Returns the path of the .js file.
 */
export async function bundledModule(source: string): Promise<string> {
  const esbuild = await import('esbuild');
  const { bundleOptions } = await import(pathToFileURL(join(ROOT, 'scripts/bundle-options.mjs')).href);
  const out = mkdtempSync(join(tmpdir(), 'bootcplan-module-'));
  await esbuild.build(bundleOptions(ROOT, [source], out, { splitting: false }));
  return join(out, basename(source).replace(/\.ts$/, '.js'));
}

type Run = typeof import('../../src/cli/main.ts').run;

async function load(): Promise<Run> {
  const which = process.env.BOOTCPLAN_TEST_CLI ?? 'bundle';
  const sources = (await import('../../src/cli/main.ts')).run;
  if (which === 'sources') return sources;
  if (which !== 'bundle') throw new Error(`BOOTCPLAN_TEST_CLI=${which}: expected bundle (the default) or sources`);
  ensureBuilt();
  const bundle = ((await import(pathToFileURL(join(ROOT, 'dist/bundle/main.js')).href)) as { run: Run }).run;
  return (argv, deps = {}) => (deps.openDriver ? sources(argv, deps) : bundle(argv, deps));
}

/** The CLI's run(argv, deps) as the package ships it (see above). */
export const run: Run = await load();
