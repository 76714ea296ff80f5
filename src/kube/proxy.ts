/**
 * Proxies as kubectl uses them (client-go rest.Config.Proxy, else Go's
 * http.ProxyFromEnvironment; docs/live-clusters.md "Proxies"):
 *   1. the kubeconfig cluster's `proxy-url`, for every request to that API server, loopback
 *      or not: http://, https://, socks5:// and socks5h://;
 *   2. else HTTPS_PROXY / https_proxy (an https:// server) or HTTP_PROXY / http_proxy (an
 *      http:// server), unless NO_PROXY / no_proxy exempts the host, with the rules of
 *      golang.org/x/net/http/httpproxy (proxyRouteFromEnv below).
 * The tunnels are the agents of `hpagent` (HTTP CONNECT, through an http:// or a TLS
 * https:// proxy) and `socks-proxy-agent`; the TLS to the server runs inside the tunnel with
 * its own CA, client certificate and server name (the server's certificate is verified as
 * without a proxy). An http:// server behind an http:// proxy is plain forwarding (the
 * request line carries the absolute URL), as Go does. Credentials in a proxy URL
 * (http://user:password@host:port) are sent (Proxy-Authorization: Basic, or SOCKS5
 * username/password) and never shown.
 */
import http from 'node:http';
import type https from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import hpagent from 'hpagent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { ClusterApiError, NamedError } from '../base/errors.ts';

type ProxyScheme = 'http' | 'https' | 'socks5' | 'socks5h';

export interface ProxyRoute {
  url: URL;
  scheme: ProxyScheme;
  /** For messages: scheme, host and port; credentials masked. */
  shown: string;
  /** Where it was named: the kubeconfig's proxy-url, or an environment variable ("HTTPS_PROXY"). */
  source: string;
  /** Proxy-Authorization header value, from the URL's userinfo (http and https proxies). */
  authorization: string | null;
}

const SCHEMES: readonly string[] = ['http:', 'https:', 'socks5:', 'socks5h:'];

function routeOf(url: URL, source: string): ProxyRoute {
  const shown = `${url.protocol}//${url.username || url.password ? '***@' : ''}${url.host}`;
  const authorization =
    url.username || url.password ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : null;
  const scheme: ProxyScheme = url.protocol === 'https:' ? 'https' : url.protocol === 'socks5:' ? 'socks5' : url.protocol === 'socks5h:' ? 'socks5h' : 'http';
  return { url, scheme, shown, source, authorization };
}

/** The proxy of a kubeconfig cluster, or null; ClusterApiError for one bootcplan cannot use. */
export function proxyRouteOf(proxyUrl: string | undefined, cluster: string): ProxyRoute | null {
  if (!proxyUrl) return null;
  let url: URL;
  try {
    url = new URL(proxyUrl);
  } catch {
    // Not echoed: it may hold credentials.
    throw new ClusterApiError(
      `kubeconfig cluster "${cluster}": proxy-url is not a valid URL`,
      'write it as SCHEME://host:port with http, https, socks5 or socks5h (kubectl config set-cluster NAME --proxy-url=socks5://127.0.0.1:1080)',
    );
  }
  if (!SCHEMES.includes(url.protocol) || !url.hostname) {
    const shown = `${url.protocol}//${url.username || url.password ? '***@' : ''}${url.host}`;
    throw new ClusterApiError(
      `kubeconfig cluster "${cluster}": proxy-url ${shown} is not supported: the scheme must be http, https, socks5 or socks5h (as kubectl's), not ${url.protocol.replace(/:$/, '') || 'none'}`,
      'write it as SCHEME://host:port, e.g. socks5://127.0.0.1:1080 for `ssh -D 1080 bastion`',
    );
  }
  return routeOf(url, 'proxy-url');
}

type Env = Record<string, string | undefined>;
const envAny = (env: Env, ...names: string[]): [string, string] | null => {
  for (const n of names) {
    const v = env[n];
    if (v) return [n, v];
  }
  return null;
};

/**
 * Go's parseProxy: a value that is not a URL with scheme http, https or socks5 is read again
 * as "http://" + value (so `proxy.corp:3128` is http://proxy.corp:3128); a value that still
 * does not parse is ignored, as Go's ProxyFromEnvironment ignores it.
 */
function parseEnvProxy(value: string): URL | null {
  try {
    const u = new URL(value);
    if (['http:', 'https:', 'socks5:'].includes(u.protocol) && u.hostname) return u;
  } catch {
    /* read again with http:// in front */
  }
  try {
    const u = new URL('http://' + value);
    return u.hostname ? u : null;
  } catch {
    return null;
  }
}

/** IPv4 or IPv6 text as a 128-bit number (IPv4 mapped into ::ffff:0:0/96, as Go's net.IP), or null. */
function ipBits(text: string): bigint | null {
  const h = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v = isIP(h);
  if (v === 4) return 0xffff00000000n | BigInt(h.split('.').reduce((n, o) => n * 256 + Number(o), 0));
  if (v !== 6) return null;
  let s = h;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const n = (ipBits(v4[1]) ?? 0n) & 0xffffffffn;
    s = s.slice(0, -v4[1].length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail]: [string, string | null] = s.includes('::') ? [s.slice(0, s.indexOf('::')), s.slice(s.indexOf('::') + 2)] : [s, null];
  const hs = head ? head.split(':') : [];
  const ts = tail === null ? [] : tail ? tail.split(':') : [];
  const groups: string[] = tail === null ? hs : [...hs, ...new Array<string>(8 - hs.length - ts.length).fill('0'), ...ts];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

const isLoopbackIp = (bits: bigint) => bits === 1n || bits >> 24n === 0xffff7fn; // ::1, 127.0.0.0/8

interface NoProxyRule {
  all?: true;
  cidr?: { base: bigint; prefix: number };
  ip?: { bits: bigint; port: string };
  domain?: { host: string; port: string; matchHost: boolean };
}

/** NO_PROXY as golang.org/x/net/http/httpproxy config.init reads it. */
function noProxyRules(text: string): NoProxyRule[] {
  const rules: NoProxyRule[] = [];
  for (const raw of text.split(',')) {
    const p = raw.trim().toLowerCase();
    if (!p) continue;
    if (p === '*') return [{ all: true }];
    const cidr = /^(.+)\/(\d{1,3})$/.exec(p);
    if (cidr) {
      const base = ipBits(cidr[1]);
      const bits = Number(cidr[2]);
      const v4 = isIP(cidr[1]) === 4;
      if (base !== null && bits <= (v4 ? 32 : 128)) {
        rules.push({ cidr: { base, prefix: v4 ? 96 + bits : bits } });
        continue;
      }
    }
    // host:port, [v6]:port, or a bare host (net.SplitHostPort fails on it: no port).
    let host = p;
    let port = '';
    const m = /^\[([^\]]*)\]:(\d*)$/.exec(p) ?? (/^([^:[\]]*):(\d*)$/.test(p) ? /^([^:]*):(\d*)$/.exec(p) : null);
    if (m) {
      if (!m[1]) continue;
      [host, port] = [m[1], m[2]];
    }
    const bits = ipBits(host);
    if (bits !== null) {
      rules.push({ ip: { bits, port } });
      continue;
    }
    if (!host) continue;
    if (host.startsWith('*.')) host = host.slice(1);
    const matchHost = !host.startsWith('.');
    rules.push({ domain: { host: matchHost ? '.' + host : host, port, matchHost } });
  }
  return rules;
}

const maskBits = (prefix: number) => ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - prefix)) - 1n);

/** Go's useProxy: localhost and loopback addresses never go through the environment's proxy. */
function useProxy(target: URL, rules: NoProxyRule[]): boolean {
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  if (host === 'localhost') return false;
  const ip = ipBits(host);
  if (ip !== null && isLoopbackIp(ip)) return false;
  for (const r of rules) {
    if (r.all) return false;
    if (ip !== null && r.cidr && (ip & maskBits(r.cidr.prefix)) === (r.cidr.base & maskBits(r.cidr.prefix))) return false;
    if (ip !== null && r.ip && r.ip.bits === ip && (!r.ip.port || r.ip.port === port)) return false;
    if (r.domain && (host.endsWith(r.domain.host) || (r.domain.matchHost && host === r.domain.host.slice(1))))
      if (!r.domain.port || r.domain.port === port) return false;
  }
  return true;
}

/**
 * The environment's proxy for a URL, as Go's http.ProxyFromEnvironment (which client-go, and
 * so kubectl, uses when the kubeconfig names no proxy-url): HTTPS_PROXY (then https_proxy) for
 * https, HTTP_PROXY (then http_proxy) for http (and never in a CGI request, REQUEST_METHOD
 * set); no fallback from one to the other; NO_PROXY (then no_proxy) entries: `*`, an IP, a
 * CIDR, a domain (`example.com` is it and its subdomains; `.example.com` and `*.example.com`
 * only subdomains), each with an optional :port; localhost and loopback IPs are never proxied.
 */
export function proxyRouteFromEnv(target: URL, env: Env = process.env): ProxyRoute | null {
  const named =
    target.protocol === 'https:'
      ? envAny(env, 'HTTPS_PROXY', 'https_proxy')
      : target.protocol === 'http:' && !env.REQUEST_METHOD
        ? envAny(env, 'HTTP_PROXY', 'http_proxy')
        : null;
  if (!named) return null;
  const url = parseEnvProxy(named[1]);
  if (!url) return null;
  const no = envAny(env, 'NO_PROXY', 'no_proxy');
  if (!useProxy(target, noProxyRules(no ? no[1] : ''))) return null;
  return routeOf(url, named[0]);
}

/** The proxy refused to open the tunnel (its CONNECT answer was not 200). */
export class ProxyRefused extends NamedError {
  constructor(
    readonly status: number,
    readonly statusText: string,
  ) {
    super(`HTTP ${status}${statusText ? ' ' + statusText : ''}`);
  }
}

type Callback = (err: Error | null, stream: Duplex) => void;
/** hpagent reports a refused CONNECT as "Bad response: 407": the status, named. */
const refusedOf = (err: Error | null): Error | null => {
  const m = err && /^Bad response: (\d{3})$/.exec(err.message);
  return m ? new ProxyRefused(Number(m[1]), http.STATUS_CODES[Number(m[1])] ?? '') : err;
};

/**
 * The socks client rejects with plain Errors: "connect ECONNREFUSED ..." (the proxy is down)
 * without the errno `code` the REST layer names failures by, and "Socks5 proxy rejected
 * connection - HostUnreachable" (the proxy could not reach the server). Both get a code.
 */
class SocksAgent extends SocksProxyAgent {
  override async connect(req: http.ClientRequest, opts: Parameters<SocksProxyAgent['connect']>[1]): ReturnType<SocksProxyAgent['connect']> {
    try {
      return await super.connect(req, opts);
    } catch (err) {
      if (err instanceof Error && !('code' in err && err.code)) {
        const code = /\b(E[A-Z]{3,})\b/.exec(err.message)?.[1] ?? (/socks/i.test(err.message) ? 'ESOCKS' : undefined);
        if (code) Object.assign(err, { code });
      }
      throw err;
    }
  }
}

class HttpsTunnelAgent extends hpagent.HttpsProxyAgent {
  override createConnection(options: https.RequestOptions, callback?: Callback): Duplex | null | undefined {
    return super.createConnection(options, (err, s) => callback?.(refusedOf(err), s));
  }
}
class HttpTunnelAgent extends hpagent.HttpProxyAgent {
  override createConnection(options: http.ClientRequestArgs, callback?: Callback): Duplex | null | undefined {
    return super.createConnection(options, (err, s) => callback?.(refusedOf(err), s));
  }
}

/**
 * The agent for requests to `target` through `proxy`: TLS options (CA, client certificate,
 * server name) and keep-alive apply to the server inside the tunnel. Null for an http://
 * server behind an http:// proxy when `forward` (forwardThrough instead); without it such a
 * server is reached through a CONNECT tunnel too.
 */
export function proxyAgent(proxy: ProxyRoute, target: URL, opts: https.AgentOptions, connectTimeoutMs: number, forward = true): http.Agent | null {
  const secure = target.protocol === 'https:';
  if (proxy.scheme === 'socks5' || proxy.scheme === 'socks5h') {
    // Go's SOCKS5 dialer sends the host name to the proxy (the proxy resolves it): socks5://
    // behaves as socks5h:// there, and so here (an `ssh -D` bastion resolves cluster names).
    const url = new URL(proxy.url.href.replace(/^socks5:/, 'socks5h:'));
    return new SocksAgent(url, { ...opts, ...(connectTimeoutMs > 0 ? { timeout: connectTimeoutMs } : {}) });
  }
  if (!secure && proxy.scheme === 'http' && forward) return null;
  const Agent = secure ? HttpsTunnelAgent : HttpTunnelAgent;
  return new Agent({
    ...opts,
    proxy: proxy.url,
    // hpagent takes the CONNECT's timeout from the request; the exchange's own timeout (src/kube/http-exchange.ts) bounds it.
    proxyRequestOptions: { headers: { 'User-Agent': 'bootcplan' } },
  });
}

/** Request options for a plain http:// server behind an http:// proxy: absolute URL, proxy host. */
export function forwardThrough(proxy: ProxyRoute, opts: http.RequestOptions, target: URL): void {
  opts.hostname = proxy.url.hostname.replace(/^\[|\]$/g, '');
  opts.port = proxy.url.port || 80;
  opts.path = target.href;
  opts.headers = { ...opts.headers, Host: target.host, ...(proxy.authorization ? { 'Proxy-Authorization': proxy.authorization } : {}) };
}
