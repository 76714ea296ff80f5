/**
 * The Alertmanager silence port (src/kube/alertmanager-silences.ts) against a fake Alertmanager on
 * 127.0.0.1: the requests it sends (method, path, JSON body, no token with auth: none), the
 * answers it accepts (a silenceID) and refuses (none, or not an id), a 403 with the RBAC hint, and
 * the status answer the preflight needs.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type http from 'node:http';
import { fakeApi, closeFakes, sendJson } from '../support/fake-api.ts';
import { KubeAlertmanagerSilences } from '../../src/kube/alertmanager-silences.ts';
import type { KubeClient } from '../../src/kube/rest.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import type { PlanHealthEndpoint } from '../../src/plan/types.ts';

const t = suite('kube: the Alertmanager silence port');
const never = new AbortController().signal;
// A kubeconfig without a user: auth: none sends no token, so none is needed.
const port = new KubeAlertmanagerSilences({} as KubeClient, { getCurrentUser: () => null } as unknown as KubeConfig);
t.after(async () => {
  port.close();
  await closeFakes();
});

const read = (req: http.IncomingMessage) =>
  new Promise<string>((r) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => r(b));
  });

t('create, update and expire: POST /api/v2/silences with the JSON body, DELETE /api/v2/silence/{id}', async () => {
  const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
  const f = await fakeApi(async (req, res) => {
    seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body: await read(req) });
    if (req.method === 'POST') return sendJson(res, { silenceID: 'a3d9c2e4-0000-4000-8000-000000000001' });
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    sendJson(res, { versionInfo: { version: '0.35.0' } });
  });
  const am: PlanHealthEndpoint = { url: f.url, auth: 'none', ca: 'system' };
  const body = { matchers: [{ name: 'node', value: 'w-1', isRegex: false, isEqual: true }], startsAt: 'x', endsAt: 'y', createdBy: 'bootcplan', comment: 'c' };
  assert.is(await port.put(am, body, 2000, never), 'a3d9c2e4-0000-4000-8000-000000000001');
  await port.expire(am, 'a3d9c2e4-0000-4000-8000-000000000001', 2000, never);
  await port.ping(am, 2000, never);
  assert.equal(
    seen.map((x) => `${x.method} ${x.url}`),
    ['POST /api/v2/silences', 'DELETE /api/v2/silence/a3d9c2e4-0000-4000-8000-000000000001', 'GET /api/v2/status'],
  );
  assert.equal(JSON.parse(seen[0].body), body);
  assert.ok(
    seen.every((x) => x.auth === undefined),
    'auth: none sends no token',
  );
});

t('refused answers: no silenceID, an id that is no id, a 403 with the RBAC to grant, a status that is not Alertmanager', async () => {
  const answers: [number, unknown][] = [
    [200, { ok: true }],
    [200, { silenceID: 'a b\nc' }],
    [403, { error: 'forbidden' }],
    [200, { hello: 1 }],
  ];
  let i = 0;
  const f = await fakeApi((_req, res) => {
    const [status, body] = answers[i++];
    sendJson(res, body, status);
  });
  const am: PlanHealthEndpoint = { url: f.url, auth: 'none', ca: 'system' };
  const body = { matchers: [], startsAt: 'x', endsAt: 'y', createdBy: 'bootcplan', comment: 'c' };
  const err = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      return (e as Error).message;
    }
    return 'resolved';
  };
  assert.match(await err(port.put(am, body, 2000, never)), /not an Alertmanager silence answer \(no silenceID\)/);
  assert.match(await err(port.put(am, body, 2000, never)), /not an Alertmanager silence answer/);
  assert.match(await err(port.put(am, body, 2000, never)), /^403 from http:\/\/127\.0\.0\.1:\d+; grant .*monitoring-alertmanager-edit/);
  assert.match(await err(port.ping(am, 2000, never)), /not an Alertmanager status answer/);
});

t.run();
