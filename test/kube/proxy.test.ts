/**
 * The kubeconfig cluster's `proxy-url`, as kubectl honours it: an HTTP CONNECT tunnel for
 * an https:// API server (its certificate still verified inside the tunnel), plain
 * forwarding for an http:// one, proxy credentials from the URL (never shown), and a clean
 * error for socks5:// and https:// proxies, a refusing proxy and a proxy that is down.
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
import { KubeClient } from '../../src/kube/rest.ts';
import { ClusterApiError } from '../../src/base/errors.ts';

const t = suite('kube: proxy-url');

const proxies: FakeProxy[] = [];
const proxy = async (o: { refuse?: number } = {}) => {
  const p = await fakeProxy(o);
  proxies.push(p);
  return p;
};
t.after(async () => {
  closeClients();
  await closeFakes();
  await Promise.all(proxies.map((p) => p.close()));
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

t('socks5:// and https:// proxies, and a proxy-url that is not a URL, are refused when the client is made', () => {
  const make = (proxyUrl: string) => () => new KubeClient(kubeConfigFor({ server: 'https://127.0.0.1:6443', proxyUrl }));
  const refused = (pattern: RegExp) => (e: unknown) => e instanceof ClusterApiError && pattern.test(e.message) && !!e.hint && !/hunter2/.test(e.message);
  assert.throws(
    make('socks5://127.0.0.1:1080'),
    refused(/kubeconfig cluster "fake": proxy-url socks5:\/\/127\.0\.0\.1:1080 is not supported: .*http:\/\/ proxies only .*not socks5/),
  );
  assert.throws(make('https://me:hunter2@proxy.example.com:3129'), refused(/proxy-url https:\/\/\*\*\*@proxy\.example\.com:3129 is not supported/));
  assert.throws(make('::hunter2'), refused(/proxy-url is not a valid URL/));
});

t.run();
