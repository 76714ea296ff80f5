/**
 * The compiled CLI for suites that run the installed command as a process: builds dist/ with
 * `npm run build` (scripts/build.mjs) when it is missing or older than a source, so such a
 * suite never runs stale output (suites that call run() use the TypeScript sources).
 */
import { statSync, readdirSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export const ROOT = resolve(new URL('..', import.meta.url).pathname);
const RECORD = join(ROOT, 'dist/build-info.json');

function newestInput(): number {
  let newest = 0;
  const walk = (p: string) => {
    const st = statSync(p);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    else newest = Math.max(newest, st.mtimeMs);
  };
  walk(join(ROOT, 'src'));
  for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs']) walk(join(ROOT, f));
  return newest;
}

let checked = false;

/** Builds dist/ unless it is up to date; returns the path of the compiled bin. */
export function ensureBuilt(): string {
  if (!checked) {
    if (!existsSync(RECORD) || statSync(RECORD).mtimeMs < newestInput()) {
      execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    }
    checked = true;
  }
  return join(ROOT, 'bin/bootcplan.mjs');
}
