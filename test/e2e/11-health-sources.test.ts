/**
 * The health sources against the real things (docs/safety.md "Health checks"): a real
 * Prometheus (test/e2e/prometheus.ts, 1-second scrapes and evaluations, an alert that fires on
 * demand) and the real kube-apiserver, as the bootcplan ServiceAccount of examples/rbac.yaml:
 * - the client against Prometheus' own answers (bad PromQL, the alerts API, TLS and a bearer
 *   token through an https front with its own CA, the token from a Secret);
 * - KubeHealthSource: alerts firing and not, PromQL conditions on real answers (10,001 series
 *   cut by the server's limit), the TLS front as the ServiceAccount, ClusterOperators (the CRD
 *   from openshift/api) and an object's condition;
 * - Prometheus stopped: a failure within milliseconds, never a pass.
 * Prometheus starts once for the file (~2 s) and is killed by the last test.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setupEnv, clientFor, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { startPrometheus, startTlsFront, tlsMaterial, BROKEN_ALERT, type PrometheusHandle, type TlsFront } from './prometheus.ts';
import { PrometheusClient, HealthRequestError, type PrometheusEndpoint } from '../../src/kube/prometheus-client.ts';
import { HealthCredentials } from '../../src/kube/health-credentials.ts';
import { KubeHealthSource } from '../../src/kube/health-source.ts';
import type { PlanHealthCheck } from '../../src/plan/types.ts';
import type { GatePosition, Measurement } from '../../src/apply/ports/health.ts';
import { parseCondition } from '../../src/domain/health-condition.ts';
import { AlreadyExistsError } from '../../src/apply/ports/driver.ts';
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
  await put('/api/v1/namespaces/openshift-bootcplan/secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'prometheus-reader', namespace: 'openshift-bootcplan' },
    stringData: { token: `${FRONT_TOKEN}\n` },
  });
  await put('/api/v1/namespaces/openshift-bootcplan/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'openshift-service-ca.crt', namespace: 'openshift-bootcplan' },
    data: { 'service-ca.crt': front.caPem },
  });
});

t.after(async () => {
  client.close();
  sa?.close();
  await front?.close();
  await prom?.stop();
});

t('Prometheus answers as its API documents: an empty vector for an unknown metric, 400 bad_data for bad PromQL, matrices for range selectors', async () => {
  assert.equal(await client.query(ep(prom.url), 'no_such_metric', 5000, never), { data: { resultType: 'vector', result: [] }, warnings: [] });
  await failure(
    client.query(ep(prom.url), 'sum(', 5000, never),
    'query-rejected',
    /^400 bad_data: invalid parameter "query": 1:5: parse error: unclosed left parenthesis/,
  );
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

t(
  'through the TLS front: the token from the Secret and the CA from the ConfigMap, both read as the ServiceAccount, pass; another CA or no token fail',
  async () => {
    const creds = new HealthCredentials(sa, saKc);
    const token = await creds.token({ bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'prometheus-reader', key: 'token' } }, never);
    const ca = await creds.ca({ configMap: { namespace: 'openshift-bootcplan', name: 'openshift-service-ca.crt', key: 'service-ca.crt' } }, never);
    assert.is(token, FRONT_TOKEN);
    const good = ep(front.url, { token, ca: ca.pem, caName: ca.name });
    const r = await client.query(good, 'vector(1)', 5000, never);
    assert.is((r.data as any).result[0].value[1], '1');
    assert.is(front.authorizations.at(-1), `Bearer ${FRONT_TOKEN}`);
    const seen = front.authorizations.length;
    await failure(
      client.query({ ...good, ca: null, caName: 'the system roots' }, 'up', 5000, never),
      'tls',
      /self-signed certificate in certificate chain|unable to verify|unable to get local issuer/,
    );
    await failure(client.query({ ...good, ca: tlsMaterial().caPem, caName: 'ConfigMap x/y[z]' }, 'up', 5000, never), 'tls', /\(CA: ConfigMap x\/y\[z\]\)/);
    assert.is(front.authorizations.length, seen, 'nothing, and no token, reached a server whose certificate was refused');
    await failure(client.query({ ...good, token: null }, 'up', 5000, never), 'unauthorized', /^401 from https:\/\/127\.0\.0\.1:\d+: the token was refused/);
    await failure(client.query({ ...good, token: 'wrong-token' }, 'up', 5000, never), 'unauthorized', /401/);
    // The ServiceAccount may read that Secret by name, and no other.
    await put('/api/v1/namespaces/openshift-bootcplan/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'other-token', namespace: 'openshift-bootcplan' },
      stringData: { token: 'x' },
    });
    await failure(
      creds.token({ bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'other-token', key: 'token' } }, never),
      'forbidden',
      /get on secrets, resourceNames \[other-token\], in openshift-bootcplan/,
    );
  },
);

// ---- KubeHealthSource: the measurements a gate takes, as the ServiceAccount ----

const AT: GatePosition = { point: 'afterWave', pool: 'worker', wave: 1, node: null };
const limits = {
  when: ['afterWave' as const],
  intervalSeconds: 1,
  successes: 1,
  failureLimit: 0,
  timeoutSeconds: 30,
  requestTimeoutSeconds: 5,
  onFailure: 'halt' as const,
  scope: 'run' as const,
  pools: ['worker'],
};
const condition = (text: string) => {
  const r = parseCondition(text);
  if (!r.ok) throw new Error(r.message);
  return r.parsed;
};
const promCheck = (url: string, query: string, cond: string, o: Partial<NonNullable<PlanHealthCheck['prometheus']>> = {}): PlanHealthCheck => ({
  ...limits,
  name: 'slo',
  kind: 'prometheus',
  prometheus: { url, auth: 'none', ca: 'system', query, condition: cond, parsed: condition(cond), onEmpty: 'fail', ...o },
});
const alertsCheck = (url: string, o: Partial<NonNullable<PlanHealthCheck['alerts']>> = {}): PlanHealthCheck => ({
  ...limits,
  name: 'no-critical-alerts',
  kind: 'alerts',
  alerts: {
    url,
    auth: 'none',
    ca: 'system',
    source: 'prometheus',
    matchers: ['severity="critical"'],
    ignore: ['Watchdog', 'InfoInhibitor'],
    states: ['firing'],
    heartbeat: 'Watchdog',
    ...o,
  },
});
let source: KubeHealthSource;

function is(m: Measurement, outcome: Measurement['outcome'], observed: RegExp, error?: string) {
  assert.is(m.outcome, outcome, JSON.stringify(m));
  assert.match(m.observed, observed);
  assert.is(m.error, error, JSON.stringify(m));
}

t('alerts: firing and not firing, as the gate sees them', async () => {
  source = new KubeHealthSource(sa, saKc);
  is(await source.measure(alertsCheck(prom.url), AT, never), 'pass', /no firing alert matche?s? severity="critical" \(heartbeat Watchdog firing\)/);
  prom.exporter.gauges.e2e_workload_broken = 1;
  await prom.waitForAlert(BROKEN_ALERT, true);
  is(
    await source.measure(alertsCheck(prom.url), AT, never),
    'fail',
    /^1 firing alert matches severity="critical": E2EWorkloadBroken\{instance="127\.0\.0\.1:\d+",job="e2e"\}$/,
  );
  is(await source.measure(alertsCheck(prom.url, { matchers: ['team="none"'] }), AT, never), 'pass', /no firing alert matche?s? team="none"/);
  prom.exporter.gauges.e2e_workload_broken = 0;
  await prom.waitForAlert(BROKEN_ALERT, false);
  is(await source.measure(alertsCheck(prom.url, { heartbeat: 'NoSuchHeartbeat' }), AT, never), 'inconclusive', /heartbeat NoSuchHeartbeat not firing/);
});

t(
  'PromQL conditions on the real answers: pass, fail naming the series, empty (onEmpty), NaN, a range vector, 10,001 series cut by the server and too-large',
  async () => {
    prom.exporter.gauges.e2e_error_ratio = 0.001;
    prom.exporter.gauges.e2e_many = 0;
    await prom.waitForQuery('e2e_error_ratio');
    is(await source.measure(promCheck(prom.url, 'max(e2e_error_ratio)', 'every sample < 0.01'), AT, never), 'pass', /0\.001/);
    is(await source.measure(promCheck(prom.url, 'e2e_error_ratio', 'every sample < 0.0001'), AT, never), 'fail', /e2e_error_ratio\{.*job="e2e".*\}=0\.001/);
    is(await source.measure(promCheck(prom.url, 'e2e_no_such_metric', 'every sample < 0.01'), AT, never), 'fail', /empty result \(onEmpty: fail\)/);
    is(await source.measure(promCheck(prom.url, 'e2e_no_such_metric', 'every sample < 0.01', { onEmpty: 'pass' }), AT, never), 'pass', /./);
    is(await source.measure(promCheck(prom.url, '0/0', 'value != 0'), AT, never), 'fail', /NaN/);
    is(await source.measure(promCheck(prom.url, 'e2e_error_ratio[5s]', 'value < 1'), AT, never), 'error', /range vector/, 'bad-answer');
    is(await source.measure(promCheck(prom.url, 'sum(', 'value < 1'), AT, never), 'error', /^400 bad_data: invalid parameter "query"/, 'query-rejected');
    // 10,001 series: Prometheus honours limit=10001 and warns "results truncated due to limit"; too-large, not partial.
    prom.exporter.series = 10_001;
    await prom.waitForQuery('count(e2e_series) == 10001');
    is(
      await source.measure(promCheck(prom.url, 'e2e_series', 'every sample < 1'), AT, never),
      'error',
      /more than 10000 series: aggregate in the query/,
      'too-large',
    );
    is(await source.measure(promCheck(prom.url, 'count(e2e_series)', 'value == 10001'), AT, never), 'pass', /./);
    prom.exporter.series = 0;
  },
);

t('through the TLS front as the ServiceAccount: token from the Secret, CA from the ConfigMap; another CA fails tls', async () => {
  const secretAuth = { bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'prometheus-reader', key: 'token' } };
  const serviceCa = { configMap: { namespace: 'openshift-bootcplan', name: 'openshift-service-ca.crt', key: 'service-ca.crt' } };
  is(await source.measure(alertsCheck(front.url, { auth: secretAuth, ca: serviceCa }), AT, never), 'pass', /heartbeat Watchdog firing/);
  is(await source.measure(promCheck(front.url, 'vector(1)', 'value == 1', { auth: secretAuth, ca: serviceCa }), AT, never), 'pass', /./);
  is(await source.measure(promCheck(front.url, 'vector(1)', 'value == 1', { auth: secretAuth }), AT, never), 'error', /TLS: .*\(CA: the system roots\)/, 'tls');
  is(
    await source.measure(promCheck(front.url, 'vector(1)', 'value == 1', { auth: 'ServiceAccount', ca: serviceCa }), AT, never),
    'error',
    /^401 from https:\/\/127\.0\.0\.1:\d+: the token was refused/,
    'unauthorized',
  );
});

t('clusterOperators: listed by the ServiceAccount; Degraded=True or a missing named operator fails', async () => {
  await resetCluster(env.admin);
  const co = (name: string, degraded: string) => ({
    apiVersion: 'config.openshift.io/v1',
    kind: 'ClusterOperator',
    metadata: { name },
    spec: {},
    status: {
      conditions: [
        { type: 'Available', status: 'True', lastTransitionTime: '2026-12-01T00:00:00Z' },
        {
          type: 'Degraded',
          status: degraded,
          reason: degraded === 'True' ? 'IngressControllerDegraded' : 'AsExpected',
          message: 'The "default" ingress controller reports Degraded=True',
          lastTransitionTime: '2026-12-01T00:00:00Z',
        },
      ],
    },
  });
  await loadObjects(env.admin, [co('dns', 'False'), co('ingress', 'False')]);
  const check: PlanHealthCheck = { ...limits, name: 'operators', kind: 'clusterOperators', clusterOperators: { names: [], ignore: [] } };
  is(await source.measure(check, AT, never), 'pass', /^2 ClusterOperators Available=True, Degraded=False/);
  await env.admin.request('PATCH', '/apis/config.openshift.io/v1/clusteroperators/ingress/status', {
    body: co('ingress', 'True'),
    contentType: 'application/merge-patch+json',
  });
  is(await source.measure(check, AT, never), 'fail', /^ingress Degraded=True \(IngressControllerDegraded: The "default" ingress controller/);
  is(await source.measure({ ...check, clusterOperators: { names: ['dns', 'monitoring'], ignore: [] } }, AT, never), 'fail', /monitoring not found/);
});

t(
  'condition: the Ready condition of a Node, read by the ServiceAccount; not found fails; an object it may not read is forbidden with the rule to add',
  async () => {
    const node = (ready: string) => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'hc-1' },
      spec: {},
      status: { conditions: [{ type: 'Ready', status: ready, reason: ready === 'True' ? 'KubeletReady' : 'KubeletNotReady' }] },
    });
    await loadObjects(env.admin, [node('True')]);
    const check = (o: Partial<NonNullable<PlanHealthCheck['condition']>> = {}): PlanHealthCheck => ({
      ...limits,
      name: 'node-ready',
      kind: 'condition',
      condition: { apiVersion: 'v1', kind: 'Node', namespace: null, name: 'hc-1', type: 'Ready', status: 'True', reason: null, ...o },
    });
    is(await source.measure(check(), AT, never), 'pass', /^Node hc-1 Ready=True \(KubeletReady\)/);
    await env.admin.request('PATCH', '/api/v1/nodes/hc-1/status', { body: node('False'), contentType: 'application/merge-patch+json' });
    is(await source.measure(check(), AT, never), 'fail', /^Node hc-1 Ready=False/);
    is(await source.measure(check({ name: 'hc-2' }), AT, never), 'fail', /^Node hc-2 not found/);
    is(
      await source.measure(check({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'frontend', type: 'Available' }), AT, never),
      'error',
      /grant get on deployments \(apps\), resourceNames \[frontend\], in shop/,
      'forbidden',
    );
    is(await source.measure(check({ apiVersion: 'example.com/v1', kind: 'Widget' }), AT, never), 'error', /example\.com\/v1 is not served/, 'source-missing');
  },
);

t('Prometheus stopped: the next request fails at once (unreachable), never a pass', async () => {
  await prom.kill();
  const t0 = Date.now();
  await failure(
    client.query(ep(prom.url), 'up', 5000, never),
    'unreachable',
    new RegExp(`^connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+ \\(${prom.url.replace(/[.]/g, '\\.')}\\)`),
  );
  console.log(`  prometheus killed: the next request failed (ECONNREFUSED) in ${Date.now() - t0} ms`);
  is(
    await source.measure(alertsCheck(prom.url), AT, never),
    'error',
    new RegExp(`^connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+ \\(${prom.url.replace(/[.]/g, '\\.')}\\)`),
    'unreachable',
  );
  source.close();
});

t.run();
