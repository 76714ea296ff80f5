/** Small helpers shared by the e2e suites. */
import * as assert from 'uvu/assert';
import type { CliIO } from '../../src/app/ports.ts';

export function captureIO(env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { stdout: (s) => void out.push(s), stderr: (s) => void err.push(s), env: { NO_COLOR: '1', ...env }, stdoutIsTTY: false, stderrIsTTY: false };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

/** Asserts that `fn` rejects, and that the error passes `check`; returns the error. */
export async function rejects(fn: () => Promise<unknown>, check: (e: any) => boolean, what = 'the expected error'): Promise<any> {
  try {
    await fn();
  } catch (e) {
    assert.ok(check(e), `unexpected error: ${(e as Error)?.name}: ${(e as Error)?.message}`);
    return e;
  }
  assert.unreachable(`expected ${what}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
