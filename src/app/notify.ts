/**
 * `apply --notify URL`: POSTs the small JSON document of src/apply/report/rollout-report.ts
 * (NotifyDocument: wave start, halt, done, stale) to a webhook. A notification is a courtesy:
 * a refused, failed or slow one (timeout) is a warning on stderr and never fails or holds up
 * the apply beyond the timeout (docs/safety.md "Bounded I/O"):
 * - the whole exchange (connect, answer, the part of the body read) ends within the timeout;
 * - at most NOTIFY_ANSWER_BYTES of the answer are read, then the connection is dropped: the
 *   status is all that counts, and a receiver streaming an endless body costs nothing;
 * - a redirect is not followed (it could send the document, and the user info of the URL,
 *   elsewhere): a 3xx is a notification that was not delivered;
 * - the URL may carry a token (chat webhooks put it in the path or the query) or a user and
 *   password (sent as basic authentication): messages name only its origin, and an error's
 *   own text is scrubbed of the URL's secret parts (fetch's, for one, quoted the whole URL).
 */
import http from 'node:http';
import https from 'node:https';
import type { NotifyDocument } from '../apply/report/rollout-report.ts';
import { readBody } from '../kube/http-exchange.ts';

const NOTIFY_TIMEOUT_MS = 5000;
/** The most bytes of an answer read: a chat webhook answers "ok" or a short JSON error. */
export const NOTIFY_ANSWER_BYTES = 4096;

/** The parts of a URL that must not be printed, longest first, each as written and decoded. */
function secretParts(url: URL): string[] {
  const parts = [
    url.href,
    url.pathname.length > 1 ? url.pathname + url.search : '',
    url.search,
    url.hash,
    url.username,
    url.password,
    url.pathname.length > 1 ? url.pathname : '',
  ];
  const all = new Set<string>();
  for (const p of parts) {
    if (p.length < 2) continue;
    all.add(p);
    try {
      all.add(decodeURIComponent(p));
    } catch {
      /* not percent-encoded text */
    }
  }
  return [...all].sort((a, b) => b.length - a.length);
}

/** `text` with every secret part of `url` replaced by "…" (its origin stays). */
export function scrubUrl(text: string, url: URL): string {
  let out = text;
  for (const p of secretParts(url)) out = out.split(p).join(p === url.href ? url.origin : '…');
  return out;
}

type Outcome = { status: number } | { error: Error; timedOut: boolean };

/** One POST within `timeoutMs`; resolves with the status, or with why there was none. */
function post(url: URL, body: string, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const client = url.protocol === 'https:' ? https : http;
    let settled: Outcome | null = null;
    // User info in the URL becomes basic authentication (node:http does this for a URL).
    const req = client.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'bootcplan', connection: 'close' },
    });
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = o;
      clearTimeout(timer);
      req.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => {
      // An answer whose status came is delivered; only the rest of its body is not waited for.
      finish(status !== null ? { status } : { error: new Error('timeout'), timedOut: true });
    }, timeoutMs);
    let status: number | null = null;
    req.on('error', (error) => finish(status !== null ? { status } : { error, timedOut: false }));
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      const got = status;
      readBody(res, NOTIFY_ANSWER_BYTES, true).then(
        () => finish({ status: got }),
        () => finish({ status: got }),
      );
    });
    req.end(body);
  });
}

/** A notifier that posts each document, and warns (never throws) when that fails. */
export function httpNotifier(url: URL, warn: (line: string) => void, timeoutMs = NOTIFY_TIMEOUT_MS): (doc: NotifyDocument) => Promise<void> {
  const where = url.origin;
  return async (doc) => {
    const o = await post(url, JSON.stringify(doc), timeoutMs);
    if ('status' in o) {
      if (o.status >= 300 && o.status <= 399)
        warn(
          `warning: --notify: ${where} answered ${o.status}, a redirect, to the ${doc.event} notification: redirects are not followed, so it was not delivered`,
        );
      else if (o.status < 200 || o.status > 299) warn(`warning: --notify: ${where} answered ${o.status} to the ${doc.event} notification`);
      return;
    }
    const why = o.timedOut ? `no answer within ${timeoutMs / 1000}s` : scrubUrl(o.error.message || String(o.error), url);
    warn(`warning: --notify: the ${doc.event} notification to ${where} failed: ${why}`);
  };
}
