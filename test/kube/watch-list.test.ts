/**
 * Streamed lists (WatchList, KEP-3157; src/kube/watch.ts `startStreaming`): the drain reads a
 * node's pods from one watch that sends them first and then a bookmark annotated
 * `k8s.io/initial-events-end`, where the server can; a fake API server on 127.0.0.1 streams,
 * refuses (422, as with the WatchList gate off), fails the stream (a 500 ERROR event, as
 * kube-apiserver does on an etcd without RequestWatchProgress), or ignores the parameter (a
 * server older than 1.27: changes only, never the bookmark).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type http from 'node:http';
import { fakeApi, closeFakes, clientOf, closeClients, sendJson } from '../support/fake-api.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { POD } from '../../src/kube/resources.ts';
import { requestStats } from '../../src/kube/rest.ts';

const t = suite('kube: streamed lists');
t.after(async () => {
  closeClients();
  await closeFakes();
});

const pod = (name: string, rv: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', resourceVersion: rv, uid: `uid-${name}` },
  spec: { nodeName: 'w-1' },
});
const line = (res: http.ServerResponse, type: string, object: unknown) => res.write(JSON.stringify({ type, object }) + '\n');
const endBookmark = (rv: string) => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } },
});
const podList = (items: unknown[]) => ({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '300' }, items });
const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
};

type Mode = 'stream' | 'refuse' | 'error-event' | 'ignore';

/** Pods of node w-1 at /api/v1/pods: streamed, listed, watched; `mode` says how a streamed list is answered. */
async function server(mode: Mode) {
  const streams: http.ServerResponse[] = [];
  const f = await fakeApi((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.searchParams.get('watch') !== 'true') return sendJson(res, podList([pod('web-1', '101')]));
    if (url.searchParams.get('sendInitialEvents') === 'true') {
      if (mode === 'refuse') {
        return sendJson(
          res,
          {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'Invalid',
            code: 422,
            message:
              'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
            details: { causes: [{ reason: 'FieldValueForbidden', field: 'sendInitialEvents' }] },
          },
          422,
        );
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (mode === 'error-event')
        return void line(res, 'ERROR', {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'InternalError',
          code: 500,
          message: 'a watch stream was requested by the client but the required storage feature RequestWatchProgress is disabled',
        });
      line(res, 'ADDED', pod('web-1', '101'));
      line(res, 'ADDED', pod('web-2', '99'));
      if (mode === 'stream') line(res, 'BOOKMARK', endBookmark('200'));
      streams.push(res);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    streams.push(res);
  });
  return { f, streams };
}

t('a server that streams lists: one request, the initial pods, then their changes; the next watch resumes from the bookmark', async () => {
  const { f, streams } = await server('stream');
  const r = new Reflector(clientOf(f.url), POD, { fieldSelector: 'spec.nodeName=w-1' });
  await r.startStreaming();
  assert.equal([...r.items.keys()].sort(), ['default/web-1', 'default/web-2']);
  assert.equal(f.hits.length, 1, 'no LIST');
  assert.match(f.hits[0], /sendInitialEvents=true/);
  assert.match(f.hits[0], /resourceVersionMatch=NotOlderThan/);
  assert.not.match(f.hits[0], /resourceVersion=/, 'a consistent read: no resourceVersion');
  line(streams[0], 'DELETED', pod('web-2', '201'));
  await until(() => r.items.size === 1);
  assert.equal([...r.items.keys()], ['default/web-1']);
  // The server ends the watch: the next one resumes from the last resourceVersion, no list.
  streams[0].end();
  await until(() => f.hits.length === 2);
  r.stop();
  assert.match(f.hits[1], /resourceVersion=201/);
  assert.not.match(f.hits[1], /sendInitialEvents/);
});

for (const [mode, what] of [
  ['refuse', 'refuses it (422: the WatchList gate is off)'],
  ['error-event', 'fails the stream (500 ERROR event: etcd without RequestWatchProgress)'],
] as const) {
  t(`a server that ${what}: list and watch, and the client does not ask to stream again`, async () => {
    const { f } = await server(mode);
    const c = clientOf(f.url);
    const r = new Reflector(c, POD, { fieldSelector: 'spec.nodeName=w-1' });
    await r.startStreaming();
    assert.equal([...r.items.keys()], ['default/web-1'], "the list's pods (the failed stream's are dropped)");
    await until(() => f.hits.length === 3);
    r.stop();
    assert.match(f.hits[1], /^GET \/api\/v1\/pods\?/);
    assert.not.match(f.hits[1], /watch=true/);
    assert.match(f.hits[2], /watch=true.*resourceVersion=300|resourceVersion=300.*watch=true/);
    // The next reflector of this client lists at once; stopped right after its list (a drain
    // with nothing to evict), it opens no watch.
    const watchesBefore = requestStats(c.contextName).byVerb.WATCH ?? 0;
    const again = new Reflector(c, POD, { fieldSelector: 'spec.nodeName=w-2' });
    await again.startStreaming();
    again.stop();
    await new Promise((r) => setTimeout(r, 50));
    assert.is(f.hits.length, 4);
    assert.not.match(f.hits[3], /watch=true/);
    assert.is(requestStats(c.contextName).byVerb.WATCH ?? 0, watchesBefore, 'no watch begun');
  });
}

t('a server that ignores sendInitialEvents (older than 1.27: no bookmark ever): given up after a silence, then listed', async () => {
  const { f } = await server('ignore');
  const r = new Reflector(clientOf(f.url), POD, { fieldSelector: 'spec.nodeName=w-1', streamSilenceMs: 200 });
  const t0 = Date.now();
  await r.startStreaming();
  r.stop();
  assert.ok(Date.now() - t0 >= 150, 'waited for the silence');
  assert.equal([...r.items.keys()], ['default/web-1']);
  assert.match(f.hits[1], /^GET \/api\/v1\/pods\?/);
});

t.run();
