/**
 * The credentials and CA of the Prometheus-API health checks (docs/safety.md "Health checks"):
 * a token only from bootcplan's own Kubernetes identity or from a Secret named by the spec, a CA
 * only from a ConfigMap or Secret named by the spec or the system roots. A Secret value that
 * could smuggle a header (CR, LF, any control character) is refused, and no value ever appears
 * in a message. Against a fake API server (test/support/fake-api.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KubeConfig } from '@kubernetes/client-node';
import { fakeApi, closeFakes, clientOf, closeClients, sendJson, selfSignedCert, kubeConfigFor } from '../support/fake-api.ts';
import { HealthCredentials } from '../../src/kube/health-credentials.ts';
import { HealthRequestError } from '../../src/kube/prometheus-client.ts';

const t = suite('kube: health-check credentials and CA');
t.after(async () => {
  closeClients();
  await closeFakes();
});

const never = new AbortController().signal;
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2VuLXZhbHVl.c2lnbmF0dXJl';
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'openshift-bootcplan', resourceVersion: '7' },
  data,
});
const configMap = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'openshift-bootcplan', resourceVersion: '3' },
  data,
});
const seen: string[] = [];

/** A fake API server serving `objects` by path; 403 for names starting with "denied". */
async function api(objects: Record<string, unknown>) {
  const f = await fakeApi((req, res) => {
    seen.push(req.url!);
    const name = req.url!.split('/').pop()!;
    if (name.startsWith('denied')) {
      return sendJson(
        res,
        {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message: `secrets "${name}" is forbidden: User "system:serviceaccount:openshift-bootcplan:bootcplan" cannot get resource "secrets"`,
        },
        403,
      );
    }
    const o = objects[req.url!.split('?')[0]];
    if (!o) return sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `"${name}" not found` }, 404);
    sendJson(res, o);
  });
  return new HealthCredentials(clientOf(f.url), kubeConfigFor({ server: f.url }));
}

async function refused(p: Promise<unknown>, kind: string, pattern: RegExp): Promise<HealthRequestError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof HealthRequestError, `not a HealthRequestError: ${String(err)}`);
  const e = err as HealthRequestError;
  assert.is(e.kind, kind, e.message);
  assert.match(e.message, pattern);
  assert.not.match(e.message, /[\r\n]/);
  return e;
}

const ref = (name: string, key = 'token') => ({ bearerTokenSecret: { namespace: 'openshift-bootcplan', name, key } });
const SECRETS = '/api/v1/namespaces/openshift-bootcplan/secrets';

t('a Secret token whose value carries CR/LF (a header injection) is refused, and its value shown nowhere', async () => {
  const evil = `${TOKEN}\r\nX-Injected: yes`;
  const c = await api({
    [`${SECRETS}/evil`]: secret('evil', { token: b64(evil) }),
    [`${SECRETS}/nul`]: secret('nul', { token: b64(`${TOKEN}\u0000`) }),
    [`${SECRETS}/space`]: secret('space', { token: b64(`Bearer ${TOKEN}`) }),
  });
  for (const name of ['evil', 'nul', 'space']) {
    const e = await refused(
      c.token(ref(name), never),
      'no-token',
      new RegExp(
        `^Secret openshift-bootcplan/${name}\\[token\\] is not a usable bearer token \\(1 to 16384 visible ASCII characters, no spaces or line breaks\\)`,
      ),
    );
    assert.not.ok(e.message.includes(TOKEN.slice(0, 10)), e.message);
  }
});

t('a Secret token: base64-decoded, one trailing newline dropped; empty, missing key or too long refused', async () => {
  const c = await api({
    [`${SECRETS}/reader`]: secret('reader', { token: b64(`${TOKEN}\n`), other: b64('x') }),
    [`${SECRETS}/empty`]: secret('empty', { token: '' }),
    [`${SECRETS}/long`]: secret('long', { token: b64('a'.repeat(16385)) }),
    [`${SECRETS}/nodata`]: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nodata', namespace: 'openshift-bootcplan' } },
  });
  assert.is(await c.token(ref('reader'), never), TOKEN);
  assert.is(await c.token(ref('reader', 'other'), never), 'x');
  await refused(c.token(ref('reader', 'missing'), never), 'no-token', /^Secret openshift-bootcplan\/reader has no key missing/);
  await refused(c.token(ref('nodata'), never), 'no-token', /has no key token/);
  await refused(c.token(ref('empty'), never), 'no-token', /empty\[token\] is not a usable bearer token/);
  await refused(c.token(ref('long'), never), 'no-token', /long\[token\] is not a usable bearer token/);
});

t('a Secret that does not exist, or that the identity may not read: no-token and forbidden with the RBAC rule to add', async () => {
  const c = await api({});
  await refused(c.token(ref('prometheus-reader'), never), 'no-token', /^Secret openshift-bootcplan\/prometheus-reader not found/);
  const e = await refused(c.token(ref('denied-reader'), never), 'forbidden', /^reading Secret openshift-bootcplan\/denied-reader: .*forbidden/);
  assert.match(e.message, /get on secrets, resourceNames \[denied-reader\], in openshift-bootcplan/);
});

t('a Secret is read once per minute at most; a refused token (401) makes the next measurement read it again', async () => {
  let now = 1000;
  seen.length = 0;
  const f = await fakeApi((req, res) => {
    seen.push(req.url!);
    sendJson(res, secret('reader', { token: b64(TOKEN) }));
  });
  const c = new HealthCredentials(clientOf(f.url), kubeConfigFor({ server: f.url }), { now: () => now });
  await c.token(ref('reader'), never);
  await c.token(ref('reader'), never);
  now += 59_000;
  await c.token(ref('reader'), never);
  assert.is(seen.length, 1);
  now += 2000;
  await c.token(ref('reader'), never);
  assert.is(seen.length, 2);
  c.forget(ref('reader'));
  await c.token(ref('reader'), never);
  assert.is(seen.length, 3);
});

t('auth: ServiceAccount is the kubeconfig identity token; none is no token; a client-certificate identity has none to send', async () => {
  const c = await api({});
  assert.is(await c.token('ServiceAccount', never), 'not-a-real-token');
  assert.is(await c.token('none', never), null);
  const tls = selfSignedCert();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: false }],
    users: [{ name: 'cert-user', certData: b64(tls.cert), keyData: b64(tls.key) }],
    contexts: [{ name: 'c', cluster: 'c', user: 'cert-user' }],
    currentContext: 'c',
  });
  const d = new HealthCredentials(clientOf('http://127.0.0.1:1'), kc);
  await refused(
    d.token('ServiceAccount', never),
    'no-token',
    /^the Kubernetes identity \(user cert-user\) has no bearer token to send: use auth\.bearerTokenSecret/,
  );
  const basic = new KubeConfig();
  basic.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'basic', username: 'u', password: 'p4ssw0rd' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'basic' }],
    currentContext: 'c',
  });
  const e = await refused(new HealthCredentials(clientOf('http://127.0.0.1:1'), basic).token('ServiceAccount', never), 'no-token', /no bearer token/);
  assert.not.match(e.message, /p4ssw0rd/);
});

t('a CA from a ConfigMap or a Secret: PEM certificates only, 256 KiB at most; the system roots are null', async () => {
  const pem = selfSignedCert().cert.toString();
  const CMS = '/api/v1/namespaces/openshift-bootcplan/configmaps';
  const c = await api({
    [`${CMS}/openshift-service-ca.crt`]: configMap('openshift-service-ca.crt', { 'service-ca.crt': pem }),
    [`${CMS}/garbage`]: configMap('garbage', { 'ca.crt': '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n' }),
    [`${CMS}/empty`]: configMap('empty', { 'ca.crt': 'hello' }),
    [`${CMS}/huge`]: configMap('huge', { 'ca.crt': pem.repeat(Math.ceil(300_000 / pem.length)) }),
    [`${SECRETS}/tls`]: secret('tls', { 'ca.crt': b64(pem) }),
  });
  assert.equal(await c.ca('system', never), { pem: null, name: 'the system roots' });
  assert.equal(await c.ca({ configMap: { namespace: 'openshift-bootcplan', name: 'openshift-service-ca.crt', key: 'service-ca.crt' } }, never), {
    pem,
    name: 'ConfigMap openshift-bootcplan/openshift-service-ca.crt[service-ca.crt]',
  });
  assert.equal(await c.ca({ secret: { namespace: 'openshift-bootcplan', name: 'tls', key: 'ca.crt' } }, never), {
    pem,
    name: 'Secret openshift-bootcplan/tls[ca.crt]',
  });
  await refused(
    c.ca({ configMap: { namespace: 'openshift-bootcplan', name: 'garbage', key: 'ca.crt' } }, never),
    'tls',
    /^ConfigMap openshift-bootcplan\/garbage\[ca\.crt\]: certificate 1 is not a valid X\.509 certificate/,
  );
  await refused(
    c.ca({ configMap: { namespace: 'openshift-bootcplan', name: 'empty', key: 'ca.crt' } }, never),
    'tls',
    /^ConfigMap openshift-bootcplan\/empty\[ca\.crt\] holds no PEM certificate/,
  );
  await refused(c.ca({ configMap: { namespace: 'openshift-bootcplan', name: 'huge', key: 'ca.crt' } }, never), 'tls', /huge\[ca\.crt\] is over 256 KiB/);
  await refused(
    c.ca({ configMap: { namespace: 'openshift-bootcplan', name: 'absent', key: 'ca.crt' } }, never),
    'tls',
    /^ConfigMap openshift-bootcplan\/absent not found/,
  );
  await refused(
    c.ca({ configMap: { namespace: 'openshift-bootcplan', name: 'denied-ca', key: 'ca.crt' } }, never),
    'forbidden',
    /get on configmaps, resourceNames \[denied-ca\]/,
  );
});

t('an unreachable API server while reading a Secret: unreachable, never a token', async () => {
  const closed = await fakeApi(() => {});
  const url = closed.url;
  await closed.close();
  const c = new HealthCredentials(clientOf(url), kubeConfigFor({ server: url }));
  await refused(c.token(ref('reader'), never), 'unreachable', /^reading Secret openshift-bootcplan\/reader: .*ECONNREFUSED/);
});

t.run();
