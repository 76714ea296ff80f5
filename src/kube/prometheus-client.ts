/**
 * The HTTP client of the `prometheus` and `alerts` health checks: three GET endpoints
 * (Prometheus `/api/v1/query` and `/api/v1/alerts`, Alertmanager `/api/v2/alerts`), each answer
 * treated as hostile until checked (src/kube/prometheus-answers.ts).
 *
 * The rules (docs/safety.md "Health checks"):
 * - TLS is always verified (no skip option exists), TLS 1.2 at least, against the CA the spec
 *   names (a ConfigMap or Secret) or the system roots;
 * - redirects are never followed: a 3xx could send the token elsewhere;
 * - the bearer token goes only in `Authorization`, only over TLS or plain http to a loopback
 *   host; it and a URL's userinfo are added to the credential mask (src/kube/credential-mask.ts),
 *   and every text this client makes of an answer (an error body, a header) is masked before it
 *   is cut short (a proxy that echoes requests back; docs/safety.md "Credentials in answers");
 * - the whole exchange ends within the check's request timeout and the stop signal ends it at
 *   once (src/kube/http-exchange.ts); a 2xx body is read up to 4 MiB, an error body up to 8 KiB;
 * - more than 10,000 series or alerts is `too-large` (judged with the answer's shapes by
 *   src/domain/health-observe.ts; `limit=10001` asks the server to stop there).
 * Every failure is a HealthRequestError of one kind; the health source turns it into an
 * `error` measurement, which fails the check: an unreachable source is never a pass.
 */
import http from 'node:http';
import https from 'node:https';
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { AbortedError } from '../apply/ports/driver.ts';
import { exchange, ExchangeFailure, type Answer } from './http-exchange.ts';
import { printable, preview, describeAnswer, parseJsonBody, AnswerRefused } from './answers.ts';
import { HealthRequestError, successEnvelopeOf, errorEnvelopeOf, type PromEnvelope } from './prometheus-answers.ts';
import { valueText } from '../base/json-text.ts';
import { errnoOf, messageOf } from '../base/errors.ts';
import { CredentialMask } from './credential-mask.ts';
import { proxyAgent, proxyRouteFromEnv } from './proxy.ts';

export { HealthRequestError, type PromEnvelope } from './prometheus-answers.ts';

/** Where to ask, and with what: resolved from the check by src/kube/health-credentials.ts. */
export interface PrometheusEndpoint {
  /** The base URL; a path is a route prefix (`https://host:9091`, `http://127.0.0.1:9090/prom`). */
  url: string;
  /** The bearer token, or null (`auth: none`). */
  token: string | null;
  /** A PEM bundle that replaces the system roots, or null for the system roots. */
  ca: string | null;
  /** How messages name the CA: "ConfigMap ns/name[key]", "the system roots". */
  caName: string;
}

interface PrometheusClientOptions {
  /** The largest 2xx body read (default 4 MiB). */
  maxBytes?: number;
  /** The credentials to keep out of messages (the health source's; default one of the client's own). */
  mask?: CredentialMask;
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read (default process.env). */
  env?: Record<string, string | undefined>;
}

/** One request of requestJson: what is asked of which API, within what time. */
interface JsonRequest {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below the endpoint's URL path: `/api/v1/query`. */
  path: string;
  /** The query string; default none. */
  params?: URLSearchParams;
  /** Sent as JSON when given. */
  body?: unknown;
  timeoutMs: number;
  signal: AbortSignal;
  /** "Prometheus" or "Alertmanager", for messages. */
  api: string;
}

const DEFAULT_MAX_BYTES = 4 * 2 ** 20;
/** Error bodies are shown (200 characters at most), not parsed whole. */
const ERROR_BODY_BYTES = 8 * 1024;
const FORBIDDEN_HINT =
  'grant the identity get on prometheuses/api (OpenShift: cluster-monitoring-view bound in openshift-monitoring; docs/safety.md "Health checks")';

/** One more series than a gate accepts (src/domain/health-observe.ts): the server stops there and warns. */
const SERIES_LIMIT = 10_001;
const originOf = (ep: PrometheusEndpoint) => new URL(ep.url).origin;
const isJson = (type: unknown) => /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(valueText(type));
const mib = (n: number) => `${Math.round((n / 2 ** 20) * 10) / 10} MiB`;

/** 127.0.0.0/8, ::1 and localhost: plain http stays on this machine. */
function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1' || h === '0:0:0:0:0:0:0:1';
}

export class PrometheusClient {
  private readonly agents = new Map<string, http.Agent>();
  private readonly maxBytes: number;
  private readonly mask: CredentialMask;
  private readonly env: Record<string, string | undefined>;

  constructor(opts: PrometheusClientOptions = {}) {
    this.maxBytes = Math.max(1024, opts.maxBytes ?? DEFAULT_MAX_BYTES);
    this.mask = opts.mask ?? new CredentialMask();
    this.env = opts.env ?? process.env;
  }

  /** An instant query (server time): `GET /api/v1/query`. */
  async query(ep: PrometheusEndpoint, promql: string, timeoutMs: number, signal: AbortSignal): Promise<PromEnvelope> {
    // limit=10001: a server that supports it truncates there and says so; 10,001 series are
    // too-large (checked before the warnings). partial_response=false: Thanos answers an error
    // instead of a partial result (Prometheus ignores it).
    const params = new URLSearchParams({
      query: promql,
      timeout: `${Math.max(1, Math.floor(timeoutMs / 1000))}s`,
      limit: String(SERIES_LIMIT),
      partial_response: 'false',
    });
    return successEnvelopeOf(await this.getJson(ep, '/api/v1/query', params, timeoutMs, signal, 'Prometheus'), originOf(ep));
  }

  /** Every active alert of every alerting rule: `GET /api/v1/alerts` (no server-side filter exists). */
  async alerts(ep: PrometheusEndpoint, timeoutMs: number, signal: AbortSignal): Promise<PromEnvelope> {
    return successEnvelopeOf(await this.getJson(ep, '/api/v1/alerts', new URLSearchParams(), timeoutMs, signal, 'Prometheus'), originOf(ep));
  }

  /** Alertmanager's alerts that are neither silenced nor inhibited, filtered by `filters` (matchers): its JSON body. */
  async alertmanagerAlerts(ep: PrometheusEndpoint, filters: readonly string[], timeoutMs: number, signal: AbortSignal): Promise<unknown> {
    const params = new URLSearchParams({ active: 'true', silenced: 'false', inhibited: 'false' });
    for (const f of filters) params.append('filter', f);
    return this.getJson(ep, '/api/v2/alerts', params, timeoutMs, signal, 'Alertmanager');
  }

  /** Releases the keep-alive sockets. */
  close(): void {
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
  }

  /** The GET of `path` as JSON; every failure's message masked (src/kube/credential-mask.ts). */
  private async getJson(ep: PrometheusEndpoint, path: string, params: URLSearchParams, timeoutMs: number, signal: AbortSignal, api: string): Promise<unknown> {
    return this.requestJson(ep, { method: 'GET', path, params, timeoutMs, signal, api });
  }

  /**
   * One request to the API of `ep` under the same rules as the GETs (docs/safety.md "Health
   * checks"): POST and DELETE for Alertmanager's silences (src/kube/alertmanager-silences.ts).
   * `body` is sent as JSON; an answer without a body (DELETE's 200) is null. Every failure's
   * message is masked (src/kube/credential-mask.ts).
   */
  async requestJson(ep: PrometheusEndpoint, req: JsonRequest): Promise<unknown> {
    this.mask.add(ep.token);
    const base = new URL(ep.url);
    addUserinfo(this.mask, base);
    try {
      return await this.exchangeJson(ep, base, req);
    } catch (err) {
      throw err instanceof HealthRequestError ? new HealthRequestError(err.kind, this.mask.text(err.message)) : err;
    }
  }

  private async exchangeJson(
    ep: PrometheusEndpoint,
    base: URL,
    { method, path, params = new URLSearchParams(), body, timeoutMs, signal, api }: JsonRequest,
  ): Promise<unknown> {
    const url = new URL(base.pathname.replace(/\/+$/, '') + path, base);
    url.search = params.toString();
    const shown = base.origin;
    if (ep.token !== null && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      throw new HealthRequestError('tls', `refusing to send the bearer token over plain http to ${url.host}: use https (or auth: none)`);
    }
    if (signal.aborted) throw new AbortedError();
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'bootcplan' };
    if (ep.token !== null) headers.Authorization = `Bearer ${ep.token}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers['Content-Type'] = 'application/json';
    const a = await this.send(url, headers, ep, timeoutMs, signal, method, payload);
    // What is shown of an answer holds no credential: masked whole, before anything is cut short.
    const shownAnswer = (): Answer => ({ ...a, headers: maskedHeaders(this.mask, a.headers), body: Buffer.from(this.mask.text(a.body.toString('utf8'))) });
    if (a.status < 200 || a.status >= 300) throw refusal(shownAnswer(), url, shown, api);
    if (method !== 'GET' && a.body.length === 0) return null;
    const notApi = `not a${api === 'Alertmanager' ? 'n' : ''} ${api} API answer`;
    if (!isJson(a.headers['content-type'])) {
      const s = shownAnswer();
      throw new HealthRequestError('bad-answer', `${notApi} (${describeAnswer(s.headers, s.body)}) from ${shown}: ${preview(s.body)}`);
    }
    try {
      return parseJsonBody(a.body, a.status, a.headers);
    } catch (err) {
      if (!(err instanceof AnswerRefused)) throw err;
      const s = shownAnswer();
      const why = err.problem === 'not-json' ? 'not JSON' : 'JSON nested too deep';
      throw new HealthRequestError('bad-answer', `${notApi} (${describeAnswer(s.headers, s.body)}, ${why}) from ${shown}: ${preview(s.body)}`);
    }
  }

  /**
   * The GET, within `timeoutMs` in all. A keep-alive socket the server closed while it was idle
   * fails with ECONNRESET as it is reused; Node marks such a request `reusedSocket` and its
   * documentation (http "request.reusedSocket") recommends retrying it: once, on a new socket,
   * within the time left. A GET changes nothing; a silence's POST or DELETE that such a reset
   * ended never reached the server (it closed the socket before reading), and a duplicate silence
   * would lapse within its TTL anyway.
   */
  private async send(
    url: URL,
    headers: Record<string, string>,
    ep: PrometheusEndpoint,
    timeoutMs: number,
    signal: AbortSignal,
    method: 'GET' | 'POST' | 'DELETE' = 'GET',
    payload?: string,
  ): Promise<Answer> {
    const deadline = Date.now() + timeoutMs;
    const mod = url.protocol === 'https:' ? https : http;
    for (let attempt = 1; ; attempt++) {
      const req = mod.request(url, { method, headers, agent: this.agentFor(url, ep) });
      try {
        return await exchange(req, payload, { timeoutMs: Math.max(1, deadline - Date.now()), maxBytes: this.maxBytes, errorBytes: ERROR_BODY_BYTES }, signal);
      } catch (err) {
        // exchange() rejects with AbortedError only when the signal aborted.
        if (signal.aborted) throw new AbortedError();
        const reset = errnoOf(err) === 'ECONNRESET' && req.reusedSocket;
        if (!(reset && attempt === 1 && Date.now() < deadline)) throw this.failure(err, viaProxy(url, this.env), ep, timeoutMs);
      }
    }
  }

  /**
   * One keep-alive agent per origin and CA; TLS verified always, 1.2 at least. A health source
   * is reached as kubectl's own HTTP clients reach a URL: through the environment's proxy
   * (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; src/kube/proxy.ts), never the kubeconfig's proxy-url,
   * which belongs to its API server (docs/live-clusters.md "Proxies").
   */
  private agentFor(url: URL, ep: PrometheusEndpoint): http.Agent {
    const proxy = proxyRouteFromEnv(url, this.env);
    const key = `${url.origin}|${ep.ca === null ? 'system' : createHash('sha256').update(ep.ca).digest('hex')}|${proxy?.url.href ?? ''}`;
    let agent = this.agents.get(key);
    if (!agent) {
      const tls: https.AgentOptions = {
        keepAlive: true,
        maxSockets: 4,
        rejectUnauthorized: true,
        minVersion: 'TLSv1.2',
        ...(ep.ca === null ? {} : { ca: ep.ca }),
      };
      agent =
        (proxy && proxyAgent(proxy, url, url.protocol === 'https:' ? tls : { keepAlive: true, maxSockets: 4 }, 0, false)) ??
        (url.protocol === 'https:' ? new https.Agent(tls) : new http.Agent({ keepAlive: true, maxSockets: 4 }));
      this.agents.set(key, agent);
    }
    return agent;
  }

  private failure(err: unknown, shown: string, ep: PrometheusEndpoint, timeoutMs: number): Error {
    const seconds = `${Math.round(timeoutMs / 100) / 10} s`;
    if (err instanceof ExchangeFailure) {
      if (err.kind === 'too-large')
        return new HealthRequestError(
          'too-large',
          `answer over ${mib(this.maxBytes)}${err.declared ? ` (Content-Length ${err.declared})` : ''}: aggregate in the query`,
        );
      if (err.kind === 'timeout-headers') return new HealthRequestError('timeout', `no answer within ${seconds} from ${shown}`);
      return new HealthRequestError('timeout', `no complete answer within ${seconds} from ${shown}`);
    }
    const code = errnoOf(err) ?? '';
    const text = printable(messageOf(err), 160);
    if (/CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS|ERR_SSL|EPROTO/.test(code) && !/WRONG_VERSION_NUMBER/.test(code)) {
      return new HealthRequestError('tls', `TLS: ${text} from ${shown} (CA: ${ep.caName})`);
    }
    return new HealthRequestError('unreachable', `${text}${text.includes(code) ? '' : ` (${code || 'no code'})`} (${shown})`);
  }
}

/**
 * A URL's userinfo as the credentials it is (Node sends it as `Authorization: Basic`): the
 * password, decoded and as written, `user:password`, and the Basic value; the user alone when
 * there is no password (`https://TOKEN@host`).
 */
function addUserinfo(mask: CredentialMask, u: URL): void {
  if (!u.username && !u.password) return;
  const user = decoded(u.username);
  const password = decoded(u.password);
  for (const c of u.password ? [u.password, password, `${user}:${password}`] : [u.username, user]) mask.add(c);
  mask.add(Buffer.from(`${user}:${password}`).toString('base64'));
}

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // a malformed escape: sent as written
  }
}

function maskedHeaders(mask: CredentialMask, headers: http.IncomingHttpHeaders): http.IncomingHttpHeaders {
  const out: http.IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) {
    if (k === 'set-cookie') out['set-cookie'] = v === undefined ? v : [v].flat().map((x) => mask.text(x));
    else if (typeof v === 'string') out[k] = mask.text(v);
  }
  return out;
}

/** The origin, and the environment's proxy a failure came through (credentials masked). */
function viaProxy(url: URL, env: Record<string, string | undefined>): string {
  const p = proxyRouteFromEnv(url, env);
  return p ? `${url.origin} through proxy ${p.shown} (${p.source})` : url.origin;
}

/** A non-2xx answer as the failure to report. */
function refusal(a: Answer, url: URL, shown: string, api: string): HealthRequestError {
  const reason = http.STATUS_CODES[a.status] ?? 'unknown status';
  if (a.status >= 300 && a.status < 400) {
    let to = 'nowhere';
    try {
      to = new URL(String(a.headers.location ?? ''), url).origin;
    } catch {
      /* an unparseable Location: "nowhere" */
    }
    return new HealthRequestError('http-status', `${a.status} redirect to ${printable(to, 100)} (not followed: put the final URL in the spec)`);
  }
  const body = a.body.length ? `: ${preview(a.body, 120)}` : '';
  if (a.status === 401) return new HealthRequestError('unauthorized', `401 from ${shown}: the token was refused${body}`);
  if (a.status === 403) return new HealthRequestError('forbidden', `403 from ${shown}${body}; ${FORBIDDEN_HINT}`);
  if (a.status === 404) return new HealthRequestError('not-found', `404 from ${shown}${url.pathname}: no ${api} API at this URL (a route prefix missing?)`);
  const envelope = errorEnvelopeOf(a.body);
  if (envelope) {
    const kind = a.status === 400 || a.status === 422 ? 'query-rejected' : 'http-status';
    return new HealthRequestError(kind, `${a.status} ${printable(envelope.type, 40)}: ${printable(envelope.error, 200)}`);
  }
  if (api === 'Alertmanager' && a.status === 400) return new HealthRequestError('query-rejected', `400 from ${shown}${body}`);
  return new HealthRequestError('http-status', `${a.status} ${reason} (no ${api} answer: ${describeAnswer(a.headers, a.body)})${body}`);
}
