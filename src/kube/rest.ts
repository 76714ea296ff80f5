/**
 * A small REST layer over the Kubernetes API, on a kubeconfig's KubeAccess (src/kube/kubeconfig.ts:
 * the cluster, TLS material and credentials of every auth kind: tokens, client certificates,
 * in-cluster service accounts; exec plugins and OIDC through @kubernetes/client-node, loaded
 * for them only).
 *
 * Why not the generated API classes: bootcplan needs exact control over the content type
 * of patches (RFC 6902 JSON patch with `test` ops on custom resources), over watches
 * (resourceVersion resume, bookmarks, 410 Gone), and it counts every request it makes.
 * Requests go through one keep-alive agent; watch connections do not keep the process alive.
 *
 * Every answer is treated as hostile until checked: each request has a timeout for the
 * whole exchange, each body a size cap (src/kube/http-exchange.ts), a 2xx body must be JSON
 * of the kind asked for (src/kube/answers.ts), LISTs come in pages (`limit`/`continue`), and
 * the kubeconfig's proxy-url is honoured (src/kube/proxy.ts). A request that gets no usable
 * answer fails with KubeRequestError (a ClusterApiError); an API refusal with a Status is
 * one of the driver's errors (src/kube/api-errors.ts).
 */
import https from 'node:https';
import http from 'node:http';
import type { KubeAccess } from './kubeconfig-types.ts';
import { AbortedError } from '../apply/ports/driver.ts';
import { ClusterApiError, errnoOf, NamedError } from '../base/errors.ts';
import {
  KubeApiError,
  KubeRequestError,
  HINT_NOT_API_SERVER,
  errorFromStatus,
  unreachable,
  timedOut,
  tooLarge,
  kubeconfigFailure,
  formatBytes,
  type Route,
} from './api-errors.ts';
import {
  AnswerRefused,
  objectAnswer,
  jsonObjectAnswer,
  listAnswer,
  parseJsonBody,
  parseWatchEvent,
  statusOf,
  isApiServerNotFoundPage,
  describeAnswer,
  preview,
  printable,
  type Expected,
  type ListPage,
  type WatchEvent,
} from './answers.ts';
import type { ViewOf } from '../cluster/kinds.ts';
import { exchange, openStream, readBody, readLines, ExchangeFailure, type Answer } from './http-exchange.ts';
import { proxyRouteOf, proxyRouteFromEnv, proxyAgent, ProxyRefused, forwardThrough, type ProxyRoute } from './proxy.ts';
import { countRequest, countWritten } from './request-stats.ts';
import { valueText } from '../base/json-text.ts';

export { KubeApiError, KubeRequestError, PatchNotApplicableError, errorFromStatus } from './api-errors.ts';
export { requestStats, resetRequestStats, type RequestStats } from './request-stats.ts';

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
  /** Used in error messages, e.g. "BootcNode w-1". */
  what?: string;
  /** The kind a 2xx answer must be (e.g. "Node"); without it, any JSON object. */
  expect?: string;
}

export type { WatchEvent } from './answers.ts';

/** Every object of a collection, read page by page, and the list's resourceVersion (to watch from). */
export interface ListAnswer<T> {
  items: T[];
  resourceVersion: string;
}

export interface KubeClientOptions {
  /** A request without a complete answer after this long fails (kubectl --request-timeout); 0: no limit. Default 30. */
  requestTimeoutSeconds?: number;
  /** The largest answer read, in bytes (default 64 MiB); past it the request is cut off. */
  maxResponseBytes?: number;
  /** Objects per LIST page (`limit`); default 500, as client-go's pager. */
  listPageSize?: number;
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read when the cluster names no proxy-url (default process.env). */
  env?: Record<string, string | undefined>;
}

const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 2 ** 20;
const DEFAULT_LIST_PAGE_SIZE = 500;
/** Error answers are shown, not parsed whole: read this much of them. */
const ERROR_BODY_BYTES = 64 * 1024;
/** A list that keeps sending continue tokens past this many pages is not a real list. */
const MAX_LIST_PAGES = 100_000;
/**
 * All the pages of one list together may hold this many times the per-answer cap (512 MiB
 * by default: some 10,000 Nodes with large image lists); past it the list is refused.
 */
const LIST_BYTES_FACTOR = 8;

/** A continue token expired (410 Gone) while paging: the list starts over (once). */
class ContinueExpired extends NamedError {}

export class KubeClient {
  readonly server: string;
  readonly contextName: string;
  private agent: http.Agent | null = null;
  private watchAgent: http.Agent | null = null;
  private readonly isHttps: boolean;
  private readonly proxy: ProxyRoute | null;
  private readonly route: Route;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly pageSize: number;

  constructor(
    readonly kc: KubeAccess,
    opts: KubeClientOptions = {},
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster)
      throw new KubeApiError(
        `kubeconfig context "${kc.getCurrentContext()}" names no cluster`,
        null,
        null,
        'check the context with `kubectl config get-contexts`',
      );
    this.server = serverUrl(cluster.server, cluster.name);
    this.contextName = kc.getCurrentContext();
    this.isHttps = this.server.startsWith('https:');
    // kubectl's order (client-go): the cluster's proxy-url, else the environment's proxy for this server.
    this.proxy = proxyRouteOf(cluster.proxyUrl, cluster.name) ?? proxyRouteFromEnv(new URL(this.server), opts.env ?? process.env);
    const p = this.proxy;
    this.route = { server: this.server, proxy: p ? `${p.shown}${p.source === 'proxy-url' ? '' : ` (${p.source})`}` : null, context: this.contextName };
    this.timeoutMs = Math.max(0, (opts.requestTimeoutSeconds ?? DEFAULT_REQUEST_TIMEOUT_SECONDS) * 1000) || 0;
    this.maxBytes = Math.max(1024, opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
    this.pageSize = Math.max(1, Math.floor(opts.listPageSize ?? DEFAULT_LIST_PAGE_SIZE));
  }

  private newAgent(watch: boolean, agentOpts: https.AgentOptions): http.Agent {
    const keep = { keepAlive: !watch, ...(watch ? {} : { maxSockets: 16 }) };
    const tunnel = this.proxy && proxyAgent(this.proxy, new URL(this.server), { ...(this.isHttps ? agentOpts : {}), ...keep }, this.timeoutMs);
    if (tunnel) return tunnel;
    if (!this.isHttps) return new http.Agent(keep);
    return new https.Agent({ ...agentOpts, ...keep });
  }

  private async options(method: string, path: string, headers: Record<string, string>, watch: boolean, endpoint: string): Promise<https.RequestOptions> {
    const url = new URL(this.server + path);
    const opts: https.RequestOptions = { method, headers: { Accept: 'application/json', 'User-Agent': 'bootcplan', ...headers } };
    try {
      await this.kc.applyToHTTPSOptions(opts);
    } catch (err) {
      throw kubeconfigFailure(err, endpoint, this.route, this.kc.getCurrentUser()?.name ?? '');
    }
    // The library's KubeConfig makes a fresh agent per call; keep one (keep-alive) per kind of use.
    const agentOpts: https.AgentOptions = {
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      pfx: opts.pfx,
      passphrase: opts.passphrase,
      rejectUnauthorized: opts.rejectUnauthorized,
      servername: opts.servername,
    };
    opts.agent = watch ? (this.watchAgent ??= this.newAgent(true, agentOpts)) : (this.agent ??= this.newAgent(false, agentOpts));
    opts.protocol = url.protocol;
    opts.hostname = url.hostname.replace(/^\[|\]$/g, '');
    opts.port = url.port || (this.isHttps ? 443 : 80);
    opts.path = url.pathname + url.search;
    if (this.proxy && !this.isHttps && this.proxy.scheme === 'http') forwardThrough(this.proxy, opts, url);
    return opts;
  }

  private start(opts: https.RequestOptions): http.ClientRequest {
    return (this.isHttps ? https : http).request(opts);
  }

  /** A failed exchange as the error to throw: AbortedError and errors of the caller pass through. */
  private failure(err: unknown, endpoint: string): unknown {
    if (err instanceof ExchangeFailure) {
      const seconds = this.timeoutMs / 1000;
      if (err.kind === 'too-large') return tooLarge(endpoint, this.route, this.maxBytes, err.declared);
      return timedOut(endpoint, this.route, seconds, err.kind === 'timeout-headers' ? 'headers' : err.kind === 'timeout-body' ? 'body' : 'watch');
    }
    if (err instanceof ProxyRefused) {
      return new KubeRequestError(
        `${endpoint}: the proxy ${this.route.proxy} refused to open a tunnel to ${this.server}: ${printable(err.message, 200)}`,
        'proxy',
        endpoint,
        err.status === 407
          ? `the proxy wants credentials: put them in ${this.proxy?.source ?? 'proxy-url'} (http://user:password@host:port)`
          : `check ${this.proxy?.source === 'proxy-url' ? 'proxy-url in the kubeconfig' : this.proxy?.source}, and that the proxy allows CONNECT to the API server (NO_PROXY lists the hosts reached without it)`,
      );
    }
    if (err instanceof AnswerRefused) return new KubeRequestError(`${endpoint}: ${err.message}`, err.problem, endpoint, HINT_NOT_API_SERVER);
    const code = errnoOf(err);
    if (err instanceof Error && code !== undefined && !(err instanceof AbortedError)) return unreachable(code, err.message, endpoint, this.route);
    return err;
  }

  /** An answer that is not 2xx: the driver's error for a Status, KubeRequestError for anything else. */
  private refusal(a: Answer, endpoint: string, what: string): Error {
    const status = statusOf(a.body);
    if (status) return errorFromStatus(a.status, status, what, a.headers);
    if (isApiServerNotFoundPage(a.status, a.body)) return errorFromStatus(404, { message: '404 page not found' }, what, a.headers);
    if (a.status >= 300 && a.status < 400) {
      const to = a.headers.location ? ` to ${printable(String(a.headers.location), 200)}` : '';
      return new KubeRequestError(`${endpoint}: HTTP ${a.status} redirect${to} (${this.server})`, 'unexpected-answer', endpoint, HINT_NOT_API_SERVER);
    }
    return new KubeRequestError(
      `${endpoint}: HTTP ${a.status} answer is not a Kubernetes Status (${describeAnswer(a.headers, a.body)}): ${preview(a.body)}`,
      'unexpected-answer',
      endpoint,
      HINT_NOT_API_SERVER,
    );
  }

  private async call<T>(method: string, path: string, o: RequestOptions, check: (value: unknown) => T, onBytes?: (n: number) => void): Promise<T> {
    const endpoint = `${method} ${path}`;
    const fullPath = path + queryString(o.query);
    const headers: Record<string, string> = {};
    let body: string | undefined;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['Content-Type'] = o.contentType ?? 'application/json';
      // Node does not frame a DELETE body (no chunked encoding by default): always say its length.
      headers['Content-Length'] = String(Buffer.byteLength(body));
    }
    countRequest(this.contextName, method, fullPath, body === undefined ? 0 : Buffer.byteLength(body));
    const opts = await this.options(method, fullPath, headers, false, endpoint);
    if (o.signal?.aborted) throw new AbortedError();
    let a: Answer;
    try {
      a = await exchange(this.start(opts), body, { timeoutMs: this.timeoutMs, maxBytes: this.maxBytes, errorBytes: ERROR_BODY_BYTES }, o.signal);
    } catch (err) {
      if (err instanceof AbortedError || o.signal?.aborted) throw new AbortedError();
      throw this.failure(err, endpoint);
    }
    if (a.status < 200 || a.status >= 300) throw this.refusal(a, endpoint, o.what ?? endpoint);
    countWritten(this.contextName, method, path, a.body.length);
    try {
      onBytes?.(a.body.length);
      return check(parseJsonBody(a.body, a.status, a.headers));
    } catch (err) {
      throw this.failure(err, endpoint);
    }
  }

  /**
   * One request; resolves with the checked JSON of a 2xx answer (with `expect`, an object of
   * that kind, narrowed to its view: src/kube/answers.ts), throws otherwise.
   */
  request<K extends string>(method: string, path: string, o: RequestOptions & { expect: K }): Promise<ViewOf<K>>;
  request(method: string, path: string, o?: RequestOptions): Promise<Record<string, unknown>>;
  request(method: string, path: string, o: RequestOptions = {}): Promise<unknown> {
    const kind = o.expect;
    return kind === undefined ? this.call(method, path, o, jsonObjectAnswer) : this.call(method, path, o, (v) => objectAnswer(v, kind));
  }

  /**
   * Lists a collection of `kind` objects page by page (`limit`, then `continue`), as
   * client-go's pager (k8s.io/client-go/tools/pager). A continue token that expired (410
   * Gone: etcd compacted the revision the pages are read at) restarts the list once; the
   * pager falls back to one unpaginated list there, which the size cap would bound anyway,
   * but pages keep each answer small.
   */
  async list<K extends string>(
    path: string,
    expected: Expected<K>,
    o: Omit<RequestOptions, 'body' | 'contentType' | 'expect'> = {},
    each?: (item: ViewOf<K>) => void,
    restarted?: () => void,
  ): Promise<ListAnswer<ViewOf<K>>> {
    try {
      return await this.listPages(path, expected, o, each);
    } catch (err) {
      if (!(err instanceof ContinueExpired)) throw err;
    }
    // The items `each` took are read again: its owner starts over.
    restarted?.();
    try {
      return await this.listPages(path, expected, o, each);
    } catch (err) {
      if (!(err instanceof ContinueExpired)) throw err;
      throw new KubeRequestError(
        `GET ${path}: the list's continue token expired again after a restart (410 Gone): the collection changes faster than it can be read in pages of ${this.pageSize}`,
        'list-expired',
        `GET ${path}`,
        'run the command again; if it keeps happening, the API server compacts very often (etcd --auto-compaction-retention)',
      );
    }
  }

  /** `each`: takes every item as its page arrives, and the answer's items stay empty (memory bounded by what `each` keeps). */
  private async listPages<K extends string>(
    path: string,
    expected: Expected<K>,
    o: RequestOptions,
    each?: (item: ViewOf<K>) => void,
  ): Promise<ListAnswer<ViewOf<K>>> {
    const items: ViewOf<K>[] = [];
    const seen = new Set<string>();
    let bytes = 0;
    let token: string | undefined;
    let resourceVersion = '';
    for (;;) {
      let page: ListPage<ViewOf<K>>;
      try {
        page = await this.call(
          'GET',
          path,
          { ...o, query: { ...o.query, limit: this.pageSize, continue: token } },
          (v) => listAnswer(v, expected),
          (n) => {
            bytes += n;
          },
        );
      } catch (err) {
        if (token !== undefined && err instanceof KubeApiError && err.status === 410) throw new ContinueExpired();
        throw err;
      }
      if (bytes > this.maxBytes * LIST_BYTES_FACTOR) {
        throw new KubeRequestError(
          `response from GET ${path} exceeded ${formatBytes(this.maxBytes * LIST_BYTES_FACTOR)} over ${seen.size + 1} pages (${this.server})`,
          'too-large',
          `GET ${path}`,
          HINT_NOT_API_SERVER,
        );
      }
      for (const it of page.items)
        if (each) each(it);
        else items.push(it);
      resourceVersion = typeof page.metadata?.resourceVersion === 'string' ? page.metadata.resourceVersion : resourceVersion;
      const next = page.metadata?.continue;
      if (next === undefined || next === '' || next === null) return { items, resourceVersion };
      if (typeof next !== 'string' || seen.has(next) || seen.size >= MAX_LIST_PAGES) {
        throw new KubeRequestError(
          `GET ${path}: the server keeps answering with continue tokens (page ${seen.size + 1}: ${preview(Buffer.from(valueText(next)), 40)})`,
          'unexpected-answer',
          `GET ${path}`,
          HINT_NOT_API_SERVER,
        );
      }
      seen.add(next);
      token = next;
    }
  }

  /**
   * Opens a watch and calls `onEvent` for each event until the server ends the stream
   * (resolves), the signal aborts (resolves), or the connection fails (rejects). A server
   * that does not end it within its `timeoutSeconds` plus the request timeout is cut off.
   */
  async watch<K extends string>(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: WatchEvent<ViewOf<K>>) => void,
    signal: AbortSignal,
    expected: Expected<K>,
  ): Promise<void> {
    const endpoint = `WATCH ${path}`;
    const fullPath = path + queryString({ ...query, watch: 'true' });
    countRequest(this.contextName, 'WATCH', fullPath);
    const opts = await this.options('GET', fullPath, {}, true, endpoint);
    if (signal.aborted) return;
    const req = this.start(opts);
    req.on('socket', (s) => s.unref());
    let res: http.IncomingMessage;
    try {
      res = await openStream(req, this.timeoutMs, signal);
    } catch (err) {
      if (signal.aborted) return;
      throw this.failure(err, endpoint);
    }
    const status = res.statusCode ?? 0;
    if (status !== 200) {
      const body = await readBody(res, ERROR_BODY_BYTES, true).catch(() => Buffer.alloc(0));
      throw this.refusal({ status, headers: res.headers, body }, endpoint, endpoint);
    }
    const serverSeconds = Number(query.timeoutSeconds ?? 0);
    const deadlineMs = serverSeconds > 0 && this.timeoutMs > 0 ? serverSeconds * 1000 + this.timeoutMs : 0;
    try {
      await readLines(res, { maxLineBytes: this.maxBytes, deadlineMs, signal }, (line) => onEvent(parseWatchEvent(line, expected)));
    } catch (err) {
      if (signal.aborted) return;
      throw this.failure(err, endpoint);
    }
  }

  close(): void {
    this.agent?.destroy();
    this.watchAgent?.destroy();
  }
}

/** The cluster's server URL without trailing slashes; ClusterApiError unless it is an http(s) URL. */
function serverUrl(server: unknown, cluster: string): string {
  let url: URL | null = null;
  try {
    url = new URL(String(server));
  } catch {
    /* reported below */
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new ClusterApiError(
      `kubeconfig cluster "${printable(cluster, 100)}": server ${JSON.stringify(printable(typeof server === 'string' ? server : JSON.stringify(server ?? ''), 200))} is not an https:// URL`,
      'set it to the API server, e.g. https://api.example.com:6443 (`kubectl config set-cluster NAME --server=URL`)',
    );
  }
  return String(server).replace(/\/+$/, '');
}

function queryString(q?: Record<string, string | number | boolean | undefined>): string {
  if (!q) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) if (v !== undefined) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}
