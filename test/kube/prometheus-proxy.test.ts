/**
 * The health sources' client behind a proxy (docs/live-clusters.md "Proxies"): as kubectl's
 * HTTP clients, it follows HTTPS_PROXY / HTTP_PROXY / NO_PROXY (Go's rules, src/kube/proxy.ts),
 * never the kubeconfig's proxy-url (that one is the API server's). Through real proxies on
 * 127.0.0.1 (test/support/proxies.ts) to an https server whose name only the proxy resolves.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fakeApi, closeFakes, sendJson, selfSignedCert } from '../support/fake-api.ts';
import { socks5Proxy, connectProxy, type TestProxy } from '../support/proxies.ts';
import { PrometheusClient, HealthRequestError, type PrometheusEndpoint } from '../../src/kube/prometheus-client.ts';

const t = suite('kube: the Prometheus client through HTTPS_PROXY and NO_PROXY');
const clients: PrometheusClient[] = [];
const proxies: TestProxy[] = [];
const newClient = (env: Record<string, string>) => {
  const c = new PrometheusClient({ env });
  clients.push(c);
  return c;
};
t.after(async () => {
  for (const c of clients) c.close();
  await Promise.all(proxies.map((p) => p.close()));
  await closeFakes();
});

const never = new AbortController().signal;
const TOKEN = 'sha256~cHJveGllZC10b2tlbi12YWx1ZQ';
const vector = { status: 'success', data: { resultType: 'vector', result: [{ metric: { __name__: 'up' }, value: [1700000000, '1'] }] } };

async function failure(p: Promise<unknown>, kind: string, pattern: RegExp): Promise<HealthRequestError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof HealthRequestError, `not a HealthRequestError: ${(err as Error)?.message}`);
  const e = err as HealthRequestError;
  assert.is(e.kind, kind, e.message);
  assert.match(e.message, pattern);
  assert.not.match(e.message, /[\n\r\x00-\x08\x0b-\x1f\x7f]/, `one printable line: ${JSON.stringify(e.message)}`);
  assert.not.match(e.message, new RegExp(TOKEN));
  return e;
}

t('HTTPS_PROXY (CONNECT, then SOCKS5) carries the queries, TLS verified inside; NO_PROXY bypasses; a proxy that is down is one line', async () => {
  const tls = selfSignedCert(['prometheus.monitoring.test']);
  const auths: (string | undefined)[] = [];
  const prom = await fakeApi((req, res) => {
    auths.push(req.headers.authorization);
    sendJson(res, vector);
  }, tls);
  const hosts = { 'prometheus.monitoring.test': '127.0.0.1' };
  const http = await connectProxy({ hosts });
  const socks = await socks5Proxy({ hosts });
  proxies.push(http, socks);
  const ep: PrometheusEndpoint = { url: `https://prometheus.monitoring.test:${prom.port}`, token: TOKEN, ca: tls.cert.toString(), caName: 'ConfigMap ns/ca' };
  const viaHttp = newClient({ HTTPS_PROXY: http.url });
  for (let i = 0; i < 2; i++) assert.equal((await viaHttp.query(ep, 'up', 2000, never)).data, vector.data);
  assert.equal(http.targets, [`prometheus.monitoring.test:${prom.port}`], 'one keep-alive tunnel for both queries');
  assert.equal((await newClient({ https_proxy: socks.url }).query(ep, 'up', 2000, never)).data, vector.data);
  assert.equal(socks.targets, [`prometheus.monitoring.test:${prom.port}`]);
  assert.equal(auths, [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`, `Bearer ${TOKEN}`], 'the token reached the server, inside the TLS tunnel');
  // Without its CA the certificate is refused through the tunnel too.
  await failure(
    newClient({ HTTPS_PROXY: http.url }).query({ ...ep, ca: null, caName: 'the system roots' }, 'up', 2000, never),
    'tls',
    /TLS: .*CA: the system roots/,
  );
  // NO_PROXY names the domain: straight to it, where the name does not resolve.
  await failure(newClient({ HTTPS_PROXY: http.url, NO_PROXY: '.monitoring.test' }).query(ep, 'up', 2000, never), 'unreachable', /ENOTFOUND|EAI_AGAIN/);
  assert.is(http.targets.length, 2, 'the proxy carried the TLS failure, and not the NO_PROXY query');
  assert.is(prom.hits.length, 3);
  await http.close();
  await failure(
    newClient({ HTTPS_PROXY: http.url.replace('://', '://ops:s3cret@') }).query(ep, 'up', 2000, never),
    'unreachable',
    /ECONNREFUSED.*\(https:\/\/prometheus\.monitoring\.test:\d+ through proxy http:\/\/\*\*\*@127\.0\.0\.1:\d+ \(HTTPS_PROXY\)\)$/,
  );
  await socks.close();
  await failure(
    newClient({ HTTPS_PROXY: socks.url }).query(ep, 'up', 2000, never),
    'unreachable',
    /ECONNREFUSED.*through proxy socks5:\/\/127\.0\.0\.1:\d+ \(HTTPS_PROXY\)/,
  );
  assert.is(prom.hits.length, 3, 'a proxy that is down never means the server directly');
});

t.run();
