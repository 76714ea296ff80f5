/**
 * The health sources against the real things (docs/safety.md "Health checks"): a real
 * Prometheus (test/e2e/prometheus.ts, 1-second scrapes and evaluations, an alert that fires on
 * demand) and the real kube-apiserver, as the bootcplan ServiceAccount of examples/rbac.yaml:
 * - the client against Prometheus' own answers (bad PromQL, the alerts API, TLS and a bearer
 *   token through an https front with its own CA, the token from a Secret);
 * - Prometheus stopped: a failure within milliseconds, never a pass.
 * Prometheus starts once for the file (~2 s) and is killed by the last test.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setupEnv, clientFor, type TestEnv } from './env.ts';
import { startPrometheus, startTlsFront, tlsMaterial, BROKEN_ALERT, type PrometheusHandle, type TlsFront } from './prometheus.ts';
import { PrometheusClient, HealthRequestError, type PrometheusEndpoint } from '../../src/kube/prometheus-client.ts';
import { HealthCredentials } from '../../src/kube/health-credentials.ts';
import { AlreadyExistsError } from '../../src/apply/driver.ts';
import type { KubeClient } from '../../src/kube/rest.ts';
import { KubeConfig } from '@kubernetes/client-node';

const t = suite('e2e: health sources against a real Prometheus and API server');
let env: TestEnv;
let prom: PrometheusHandle;
let front: TlsFront;
let sa: KubeClient;
let saKc: KubeConfig;
const client = new PrometheusClient();
const never = new AbortController().signal;
const FRONT_TOKEN = 'e2e-front-token-0123456789abcdef';
const ep = (url: string, o: Partial<PrometheusEndpoint> = {}): PrometheusEndpoint => ({ url, token: null, ca: null, caName: 'the system roots', ...o });

async function failure(p: Promise<unknown>, kind: string, pattern: RegExp): Promise<HealthRequestError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof HealthRequestError, `not a HealthRequestError: ${String(err)}`);
  assert.is((err as HealthRequestError).kind, kind, (err as Error).message);
  assert.match((err as Error).message, pattern);
  return err as HealthRequestError;
}

async function put(path: string, body: object): Promise<void> {
  try {
    await env.admin.request('POST', path, { body });
  } catch (e) {
    if (!(e instanceof AlreadyExistsError)) throw e;
    const name = (body as { metadata: { name: string } }).metadata.name;
    await env.admin.request('PUT', `${path}/${name}`, { body });
  }
}

t.before(async () => {
  env = await setupEnv();
  prom = await startPrometheus();
  console.log(`  prometheus: ready (first scrape, Watchdog firing) ${prom.startSeconds.toFixed(1)} s after the start`);
  front = await startTlsFront(prom.url, FRONT_TOKEN);
  saKc = new KubeConfig();
  saKc.loadFromFile(env.saKubeconfig);
  sa = clientFor(env.saKubeconfig);
  // The token and the CA where examples/rbac.yaml lets the ServiceAccount read them, by name.
  await put('/api/v1/namespaces/openshift-bootcplan/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'prometheus-reader', namespace: 'openshift-bootcplan' }, stringData: { token: `${FRONT_TOKEN}\n` } });
  await put('/api/v1/namespaces/openshift-bootcplan/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'openshift-service-ca.crt', namespace: 'openshift-bootcplan' }, data: { 'service-ca.crt': front.caPem } });
});

t.after(async () => {
  client.close();
  sa?.close();
  await front?.close();
  await prom?.stop();
});

t('Prometheus answers as its API documents: an empty vector for an unknown metric, 400 bad_data for bad PromQL, matrices for range selectors', async () => {
  assert.equal(await client.query(ep(prom.url), 'no_such_metric', 5000, never), { data: { resultType: 'vector', result: [] }, warnings: [] });
  await failure(client.query(ep(prom.url), 'sum(', 5000, never), 'query-rejected', /^400 bad_data: invalid parameter "query": 1:5: parse error: unclosed left parenthesis/);
  assert.is(((await client.query(ep(prom.url), 'up[5s]', 5000, never)).data as any).resultType, 'matrix');
  assert.equal(((await client.query(ep(prom.url), '0/0', 5000, never)).data as any).result[1], 'NaN');
});

t('an alert fires on demand and resolves: /api/v1/alerts shows it with its labels and state', async () => {
  prom.exporter.gauges.e2e_workload_broken = 1;
  const fired = await prom.waitForAlert(BROKEN_ALERT, true);
  const a = await client.alerts(ep(prom.url), 5000, never);
  const broken = (a.data as any).alerts.find((x: any) => x.labels.alertname === BROKEN_ALERT);
  assert.equal([broken.labels.severity, broken.state], ['critical', 'firing']);
  prom.exporter.gauges.e2e_workload_broken = 0;
  const resolved = await prom.waitForAlert(BROKEN_ALERT, false);
  console.log(`  prometheus: gauge 0→1 → ${BROKEN_ALERT} firing in ${fired.toFixed(1)} s; 1→0 → resolved in ${resolved.toFixed(1)} s`);
});

t('through the TLS front: the token from the Secret and the CA from the ConfigMap, both read as the ServiceAccount, pass; another CA or no token fail', async () => {
  const creds = new HealthCredentials(sa, saKc);
  const token = await creds.token({ bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'prometheus-reader', key: 'token' } }, never);
  const ca = await creds.ca({ configMap: { namespace: 'openshift-bootcplan', name: 'openshift-service-ca.crt', key: 'service-ca.crt' } }, never);
  assert.is(token, FRONT_TOKEN);
  const good = ep(front.url, { token, ca: ca.pem, caName: ca.name });
  const r = await client.query(good, 'vector(1)', 5000, never);
  assert.is((r.data as any).result[0].value[1], '1');
  assert.is(front.authorizations.at(-1), `Bearer ${FRONT_TOKEN}`);
  const seen = front.authorizations.length;
  await failure(client.query({ ...good, ca: null, caName: 'the system roots' }, 'up', 5000, never), 'tls', /self-signed certificate in certificate chain|unable to verify|unable to get local issuer/);
  await failure(client.query({ ...good, ca: tlsMaterial().caPem, caName: 'ConfigMap x/y[z]' }, 'up', 5000, never), 'tls', /\(CA: ConfigMap x\/y\[z\]\)/);
  assert.is(front.authorizations.length, seen, 'nothing, and no token, reached a server whose certificate was refused');
  await failure(client.query({ ...good, token: null }, 'up', 5000, never), 'unauthorized', /^401 from https:\/\/127\.0\.0\.1:\d+: the token was refused/);
  await failure(client.query({ ...good, token: 'wrong-token' }, 'up', 5000, never), 'unauthorized', /401/);
  // The ServiceAccount may read that Secret by name, and no other.
  await put('/api/v1/namespaces/openshift-bootcplan/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'other-token', namespace: 'openshift-bootcplan' }, stringData: { token: 'x' } });
  await failure(creds.token({ bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'other-token', key: 'token' } }, never), 'forbidden', /get on secrets, resourceNames \[other-token\], in openshift-bootcplan/);
});

t('Prometheus stopped: the next request fails at once (unreachable), never a pass', async () => {
  await prom.kill();
  const t0 = Date.now();
  await failure(client.query(ep(prom.url), 'up', 5000, never), 'unreachable', new RegExp(`^connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+ \\(${prom.url.replace(/[.]/g, '\\.')}\\)`));
  console.log(`  prometheus killed: the next request failed (ECONNREFUSED) in ${Date.now() - t0} ms`);
});

t.run();
