/**
 * LISTs come in pages (`limit`, then `continue`), as client-go's pager reads them: a fake
 * API server on 127.0.0.1 serves 25 Nodes in pages, expires a continue token (410 Gone),
 * or hands out continue tokens forever.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type http from 'node:http';
import { fakeApi, closeFakes, clientOf, closeClients, cleanFailure, sendJson, nodeObject } from '../support/fake-api.ts';
import { readLiveObjects } from '../../src/kube/read.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { NODE } from '../../src/kube/resources.ts';
import { requestStats } from '../../src/kube/rest.ts';

const t = suite('kube: paginated lists');
t.after(async () => {
  closeClients();
  await closeFakes();
});

const NODES = Array.from({ length: 25 }, (_, i) => nodeObject(`n-${String(i + 1).padStart(2, '0')}`));

interface Paging {
  /** Continue tokens that answer 410 Gone (each once). */
  expire?: Set<string>;
  /** Answer every page with the same continue token. */
  loop?: boolean;
}

/** Serves NODES at /api/v1/nodes in pages of `limit`; the token is "rv100-<offset>". */
function servePages(req: http.IncomingMessage, res: http.ServerResponse, p: Paging = {}) {
  const url = new URL(req.url!, 'http://x');
  const limit = Number(url.searchParams.get('limit') ?? 0) || NODES.length;
  const token = url.searchParams.get('continue');
  if (token && p.expire?.delete(token)) {
    return sendJson(
      res,
      {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Expired',
        code: 410,
        message: 'The provided continue parameter is too old to display a consistent list result.',
      },
      410,
    );
  }
  const from = token ? Number(token.split('-')[1]) : 0;
  const items = NODES.slice(from, from + limit);
  const more = from + limit < NODES.length;
  sendJson(res, {
    kind: 'NodeList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '100', ...(more || p.loop ? { continue: p.loop ? 'rv100-0' : `rv100-${from + limit}` } : {}) },
    items,
  });
}

const names = (items: any[]) => items.map((o) => o.metadata.name);

t('25 Nodes in pages of 10: three requests with limit and continue, every object once', async () => {
  const f = await fakeApi((req, res) => servePages(req, res));
  const c = clientOf(f.url, { listPageSize: 10 });
  const list = await c.list('/api/v1/nodes', { kind: 'Node' });
  assert.equal(names(list.items), names(NODES));
  assert.is(list.resourceVersion, '100');
  assert.equal(f.hits, ['GET /api/v1/nodes?limit=10', 'GET /api/v1/nodes?limit=10&continue=rv100-10', 'GET /api/v1/nodes?limit=10&continue=rv100-20']);
});

t('the default page is 500: a list under one page costs one request, as before', async () => {
  const f = await fakeApi((req, res) => servePages(req, res));
  const c = clientOf(f.url);
  const before = requestStats(c.contextName).total;
  assert.is((await c.list('/api/v1/nodes', { kind: 'Node' })).items.length, 25);
  assert.equal(f.hits, ['GET /api/v1/nodes?limit=500']);
  assert.is(requestStats(c.contextName).total - before, 1);
});

t('a continue token that expired (410 Gone) restarts the list once; a second expiry is a clean error', async () => {
  const expire = new Set(['rv100-20']);
  const f = await fakeApi((req, res) => servePages(req, res, { expire }));
  const c = clientOf(f.url, { listPageSize: 10 });
  const list = await c.list('/api/v1/nodes', { kind: 'Node' });
  assert.equal(names(list.items), names(NODES), 'every object once, none twice');
  assert.is(f.hits.length, 3 + 3, 'two pages, the 410, then three pages again');
  assert.is(f.hits[3], 'GET /api/v1/nodes?limit=10');
  const again = new Set(['rv100-10']);
  const g = await fakeApi((req, res) => {
    servePages(req, res, { expire: again });
    if (!again.size) again.add('rv100-10');
  });
  const e = await cleanFailure(
    clientOf(g.url, { listPageSize: 10 }).list('/api/v1/nodes', { kind: 'Node' }),
    /GET \/api\/v1\/nodes: the list's continue token expired again after a restart \(410 Gone\)/,
  );
  assert.match(e.hint!, /again/);
  assert.is(g.hits.length, 4);
});

t('each: every item taken as its page arrives, none kept; a restart (410) says so before the pages come again', async () => {
  const expire = new Set(['rv100-20']);
  const f = await fakeApi((req, res) => servePages(req, res, { expire }));
  const c = clientOf(f.url, { listPageSize: 10 });
  let taken: string[] = [];
  let restarts = 0;
  const list = await c.list(
    '/api/v1/nodes',
    { kind: 'Node' },
    {},
    (o) => taken.push(o.metadata.name),
    () => {
      restarts++;
      taken = [];
    },
  );
  assert.equal(list.items, [], 'the answer keeps nothing');
  assert.is(restarts, 1);
  assert.equal(taken, names(NODES), 'every object once after the restart');
});

t('a server that hands out the same continue token forever is a clean error after one repeat', async () => {
  const f = await fakeApi((req, res) => servePages(req, res, { loop: true }));
  await cleanFailure(clientOf(f.url, { listPageSize: 10 }).list('/api/v1/nodes', { kind: 'Node' }), /keeps answering with continue tokens/);
  assert.is(f.hits.length, 2);
});

t('all the pages of one list together are capped too (8 times the answer cap): endless distinct pages end cleanly', async () => {
  let page = 0;
  const pad = 'x'.repeat(200_000);
  const f = await fakeApi((_req, res) => {
    page++;
    sendJson(res, {
      kind: 'NodeList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '100', continue: `rv100-${page}` },
      items: [nodeObject(`n-${page}`, { pad })],
    });
  });
  await cleanFailure(
    clientOf(f.url, { maxResponseBytes: 1 << 20 }).list('/api/v1/nodes', { kind: 'Node' }),
    /response from GET \/api\/v1\/nodes exceeded 8 MiB over 42 pages/,
  );
  assert.is(f.hits.length, 42);
});

t('the snapshot and the watch cache read every page; the watch resumes from the list resourceVersion', async () => {
  const watches: string[] = [];
  const f = await fakeApi((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/api/v1/nodes' && url.searchParams.get('watch') === 'true') {
      watches.push(req.url!);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.write('');
    }
    if (url.pathname === '/api/v1/nodes') return servePages(req, res);
    const kind = /\/([^/]+)$/.exec(url.pathname)![1];
    // Every other list is empty; every singleton is missing.
    if (url.searchParams.has('limit'))
      return sendJson(res, { kind: `${kindOfPlural(kind)}List`, apiVersion: 'v1', metadata: { resourceVersion: '100' }, items: [] });
    sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' }, 404);
  });
  const c = clientOf(f.url, { listPageSize: 7 });
  const read = await readLiveObjects(c);
  assert.is(read.objects.filter((o) => o.kind === 'Node').length, 25);
  assert.is(f.hits.filter((h) => h.startsWith('GET /api/v1/nodes?')).length, 4, 'pages of 7');
  const r = new Reflector(c, NODE, { watchTimeoutSeconds: 60 });
  await r.start();
  assert.is(r.items.size, 25);
  for (let i = 0; i < 50 && !watches.length; i++) await new Promise((res) => setTimeout(res, 10));
  r.stop();
  assert.is(watches.length, 1);
  assert.match(watches[0], /resourceVersion=100/);
});

const PLURAL_KIND: Record<string, string> = {
  machineconfigpools: 'MachineConfigPool',
  machineconfigs: 'MachineConfig',
  bootcnodepools: 'BootcNodePool',
  bootcnodes: 'BootcNode',
  machinesets: 'MachineSet',
};
const kindOfPlural = (plural: string) => PLURAL_KIND[plural] ?? plural;

t.run();
