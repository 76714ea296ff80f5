/**
 * `bootcplan version` and `--version`: the package version and the git commit the CLI was
 * built from. `npm run build` records both in dist/build-info.json (scripts/build.mjs); run
 * from the TypeScript sources (tests, bin/bootcplan-dev.mjs) there is no such file and the
 * checkout's package.json and HEAD are read instead. Only node:fs and node:child_process (and
 * the YAML renderer for `-o yaml`, when asked), so that `--version` loads nothing else (bin/launch.mjs
 * loads cli/version.ts, which re-exports packageVersion).
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EXIT } from '../base/errors.ts';
import { isPlainObject } from '../base/schema.ts';
import type { CommandResult, Ports } from './ports.ts';

interface BuildInfo {
  version: string;
  /** The full commit hash; null when built outside a git checkout. */
  commit: string | null;
  /** Tracked files differed from the commit when it was built. */
  dirty: boolean;
  /** `build`: dist/build-info.json of a compiled package; `source`: the TypeScript checkout. */
  from: 'build' | 'source';
}

/** A JSON object in a file beside this module (the package's, or the build record). */
function readJson(rel: string): Record<string, unknown> {
  const v: unknown = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8'));
  if (!isPlainObject(v)) throw new Error(`${rel} is not a JSON object`);
  return v;
}

function buildRecord(): BuildInfo | null {
  try {
    const b = readJson('../build-info.json');
    return { version: String(b.version), commit: typeof b.commit === 'string' ? b.commit : null, dirty: b.dirty === true, from: 'build' };
  } catch {
    return null; // not a build: the sources run through tsx
  }
}

/** The package version alone (`--version`): no git call. */
export function packageVersion(): string {
  return buildRecord()?.version ?? String(readJson('../../package.json').version);
}

function readBuildInfo(): BuildInfo {
  const built = buildRecord();
  if (built) return built;
  // The TypeScript sources: the checkout itself says what it is.
  const version = String(readJson('../../package.json').version);
  const cwd = fileURLToPath(new URL('../..', import.meta.url));
  const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return { version, commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain', '--untracked-files=no') !== '', from: 'source' };
  } catch {
    return { version, commit: null, dirty: false, from: 'source' };
  }
}

export const VERSION_FORMATS = ['text', 'json', 'yaml'] as const;

/** `version -o FORMAT`: the version, the commit it was built from, and the Node.js runtime. */
export async function versionCommand(ports: Ports, opts: { output: (typeof VERSION_FORMATS)[number] }): Promise<CommandResult> {
  const b = readBuildInfo();
  const info = { version: b.version, commit: b.commit, dirty: b.dirty, from: b.from, node: process.version };
  if (opts.output === 'json') ports.io.stdout(JSON.stringify(info, null, 2) + '\n');
  // The YAML renderer every `-o yaml` uses, loaded only here; not the yaml package itself: the bundle
  // turns a package imported at run time into a chunk exporting only `default`.
  else if (opts.output === 'yaml') ports.io.stdout((await import('../render/yaml.ts')).yamlText(info));
  else {
    const commit = b.commit ? `${b.commit}${b.dirty ? ' (with uncommitted changes)' : ''}` : 'unknown (not built from a git checkout)';
    ports.io.stdout(
      `${ports.name ?? 'bootcplan'} ${b.version}\ncommit: ${commit}${b.from === 'source' ? ', running the TypeScript sources' : ''}\nnode:   ${process.version}\n`,
    );
  }
  return { exitCode: EXIT.ok };
}
