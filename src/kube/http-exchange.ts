/**
 * One HTTP exchange with limits: the whole exchange (connect, headers, body) must end
 * within the request timeout (kubectl --request-timeout is a whole-request limit too), and
 * a body is read up to a size cap, then the connection is cut: nothing is buffered past the
 * cap, so an 800 MB answer costs at most the cap. Error bodies are only shown, so they are
 * cut short instead. Watches: the headers must come within the timeout, then lines are read
 * one by one, each up to the cap.
 */
import type http from 'node:http';
import { AbortedError } from '../apply/ports/driver.ts';
import { setLongTimeout } from './long-timer.ts';
import { NamedError } from '../base/errors.ts';

/** Why an exchange failed, when it is not a socket error (those pass through) or an abort. */
export class ExchangeFailure extends NamedError {
  constructor(
    readonly kind: 'timeout-headers' | 'timeout-body' | 'timeout-watch' | 'too-large',
    readonly declared?: number,
  ) {
    super(kind);
  }
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

interface ExchangeLimits {
  /** The whole exchange must end within this; 0: no limit. */
  timeoutMs: number;
  /** The most body bytes read for a 2xx answer. */
  maxBytes: number;
  /** Other answers are read up to this many bytes, then cut (they are shown, not parsed whole). */
  errorBytes: number;
}

const closedEarly = () => Object.assign(new Error('the connection closed before the answer was complete'), { code: 'ECONNRESET' });

/**
 * Reads a body up to `limit` bytes. Past it: rejects with ExchangeFailure('too-large') and
 * destroys the response, or with `cut`, resolves with the first `limit` bytes. A
 * Content-Length over the limit is refused before anything is read.
 */
export function readBody(res: http.IncomingMessage, limit: number, cut: boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers['content-length']);
    if (!cut && Number.isFinite(declared) && declared > limit) {
      res.destroy();
      return reject(new ExchangeFailure('too-large', declared));
    }
    const chunks: Buffer[] = [];
    let total = 0;
    res.on('data', (c: Buffer) => {
      if (total + c.length <= limit) {
        chunks.push(c);
        total += c.length;
        return;
      }
      if (cut) {
        chunks.push(c.subarray(0, limit - total));
        resolve(Buffer.concat(chunks, limit));
      } else reject(new ExchangeFailure('too-large'));
      chunks.length = 0;
      res.destroy();
    });
    res.on('end', () => resolve(Buffer.concat(chunks, total)));
    res.on('error', reject);
    res.on('close', () => {
      if (!res.complete) reject(closedEarly());
    });
  });
}

/** Sends `req` (with `body`) and resolves with the whole answer, within the limits. */
export function exchange(req: http.ClientRequest, body: string | undefined, limits: ExchangeLimits, signal?: AbortSignal): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    let phase: 'headers' | 'body' = 'headers';
    let done = false;
    /** Ends the exchange once: false when it had ended already. */
    const end = () => {
      if (done) return false;
      done = true;
      timer?.clear();
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const fail = (err: Error) => {
      if (!end()) return;
      req.destroy();
      reject(err);
    };
    const onAbort = () => fail(new AbortedError());
    const timer =
      limits.timeoutMs > 0 ? setLongTimeout(() => fail(new ExchangeFailure(phase === 'headers' ? 'timeout-headers' : 'timeout-body')), limits.timeoutMs) : null;
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', fail);
    req.on('response', (res) => {
      phase = 'body';
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      readBody(res, ok ? limits.maxBytes : Math.min(limits.errorBytes, limits.maxBytes), !ok).then((b) => {
        if (end()) resolve({ status, headers: res.headers, body: b });
      }, fail);
    });
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Sends a streaming GET; resolves with the response once its headers came within `timeoutMs`. */
export function openStream(req: http.ClientRequest, timeoutMs: number, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    let done = false;
    /** Ends the wait for the headers once: false when it had ended already. */
    const end = () => {
      if (done) return false;
      done = true;
      timer?.clear();
      signal.removeEventListener('abort', onAbort);
      return true;
    };
    const fail = (err: Error) => {
      if (!end()) return;
      req.destroy();
      reject(err);
    };
    const onAbort = () => fail(new AbortedError());
    const timer = timeoutMs > 0 ? setLongTimeout(() => fail(new ExchangeFailure('timeout-headers')), timeoutMs) : null;
    signal.addEventListener('abort', onAbort, { once: true });
    // Stays attached: a reset after the headers surfaces on the response (readLines).
    req.on('error', fail);
    req.on('response', (res) => {
      if (end()) resolve(res);
    });
    req.end();
  });
}

interface LineLimits {
  /** One line (one watch event) may not be longer than this. */
  maxLineBytes: number;
  /** The stream must end within this (0: no limit); past it: ExchangeFailure('timeout-watch'). */
  deadlineMs: number;
  signal: AbortSignal;
}

/**
 * Calls `onLine` for every non-empty line of a streamed answer. Resolves when the server
 * ends the stream or the signal aborts; rejects when `onLine` throws, a line passes the
 * cap, the deadline passes, or the connection fails.
 */
export function readLines(res: http.IncomingMessage, limits: LineLimits, onLine: (line: string) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let buf = '';
    let done = false;
    const finish = (err: Error | null) => {
      if (done) return;
      done = true;
      timer?.clear();
      limits.signal.removeEventListener('abort', onAbort);
      if (err) {
        res.destroy();
        reject(err);
      } else resolve();
    };
    const onAbort = () => {
      finish(null);
      res.destroy();
    };
    const timer = limits.deadlineMs > 0 ? setLongTimeout(() => finish(new ExchangeFailure('timeout-watch')), limits.deadlineMs) : null;
    limits.signal.addEventListener('abort', onAbort, { once: true });
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while (!done && (nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        try {
          onLine(line);
        } catch (err) {
          finish(err instanceof Error ? err : new Error(String(err)));
        }
      }
      // Characters, not bytes: never more than the bytes, so the cap still holds.
      if (!done && buf.length > limits.maxLineBytes) finish(new ExchangeFailure('too-large'));
    });
    res.on('end', () => finish(null));
    res.on('close', () => finish(null));
    res.on('error', (err) => finish(limits.signal.aborted ? null : err));
  });
}
