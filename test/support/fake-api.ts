/**
 * Fake API endpoints for the hostile-API suites: node:http / node:https servers on
 * 127.0.0.1 port 0 that the test starts and closes, a KubeClient pointed at them, and a
 * throwaway self-signed certificate (openssl) for the TLS cases.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, type KubeClientOptions, type RequestOptions } from '../../src/kube/rest.ts';
import { ClusterApiError } from '../../src/base/errors.ts';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

export interface FakeServer {
  url: string;
  port: number;
  /** "METHOD path?query" of every request served, in order. */
  hits: string[];
  close(): Promise<void>;
}

const open: FakeServer[] = [];

/** Starts a fake API server; `tls` serves https with a self-signed certificate. */
export async function fakeApi(handler: Handler, tls?: { cert: Buffer; key: Buffer }): Promise<FakeServer> {
  const hits: string[] = [];
  const sockets = new Set<net.Socket>();
  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => {
    hits.push(`${req.method} ${req.url}`);
    // A handler that fails answers 500 with its error: the test sees it, instead of a request that never ends.
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake API handler failed: ${err instanceof Error ? err.stack : String(err)}`);
      });
  };
  const server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, serve) : http.createServer(serve);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('tlsClientError', () => {
    /* the client refused our certificate: expected in the TLS case */
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const f: FakeServer = {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
  open.push(f);
  return f;
}

/** Closes every fake server a suite started (call in `after`). */
export async function closeFakes(): Promise<void> {
  await Promise.all(open.splice(0).map((f) => f.close()));
}

export interface ClusterEntry {
  server: string;
  proxyUrl?: string;
  caData?: string;
  skipTLSVerify?: boolean;
  /** The user's bearer token (default a placeholder). */
  token?: string;
}

export function kubeConfigFor(c: ClusterEntry): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server: c.server, skipTLSVerify: c.skipTLSVerify ?? c.server.startsWith('http:'), proxyUrl: c.proxyUrl, caData: c.caData }],
    users: [{ name: 'u', token: c.token ?? 'not-a-real-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'u' }],
    currentContext: 'fake',
  });
  return kc;
}

/**
 * The REST client as tests use it: the same requests, answers read as the test likes (any
 * JSON the server sent: tests look at fields bootcplan itself never reads).
 */
export class TestKubeClient extends KubeClient {
  override request(method: string, path: string, o?: RequestOptions): Promise<any> {
    return super.request(method, path, o);
  }
}

const clients: KubeClient[] = [];
/** A client of `server` (URL) with test-sized limits; closed by closeClients(). */
export function clientOf(c: ClusterEntry | string, opts: KubeClientOptions = {}): TestKubeClient {
  const k = new TestKubeClient(kubeConfigFor(typeof c === 'string' ? { server: c } : c), { requestTimeoutSeconds: 2, ...opts });
  clients.push(k);
  return k;
}
export function closeClients(): void {
  for (const c of clients.splice(0)) c.close();
}

/** A fresh self-signed certificate for 127.0.0.1 and the `dns` names (openssl), valid for a day. */
export function selfSignedCert(dns: string[] = []): { cert: Buffer; key: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=' + ['IP:127.0.0.1', ...dns.map((d) => `DNS:${d}`)].join(','),
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes a kubeconfig file for the CLI tests; returns its path. */
export function kubeconfigFile(dir: string, c: ClusterEntry): string {
  const path = join(dir, `kubeconfig-${Math.random().toString(36).slice(2)}`);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: fake',
      '  cluster:',
      `    server: ${c.server}`,
      ...(c.server.startsWith('http:') || c.skipTLSVerify ? ['    insecure-skip-tls-verify: true'] : []),
      ...(c.proxyUrl ? [`    proxy-url: ${c.proxyUrl}`] : []),
      'users:',
      '- name: u',
      '  user:',
      '    token: not-a-real-token',
      'contexts:',
      '- name: fake',
      '  context:',
      '    cluster: fake',
      '    user: u',
      'current-context: fake',
      '',
    ].join('\n'),
  );
  return path;
}

/**
 * Awaits `p`, expects a ClusterApiError (never a raw Error, TypeError or SyntaxError) with a
 * one-line message and a hint, checks the message against `pattern`; returns the error.
 */
export async function cleanFailure(p: Promise<unknown>, pattern: RegExp): Promise<ClusterApiError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected a ClusterApiError matching ${pattern}, but it succeeded`);
  assert.ok(err instanceof ClusterApiError, `not a ClusterApiError: ${(err as Error)?.name}: ${(err as Error)?.message}`);
  const e = err as ClusterApiError;
  assert.match(e.message, pattern);
  assert.not.match(e.message, /[\n\r\x00-\x08\x0b-\x1f\x7f]/, `one printable line: ${JSON.stringify(e.message)}`);
  assert.ok(e.hint && e.hint.length > 10, `a hint: ${e.hint}`);
  return e;
}

/** JSON for a 200 answer. */
export function sendJson(res: http.ServerResponse, body: unknown, status = 200): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

export function nodeObject(name: string, extra: Record<string, unknown> = {}) {
  return {
    metadata: { name, resourceVersion: '1', labels: { 'kubernetes.io/hostname': name } },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
    ...extra,
  };
}

export interface FakeProxy {
  url: string;
  /** CONNECT targets, one per tunnel opened. */
  tunnels: string[];
  /** Absolute URLs of forwarded (plain http) requests. */
  forwarded: string[];
  /** Proxy-Authorization headers seen. */
  auth: (string | undefined)[];
  close(): Promise<void>;
}

/** A small forward proxy on 127.0.0.1: CONNECT tunnels and absolute-URI forwarding. */
export async function fakeProxy(o: { refuse?: number } = {}): Promise<FakeProxy> {
  const p: Omit<FakeProxy, 'url' | 'close'> = { tunnels: [], forwarded: [], auth: [] };
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    p.auth.push(req.headers['proxy-authorization']);
    p.forwarded.push(req.url!);
    const target = new URL(req.url!);
    const { 'proxy-authorization': _auth, ...headers } = req.headers;
    const up = http.request({ hostname: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode!, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    p.auth.push(req.headers['proxy-authorization']);
    p.tunnels.push(req.url!);
    if (o.refuse) return void client.end(`HTTP/1.1 ${o.refuse} ${http.STATUS_CODES[o.refuse]}\r\nContent-Length: 0\r\n\r\n`);
    const [host, port] = [req.url!.slice(0, req.url!.lastIndexOf(':')), Number(req.url!.slice(req.url!.lastIndexOf(':') + 1))];
    const upstream = net.connect(port, host.replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    ...p,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
