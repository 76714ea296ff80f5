/**
 * Runs an Argo CD Lua health check (examples/argocd/health/*.lua) the way Argo CD does: the
 * script's body as a function of `obj`, returning `hs`. Used by the example and status suites.
 */
import * as assert from 'uvu/assert';
import { readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

/** The Lua interpreter, when installed (.ci/run installs lua5.4). */
export const LUA = ['/usr/bin/lua5.4', '/usr/bin/lua'].find((p) => existsSync(p));

/** JS value -> Lua table constructor. */
function lua(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `{${v.map(lua).join(', ')}}`;
  return `{${Object.entries(v as object)
    .map(([k, x]) => `[${JSON.stringify(k)}] = ${lua(x)}`)
    .join(', ')}}`;
}

/** The status and message the health check `script` gives for `obj`. */
export function luaHealth(script: string, obj: unknown): { status: string; message: string } {
  const code = `local obj = ${lua(obj)}\nlocal hs = (function()\n${readFileSync(script, 'utf8')}\nend)()\nprint(hs.status)\nprint(hs.message)\n`;
  const r = spawnSync(LUA!, ['-'], { input: code, encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  const [status, message] = r.stdout.split('\n');
  return { status, message };
}
