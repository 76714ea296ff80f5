/**
 * Hostile API endpoints (docs/safety.md "Input limits", API answers): whatever answers at the kubeconfig's
 * server, every failure that leaves src/kube is a ClusterApiError with one printable line
 * naming the endpoint and a hint, never a raw Error, TypeError or SyntaxError: an HTML
 * login page with status 200, a huge body, a server that stalls, garbage bytes, JSON of the
 * wrong kind, refused and reset connections, TLS and DNS failures. Every fake server runs
 * on 127.0.0.1 port 0 and is closed at the end; request counts are bounded.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import {
  fakeApi,
  closeFakes,
  clientOf,
  closeClients,
  cleanFailure,
  sendJson,
  selfSignedCert,
  kubeconfigFile,
  kubeConfigFor,
  nodeObject,
} from '../support/fake-api.ts';
import { KubeClient, KubeApiError } from '../../src/kube/rest.ts';
import { ClusterApiError } from '../../src/base/errors.ts';
import { KubeDriver } from '../../src/kube/driver.ts';
import { readLiveObjects } from '../../src/kube/read.ts';
import { NotFoundError } from '../../src/apply/ports/driver.ts';
import { cli } from '../support/cli.ts';

const t = suite('kube: hostile API endpoints');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-hostile-'));
const drivers: KubeDriver[] = [];
const driverOf = (...a: Parameters<typeof clientOf>) => {
  const d = new KubeDriver(clientOf(...a));
  drivers.push(d);
  return d;
};
t.after(async () => {
  for (const d of drivers) d.close();
  closeClients();
  await closeFakes();
  rmSync(dir, { recursive: true, force: true });
});

const LOGIN_PAGE = '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body><form action="/login">...</form></body></html>\n';
const LEASE_PATH = /GET \/apis\/coordination\.k8s\.io\/v1\/namespaces\/openshift-bootcplan\/leases\/bootcplan-lock/;

t('an HTML login page with status 200: reads, lists, the lock, writes and waits fail cleanly', async () => {
  const f = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(LOGIN_PAGE);
  });
  const c = clientOf(f.url);
  const e = await cleanFailure(
    c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }),
    /GET \/api\/v1\/nodes\/w-1.*text\/html.*not JSON.*"<!DOCTYPE html>\\n<html>/,
  );
  assert.match(e.hint!, /--kubeconfig.*login proxy/);
  await cleanFailure(readLiveObjects(c), /GET \/api.*text\/html/);
  const d = driverOf(f.url);
  await cleanFailure(d.readLock(), LEASE_PATH);
  await cleanFailure(d.readProgress(), /GET \/api\/v1\/namespaces\/openshift-bootcplan\/configmaps\/bootcplan-progress/);
  await cleanFailure(d.snapshot(), /text\/html/);
  await cleanFailure(d.cordon('w-1', 'test'), /GET \/api.*text\/html/); // the Node comes from the watch cache, whose lists fail
  await cleanFailure(d.acquireLock({ holder: 'me', planId: 'p', ttlSeconds: 60 }), LEASE_PATH);
  await cleanFailure(
    d.waitFor(() => true, { timeoutSeconds: 1 }),
    /text\/html/,
  );
  assert.ok(f.hits.length <= 60, `${f.hits.length} requests`);
});

t('the CLI: `snapshot` and `status` against a login page exit 1 with one error line, never 0, never "lock: free"', async () => {
  const f = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(LOGIN_PAGE);
  });
  const kubeconfig = kubeconfigFile(dir, { server: f.url });
  for (const args of [
    ['snapshot', '--kubeconfig', kubeconfig],
    ['status', '--kubeconfig', kubeconfig],
    ['plan', '-f', 'examples/rollout.yaml', '--kubeconfig', kubeconfig],
  ]) {
    const r = await cli(args, { io: { env: { NO_COLOR: '1', HOME: dir } } });
    assert.is(r.code, 1, `${args[0]}: exit ${r.code}\n${r.out}\n${r.err}`);
    assert.not.match(r.out, /lock: free|kind: List/);
    assert.match(r.err, /^error: .*text\/html.*not JSON/m);
    assert.match(r.err, /hint: .*login proxy/);
    assert.not.match(r.err, /internal error|\n\s+at /);
  }
});

t('an API refusal (a Status 403) is a ClusterApiError too: `status` says so in one line, not "internal error"', async () => {
  const f = await fakeApi((_req, res) =>
    sendJson(
      res,
      {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Forbidden',
        code: 403,
        message: 'leases.coordination.k8s.io "bootcplan-lock" is forbidden: User "x" cannot get resource "leases"\x1b[2J',
      },
      403,
    ),
  );
  const e = await cleanFailure(driverOf(f.url).readLock(), /Lease openshift-bootcplan\/bootcplan-lock: leases.* is forbidden: .*\\x1b\[2J/);
  assert.instance(e, KubeApiError);
  assert.is((e as KubeApiError).status, 403);
  const r = await cli(['status', '--kubeconfig', kubeconfigFile(dir, { server: f.url })], { io: { env: { NO_COLOR: '1', HOME: dir } } });
  assert.is(r.code, 1);
  assert.match(r.err, /^error: Lease openshift-bootcplan\/bootcplan-lock: .*forbidden/m);
  assert.match(r.err, /hint: the account lacks a permission/);
  assert.not.match(r.out + r.err, /internal error|lock: free/);
});

t('garbage bytes with status 200: not JSON, the first bytes shown escaped', async () => {
  const junk = Buffer.from([0x00, 0x1b, 0x5b, 0x33, 0x31, 0x6d, 0xff, 0xfe, 0x9b, 0x0a, 0x7b, 0x22]);
  const f = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(junk);
  });
  const e = await cleanFailure(
    clientOf(f.url).request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }),
    /GET \/api\/v1\/nodes\/w-1.*application\/json, 12 bytes.*not JSON/,
  );
  assert.match(e.message, /\\x00\\x1b\[31m/);
  // An empty 200 answer is not an object either.
  const g = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end();
  });
  await cleanFailure(clientOf(g.url).request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }), /empty/);
  // A watch stream of junk, or of JSON that is not a watch event, ends the watch with a clean error.
  for (const [line, pattern] of [
    ['<html>\x1b]0;owned\x07</html>', /a line of the watch stream is not JSON: "<html>\\x1b\]0;owned\\x07/],
    ['{"type":"ADDED","object":null}', /not a watch event/],
    ['{"type":"ADDED","object":{"metadata":{}}}', /ADDED watch event has no metadata\.name/],
  ] as const) {
    const w = await fakeApi((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(line + '\n');
    });
    await cleanFailure(
      clientOf(w.url).watch('/api/v1/nodes', {}, () => {}, new AbortController().signal, { kind: 'Node' }),
      pattern,
    );
  }
});

t('JSON of the wrong kind: {} for a list, items not an array, a bad item, another kind, an array, deep nesting', async () => {
  let answer: unknown = {};
  const f = await fakeApi((_req, res) => sendJson(res, answer));
  const c = clientOf(f.url);
  const cases: [unknown, RegExp][] = [
    [{}, /GET \/api\/v1\/nodes: expected a NodeList, got an object without kind/],
    [{ kind: 'NodeList', items: 'nope' }, /NodeList whose items is a string, not an array/],
    [{ kind: 'NodeList', items: [nodeObject('a'), 42] }, /item 2 of the NodeList is a number, not an object with metadata\.name/],
    [{ kind: 'NodeList', items: [{ kind: 'Node', metadata: {} }] }, /item 1 of the NodeList .*metadata\.name/],
    [{ kind: 'NodeList', items: [{ metadata: { name: '' } }] }, /item 1 of the NodeList has no metadata\.name/],
    [{ kind: 'ConfigMapList', items: [] }, /expected a NodeList, got kind ConfigMapList/],
    [[1, 2], /expected a NodeList, got an array/],
    [null, /expected a NodeList, got null/],
  ];
  for (const [body, pattern] of cases) {
    answer = body;
    await cleanFailure(c.list('/api/v1/nodes', { kind: 'Node' }), pattern);
  }
  answer = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'w-1' } };
  await cleanFailure(c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }), /expected a Node, got kind ConfigMap/);
  answer = { kind: 'Node', apiVersion: 'v1', metadata: 'w-1' };
  await cleanFailure(c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }), /metadata/);
  // Deep nesting parses in V8, then overflows the stack of every recursive reader after it.
  const deep = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(`{"kind":"Node","metadata":{"name":"x"},"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
  });
  await cleanFailure(clientOf(deep.url).request('GET', '/api/v1/nodes/x', { expect: 'Node' }), /nested deeper than 100 levels/);
  // What real objects nest (managedFields, CRD schemas: tens of levels) is read as before.
  let nested: unknown = 'leaf';
  for (let i = 0; i < 90; i++) nested = { [`l${i}`]: nested };
  answer = { kind: 'Node', apiVersion: 'v1', metadata: { name: 'w-1' }, status: nested };
  assert.is((await c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' })).metadata.name, 'w-1');
});

t('a Lease or progress record of the wrong shape is a clean error, not "lock: free"', async () => {
  let lease: unknown = {
    kind: 'Lease',
    apiVersion: 'coordination.k8s.io/v1',
    metadata: { name: 'bootcplan-lock', namespace: 'openshift-bootcplan' },
    spec: 'held',
  };
  let cm: unknown = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'bootcplan-progress' }, data: { 'run.json': '{"planId": 7}' } };
  const f = await fakeApi((req, res) => sendJson(res, req.url!.includes('/leases/') ? lease : cm));
  const d = driverOf(f.url);
  await cleanFailure(d.readLock(), /Lease openshift-bootcplan\/bootcplan-lock.*spec/);
  lease = { ...(lease as object), spec: { holderIdentity: 42 } };
  await cleanFailure(d.readLock(), /holderIdentity/);
  await cleanFailure(d.readProgress(), /run\.json/);
  cm = { ...(cm as object), data: { 'run.json': '{not json' } };
  await cleanFailure(d.readProgress(), /run\.json is not valid JSON/);
});

t('a huge body: past the cap (64 MiB by default) the request is aborted, not buffered', async () => {
  let sent = 0;
  const chunk = Buffer.from(`${JSON.stringify(nodeObject('n'))},`.repeat(2000));
  const f = await fakeApi((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"kind":"NodeList","items":[');
    // Up to 800 MB, written as fast as the client reads; stops when the client goes away.
    const pump = () => {
      while (sent < 800e6 && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    req.socket.on('close', () => res.destroy());
    pump();
  });
  const c = clientOf(f.url, { requestTimeoutSeconds: 60 });
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const t0 = Date.now();
  const e = await cleanFailure(c.list('/api/v1/nodes', { kind: 'Node' }), /^response from GET \/api\/v1\/nodes exceeded 64 MiB/);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  assert.match(e.hint!, /API server/);
  await new Promise((r) => setTimeout(r, 50));
  const peakMiB = (peak - base) / 2 ** 20;
  console.log(
    `  huge body: aborted after the server sent ${(sent / 2 ** 20).toFixed(0)} MiB of an 800 MB answer, in ${Date.now() - t0} ms; peak RSS growth ${peakMiB.toFixed(0)} MiB`,
  );
  assert.ok(sent < 100 * 2 ** 20, `the server sent ${sent} bytes: not aborted at the cap`);
  assert.ok(peakMiB < 250, `peak RSS growth ${peakMiB.toFixed(0)} MiB`);
  assert.is(f.hits.length, 1);
});

t('a huge body announced by Content-Length is refused before it is read; the cap is configurable', async () => {
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
  await cleanFailure(
    clientOf(f.url).request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }),
    /response from GET \/api\/v1\/nodes\/w-1 exceeded 64 MiB \(Content-Length 800000000\)/,
  );
  assert.ok(sent < 16 * 2 ** 20, `read only what was in flight (${sent} bytes)`);
  const big = JSON.stringify({ kind: 'Node', metadata: { name: 'x' }, pad: 'x'.repeat(2 << 20) });
  const g = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(big);
  });
  await cleanFailure(clientOf(g.url, { maxResponseBytes: 1 << 20 }).request('GET', '/api/v1/nodes/x', { expect: 'Node' }), /exceeded 1 MiB/);
  // A single watch event past the cap ends the watch with the same error.
  const w = await fakeApi((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write(`{"type":"ADDED","object":${big}`);
  });
  const ac = new AbortController();
  await cleanFailure(
    clientOf(w.url, { maxResponseBytes: 1 << 20 }).watch('/api/v1/nodes', {}, () => {}, ac.signal, { kind: 'Node' }),
    /WATCH \/api\/v1\/nodes.*exceeded 1 MiB/,
  );
});

t('a slow server: no headers at all, headers then nothing, a trickle; reads, writes and watches time out', async () => {
  const f = await fakeApi((req, res) => {
    if (req.url!.startsWith('/silent')) return;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (req.url!.startsWith('/stall')) return void res.write('{"kind":"Node",');
    const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(' ')), 50);
  });
  const c = clientOf(f.url, { requestTimeoutSeconds: 0.3 });
  const t0 = Date.now();
  const e = await cleanFailure(c.request('GET', '/silent/x', { expect: 'Node' }), /GET \/silent\/x: no answer from http:\/\/127\.0\.0\.1:\d+ within 0\.3s/);
  assert.match(e.hint!, /--request-timeout/);
  await cleanFailure(
    c.request('GET', '/stall/x', { expect: 'Node' }),
    /GET \/stall\/x: the answer from http:\/\/127\.0\.0\.1:\d+ was not complete within 0\.3s/,
  );
  await cleanFailure(c.request('GET', '/trickle/x', { expect: 'Node' }), /not complete within 0\.3s/);
  await cleanFailure(c.request('PATCH', '/silent/api/v1/nodes/w-1', { body: {}, contentType: 'application/merge-patch+json' }), /PATCH \/silent.*within 0\.3s/);
  await cleanFailure(
    c.watch('/silent/api/v1/nodes', { timeoutSeconds: 60 }, () => {}, new AbortController().signal, { kind: 'Node' }),
    /WATCH \/silent\/api\/v1\/nodes: no answer .* within 0\.3s/,
  );
  // A watch the server does not end after its timeoutSeconds (plus the request timeout) is cut.
  await cleanFailure(
    c.watch('/stall/api/v1/nodes', { timeoutSeconds: 0.2 }, () => {}, new AbortController().signal, { kind: 'Node' }),
    /WATCH \/stall\/api\/v1\/nodes: the server did not end the watch/,
  );
  assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
  assert.is(f.hits.length, 6);
});

t('connection refused and reset, in reads, writes, the lock, watches and waits', async () => {
  const gone = await fakeApi(() => {});
  await gone.close();
  const d = driverOf(gone.url);
  const refused = /cannot reach the Kubernetes API at http:\/\/127\.0\.0\.1:\d+ \(context "fake"\): ECONNREFUSED/;
  await cleanFailure(d.client.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }), refused);
  await cleanFailure(d.cordon('w-1', 'test'), refused);
  await cleanFailure(d.readLock(), refused);
  await cleanFailure(d.snapshot(), refused);
  await cleanFailure(
    d.waitFor(() => true, { timeoutSeconds: 1 }),
    refused,
  );
  await cleanFailure(
    d.client.watch('/api/v1/nodes', {}, () => {}, new AbortController().signal, { kind: 'Node' }),
    refused,
  );
  const f = await fakeApi((req, res) => {
    if (req.url!.startsWith('/midway')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"kind":"Node",');
      setTimeout(() => req.socket.destroy(), 20);
    } else req.socket.destroy();
  });
  const c = clientOf(f.url);
  const e = await cleanFailure(
    c.request('GET', '/api/v1/nodes/w-1', { expect: 'Node' }),
    /cannot reach the Kubernetes API at http:\/\/127\.0\.0\.1:\d+ \(context "fake"\): (ECONNRESET|socket hang up).*\(GET \/api\/v1\/nodes\/w-1\)/,
  );
  assert.match(e.hint!, /closed the connection/);
  await cleanFailure(c.request('GET', '/midway/w-1', { expect: 'Node' }), /GET \/midway\/w-1|ECONNRESET|aborted/);
  await cleanFailure(c.request('PUT', '/api/v1/nodes/w-1', { body: { kind: 'Node' } }), /ECONNRESET|socket hang up/);
});

t('TLS: an untrusted certificate; DNS: a name that does not resolve', async () => {
  const f = await fakeApi((_req, res) => sendJson(res, {}), selfSignedCert());
  const e = await cleanFailure(
    clientOf({ server: f.url, skipTLSVerify: false }).request('GET', '/api/v1/nodes/w-1'),
    /cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+ .*certificate/i,
  );
  assert.match(e.hint!, /certificate-authority/);
  // .invalid never resolves (RFC 6761); a resolver that does not answer at all ends in the request timeout.
  const n = await cleanFailure(
    clientOf({ server: 'https://bootcplan-e2e.invalid:6443', skipTLSVerify: true }, { requestTimeoutSeconds: 10 }).request('GET', '/api/v1/nodes/w-1'),
    /cannot reach the Kubernetes API at https:\/\/bootcplan-e2e\.invalid:6443 .*(ENOTFOUND|EAI_AGAIN)|no answer from https:\/\/bootcplan-e2e\.invalid:6443/,
  );
  if (!/no answer/.test(n.message)) assert.match(n.hint!, /host name/);
});

t('error answers that are not a Kubernetes Status: 404 and 502 pages, a redirect to a login page', async () => {
  const f = await fakeApi((req, res) => {
    if (req.url!.startsWith('/apis/node.bootc.dev')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      return void res.end('404 page not found\n');
    }
    if (req.url!.startsWith('/redirect')) {
      res.writeHead(302, { Location: 'https://sso.example.com/login?next=%2F' });
      return void res.end();
    }
    res.writeHead(req.url!.includes('nodes') ? 502 : 404, { 'Content-Type': 'text/html' });
    res.end('<html><body><h1>Bad\x1b[2J Gateway</h1></body></html>');
  });
  const c = clientOf(f.url);
  // The API server's own "404 page not found" (a group that is not installed) stays NotFound.
  const nf = await c.list('/apis/node.bootc.dev/v1alpha1/bootcnodes', { kind: 'BootcNode' }).catch((e) => e);
  assert.instance(nf, NotFoundError);
  // An HTML 404 for everything must not read as "nothing installed": that would be an empty cluster.
  await cleanFailure(
    c.request('GET', '/api/v1/namespaces/x/configmaps/y', { expect: 'ConfigMap' }),
    /GET \/api\/v1\/namespaces\/x\/configmaps\/y: HTTP 404 answer is not a Kubernetes Status \(text\/html, \d+ bytes\): "<html><body><h1>Bad\\x1b\[2J Gateway/,
  );
  await cleanFailure(readLiveObjects(c), /HTTP (404|502) answer is not a Kubernetes Status/);
  await cleanFailure(c.request('GET', '/api/v1/nodes/w-1'), /HTTP 502/);
  const r = await cleanFailure(c.request('GET', '/redirect/x'), /GET \/redirect\/x: HTTP 302 redirect to https:\/\/sso\.example\.com\/login/);
  assert.match(r.hint!, /login proxy/);
});

t('kubeconfig problems: a server that is not an http(s) URL, an exec credential plugin that fails', async () => {
  for (const server of ['api.example.com:6443', 'ftp://api.example.com', 'https://api.example.com:99999']) {
    assert.throws(
      () => new KubeClient(kubeConfigFor({ server })),
      (e: unknown) => e instanceof ClusterApiError && /kubeconfig cluster "fake": server .* is not an https:\/\/ URL/.test(e.message),
      server,
    );
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
    users: [{ name: 'sso', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: join(dir, 'no-such-plugin'), args: [], interactiveMode: 'Never' } }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'sso' }],
    currentContext: 'fake',
  });
  const c = new KubeClient(kc, { requestTimeoutSeconds: 2 });
  const e = await cleanFailure(
    c.request('GET', '/api/v1/nodes/w-1'),
    /cannot prepare GET \/api\/v1\/nodes\/w-1 for https:\/\/127\.0\.0\.1:6443 with the credentials of kubeconfig user "sso"/,
  );
  assert.match(e.hint!, /exec plugin/);
  c.close();
});

t.run();
