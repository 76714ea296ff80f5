/**
 * A test that cannot run on this machine (a tool it drives is not installed) says so through
 * `skipLocally`, and test/run.ts counts it as skipped rather than passed (docs/development.md
 * "How the runner counts"): uvu 0.5.6 has no way to skip a test once it has started, so the
 * skips are handed to the runner through a registry on globalThis, read after each suite. In CI
 * a missing tool is a failure (.ci/run installs every one), never a skip.
 */
import * as assert from 'uvu/assert';

/** The registry test/run.ts reads (and empties) after each suite: one reason per skipped test. */
export const RUNTIME_SKIPS = Symbol.for('bootcplan.test.runtime-skips');

type Registry = { [RUNTIME_SKIPS]?: string[] };

/**
 * Ends the calling test as skipped: `missing` names what is not installed, `how` how to get it.
 * The caller returns right after. Fails instead when CI is set.
 */
export function skipLocally(missing: string, how: string): void {
  assert.not.ok(process.env.CI, `${missing} must be installed in CI (${how})`);
  console.log(`  (skipped locally: ${missing} not installed; ${how})`);
  const g = globalThis as Registry;
  (g[RUNTIME_SKIPS] ??= []).push(missing);
}

/** The skips recorded since the last call, for the runner. */
export function takeRuntimeSkips(): string[] {
  const g = globalThis as Registry;
  return (g[RUNTIME_SKIPS] ?? []).splice(0);
}
