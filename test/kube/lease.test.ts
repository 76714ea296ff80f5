/**
 * The Lease lock of the Kubernetes driver (src/kube/lease-lock.ts) against a fake API that
 * keeps one Lease and enforces resourceVersion preconditions: a renewal is one PUT with the
 * resourceVersion last written, a 409 reads the Lease again, a 503 is an error the applier
 * retries, and another holder's Lease expires only after this process has seen it unchanged
 * for its duration, whatever its renewTime says.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type http from 'node:http';
import { fakeApi, closeFakes, clientOf, closeClients, sendJson } from '../support/fake-api.ts';
import { LeaseLock } from '../../src/kube/lease-lock.ts';
import { WatchCache } from '../../src/kube/watch-cache.ts';
import { LockHeldError } from '../../src/base/errors.ts';
import { LockLostError } from '../../src/apply/ports/driver.ts';

const s = suite('kube lease lock');
s.after(async () => {
  closeClients();
  await closeFakes();
});

/** A fake API holding one Lease; `failNext` answers the next requests 503. */
async function leaseApi() {
  const st = { lease: null as any, rv: 0, failNext: 0 };
  const body = (req: http.IncomingMessage) =>
    new Promise<any>((r) => {
      let t = '';
      req.on('data', (d) => (t += d));
      req.on('end', () => r(t ? JSON.parse(t) : null));
    });
  const status = (res: http.ServerResponse, code: number, reason: string) =>
    sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message: reason }, code);
  const f = await fakeApi(async (req, res) => {
    const b = await body(req);
    if (st.failNext > 0) {
      st.failNext--;
      return status(res, 503, 'ServiceUnavailable');
    }
    const store = (o: any) => {
      st.lease = { ...o, metadata: { ...o.metadata, resourceVersion: String(++st.rv) } };
      sendJson(res, st.lease, req.method === 'POST' ? 201 : 200);
    };
    if (req.method === 'GET') return st.lease ? sendJson(res, st.lease) : status(res, 404, 'NotFound');
    if (req.method === 'POST') return st.lease ? status(res, 409, 'AlreadyExists') : store(b);
    if (req.method === 'PUT') {
      if (!st.lease) return status(res, 404, 'NotFound');
      if (b.metadata.resourceVersion !== st.lease.metadata.resourceVersion) return status(res, 409, 'Conflict');
      return store(b);
    }
    if (req.method === 'DELETE') {
      if (!st.lease) return status(res, 404, 'NotFound');
      if (b?.preconditions?.resourceVersion && b.preconditions.resourceVersion !== st.lease.metadata.resourceVersion) return status(res, 409, 'Conflict');
      st.lease = null;
      return sendJson(res, { kind: 'Status', status: 'Success' });
    }
    status(res, 405, 'MethodNotAllowed');
  });
  const clock = {
    t: Date.parse('2026-09-14T08:00:00Z') / 1000,
    now() {
      return this.t;
    },
    sleep: async () => {},
  };
  const client = clientOf(f.url);
  const lock = new LeaseLock(client, new WatchCache(client, 'test'), clock);
  return { f, st, clock, lock, hits: () => f.hits.map((h) => h.split(' ')[0]) };
}

const lease = (holder: string, renewTime: string, ttl: number) => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'bootcplan-lock', namespace: 'openshift-bootcplan', resourceVersion: '100', annotations: { 'bootcplan.dev/lock-id': 'theirs' } },
  spec: { holderIdentity: holder, leaseDurationSeconds: ttl, acquireTime: renewTime, renewTime },
});

s('a renewal is one PUT with the resourceVersion last written; a 409 reads the Lease again; a 503 surfaces as a transient error', async () => {
  const { st, clock, lock, hits, f } = await leaseApi();
  const held = await lock.acquire({ holder: 'me', planId: 'p', ttlSeconds: 30 });
  assert.equal(hits(), ['GET', 'POST']);
  f.hits.length = 0;
  clock.t += 10;
  await lock.renew(held.lockId);
  assert.equal(hits(), ['PUT'], 'no read before the write');
  assert.is(st.lease.spec.renewTime.slice(0, 19), '2026-09-14T08:00:10');
  // Someone else touched the Lease (a label): the PUT conflicts, the GET shows it is still ours, the PUT again succeeds.
  st.lease = { ...st.lease, metadata: { ...st.lease.metadata, labels: { x: 'y' }, resourceVersion: String(++st.rv) } };
  f.hits.length = 0;
  await lock.renew(held.lockId);
  assert.equal(hits(), ['PUT', 'GET', 'PUT']);
  // The API server is unavailable: not a lost lock, an error the applier retries (src/apply/engine/lease.ts).
  st.failNext = 1;
  const err = await lock.renew(held.lockId).then(
    () => null,
    (e) => e,
  );
  assert.ok(err && !(err instanceof LockLostError), String(err));
  await lock.renew(held.lockId);
  // Taken over by someone else: LockLostError naming the holder.
  st.lease = { ...lease('cronjob@cluster', st.lease.spec.renewTime, 30), metadata: { ...lease('x', '', 0).metadata, resourceVersion: String(++st.rv) } };
  const lost = await lock.renew(held.lockId).then(
    () => null,
    (e) => e,
  );
  assert.instance(lost, LockLostError);
  assert.match(lost.message, /now held by cronjob@cluster/);
});

for (const [what, renewTime] of [
  ['an hour in the past', '2026-09-14T07:00:00.000000Z'],
  ['a day in the future', '2026-09-15T08:00:00.000000Z'],
] as const) {
  s(`another holder's Lease with a renewTime ${what} expires only after this process saw it unchanged for its duration`, async () => {
    const { st, clock, lock } = await leaseApi();
    st.lease = lease('skewed@elsewhere', renewTime, 60);
    const held = async () =>
      lock.acquire({ holder: 'me', planId: 'p', ttlSeconds: 60 }).then(
        () => false,
        (e) => {
          assert.instance(e, LockHeldError);
          return true;
        },
      );
    assert.ok(await held(), 'held at first sight');
    clock.t += 59;
    assert.ok(await held(), 'unchanged for 59 s of 60');
    // It renews (still with its skewed clock): counted again from now.
    st.lease = {
      ...st.lease,
      spec: { ...st.lease.spec, renewTime: renewTime.replace(':00.000000Z', ':30.000000Z') },
      metadata: { ...st.lease.metadata, resourceVersion: String(++st.rv) },
    };
    clock.t += 30;
    assert.ok(await held(), 'renewed 0 s ago as this process saw it');
    clock.t += 59;
    assert.ok(await held());
    clock.t += 1;
    const mine = await lock.acquire({ holder: 'me', planId: 'p', ttlSeconds: 60 });
    assert.is(st.lease.spec.holderIdentity, 'me');
    assert.is(st.lease.metadata.annotations['bootcplan.dev/lock-id'], mine.lockId);
    assert.is(st.lease.spec.leaseTransitions, 1);
  });
}

s.run();
