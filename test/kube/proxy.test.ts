/**
 * Proxies as kubectl uses them: the kubeconfig cluster's `proxy-url` (an HTTP CONNECT tunnel
 * for an https:// API server, its certificate still verified inside it; plain forwarding for
 * an http:// one; SOCKS5 through a real SOCKS5 proxy), else HTTPS_PROXY / HTTP_PROXY /
 * NO_PROXY with Go's rules; proxy credentials from the URL (never shown), and a clean error
 * for an unknown scheme, a refusing proxy and a proxy that is down.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type http from 'node:http';
import {
  fakeApi,
  fakeProxy,
  closeFakes,
  clientOf,
  closeClients,
  cleanFailure,
  sendJson,
  selfSignedCert,
  kubeConfigFor,
  nodeObject,
  type FakeProxy,
} from '../support/fake-api.ts';
import { socks5Proxy, connectProxy, type TestProxy } from '../support/proxies.ts';
import { KubeClient } from '../../src/kube/rest.ts';
import { proxyRouteFromEnv } from '../../src/kube/proxy.ts';
import { ClusterApiError } from '../../src/base/errors.ts';

const t = suite('kube: proxy-url');

const proxies: FakeProxy[] = [];
const testProxies: TestProxy[] = [];
const proxy = async (o: { refuse?: number } = {}) => {
  const p = await fakeProxy(o);
  proxies.push(p);
  return p;
};
t.after(async () => {
  closeClients();
  await closeFakes();
  await Promise.all([...proxies, ...testProxies].map((p) => p.close()));
});

const tlsCert = selfSignedCert();
const serveNode = (req: http.IncomingMessage, res: http.ServerResponse) => {
  if (req.url!.includes('watch=true')) {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write(JSON.stringify({ type: 'ADDED', object: { kind: 'Node', apiVersion: 'v1', ...nodeObject('w-9') } }) + '\n');
    return void res.end();
  }
  sendJson(res, { kind: 'Node', apiVersion: 'v1', ...nodeObject('w-1') });
};

t('an https API server through a CONNECT tunnel: the certificate is verified inside it, the tunnel is reused', async () => {
  const api = await fakeApi(serveNode, tlsCert);
  const p = await proxy();
  const c = clientOf({ server: api.url, proxyUrl: p.url, caData: tlsCert.cert.toString('base64'), skipTLSVerify: false });
  for (let i = 0; i < 3; i++) assert.is((await c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' })).metadata.name, 'w-1');
  assert.equal(p.tunnels, [`127.0.0.1:${api.port}`], 'one keep-alive tunnel for three requests');
  assert.equal(p.forwarded, []);
  assert.is(api.hits.length, 3);
  // Watches go through the tunnel too.
  const events: string[] = [];
  await c.watch(
    '/api/v1/nodes',
    {},
    (e) => events.push(e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED' ? `${e.type} ${e.object.metadata.name}` : e.type),
    new AbortController().signal,
    { kind: 'Node' },
  );
  assert.equal(events, ['ADDED w-9']);
  assert.is(p.tunnels.length, 2);
  // Without the CA the server's certificate is refused, tunnel or not.
  const untrusted = clientOf({ server: api.url, proxyUrl: p.url, skipTLSVerify: false });
  await cleanFailure(
    untrusted.request('GET', '/api/v1/nodes/w-1'),
    /cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+ through proxy http:\/\/127\.0\.0\.1:\d+ .*certificate/,
  );
});

t('an http API server through the proxy: plain forwarding with the absolute URL; credentials sent, never shown', async () => {
  const api = await fakeApi(serveNode);
  const p = await proxy();
  const c = clientOf({ server: api.url, proxyUrl: p.url.replace('http://', 'http://ops:s%3Acret@') });
  assert.is((await c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' })).metadata.name, 'w-1');
  assert.equal(p.forwarded, [`${api.url}/api/v1/nodes/w-1`]);
  assert.equal(p.auth, [`Basic ${Buffer.from('ops:s:cret').toString('base64')}`]);
  assert.equal(p.tunnels, []);
  const refusing = await proxy({ refuse: 407 });
  const https = await fakeApi(serveNode, tlsCert);
  const e = await cleanFailure(
    clientOf({ server: https.url, proxyUrl: refusing.url.replace('http://', 'http://ops:s3cret@'), caData: tlsCert.cert.toString('base64') }).request(
      'GET',
      '/api/v1/nodes/w-1',
    ),
    /GET \/api\/v1\/nodes\/w-1: the proxy http:\/\/\*\*\*@127\.0\.0\.1:\d+ refused to open a tunnel to https:\/\/127\.0\.0\.1:\d+: HTTP 407 Proxy Authentication Required/,
  );
  assert.not.match(e.message + e.hint, /s3cret|ops/);
  assert.match(e.hint!, /credentials/);
  assert.is(https.hits.length, 0);
});

t('a proxy that is down, or that refuses the tunnel (403), is a clean error naming the proxy', async () => {
  const down = await proxy();
  await down.close();
  const api = await fakeApi(serveNode, tlsCert);
  await cleanFailure(
    clientOf({ server: api.url, proxyUrl: down.url, caData: tlsCert.cert.toString('base64') }).request('GET', '/api/v1/nodes/w-1'),
    /cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+ through proxy http:\/\/127\.0\.0\.1:\d+ \(context "fake"\): ECONNREFUSED/,
  );
  const p = await proxy({ refuse: 403 });
  const e = await cleanFailure(
    clientOf({ server: api.url, proxyUrl: p.url, caData: tlsCert.cert.toString('base64') }).watch('/api/v1/nodes', {}, () => {}, new AbortController().signal, {
      kind: 'Node',
    }),
    /WATCH \/api\/v1\/nodes: the proxy .* refused to open a tunnel .*HTTP 403 Forbidden/,
  );
  assert.match(e.hint!, /proxy-url/);
});

t('proxy-url schemes as kubectl: http, https, socks5, socks5h accepted; any other, or not a URL, refused when the client is made', () => {
  const make = (proxyUrl: string) => () => new KubeClient(kubeConfigFor({ server: 'https://127.0.0.1:6443', proxyUrl }));
  for (const ok of ['socks5://127.0.0.1:1080', 'socks5h://u:p@bastion:1080', 'https://proxy.example.com:3129', 'http://proxy:3128']) make(ok)().close();
  const refused = (pattern: RegExp) => (e: unknown) => e instanceof ClusterApiError && pattern.test(e.message) && !!e.hint && !/hunter2/.test(e.message);
  assert.throws(
    make('socks4://me:hunter2@127.0.0.1:1080'),
    refused(/kubeconfig cluster "fake": proxy-url socks4:\/\/\*\*\*@127\.0\.0\.1:1080 is not supported: .*http, https, socks5 or socks5h/),
  );
  assert.throws(make('::hunter2'), refused(/proxy-url is not a valid URL/));
});

const GO_CASES: [string, Record<string, string>, string | null][] = [
  // [request URL, environment, the proxy Go's ProxyFromEnvironment picks]
  ['https://api.example.com:6443', { HTTPS_PROXY: 'http://p:3128' }, 'http://p:3128/'],
  ['https://api.example.com:6443', { https_proxy: 'http://low:1' }, 'http://low:1/'],
  ['https://api.example.com:6443', { HTTPS_PROXY: 'http://up:1', https_proxy: 'http://low:1' }, 'http://up:1/'],
  ['https://api.example.com:6443', { HTTP_PROXY: 'http://p:3128' }, null], // no fallback to HTTP_PROXY for https
  ['http://api.example.com:8080', { HTTP_PROXY: 'http://p:3128', HTTPS_PROXY: 'http://s:1' }, 'http://p:3128/'],
  ['http://api.example.com:8080', { HTTP_PROXY: 'http://p:3128', REQUEST_METHOD: 'GET' }, null], // CGI
  ['https://api.example.com', { HTTPS_PROXY: 'proxy.corp:3128' }, 'http://proxy.corp:3128/'], // no scheme: http
  ['https://api.example.com', { HTTPS_PROXY: 'socks5://b:1080' }, 'socks5://b:1080'],
  ['https://localhost:6443', { HTTPS_PROXY: 'http://p:1' }, null],
  ['https://127.0.0.9:6443', { HTTPS_PROXY: 'http://p:1' }, null],
  ['https://[::1]:6443', { HTTPS_PROXY: 'http://p:1' }, null],
  ['https://api.localhost:6443', { HTTPS_PROXY: 'http://p:1' }, 'http://p:1/'], // only "localhost" itself
  ['https://api.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '*' }, null],
  ['https://api.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com' }, null], // a domain and its subdomains
  ['https://example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com' }, null],
  ['https://example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '.example.com' }, 'http://p:1/'], // subdomains only
  ['https://a.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '.example.com' }, null],
  ['https://example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '*.example.com' }, 'http://p:1/'],
  ['https://notexample.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com' }, 'http://p:1/'],
  ['https://API.Example.com', { HTTPS_PROXY: 'http://p:1', no_proxy: ' Example.COM ' }, null],
  ['https://api.example.com:6443', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com:443' }, 'http://p:1/'], // the port must match
  ['https://api.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com:443' }, null], // https's default port
  ['https://10.1.2.3:6443', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '10.0.0.0/8' }, null],
  ['https://11.1.2.3:6443', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '10.0.0.0/8' }, 'http://p:1/'],
  ['https://10.1.2.3:6443', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '10.1.2.3:6443' }, null],
  ['https://10.1.2.3:6443', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '10.1.2.3:443' }, 'http://p:1/'],
  ['https://[fd00::5]:6443', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'fd00::/8' }, null],
  ['https://[fd00::5]:6443', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '[fd00::5]:6443' }, null],
  ['https://api.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'other.org,,example.com' }, null],
  ['https://api.example.com', { HTTPS_PROXY: 'http://p:1', NO_PROXY: '', no_proxy: 'example.com' }, null], // empty is unset, as Go's getEnvAny
];

t('HTTPS_PROXY, HTTP_PROXY, NO_PROXY: the proxy golang.org/x/net/http/httpproxy picks, case by case', () => {
  for (const [target, env, want] of GO_CASES) {
    const got = proxyRouteFromEnv(new URL(target), env);
    assert.is(got?.url.href ?? null, want, `${target} with ${JSON.stringify(env)}`);
  }
  assert.is(proxyRouteFromEnv(new URL('https://a.example.com'), { https_proxy: 'http://p:1' })!.source, 'https_proxy');
});

t('socks5 proxy-url: requests and watches through a real SOCKS5 proxy, the host name resolved by the proxy', async () => {
  const cert = selfSignedCert(['api.bastion.test']);
  const api = await fakeApi(serveNode, cert);
  const p = await socks5Proxy({ hosts: { 'api.bastion.test': '127.0.0.1' } });
  testProxies.push(p);
  const server = `https://api.bastion.test:${api.port}`;
  for (const scheme of ['socks5', 'socks5h']) {
    const c = clientOf({ server, proxyUrl: p.url.replace('socks5:', `${scheme}:`), caData: cert.cert.toString('base64'), skipTLSVerify: false });
    for (let i = 0; i < 2; i++) assert.is((await c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' })).metadata.name, 'w-1');
    c.close();
  }
  assert.equal(p.targets, [`api.bastion.test:${api.port}`, `api.bastion.test:${api.port}`], 'one keep-alive connection per client, by name');
  assert.is(api.hits.length, 4);
  const withAuth = clientOf({
    server,
    proxyUrl: p.url.replace('socks5://', 'socks5://ops:s3cret@'),
    caData: cert.cert.toString('base64'),
    skipTLSVerify: false,
  });
  assert.is((await withAuth.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' })).metadata.name, 'w-1');
  assert.equal(p.auth, ['ops:s3cret']);
  // A SOCKS5 proxy that is down: one clean line naming it, never the server directly.
  await p.close();
  const e = await cleanFailure(
    clientOf({ server, proxyUrl: p.url.replace('socks5://', 'socks5://ops:s3cret@'), caData: cert.cert.toString('base64') }).request(
      'GET',
      '/api/v1/nodes/w-1',
    ),
    /cannot reach the Kubernetes API at https:\/\/api\.bastion\.test:\d+ through proxy socks5:\/\/\*\*\*@127\.0\.0\.1:\d+ \(context "fake"\): ECONNREFUSED/,
  );
  assert.not.match(e.message + e.hint, /s3cret/);
  assert.is(api.hits.length, 5);
});

t('no proxy-url: HTTPS_PROXY carries the requests through a real CONNECT proxy; NO_PROXY bypasses it; proxy-url wins', async () => {
  const cert = selfSignedCert(['api.corp.test']);
  const api = await fakeApi(serveNode, cert);
  const p = await connectProxy({ hosts: { 'api.corp.test': '127.0.0.1' } });
  testProxies.push(p);
  const entry = { server: `https://api.corp.test:${api.port}`, caData: cert.cert.toString('base64'), skipTLSVerify: false };
  const viaEnv = clientOf(entry, { env: { HTTPS_PROXY: p.url } });
  assert.is((await viaEnv.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' })).metadata.name, 'w-1');
  assert.equal(p.targets, [`api.corp.test:${api.port}`]);
  // NO_PROXY names the host: straight to it, where the name does not resolve (the proxy never asked).
  await cleanFailure(
    clientOf(entry, { env: { HTTPS_PROXY: p.url, NO_PROXY: 'localhost,.corp.test' } }).request('GET', '/api/v1/nodes/w-1'),
    /cannot reach the Kubernetes API at https:\/\/api\.corp\.test:\d+ \(context "fake"\): (ENOTFOUND|EAI_AGAIN)/,
  );
  assert.is(p.targets.length, 1);
  // A proxy-url in the kubeconfig wins over the environment.
  const other = await connectProxy({ hosts: { 'api.corp.test': '127.0.0.1' } });
  testProxies.push(other);
  const viaKubeconfig = clientOf({ ...entry, proxyUrl: other.url }, { env: { HTTPS_PROXY: p.url } });
  assert.is((await viaKubeconfig.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' })).metadata.name, 'w-1');
  assert.is(other.targets.length, 1);
  assert.is(p.targets.length, 1);
  // The environment's proxy down: the message names the variable.
  await other.close();
  const e = await cleanFailure(
    clientOf(entry, { env: { https_proxy: other.url } }).request('GET', '/api/v1/nodes/w-1'),
    /through proxy http:\/\/127\.0\.0\.1:\d+ \(https_proxy\) .*ECONNREFUSED/,
  );
  assert.match(e.hint!, /https_proxy.*NO_PROXY/);
  assert.is(api.hits.length, 2);
});

t.run();
