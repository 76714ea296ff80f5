/**
 * KubeDriver.waitFor on the watch cache (src/kube/watch-cache.ts): the predicate runs on
 * every change, plus every `recheckSeconds` without any request (for predicates that look
 * at the clock); null when the timeout passes first.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { type WaitOptions, AbortedError } from '../apply/ports/driver.ts';
import type { WatchCache } from './watch-cache.ts';
import { setLongTimeout, MAX_TIMER_MS } from './long-timer.ts';

export async function waitOnCache<T>(
  cache: WatchCache,
  recheckSeconds: number,
  predicate: (s: ClusterSnapshot) => T | null | undefined | false,
  opts: WaitOptions,
): Promise<T | null> {
  if (opts.signal?.aborted) throw new AbortedError();
  await cache.start();
  const first = predicate(cache.snapshot());
  if (first !== undefined && first !== null && first !== false) return first;
  return new Promise<T | null>((resolve, reject) => {
    let pending: NodeJS.Timeout | null = null;
    let finished = false;
    const deadline = Date.now() + Math.max(0, opts.timeoutSeconds) * 1000;
    const finish = (fn: () => void) => {
      if (finished) return;
      finished = true;
      unsubscribe();
      if (pending) clearTimeout(pending);
      timeout.clear();
      clearInterval(recheck);
      opts.signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const check = () => {
      pending = null;
      if (finished) return;
      let v: T | null | undefined | false;
      try {
        v = predicate(cache.snapshot());
      } catch (err) {
        finish(() => reject(err instanceof Error ? err : new Error(String(err))));
        return;
      }
      if (v !== undefined && v !== null && v !== false) {
        const held = v;
        finish(() => resolve(held));
      } else if (Date.now() >= deadline) finish(() => resolve(null));
    };
    // Coalesce bursts of watch events into one evaluation.
    const schedule = () => {
      pending ??= setTimeout(check, 15);
    };
    const unsubscribe = cache.subscribe(schedule, (err) => finish(() => reject(err)));
    const onAbort = () => finish(() => reject(new AbortedError()));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // setTimeout overflows past 2^31-1 ms (it would fire after 1 ms): chunked (src/kube/long-timer.ts).
    const timeout = setLongTimeout(check, deadline - Date.now());
    const recheck = setInterval(check, Math.min(Math.max(1, recheckSeconds * 1000), MAX_TIMER_MS));
  });
}
