/** Small helpers shared by the e2e suites. */
import * as assert from 'uvu/assert';

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
