/**
 * KubeHealthSource, the real health source, against fake Prometheus, Alertmanager and API
 * servers (test/support/fake-api.ts): one measurement per call, of the four kinds; whatever the source
 * answers or fails to answer is a measurement (never an exception), an unreachable or broken
 * source is an `error` measurement and never a pass; the whole measurement, API reads included,
 * ends within the check's requestTimeoutSeconds; the stop signal throws AbortedError.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fakeApi, closeFakes, clientOf, closeClients, sendJson, kubeConfigFor } from '../support/fake-api.ts';
import { KubeHealthSource } from '../../src/kube/health-source.ts';
import type { PlanHealthCheck } from '../../src/plan/types.ts';
import type { GatePosition, Measurement } from '../../src/apply/ports/health.ts';
import { parseCondition } from '../../src/domain/health-condition.ts';
import { AbortedError } from '../../src/apply/ports/driver.ts';
import { shownPiece } from '../support/credentials.ts';

const t = suite('kube: the health source');
const sources: KubeHealthSource[] = [];
t.after(async () => {
  for (const s of sources) s.close();
  closeClients();
  await closeFakes();
});

const AT: GatePosition = { point: 'afterWave', pool: 'worker', wave: 1, node: null };
const never = new AbortController().signal;
const TOKEN = 'reader-token-3f9a0c1e5b7d';
const b64 = (s: string) => Buffer.from(s).toString('base64');

const base = {
  when: ['afterWave'],
  intervalSeconds: 1,
  successes: 1,
  failureLimit: 0,
  timeoutSeconds: 30,
  requestTimeoutSeconds: 2,
  onFailure: 'halt',
  scope: 'run',
  pools: ['worker'],
} as const;
const parsed = (c: string) => {
  const r = parseCondition(c);
  if (!r.ok) throw new Error(r.message);
  return r.parsed;
};
function promCheck(url: string, query: string, condition: string, o: Partial<NonNullable<PlanHealthCheck['prometheus']>> = {}): PlanHealthCheck {
  return {
    ...base,
    when: [...base.when],
    pools: [...base.pools],
    name: 'ratio',
    kind: 'prometheus',
    prometheus: { url, auth: 'none', ca: 'system', query, condition, parsed: parsed(condition), onEmpty: 'fail', ...o },
  };
}
function alertsCheck(url: string, o: Partial<NonNullable<PlanHealthCheck['alerts']>> = {}): PlanHealthCheck {
  return {
    ...base,
    when: [...base.when],
    pools: [...base.pools],
    name: 'no-critical-alerts',
    kind: 'alerts',
    alerts: {
      url,
      auth: 'none',
      ca: 'system',
      source: 'prometheus',
      matchers: ['severity="critical"'],
      ignore: ['Watchdog'],
      states: ['firing'],
      heartbeat: 'Watchdog',
      ...o,
    },
  };
}
const operatorsCheck = (names: string[] = []): PlanHealthCheck => ({
  ...base,
  when: [...base.when],
  pools: [...base.pools],
  name: 'operators',
  kind: 'clusterOperators',
  clusterOperators: { names, ignore: [] },
});
const conditionCheck = (o: Partial<NonNullable<PlanHealthCheck['condition']>> = {}): PlanHealthCheck => ({
  ...base,
  when: [...base.when],
  pools: [...base.pools],
  name: 'frontend',
  kind: 'condition',
  condition: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'frontend', type: 'Available', status: 'True', reason: null, ...o },
});

/** A fake API server: `objects` by path, 403 for paths with "denied", the API server's 404 page for unknown groups. */
async function apiServer(objects: Record<string, unknown>) {
  const f = await fakeApi((req, res) => {
    const path = req.url!.split('?')[0];
    if (path.includes('denied'))
      return sendJson(
        res,
        {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Forbidden',
          code: 403,
          message: `forbidden: User "system:serviceaccount:openshift-bootcplan:bootcplan" cannot get ${path}`,
        },
        403,
      );
    if (path in objects) return sendJson(res, objects[path]);
    if (path.startsWith('/apis/') && path.split('/').length <= 4) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
    sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' }, 404);
  });
  return f;
}

async function sourceOn(apiUrl: string): Promise<KubeHealthSource> {
  const s = new KubeHealthSource(clientOf(apiUrl), kubeConfigFor({ server: apiUrl }));
  sources.push(s);
  return s;
}

function is(m: Measurement, outcome: Measurement['outcome'], observed: RegExp, error?: string) {
  assert.is(m.outcome, outcome, JSON.stringify(m));
  assert.match(m.observed, observed);
  assert.is(m.error, error, JSON.stringify(m));
  assert.ok(m.observed.length <= 300 && !/[\n\r\x1b]/.test(m.observed), m.observed);
}

const vector = (values: number[]) => ({
  status: 'success',
  data: { resultType: 'vector', result: values.map((v, i) => ({ metric: { instance: `i-${i}` }, value: [1, String(v)] })) },
});

t('prometheus: the answer judged by the condition; warnings (a partial answer) inconclusive; 10,001 series too-large', async () => {
  let body: unknown = vector([0.001, 0.002]);
  const prom = await fakeApi((_req, res) => sendJson(res, body));
  const s = await sourceOn((await apiServer({})).url);
  is(await s.measure(promCheck(prom.url, 'ratio', 'every sample < 0.01'), AT, never), 'pass', /./);
  body = vector([0.001, 0.5]);
  is(await s.measure(promCheck(prom.url, 'ratio', 'every sample < 0.01'), AT, never), 'fail', /instance="i-1".*0\.5/);
  body = { ...vector([0.001]), warnings: ['store gateway down: partial data'] };
  is(await s.measure(promCheck(prom.url, 'ratio', 'every sample < 0.01'), AT, never), 'inconclusive', /partial response: store gateway down/);
  body = { ...vector(Array.from({ length: 10_001 }, () => 0)), warnings: ['results truncated due to limit'] };
  is(await s.measure(promCheck(prom.url, 'ratio', 'every sample < 0.01'), AT, never), 'error', /more than 10000 series/, 'too-large');
  body = vector([]);
  is(await s.measure(promCheck(prom.url, 'ratio', 'every sample < 0.01'), AT, never), 'fail', /empty/);
});

t('prometheus: unreachable, an HTML 502 from a proxy, bad PromQL: error measurements naming the cause, never a pass', async () => {
  const closed = await fakeApi(() => {});
  const url = closed.url;
  await closed.close();
  const s = await sourceOn((await apiServer({})).url);
  is(await s.measure(promCheck(url, 'up', 'value == 1'), AT, never), 'error', new RegExp(`ECONNREFUSED.*${url.replace(/[.]/g, '\\.')}`), 'unreachable');
  const proxy = await fakeApi((req, res) => {
    if (req.url!.includes('sum')) return sendJson(res, { status: 'error', errorType: 'bad_data', error: 'parse error: unclosed left parenthesis' }, 400);
    res.writeHead(502, { 'Content-Type': 'text/html' }).end('<html><body><h1>502 Bad Gateway</h1></body></html>');
  });
  is(await s.measure(promCheck(proxy.url, 'up', 'value == 1'), AT, never), 'error', /^502 Bad Gateway \(no Prometheus answer: text\/html/, 'http-status');
  is(await s.measure(alertsCheck(proxy.url), AT, never), 'error', /^502 Bad Gateway/, 'http-status');
  is(await s.measure(promCheck(proxy.url, 'sum(', 'value == 1'), AT, never), 'error', /^400 bad_data: parse error/, 'query-rejected');
});

t('alerts: a firing critical alert fails, naming it; without it and with the heartbeat it passes; without the heartbeat inconclusive', async () => {
  let alerts = [
    { labels: { alertname: 'Watchdog', severity: 'none' }, state: 'firing' },
    { labels: { alertname: 'E2EWorkloadBroken', severity: 'critical', job: 'e2e' }, state: 'firing' },
  ];
  const prom = await fakeApi((_req, res) => sendJson(res, { status: 'success', data: { alerts } }));
  const s = await sourceOn((await apiServer({})).url);
  is(await s.measure(alertsCheck(prom.url), AT, never), 'fail', /1 firing alert matches severity="critical": E2EWorkloadBroken\{job="e2e"\}/);
  alerts = alerts.slice(0, 1);
  is(await s.measure(alertsCheck(prom.url), AT, never), 'pass', /heartbeat Watchdog firing/);
  alerts = [];
  is(await s.measure(alertsCheck(prom.url), AT, never), 'inconclusive', /heartbeat Watchdog not firing/);
});

t('alerts from Alertmanager: the matchers go as filters, silenced and inhibited alerts are left out by the server', async () => {
  const urls: string[] = [];
  const am = await fakeApi((req, res) => {
    urls.push(req.url!);
    sendJson(res, [{ labels: { alertname: 'KubeNodeNotReady', severity: 'critical', node: 'w-1' }, status: { state: 'active' } }]);
  });
  const s = await sourceOn((await apiServer({})).url);
  is(await s.measure(alertsCheck(am.url, { source: 'alertmanager', heartbeat: '' }), AT, never), 'fail', /KubeNodeNotReady\{node="w-1"\}/);
  const u = new URL(urls[0], am.url);
  assert.equal(
    [u.pathname, u.searchParams.get('silenced'), u.searchParams.get('inhibited'), u.searchParams.getAll('filter')],
    ['/api/v2/alerts', 'false', 'false', ['severity="critical"']],
  );
});

t('a bearer token from a Secret is sent; a 401 makes the next measurement read the Secret again', async () => {
  const secretReads: string[] = [];
  let token = 'old-token-value';
  const api = await fakeApi((req, res) => {
    secretReads.push(req.url!);
    sendJson(res, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'prometheus-reader', namespace: 'openshift-bootcplan' }, data: { token: b64(token) } });
  });
  const auths: string[] = [];
  const prom = await fakeApi((req, res) => {
    auths.push(String(req.headers.authorization));
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401, { 'Content-Type': 'text/plain' }).end('Unauthorized');
    sendJson(res, vector([1]));
  });
  const s = await sourceOn(api.url);
  const check = promCheck(prom.url, 'up', 'value == 1', {
    auth: { bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'prometheus-reader', key: 'token' } },
  });
  is(await s.measure(check, AT, never), 'error', /^401 from http:\/\/127\.0\.0\.1:\d+: the token was refused/, 'unauthorized');
  token = TOKEN; // rotated
  is(await s.measure(check, AT, never), 'pass', /./);
  assert.equal(auths, ['Bearer old-token-value', `Bearer ${TOKEN}`]);
  assert.is(secretReads.length, 2);
});

t('clusterOperators: listed through the API server; not OpenShift is source-missing, a 403 names the rule', async () => {
  const co = (name: string, available: string, degraded: string) => ({
    apiVersion: 'config.openshift.io/v1',
    kind: 'ClusterOperator',
    metadata: { name },
    status: {
      conditions: [
        { type: 'Available', status: available },
        { type: 'Degraded', status: degraded, reason: degraded === 'True' ? 'IngressDegraded' : '' },
      ],
    },
  });
  const items = [co('dns', 'True', 'False'), co('ingress', 'True', 'False')];
  const list = { apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperatorList', metadata: { resourceVersion: '9' }, items };
  const api = await apiServer({ '/apis/config.openshift.io/v1/clusteroperators': list });
  const s = await sourceOn(api.url);
  is(await s.measure(operatorsCheck(), AT, never), 'pass', /2 ClusterOperators Available=True, Degraded=False/);
  items[1] = co('ingress', 'True', 'True');
  is(await s.measure(operatorsCheck(), AT, never), 'fail', /ingress Degraded=True \(IngressDegraded/);
  const plain = await sourceOn((await apiServer({})).url);
  is(await plain.measure(operatorsCheck(), AT, never), 'error', /this cluster serves no ClusterOperators/, 'source-missing');
  const denied = await fakeApi((_req, res) =>
    sendJson(
      res,
      { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'clusteroperators.config.openshift.io is forbidden' },
      403,
    ),
  );
  is(
    await (await sourceOn(denied.url)).measure(operatorsCheck(), AT, never),
    'error',
    /grant get, list on clusteroperators \(config\.openshift\.io\)/,
    'forbidden',
  );
});

t(
  'condition: the kind found by discovery (once per apply), the object read by name; not found fails, 403 names the rule, an unknown kind is source-missing',
  async () => {
    const discovery = {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'apps/v1',
      resources: [
        { name: 'deployments', singularName: 'deployment', namespaced: true, kind: 'Deployment', verbs: ['get', 'list'] },
        { name: 'deployments/status', singularName: '', namespaced: true, kind: 'Deployment', verbs: ['get'] },
      ],
    };
    const deployment = (status: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'frontend', namespace: 'shop', generation: 2 },
      status: { observedGeneration: 2, conditions: [{ type: 'Available', status, reason: 'MinimumReplicasAvailable' }] },
    });
    const objects: Record<string, unknown> = { '/apis/apps/v1': discovery, '/apis/apps/v1/namespaces/shop/deployments/frontend': deployment('True') };
    const hits: string[] = [];
    const api = await fakeApi((req, res) => {
      hits.push(req.url!);
      const path = req.url!.split('?')[0];
      if (path.includes('denied'))
        return sendJson(
          res,
          { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'deployments.apps "denied" is forbidden' },
          403,
        );
      if (path in objects) return sendJson(res, objects[path]);
      if (path === '/apis/example.com/v1') return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
      sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' }, 404);
    });
    const s = await sourceOn(api.url);
    is(await s.measure(conditionCheck(), AT, never), 'pass', /Deployment shop\/frontend Available=True/);
    objects['/apis/apps/v1/namespaces/shop/deployments/frontend'] = deployment('False');
    is(await s.measure(conditionCheck(), AT, never), 'fail', /Available=False/);
    is(await s.measure(conditionCheck({ name: 'backend' }), AT, never), 'fail', /Deployment shop\/backend not found/);
    is(
      await s.measure(conditionCheck({ name: 'denied' }), AT, never),
      'error',
      /grant get on deployments \(apps\), resourceNames \[denied\], in shop/,
      'forbidden',
    );
    is(await s.measure(conditionCheck({ kind: 'StatefulSet' }), AT, never), 'error', /apps\/v1 serves no kind StatefulSet/, 'source-missing');
    is(
      await s.measure(conditionCheck({ apiVersion: 'example.com/v1', kind: 'Widget' }), AT, never),
      'error',
      /example\.com\/v1 is not served/,
      'source-missing',
    );
    assert.is(hits.filter((h) => h === '/apis/apps/v1').length, 1, 'discovery read once');
  },
);

t('requestTimeoutSeconds bounds the whole measurement, the API reads of credentials included; the stop signal throws AbortedError', async () => {
  const silentApi = await fakeApi(() => {});
  const prom = await fakeApi((_req, res) => sendJson(res, vector([1])));
  const s = await sourceOn(silentApi.url);
  const check = {
    ...promCheck(prom.url, 'up', 'value == 1', { auth: { bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'r', key: 'token' } } }),
    requestTimeoutSeconds: 1,
  };
  let t0 = Date.now();
  is(await s.measure(check, AT, never), 'error', /no answer within 1 s/, 'timeout');
  assert.ok(Date.now() - t0 < 1800, `${Date.now() - t0} ms`);
  const silentProm = await fakeApi(() => {});
  t0 = Date.now();
  is(
    await s.measure({ ...promCheck(silentProm.url, 'up', 'value == 1'), requestTimeoutSeconds: 1 }, AT, never),
    'error',
    /no answer within 1 s from http:\/\/127\.0\.0\.1/,
    'timeout',
  );
  assert.ok(Date.now() - t0 < 1800, `${Date.now() - t0} ms`);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  t0 = Date.now();
  let err: unknown;
  try {
    await s.measure({ ...promCheck(silentProm.url, 'up', 'value == 1'), requestTimeoutSeconds: 10 }, AT, ac.signal);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof AbortedError, String(err));
  assert.ok(Date.now() - t0 < 1000);
});

t('a 200 answer that echoes the credential back (a debugging proxy): neither it nor any 8-character piece of it in any observation', async () => {
  const SA = 'eyJhbGciOiJSUzI1NiJ9.c2EtdG9rZW4tN2M0ZTFiOWEyZg.k3XqP8wL';
  const SECRET = 'sha256~Zm9vYmFyLXNlY3JldC10b2tlbi12YWx1ZQ';
  // JSON.stringify escapes " and \: between them no run of 8 is left for a text-only mask to find.
  const QUOTED = 'k9"Qz\\w3"Lm8\\pX2"vB7\\nR4"tY6"aZ0\\';
  const PASS = 'secretpass';
  const BASIC = b64(`reader:${PASS}`);
  const all = [SA, SECRET, QUOTED, PASS, BASIC, `reader:${PASS}`];
  let shape = 'alert';
  const prom = await fakeApi((req, res) => {
    const auth = String(req.headers.authorization ?? '');
    const tok = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString('utf8') : auth.replace(/^Bearer /, '');
    const firing = (labels: Record<string, string>) => ({ labels: { severity: 'critical', ...labels }, state: 'firing' });
    if (shape === 'header') return void res.writeHead(200, { 'Content-Type': `text/plain; echo="${auth}"` }).end('ok');
    if (shape === 'error') return void res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`proxy: ${tok} rejected (${auth})`);
    if (shape === 'am') return sendJson(res, [{ labels: { alertname: 'Echo', severity: 'critical', authorization: auth }, status: { state: 'active' } }]);
    if (shape === 'alert') return sendJson(res, { status: 'success', data: { alerts: [firing({ alertname: 'Echo', authorization: auth, token: tok })] } });
    if (shape === 'alertname') return sendJson(res, { status: 'success', data: { alerts: [firing({ alertname: tok })] } });
    const metric = { __name__: 'up', authorization: auth, [`k_${tok}`]: tok };
    const body = { status: 'success', data: { resultType: 'vector', result: [{ metric, value: [1, shape === 'warning' ? '1' : '0'] }] } };
    sendJson(res, shape === 'warning' ? { ...body, warnings: [`proxy saw ${auth} for ${tok}`] } : body);
  });
  const secrets: Record<string, string> = { reader: SECRET, quoted: QUOTED };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'frontend', namespace: 'shop' },
    status: { conditions: [{ type: 'Available', status: 'False', reason: 'Echo', message: SA }] },
  };
  const api = await fakeApi((req, res) => {
    const path = req.url!.split('?')[0];
    const name = path.split('/').pop()!;
    if (path.includes('/secrets/') && name in secrets)
      return sendJson(res, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'openshift-bootcplan' }, data: { token: b64(secrets[name]) } });
    if (path === '/apis/apps/v1')
      return sendJson(res, { kind: 'APIResourceList', groupVersion: 'apps/v1', resources: [{ name: 'deployments', namespaced: true, kind: 'Deployment' }] });
    if (path === '/apis/apps/v1/namespaces/shop/deployments/frontend') return sendJson(res, deployment);
    sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' }, 404);
  });
  const s = new KubeHealthSource(clientOf({ server: api.url, token: SA }), kubeConfigFor({ server: api.url, token: SA }));
  sources.push(s);
  // The condition first: the kubeconfig's token is known before any check has sent it.
  const problems: string[] = [];
  const judge = (what: string, m: Measurement, outcome: Measurement['outcome'], error?: string) => {
    const piece = shownPiece(m.observed, all);
    if (m.outcome !== outcome || m.error !== error) problems.push(`${what}: ${m.outcome}/${m.error}, expected ${outcome}/${error}: ${m.observed}`);
    else if (piece !== null) problems.push(`${what}: shows ${JSON.stringify(piece)}: ${m.observed}`);
    else if (!m.observed.includes('[masked]')) problems.push(`${what}: no [masked] marker: ${m.observed}`);
  };
  judge('condition', await s.measure(conditionCheck(), AT, never), 'fail');
  const secretAuth = (name: string) => ({ auth: { bearerTokenSecret: { namespace: 'openshift-bootcplan', name, key: 'token' } } });
  const withUserinfo = prom.url.replace('http://', `http://reader:${PASS}@`);
  const endpoints: [string, string, Record<string, unknown>][] = [
    ['ServiceAccount', prom.url, { auth: 'ServiceAccount' }],
    ['Secret', prom.url, secretAuth('reader')],
    ['Secret with quotes', prom.url, secretAuth('quoted')],
    ['URL userinfo', withUserinfo, {}],
  ];
  const expected: Record<string, [Measurement['outcome'], string | undefined]> = {
    alert: ['fail', undefined],
    alertname: ['fail', undefined],
    am: ['fail', undefined],
    series: ['fail', undefined],
    warning: ['inconclusive', undefined],
    header: ['error', 'bad-answer'],
    error: ['error', 'http-status'],
  };
  let measured = 0;
  for (const [who, url, o] of endpoints) {
    for (const [sh, [outcome, error]] of Object.entries(expected)) {
      shape = sh;
      const check =
        sh === 'series' || sh === 'warning'
          ? promCheck(url, 'up', 'every sample == 1', o)
          : alertsCheck(url, { heartbeat: '', ...(sh === 'am' ? { source: 'alertmanager' } : {}), ...o });
      judge(`${who}, ${sh}`, await s.measure(check, AT, never), outcome, error);
      measured++;
    }
  }
  assert.is(measured, 28);
  assert.equal(problems, [], problems.join('\n'));
});

t('the verdict is the answer as it came: a label sharing 8 characters with the token still matches its matcher, only the text is masked', async () => {
  const TOKEN_LIKE = 'openshift-monitoring-reader-2024';
  const api = await fakeApi((_req, res) =>
    sendJson(res, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'r', namespace: 'openshift-bootcplan' }, data: { token: b64(TOKEN_LIKE) } }),
  );
  const prom = await fakeApi((_req, res) =>
    sendJson(res, {
      status: 'success',
      data: { alerts: [{ labels: { alertname: 'KubePodCrashLooping', severity: 'critical', namespace: 'openshift-monitoring' }, state: 'firing' }] },
    }),
  );
  const s = await sourceOn(api.url);
  const check = alertsCheck(prom.url, {
    matchers: ['namespace="openshift-monitoring"'],
    heartbeat: '',
    auth: { bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'r', key: 'token' } },
  });
  const m = await s.measure(check, AT, never);
  is(m, 'fail', /^1 firing alert matches namespace="\[masked\]": KubePodCrashLooping\{namespace="\[masked\]"\}$/);
});

t.run();
