/**
 * The Prometheus/Alertmanager client of the health checks against hostile and broken servers
 * (docs/safety.md "Health checks"): every answer is bounded in size and time, TLS is always
 * verified, redirects are never followed, the bearer token goes only to the URL the spec names
 * (over TLS, or plain http to a loopback host) and never into a message. Each failure is a
 * HealthRequestError of one kind with one printable line; nothing here ever reads as a pass.
 * Fake servers run on 127.0.0.1 port 0 (test/support/fake-api.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import type http from 'node:http';
import { fakeApi, closeFakes, sendJson, selfSignedCert } from '../support/fake-api.ts';
import { PrometheusClient, HealthRequestError, type PrometheusEndpoint } from '../../src/kube/prometheus-client.ts';
import { AbortedError } from '../../src/apply/ports/driver.ts';
import { bundledModule } from '../support/built.ts';

const t = suite('kube: the Prometheus client of the health checks');
const clients: PrometheusClient[] = [];
const newClient = (o?: ConstructorParameters<typeof PrometheusClient>[0]) => {
  const c = new PrometheusClient(o);
  clients.push(c);
  return c;
};
t.after(async () => {
  for (const c of clients) c.close();
  await closeFakes();
});

const TOKEN = 'sha256~Zm9vYmFyLXNlY3JldC10b2tlbi12YWx1ZQ';
const ep = (url: string, o: Partial<PrometheusEndpoint> = {}): PrometheusEndpoint => ({ url, token: null, ca: null, caName: 'the system roots', ...o });
const never = new AbortController().signal;
const messages: string[] = [];

/** Awaits `p`, expects a HealthRequestError of `kind` whose one printable line matches `pattern`. */
async function failure(p: Promise<unknown>, kind: string, pattern: RegExp): Promise<HealthRequestError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected a ${kind} failure, but it succeeded`);
  assert.ok(err instanceof HealthRequestError, `not a HealthRequestError: ${(err as Error)?.name}: ${(err as Error)?.message}`);
  const e = err as HealthRequestError;
  messages.push(e.message);
  assert.is(e.kind, kind, e.message);
  assert.match(e.message, pattern);
  assert.not.match(e.message, /[\n\r\x00-\x08\x0b-\x1f\x7f]/, `one printable line: ${JSON.stringify(e.message)}`);
  assert.ok(e.message.length <= 300, `${e.message.length} characters`);
  return e;
}

const vector = (n: number) => ({
  status: 'success',
  data: { resultType: 'vector', result: Array.from({ length: n }, (_, i) => ({ metric: { __name__: 'up', instance: `i-${i}` }, value: [1700000000, '1'] })) },
});

t('a query: GET with the PromQL, limit=10001, partial_response=false, Accept JSON; the envelope data and warnings as they came', async () => {
  const seen: http.IncomingMessage[] = [];
  const f = await fakeApi((req, res) => {
    seen.push(req);
    sendJson(res, { ...vector(2), warnings: ['a warning'] });
  });
  const a = await newClient().query(ep(`${f.url}/prefix/`), 'max(up{job="e2e"})', 2000, never);
  assert.equal(a, { data: vector(2).data, warnings: ['a warning'] });
  const url = new URL(seen[0].url!, f.url);
  assert.is(seen[0].method, 'GET');
  assert.is(url.pathname, '/prefix/api/v1/query');
  assert.is(url.searchParams.get('query'), 'max(up{job="e2e"})');
  assert.is(url.searchParams.get('limit'), '10001');
  assert.is(url.searchParams.get('partial_response'), 'false');
  assert.is(url.searchParams.get('timeout'), '2s');
  assert.is(seen[0].headers.accept, 'application/json');
  assert.is(seen[0].headers.authorization, undefined, 'auth: none sends no Authorization header');
});

t('an answer that is not a success envelope is bad-answer (the shapes inside are judged by the observe functions)', async () => {
  let body: unknown;
  const f = await fakeApi((_req, res) => sendJson(res, body));
  const c = newClient();
  for (const bad of [
    { status: 'success' },
    { data: {} },
    { status: 'success', data: [] },
    { status: 'success', data: {}, warnings: 'x' },
    [],
    'success',
    null,
  ]) {
    body = bad;
    await failure(c.query(ep(f.url), 'up', 2000, never), 'bad-answer', /not a Prometheus API answer from http:\/\/127\.0\.0\.1:\d+: /);
    await failure(c.alerts(ep(f.url), 2000, never), 'bad-answer', /not a Prometheus API answer/);
  }
  body = { status: 'success', data: { alerts: [] }, warnings: Array.from({ length: 50 }, (_, i) => `w${i}`) };
  assert.is((await c.alerts(ep(f.url), 2000, never)).warnings.length, 10, 'at most 10 warnings kept');
});

t('error envelopes and statuses: 400/422 query-rejected with the error text, 401, 403 with the RBAC hint, 404, 503', async () => {
  let status = 400;
  let body: unknown = { status: 'error', errorType: 'bad_data', error: 'invalid parameter "query": 1:5: parse error: unclosed left parenthesis' };
  const f = await fakeApi((_req, res) => sendJson(res, body, status));
  const c = newClient();
  await failure(
    c.query(ep(f.url), 'sum(', 2000, never),
    'query-rejected',
    /^400 bad_data: invalid parameter "query": 1:5: parse error: unclosed left parenthesis/,
  );
  status = 422;
  body = { status: 'error', errorType: 'execution', error: 'many-to-many matching not allowed' };
  await failure(c.query(ep(f.url), 'a + b', 2000, never), 'query-rejected', /^422 execution: many-to-many/);
  status = 503;
  body = { status: 'error', errorType: 'timeout', error: 'query timed out in expression evaluation' };
  await failure(c.query(ep(f.url), 'up', 2000, never), 'http-status', /^503 timeout: query timed out/);
  status = 401;
  body = 'Unauthorized';
  await failure(c.query(ep(f.url), 'up', 2000, never), 'unauthorized', /401 from http:\/\/127\.0\.0\.1:\d+: the token was refused/);
  status = 403;
  body = 'Forbidden (user=system:serviceaccount:openshift-bootcplan:bootcplan, verb=get, resource=prometheuses, subresource=api)';
  const e = await failure(c.query(ep(f.url), 'up', 2000, never), 'forbidden', /403 from http:\/\/127\.0\.0\.1:\d+.*cluster-monitoring-view/);
  assert.match(e.message, /verb=get/);
  status = 404;
  body = '404 page not found';
  await failure(c.alerts(ep(f.url), 2000, never), 'not-found', /404 from http:\/\/127\.0\.0\.1:\d+\/api\/v1\/alerts: no Prometheus API/);
});

t('an HTML 502 from a proxy is http-status, an HTML page with status 200 is bad-answer: neither is ever a pass', async () => {
  const page = '<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1>\x1b[31m</body></html>';
  let status = 502;
  const f = await fakeApi((_req, res) => {
    res.writeHead(status, { 'Content-Type': 'text/html' });
    res.end(page);
  });
  const c = newClient();
  const e = await failure(
    c.query(ep(f.url), 'up', 2000, never),
    'http-status',
    /^502 Bad Gateway \(no Prometheus answer: text\/html, \d+ bytes\): "<!DOCTYPE html>\\n<html>/,
  );
  assert.not.match(e.message, /\x1b/);
  await failure(c.alerts(ep(f.url), 2000, never), 'http-status', /^502 Bad Gateway/);
  status = 200;
  await failure(c.query(ep(f.url), 'up', 2000, never), 'bad-answer', /not a Prometheus API answer \(text\/html, \d+ bytes\)/);
  await failure(c.alertmanagerAlerts(ep(f.url), [], 2000, never), 'bad-answer', /not an Alertmanager API answer \(text\/html/);
});

t('a redirect is not followed: the token never reaches the other origin, and the measurement says where it pointed', async () => {
  const other = await fakeApi((_req, res) => sendJson(res, vector(0)));
  const f = await fakeApi((_req, res) => {
    res.writeHead(302, { Location: `${other.url}/api/v1/query?query=up` });
    res.end();
  });
  const c = newClient();
  await failure(
    c.query(ep(f.url, { token: TOKEN }), 'up', 2000, never),
    'http-status',
    new RegExp(`^302 redirect to ${other.url.replace(/[.]/g, '\\.')} \\(not followed: put the final URL in the spec\\)`),
  );
  await failure(c.alerts(ep(f.url, { token: TOKEN }), 2000, never), 'http-status', /302 redirect/);
  assert.equal(other.hits, [], 'nothing reached the origin the redirect named');
  assert.is(f.hits.length, 2);
});

t('the bearer token: sent as Authorization over TLS and to loopback http; never over plain http to another host', async () => {
  const tls = selfSignedCert();
  const auths: (string | undefined)[] = [];
  const f = await fakeApi((req, res) => {
    auths.push(req.headers.authorization);
    sendJson(res, vector(1));
  }, tls);
  const c = newClient();
  await c.query(ep(f.url, { token: TOKEN, ca: tls.cert.toString(), caName: 'ConfigMap ns/ca' }), 'up', 2000, never);
  const h = await fakeApi((req, res) => {
    auths.push(req.headers.authorization);
    sendJson(res, vector(1));
  });
  await c.query(ep(h.url.replace('127.0.0.1', 'localhost'), { token: TOKEN }), 'up', 2000, never);
  assert.equal(auths, [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
  // Refused before any connection: prometheus.invalid never resolves, and no lookup is even tried.
  await failure(
    c.query(ep('http://prometheus.invalid:9090', { token: TOKEN }), 'up', 2000, never),
    'tls',
    /refusing to send the bearer token over plain http to prometheus\.invalid:9090: use https/,
  );
  await failure(c.query(ep('http://10.0.0.7:9090', { token: TOKEN }), 'up', 2000, never), 'tls', /over plain http to 10\.0\.0\.7:9090/);
});

t('TLS is always verified: a self-signed certificate is refused with the system roots and with another CA, accepted with its own', async () => {
  const tls = selfSignedCert();
  const otherCa = selfSignedCert().cert.toString();
  const hits: string[] = [];
  const f = await fakeApi((req, res) => {
    hits.push(String(req.headers.authorization));
    sendJson(res, vector(1));
  }, tls);
  const c = newClient();
  await failure(c.query(ep(f.url, { token: TOKEN }), 'up', 2000, never), 'tls', /self-signed certificate.*https:\/\/127\.0\.0\.1:\d+ \(CA: the system roots\)/);
  await failure(
    c.alerts(ep(f.url, { token: TOKEN, ca: otherCa, caName: 'ConfigMap openshift-bootcplan/other[ca.crt]' }), 2000, never),
    'tls',
    /\(CA: ConfigMap openshift-bootcplan\/other\[ca\.crt\]\)/,
  );
  assert.equal(hits, [], 'no request (and no token) went to a server whose certificate was refused');
  assert.equal((await c.query(ep(f.url, { token: TOKEN, ca: tls.cert.toString(), caName: 'x' }), 'up', 2000, never)).data, vector(1).data);
  // http spoken to a TLS port: a clean tls failure too.
  await failure(c.query(ep(f.url.replace('https:', 'http:')), 'up', 2000, never), 'unreachable', /127\.0\.0\.1/);
});

t('an answer that echoes the token back (a proxy debug page): the token is cut out of every message', async () => {
  const f = await fakeApi((req, res) => {
    const echo = `request rejected: Authorization: ${req.headers.authorization}; token=${TOKEN}`;
    if (req.url!.includes('alerts')) return sendJson(res, { status: 'error', errorType: 'bad_data', error: echo }, 400);
    res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end(echo);
  });
  const c = newClient();
  const a = await failure(c.query(ep(f.url, { token: TOKEN }), 'up', 2000, never), 'http-status', /^500 Internal Server Error/);
  const b = await failure(c.alerts(ep(f.url, { token: TOKEN }), 2000, never), 'query-rejected', /^400 bad_data: request rejected/);
  for (const e of [a, b]) {
    assert.not.ok(e.message.includes(TOKEN), e.message);
    assert.match(e.message, /Bearer \[masked\]/);
  }
  // The token where the shown part of the body ends: no prefix of it is shown either.
  for (const pad of [95, 100, 105, 110]) {
    const g = await fakeApi((_req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`${'.'.repeat(pad)}${TOKEN} and more`);
    });
    const e = await failure(c.query(ep(g.url, { token: TOKEN }), 'up', 2000, never), 'http-status', /^502/);
    assert.not.ok(e.message.includes(TOKEN.slice(0, 8)), e.message);
    const h = await fakeApi((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`${'.'.repeat(pad - 40)}${TOKEN} and more`);
    });
    const e2 = await failure(c.query(ep(h.url, { token: TOKEN }), 'up', 2000, never), 'bad-answer', /not JSON/);
    assert.not.ok(e2.message.includes(TOKEN.slice(0, 8)), e2.message);
  }
});

t('a 200 answer that echoes the credential in a header, and URL userinfo echoed back: neither, nor any 8-character piece, in a message', async () => {
  const f = await fakeApi((req, res) => {
    const auth = String(req.headers.authorization ?? '');
    const basic = auth.startsWith('Basic ') ? Buffer.from(auth.slice(6), 'base64').toString('utf8') : '';
    if (req.url!.includes('alerts')) return void res.writeHead(200, { 'Content-Type': `text/html; echo="${auth}"` }).end('<html>ok</html>');
    res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`rejected ${basic} (${auth})`);
  });
  const c = newClient();
  const pieces = (t: string) => Array.from({ length: t.length - 7 }, (_, i) => t.slice(i, i + 8));
  const header = await failure(
    c.alerts(ep(f.url, { token: TOKEN }), 2000, never),
    'bad-answer',
    /^not a Prometheus API answer \(text\/html; echo="Bearer \[masked\]"/,
  );
  const userinfo = await failure(
    c.query(ep(f.url.replace('http://', 'http://reader:s3cr3t-pass@')), 'up', 2000, never),
    'http-status',
    /^500 .*rejected \[masked\] \(Basic \[masked\]\)/,
  );
  for (const p of [...pieces(TOKEN), ...pieces('s3cr3t-pass'), ...pieces(Buffer.from('reader:s3cr3t-pass').toString('base64'))])
    for (const e of [header, userinfo]) assert.not.ok(e.message.includes(p), `${p} in ${e.message}`);
});

t('unreachable, reset and silent servers: unreachable or timeout, each within the request timeout', async () => {
  const closed = await fakeApi(() => {});
  const url = closed.url;
  await closed.close();
  const c = newClient();
  await failure(c.query(ep(url), 'up', 2000, never), 'unreachable', /^connect ECONNREFUSED 127\.0\.0\.1:\d+ \(http:\/\/127\.0\.0\.1:\d+\)/);
  const reset = await fakeApi((req) => {
    req.socket.destroy();
  });
  await failure(c.query(ep(reset.url), 'up', 2000, never), 'unreachable', /socket hang up|ECONNRESET/);
  const silent = await fakeApi(() => {});
  let t0 = Date.now();
  await failure(c.query(ep(silent.url), 'up', 300, never), 'timeout', /^no answer within 0\.3 s from http:\/\/127\.0\.0\.1:\d+/);
  assert.ok(Date.now() - t0 < 1500, `${Date.now() - t0} ms`);
  // A body that trickles a byte every 50 ms: the whole exchange is bounded, not each read.
  const drip = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(' ')), 50);
  });
  t0 = Date.now();
  await failure(c.query(ep(drip.url), 'up', 400, never), 'timeout', /^no complete answer within 0\.4 s/);
  assert.ok(Date.now() - t0 < 1500, `${Date.now() - t0} ms`);
});

t(
  'a keep-alive socket the server dropped while idle: retried once on a new socket (Node: request.reusedSocket); a server that always resets: one retry, then unreachable',
  async () => {
    const seenSockets = new Set<unknown>();
    const f = await fakeApi((req, res) => {
      if (seenSockets.has(req.socket)) return void req.socket.destroy();
      seenSockets.add(req.socket);
      sendJson(res, vector(1));
    });
    const c = newClient();
    await c.query(ep(f.url), 'up', 2000, never);
    await c.query(ep(f.url), 'up', 2000, never);
    assert.is(f.hits.length, 3, 'the first answer, the reset on the reused socket, the retry on a new one');
    let n = 0;
    const g = await fakeApi((req) => {
      n++;
      req.socket.destroy();
    });
    await failure(c.query(ep(g.url), 'up', 2000, never), 'unreachable', /socket hang up|ECONNRESET/);
    assert.is(n, 1, 'a fresh socket that is reset is not retried');
  },
);

t('the stop signal aborts a request at once (AbortedError, not a failed measurement)', async () => {
  const silent = await fakeApi(() => {});
  const ac = new AbortController();
  const t0 = Date.now();
  setTimeout(() => ac.abort(), 100);
  let err: unknown;
  try {
    await newClient().query(ep(silent.url), 'up', 10_000, ac.signal);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof AbortedError, String(err));
  assert.ok(Date.now() - t0 < 1000, `${Date.now() - t0} ms`);
});

t('an oversized answer: refused by Content-Length before reading, cut at 4 MiB otherwise', async () => {
  let sent = 0;
  const f = await fakeApi((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(800e6) });
    const block = Buffer.alloc(1 << 20, 0x20);
    const pump = () => {
      while (!res.destroyed && sent < 800e6) {
        sent += block.length;
        if (!res.write(block)) return void res.once('drain', pump);
      }
    };
    req.socket.on('close', () => res.destroy());
    pump();
  });
  await failure(newClient().query(ep(f.url), 'up', 5000, never), 'too-large', /answer over 4 MiB \(Content-Length 800000000\): aggregate in the query/);
  // No Content-Length (chunked): read up to the cap, then cut.
  const g = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: { big: 'x'.repeat(5 << 20) }, value: [1, '1'] }] } }));
  });
  await failure(newClient().query(ep(g.url), 'up', 5000, never), 'too-large', /answer over 4 MiB: aggregate in the query/);
  await failure(newClient({ maxBytes: 1 << 20 }).alerts(ep(g.url), 5000, never), 'too-large', /answer over 1 MiB/);
});

t('Alertmanager: GET /api/v2/alerts with active, silenced=false, inhibited=false and one filter per matcher; the body as it came', async () => {
  const seen: string[] = [];
  const alerts = [{ labels: { alertname: 'A', severity: 'critical' }, status: { state: 'active', silencedBy: [], inhibitedBy: [] }, startsAt: 'x' }];
  const f = await fakeApi((req, res) => {
    seen.push(req.url!);
    sendJson(res, req.url!.includes('bad') ? 'bad matcher format: x' : alerts, req.url!.includes('bad') ? 400 : 200);
  });
  const c = newClient();
  assert.equal(await c.alertmanagerAlerts(ep(`${f.url}/am`), ['severity="critical"', 'alertname=~"A|B"'], 2000, never), alerts);
  const u = new URL(seen[0], f.url);
  assert.is(u.pathname, '/am/api/v2/alerts');
  assert.is(u.searchParams.get('active'), 'true');
  assert.is(u.searchParams.get('silenced'), 'false');
  assert.is(u.searchParams.get('inhibited'), 'false');
  assert.equal(u.searchParams.getAll('filter'), ['severity="critical"', 'alertname=~"A|B"']);
  await failure(
    c.alertmanagerAlerts(ep(`${f.url}/am`), ['bad'], 2000, never),
    'query-rejected',
    /^400 from http:\/\/127\.0\.0\.1:\d+: ""bad matcher format: x""/,
  );
});

t('no message of any failure above contains the token', () => {
  assert.ok(messages.length > 30, `${messages.length} messages`);
  for (const m of messages) assert.not.ok(m.includes(TOKEN), m);
});

t(
  'an endless answer, measured in a process of its own running the built client: cut at the cap, in well under the timeout, with a small peak RSS',
  async () => {
    // The module compiled as the bundle compiles it, in a process of its own, so that its peak RSS is its own.
    const compiled = await bundledModule('src/kube/prometheus-client.ts');
    let written = 0;
    let closedAt = 0;
    const chunk = Buffer.from(`{"metric":{"instance":"${'x'.repeat(200)}"},"value":[1,"1"]},`.repeat(256));
    const f = await fakeApi((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"status":"success","data":{"resultType":"vector","result":[');
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) {
          written += chunk.length;
          res.once('drain', pump);
        }
      };
      res.on('close', () => (closedAt = Date.now()));
      pump();
    });
    const script = `
    const { PrometheusClient } = await import(${JSON.stringify(compiled)});
    const c = new PrometheusClient();
    const t0 = Date.now();
    let kind = null;
    try { await c.query({ url: process.argv[1], token: null, ca: null, caName: 'x' }, 'up', 10000, new AbortController().signal); } catch (e) { kind = e.kind ?? String(e); }
    const ms = Date.now() - t0;
    c.close();
    const { readFileSync } = await import('node:fs');
    const hwm = Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
    process.stdout.write(JSON.stringify({ ms, kind, maxRssMb: hwm / 1024 }));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, f.url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise((r) => child.on('exit', r));
    assert.is(code, 0, err);
    const got = JSON.parse(out);
    console.log(
      `  prometheus client: endless answer cut (${got.kind}) after ${got.ms} ms; peak RSS ${got.maxRssMb.toFixed(0)} MB; the server pushed ${(written / 2 ** 20).toFixed(1)} MiB before the drop`,
    );
    assert.is(got.kind, 'too-large');
    assert.ok(got.ms < 3000, `${got.ms} ms`);
    assert.ok(got.maxRssMb < 150, `peak RSS ${got.maxRssMb.toFixed(0)} MB`);
    assert.ok(closedAt > 0, 'the connection was dropped');
    assert.ok(written < 16 * 2 ** 20, `${written} bytes written before the drop`);
  },
);

t.run();
