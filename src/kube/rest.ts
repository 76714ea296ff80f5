/**
 * A small REST layer over the Kubernetes API, on @kubernetes/client-node's KubeConfig
 * (which resolves the cluster, TLS material and credentials of every auth kind: tokens,
 * client certificates, exec plugins, OIDC, in-cluster service accounts).
 *
 * Why not the generated API classes: bootcplan needs exact control over the content type
 * of patches (RFC 6902 JSON patch with `test` ops on custom resources), over watches
 * (resourceVersion resume, bookmarks, 410 Gone), and it counts every request it makes.
 * Requests go through one keep-alive agent; watch connections do not keep the process alive.
 */
import https from 'node:https';
import http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  DriverError, ConflictError, PreconditionFailedError, NotFoundError, AlreadyExistsError, AbortedError,
} from '../apply/driver.ts';

/** Any API failure that is not one of the driver's specific errors; carries a hint for people. */
export class KubeApiError extends DriverError {
  readonly status: number | null;
  readonly reason: string | null;
  readonly hint?: string;
  constructor(message: string, status: number | null, reason: string | null = null, hint?: string) {
    super(message);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
    this.hint = hint;
  }
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
  /** Used in error messages, e.g. "BootcNode w-1". */
  what?: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
export interface WatchEvent { type: WatchEventType; object: any }

/** Requests made by this process, by verb and resource (for benchmarks and tests). */
export interface RequestStats {
  total: number;
  byVerb: Record<string, number>;
  byResource: Record<string, number>;
}
const emptyStats = (): RequestStats => ({ total: 0, byVerb: {}, byResource: {} });
const stats = new Map<string, RequestStats>();
/** Requests of this process, in total or of one kubeconfig context. */
export function requestStats(context?: string): RequestStats {
  if (context !== undefined) return structuredClone(stats.get(context) ?? emptyStats());
  const all = emptyStats();
  for (const s of stats.values()) {
    all.total += s.total;
    for (const [k, v] of Object.entries(s.byVerb)) all.byVerb[k] = (all.byVerb[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.byResource)) all.byResource[k] = (all.byResource[k] ?? 0) + v;
  }
  return all;
}
export function resetRequestStats(): void {
  stats.clear();
}
function count(context: string, verb: string, path: string) {
  let s = stats.get(context);
  if (!s) stats.set(context, (s = emptyStats()));
  s.total++;
  s.byVerb[verb] = (s.byVerb[verb] ?? 0) + 1;
  // /apis/g/v/namespaces/ns/plural/name/sub -> plural[/sub]
  const parts = path.split('?')[0].split('/').filter(Boolean);
  let i = parts[0] === 'api' ? 2 : 3;
  if (parts[i] === 'namespaces' && parts.length > i + 2) i += 2;
  const res = parts[i] ?? parts.join('/');
  const sub = parts[i + 2];
  const key = sub ? `${res}/${sub}` : res;
  s.byResource[key] = (s.byResource[key] ?? 0) + 1;
}

const REQUEST_TIMEOUT_MS = 30_000;

export class KubeClient {
  readonly server: string;
  readonly contextName: string;
  private agent: http.Agent | null = null;
  private watchAgent: http.Agent | null = null;
  private readonly isHttps: boolean;

  constructor(readonly kc: KubeConfig) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new KubeApiError(`kubeconfig context "${kc.getCurrentContext()}" names no cluster`, null, null, 'check the context with `kubectl config get-contexts`');
    this.server = cluster.server.replace(/\/+$/, '');
    this.contextName = kc.getCurrentContext();
    this.isHttps = this.server.startsWith('https:');
  }

  private async options(method: string, path: string, headers: Record<string, string>, watch: boolean): Promise<https.RequestOptions> {
    const url = new URL(this.server + path);
    const opts: https.RequestOptions = { method, headers: { Accept: 'application/json', 'User-Agent': 'bootcplan', ...headers } };
    await this.kc.applyToHTTPSOptions(opts);
    // KubeConfig makes a fresh agent per call; keep one (keep-alive) per kind of use.
    const agentOpts = { keepAlive: true, ca: opts.ca, cert: opts.cert, key: opts.key, pfx: opts.pfx, passphrase: opts.passphrase, rejectUnauthorized: opts.rejectUnauthorized, servername: opts.servername } as https.AgentOptions;
    if (watch) opts.agent = this.watchAgent ??= this.isHttps ? new https.Agent({ ...agentOpts, keepAlive: false }) : new http.Agent();
    else opts.agent = this.agent ??= this.isHttps ? new https.Agent({ ...agentOpts, maxSockets: 16 }) : new http.Agent({ keepAlive: true, maxSockets: 16 });
    opts.protocol = url.protocol;
    opts.hostname = url.hostname.replace(/^\[|\]$/g, '');
    opts.port = url.port || (this.isHttps ? 443 : 80);
    opts.path = url.pathname + url.search;
    return opts;
  }

  private send(opts: https.RequestOptions): (body?: string) => Promise<http.IncomingMessage> & { req?: http.ClientRequest } {
    return (body?: string) => {
      let req: http.ClientRequest;
      const p = new Promise<http.IncomingMessage>((resolve, reject) => {
        req = (this.isHttps ? https : http).request(opts, resolve);
        req.on('error', reject);
        if (body !== undefined) req.write(body);
        req.end();
      }) as Promise<http.IncomingMessage> & { req?: http.ClientRequest };
      p.req = req!;
      return p;
    };
  }

  /** One request; resolves with the parsed body of a 2xx answer, throws a driver error otherwise. */
  async request<T = any>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const q = queryString(o.query);
    const fullPath = path + q;
    const headers: Record<string, string> = {};
    let body: string | undefined;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['Content-Type'] = o.contentType ?? 'application/json';
      // Node does not frame a DELETE body (no chunked encoding by default): always say its length.
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    count(this.contextName, method, fullPath);
    const opts = await this.options(method, fullPath, headers, false);
    if (o.signal?.aborted) throw new AbortedError();
    let res: http.IncomingMessage;
    let text: string;
    const call = this.send(opts)(body);
    const req = call.req!;
    const onAbort = () => req.destroy(new AbortedError());
    o.signal?.addEventListener('abort', onAbort);
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000}s`), { code: 'ETIMEDOUT' })));
    try {
      res = await call;
      text = await readAll(res);
    } catch (err) {
      if (err instanceof AbortedError || o.signal?.aborted) throw new AbortedError();
      throw this.networkError(err as NodeJS.ErrnoException, method, path);
    } finally {
      o.signal?.removeEventListener('abort', onAbort);
    }
    const status = res.statusCode ?? 0;
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = { message: text.slice(0, 300) };
    }
    if (status >= 200 && status < 300) return parsed as T;
    throw errorFromStatus(status, parsed, o.what ?? `${method} ${path}`, res.headers);
  }

  /**
   * Opens a watch and calls `onEvent` for each event until the server ends the stream
   * (resolves), the signal aborts (resolves), or the connection fails (rejects).
   */
  async watch(path: string, query: Record<string, string | number | boolean | undefined>, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const fullPath = path + queryString({ ...query, watch: 'true' });
    count(this.contextName, 'WATCH', fullPath);
    const opts = await this.options('GET', fullPath, {}, true);
    if (signal.aborted) return;
    const call = this.send(opts)();
    const req = call.req!;
    const onAbort = () => req.destroy();
    signal.addEventListener('abort', onAbort);
    req.on('socket', (s) => s.unref());
    try {
      let res: http.IncomingMessage;
      try {
        res = await call;
      } catch (err) {
        if (signal.aborted) return;
        throw this.networkError(err as NodeJS.ErrnoException, 'WATCH', path);
      }
      if ((res.statusCode ?? 0) !== 200) {
        const text = await readAll(res).catch(() => '');
        let parsed: any = null;
        try { parsed = JSON.parse(text); } catch { parsed = { message: text.slice(0, 300) }; }
        throw errorFromStatus(res.statusCode ?? 0, parsed, `WATCH ${path}`, res.headers);
      }
      await new Promise<void>((resolve, reject) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (!line) continue;
            let ev: WatchEvent;
            try {
              ev = JSON.parse(line);
            } catch {
              continue;
            }
            try {
              onEvent(ev);
            } catch (err) {
              req.destroy();
              reject(err);
              return;
            }
          }
        });
        res.on('end', () => resolve());
        res.on('close', () => resolve());
        res.on('error', (err) => (signal.aborted ? resolve() : reject(this.networkError(err as NodeJS.ErrnoException, 'WATCH', path))));
      });
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private networkError(err: NodeJS.ErrnoException, _method: string, _path: string): KubeApiError {
    const code = err.code ?? '';
    const msg = `cannot reach the Kubernetes API at ${this.server} (context "${this.contextName}"): ${code ? code + ' ' : ''}${err.message.replace(new RegExp(`^${code}:?\\s*`), '')}`;
    let hint = 'check that the cluster is up and that the kubeconfig points at it (`kubectl cluster-info`)';
    if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code) || /certificate/i.test(err.message)) hint = 'the server certificate is not trusted: check certificate-authority(-data) in the kubeconfig';
    return new KubeApiError(msg, null, code || null, hint);
  }

  close(): void {
    this.agent?.destroy();
    this.watchAgent?.destroy();
  }
}

function queryString(q?: Record<string, string | number | boolean | undefined>): string {
  if (!q) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) if (v !== undefined) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

function readAll(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/**
 * A JSON patch the server could not apply to the object (a `test` that failed, or a path
 * that does not exist). kube-apiserver answers 422 with a generic message and no causes,
 * so the driver re-reads the object to say which operation failed.
 */
export class PatchNotApplicableError extends KubeApiError {
  constructor(message: string) {
    super(message, 422, 'Invalid');
    this.name = 'PatchNotApplicableError';
  }
}

/**
 * Maps an API status to the driver's errors. A failed JSON-patch `test` comes back as
 * 422 (apiserver patch handler: "testing value /path failed") — PreconditionFailedError;
 * a 409 is a write conflict (ConflictError) unless it says AlreadyExists.
 */
export function errorFromStatus(status: number, body: any, what: string, headers: http.IncomingHttpHeaders = {}): DriverError {
  const message: string = typeof body?.message === 'string' ? body.message : `HTTP ${status}`;
  const reason: string | null = typeof body?.reason === 'string' ? body.reason : null;
  const testFailed = /testing value (\S+) failed|test operation|TestFailed|test failed/i.exec(message);
  if ((status === 422 || status === 409) && testFailed) {
    return new PreconditionFailedError(`${what}: a precondition of the patch failed (${message})`, testFailed[1] ?? '');
  }
  if (status === 404) return new NotFoundError(`${what}: not found${message && !/not found/.test(message) ? ` (${message})` : ''}`);
  if (status === 409 && reason === 'AlreadyExists') return new AlreadyExistsError(`${what}: already exists`);
  if (status === 409) return new ConflictError(`${what}: ${message}`);
  if (status === 401) return new KubeApiError(`${what}: the cluster refused the credentials (401 Unauthorized)`, status, reason, 'log in again (`oc login`), or check the token or client certificate of the kubeconfig user');
  if (status === 403) return new KubeApiError(`${what}: ${message}`, status, reason, 'the account lacks a permission; bootcplan needs the ClusterRole of examples/rbac.yaml');
  if (status === 429) {
    const retry = Number(headers['retry-after'] ?? '');
    return new KubeApiError(`${what}: ${message}`, status, reason ?? 'TooManyRequests', Number.isFinite(retry) && retry > 0 ? `retry after ${retry}s` : undefined);
  }
  if (status === 422 && reason === 'Invalid' && !body?.details?.causes && !body?.details?.name) {
    return new PatchNotApplicableError(`${what}: the patch cannot be applied: ${message}`);
  }
  if (status === 422) return new KubeApiError(`${what}: rejected by the API server: ${message}`, status, reason ?? 'Invalid');
  return new KubeApiError(`${what}: ${message}`, status, reason);
}
