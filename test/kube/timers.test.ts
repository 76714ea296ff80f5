/**
 * Waits longer than setTimeout allows (2^31-1 ms, about 24.8 days) are chunked everywhere
 * in src/kube: Node fires a longer timer after 1 ms (with a TimeoutOverflowWarning), so a
 * soak of 1e20 seconds, a drain retry or a request timeout of 30 days would end at once.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setLongTimeout, sleepFor, MAX_TIMER_MS, type TimerApi } from '../../src/kube/long-timer.ts';
import { wallClock } from '../../src/kube/driver.ts';
import { AbortedError } from '../../src/apply/ports/driver.ts';
import { InputError } from '../../src/base/errors.ts';
import { parseRequestTimeout } from '../../src/kube/config.ts';
import { openKubeClient } from '../../src/kube/index.ts';
import { fakeApi, closeFakes, cleanFailure, kubeconfigFile } from '../support/fake-api.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const t = suite('kube: long timers and request timeouts');

/** A fake timer API: records every setTimeout delay, fires them only when told. */
function fakeTimers() {
  let next = 1;
  const pending = new Map<number, { fn: () => void; ms: number }>();
  const delays: number[] = [];
  const api: TimerApi = {
    setTimeout: (fn, ms) => {
      const id = next++;
      delays.push(ms);
      pending.set(id, { fn, ms });
      return id as unknown as NodeJS.Timeout;
    },
    clearTimeout: (h) => void pending.delete(h as unknown as number),
  };
  /** Fires the earliest pending timer; returns its delay. */
  const fire = () => {
    const [id, e] = [...pending.entries()][0];
    pending.delete(id);
    e.fn();
    return e.ms;
  };
  return { api, delays, fire, pending };
}

t('a wait of 30 days runs in chunks of at most 2^31-1 ms and fires once, after the last chunk', () => {
  const f = fakeTimers();
  let fired = 0;
  const thirtyDays = 30 * 86_400_000;
  setLongTimeout(() => fired++, thirtyDays, f.api);
  let elapsed = 0;
  while (f.pending.size) {
    assert.is(fired, 0, `fired early, after ${elapsed} ms`);
    elapsed += f.fire();
  }
  assert.is(fired, 1);
  assert.is(elapsed, thirtyDays);
  assert.ok(
    f.delays.every((d) => d > 0 && d <= MAX_TIMER_MS),
    `chunks: ${f.delays.join(', ')}`,
  );
  assert.is(f.delays.length, 2);
});

t('soak of 1e20 s: never overflows to 1 ms; Infinity never fires; clear() stops a chunked wait', () => {
  const f = fakeTimers();
  let fired = 0;
  setLongTimeout(() => fired++, 1e20 * 1000, f.api);
  for (let i = 0; i < 5; i++) f.fire();
  assert.is(fired, 0);
  assert.ok(f.delays.every((d) => d === MAX_TIMER_MS));
  const g = fakeTimers();
  const h = setLongTimeout(() => fired++, Infinity, g.api);
  for (let i = 0; i < 3; i++) g.fire();
  assert.is(fired, 0);
  h.clear();
  assert.is(g.pending.size, 0);
  // NaN and negative waits are "now" (0 ms), as a deadline already passed.
  const n = fakeTimers();
  setLongTimeout(() => fired++, NaN, n.api);
  setLongTimeout(() => fired++, -5, n.api);
  assert.equal(n.delays, [0, 0]);
});

t('sleepFor: resolves after the chunks, rejects with AbortedError when the signal aborts mid-chunk', async () => {
  const f = fakeTimers();
  let done = false;
  const p = sleepFor(40 * 86_400, undefined, f.api).then(() => {
    done = true;
  });
  f.fire();
  await Promise.resolve();
  assert.is(done, false);
  f.fire();
  await p;
  assert.is(done, true);
  const g = fakeTimers();
  const ac = new AbortController();
  const q = sleepFor(40 * 86_400, ac.signal, g.api);
  g.fire();
  ac.abort();
  await q.then(
    () => assert.unreachable('resolved'),
    (e) => assert.instance(e, AbortedError),
  );
  assert.is(g.pending.size, 0, 'no timer left behind');
});

t('wallClock.sleep of 25 days does not end within 50 ms (it used to fire after 1 ms)', async () => {
  const ac = new AbortController();
  let settled = false;
  const p = wallClock.sleep(25 * 86_400, ac.signal).then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((r) => setTimeout(r, 50));
  assert.is(settled, false);
  ac.abort();
  await p;
});

t('--request-timeout as kubectl parses it: whole seconds or a Go duration; 0 is no timeout; anything else an InputError', () => {
  const cases: [string, number][] = [
    ['0', 0],
    ['45', 45],
    ['30s', 30],
    ['500ms', 0.5],
    ['2m', 120],
    ['1h30m', 5400],
    ['1.5s', 1.5],
    ['40h', 144_000],
  ];
  for (const [text, seconds] of cases) assert.is(parseRequestTimeout(text), seconds, text);
  for (const text of ['', '-1s', '1d', '30 s', 's', '1e3s', '10x', '1'.repeat(80) + 's']) {
    assert.throws(
      () => parseRequestTimeout(text),
      (e: unknown) => e instanceof InputError && /--request-timeout/.test(e.message),
      text,
    );
  }
});

t('openKubeClient takes --request-timeout: a silent server fails after 300ms, not 30s', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-timeout-'));
  try {
    const f = await fakeApi(() => {
      /* never answers */
    });
    const c = openKubeClient({ kubeconfig: kubeconfigFile(dir, { server: f.url }), requestTimeout: '300ms' }, {});
    const t0 = Date.now();
    await cleanFailure(c.request('GET', '/api/v1/nodes/w-1'), /no answer from http:\/\/127\.0\.0\.1:\d+ within 0\.3s/);
    assert.ok(Date.now() - t0 < 2000, `${Date.now() - t0} ms`);
    c.close();
  } finally {
    await closeFakes();
    rmSync(dir, { recursive: true, force: true });
  }
});

t.run();
