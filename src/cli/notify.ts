/**
 * `apply --notify URL`: POSTs the small JSON document of src/apply/rollout-report.ts
 * (NotifyDocument: wave start, halt, done, stale) to a webhook. A notification is a courtesy:
 * a refused, failed or slow one (timeout) is a warning on stderr and never fails or holds up
 * the apply beyond the timeout. The URL may carry a token (chat webhooks do): warnings name
 * only its origin.
 */
import { InputError } from '../base/errors.ts';
import type { NotifyDocument } from '../apply/rollout-report.ts';

export const NOTIFY_TIMEOUT_MS = 5000;

/** The URL of --notify, checked before any cluster access: http or https only. */
export function parseNotifyUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(`--notify: ${JSON.stringify(text.slice(0, 80))} is not a URL`, [], 'e.g. --notify https://hooks.example.com/bootcplan');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InputError(`--notify: only http and https URLs are posted to, not ${url.protocol}`, [], 'e.g. --notify https://hooks.example.com/bootcplan');
  }
  return url;
}

/** A notifier that posts each document, and warns (never throws) when that fails. */
export function httpNotifier(url: URL, warn: (line: string) => void, timeoutMs = NOTIFY_TIMEOUT_MS): (doc: NotifyDocument) => Promise<void> {
  const where = url.origin;
  return async (doc) => {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'bootcplan' },
        body: JSON.stringify(doc),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'manual',
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status > 299) warn(`warning: --notify: ${where} answered ${res.status} to the ${doc.event} notification`);
    } catch (err) {
      const e = err as Error;
      const why = e?.name === 'TimeoutError' || e?.name === 'AbortError' ? `no answer within ${timeoutMs / 1000}s` : (e?.cause as Error | undefined)?.message ?? e?.message ?? String(err);
      warn(`warning: --notify: the ${doc.event} notification to ${where} failed: ${why}`);
    }
  };
}
