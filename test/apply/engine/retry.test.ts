/**
 * A write retried on a transient conflict (src/apply/engine/retry.ts): a 409 is tried again at
 * once, up to eight attempts in all; any other error, and the eighth conflict, reach the caller.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { retry } from '../../../src/apply/engine/retry.ts';
import { ConflictError, NotFoundError } from '../../../src/apply/ports/driver.ts';

const t = suite('retry');

/** A write that conflicts `conflicts` times, then answers; counts its attempts. */
function flaky(conflicts: number) {
  const w = { attempts: 0, write: async () => (++w.attempts <= conflicts ? Promise.reject(new ConflictError('changed')) : 'written') };
  return w;
}

t('a write that conflicts seven times is written on the eighth attempt', async () => {
  const w = flaky(7);
  assert.is(await retry(w.write), 'written');
  assert.is(w.attempts, 8);
});

t('the eighth conflict reaches the caller, and no ninth attempt is made', async () => {
  const w = flaky(8);
  await retry(w.write).then(
    () => assert.unreachable('written'),
    (err: unknown) => assert.instance(err, ConflictError),
  );
  assert.is(w.attempts, 8);
});

t('any other error is not retried', async () => {
  let attempts = 0;
  const err = await retry(async () => {
    attempts++;
    throw new NotFoundError('gone');
  }).catch((e: unknown) => e);
  assert.instance(err, NotFoundError);
  assert.is(attempts, 1);
});

t.run();
