/**
 * The kubeconfig cluster's `proxy-url`, as kubectl honours it (client-go rest.Config.Proxy,
 * through Go's net/http Transport): for an https:// API server, an HTTP CONNECT tunnel
 * through the proxy, with TLS to the API server inside it (the API server's certificate is
 * still verified); for an http:// API server, plain forwarding (the request line carries
 * the absolute URL). Credentials in the proxy URL (http://user:password@host:port) are sent
 * as Proxy-Authorization: Basic, and never shown. Only http:// proxies are supported;
 * socks5:// and https:// proxies are refused with a clean error.
 */
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { ClusterApiError, NamedError } from '../base/errors.ts';
import { MAX_TIMER_MS } from './long-timer.ts';

export interface ProxyRoute {
  url: URL;
  /** For messages: scheme, host and port; credentials masked. */
  shown: string;
  /** Proxy-Authorization header value, from the URL's userinfo. */
  authorization: string | null;
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
      'write it as http://host:port (kubectl config set-cluster NAME --proxy-url=http://host:port)',
    );
  }
  const shown = `${url.protocol}//${url.username || url.password ? '***@' : ''}${url.host}`;
  if (url.protocol !== 'http:') {
    throw new ClusterApiError(
      `kubeconfig cluster "${cluster}": proxy-url ${shown} is not supported: bootcplan reaches the API server through http:// proxies only (HTTP CONNECT), not ${url.protocol.replace(/:$/, '')}`,
      'use an http:// proxy in proxy-url, or run bootcplan where the API server is reachable without one',
    );
  }
  const authorization =
    url.username || url.password ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : null;
  return { url, shown, authorization };
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

const hostPort = (host: string, port: number | string) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * An https.Agent whose connections are CONNECT tunnels through an http:// proxy; keep-alive
 * reuses a tunnel for many requests as any agent reuses its sockets.
 */
export class TunnelAgent extends https.Agent {
  constructor(
    private readonly proxy: ProxyRoute,
    opts: https.AgentOptions,
    private readonly connectTimeoutMs: number,
  ) {
    super(opts);
  }

  override createConnection(options: https.RequestOptions, callback?: (err: Error | null, stream: Duplex) => void): Duplex | null | undefined {
    const done = callback ?? (() => {});
    const target = hostPort(String(options.host ?? options.hostname), options.port ?? 443);
    const connect = http.request({
      host: this.proxy.url.hostname.replace(/^\[|\]$/g, ''),
      port: this.proxy.url.port || 80,
      method: 'CONNECT',
      path: target,
      agent: false,
      headers: { Host: target, 'User-Agent': 'bootcplan', ...(this.proxy.authorization ? { 'Proxy-Authorization': this.proxy.authorization } : {}) },
    });
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      done(err, undefined as unknown as Duplex);
    };
    connect.once('connect', (res, socket, head) => {
      if (settled) return void socket.destroy();
      if (res.statusCode !== 200) {
        socket.destroy();
        return fail(new ProxyRefused(res.statusCode ?? 0, res.statusMessage ?? ''));
      }
      settled = true;
      connect.setTimeout(0);
      if (head.length) socket.unshift(head);
      // TLS to the API server inside the tunnel: the same CA, client certificate and server name.
      done(null, tls.connect({ ...(options as tls.ConnectionOptions), socket }));
    });
    connect.on('error', fail);
    if (this.connectTimeoutMs > 0) {
      connect.setTimeout(Math.min(this.connectTimeoutMs, MAX_TIMER_MS), () =>
        connect.destroy(Object.assign(new Error(`the proxy did not open the tunnel within ${this.connectTimeoutMs / 1000}s`), { code: 'ETIMEDOUT' })),
      );
    }
    connect.end();
    return undefined;
  }
}

/** Request options for a plain http:// API server behind the proxy: absolute URL, proxy host. */
export function forwardThrough(proxy: ProxyRoute, opts: http.RequestOptions, target: URL): void {
  opts.hostname = proxy.url.hostname.replace(/^\[|\]$/g, '');
  opts.port = proxy.url.port || 80;
  opts.path = target.href;
  opts.headers = { ...opts.headers, Host: target.host, ...(proxy.authorization ? { 'Proxy-Authorization': proxy.authorization } : {}) };
}
