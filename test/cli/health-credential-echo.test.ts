/**
 * A health source that echoes the credential back in an ordinary 200 answer (a debugging proxy
 * in front of Prometheus; docs/safety.md "Credentials in answers"), through a whole apply: the
 * gate fails on the echoed alert or series, and neither the credential nor any 8-character piece
 * of it reaches the apply output (text and --json), `status` (text and --json), the Rollout
 * status, the Events, the progress record or the --notify payload. The real health source
 * (src/kube/health-source.ts) against a fake Prometheus and API server on 127.0.0.1; the
 * cluster simulated.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'yaml';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { io } from '../support/cli.ts';
import { fakeApi, closeFakes, clientOf, closeClients, sendJson, kubeConfigFor } from '../support/fake-api.ts';
import { shownPiece } from '../support/credentials.ts';
import { run } from '../../src/cli/main.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import { KubeHealthSource } from '../../src/kube/health-source.ts';
import type { HealthSource } from '../../src/apply/ports/health.ts';

const s = suite('apply: a credential a health source echoes reaches no output, status, Event, record or notification');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-credential-echo-'));
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };
const SA = 'eyJhbGciOiJSUzI1NiJ9.c2EtdG9rZW4tN2M0ZTFiOWEyZg.k3XqP8wL';
const SECRET = 'sha256~Zm9vYmFyLXNlY3JldC10b2tlbi12YWx1ZQ';
const NS = 'openshift-bootcplan';
const sources: KubeHealthSource[] = [];
s.after(async () => {
  for (const x of sources) x.close();
  closeClients();
  await closeFakes();
});

/** Prometheus behind a proxy that puts the request's Authorization into every alert and series. */
async function echoingPrometheus() {
  return fakeApi((req, res) => {
    const auth = String(req.headers.authorization ?? '');
    if (req.url!.startsWith('/api/v1/alerts'))
      return sendJson(res, {
        status: 'success',
        data: { alerts: [{ labels: { alertname: 'ProxyEcho', severity: 'critical', authorization: auth, token: auth.slice(7) }, state: 'firing' }] },
      });
    sendJson(res, { status: 'success', data: { resultType: 'vector', result: [{ metric: { __name__: 'up', authorization: auth }, value: [1, '0'] }] } });
  });
}

async function receiver(): Promise<{ url: string; bodies: string[]; close: () => Promise<void> }> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    bodies,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** One apply (text or --json) of a spec with `check`, then `status` and `status --json`: every text a user or the cluster sees. */
async function applyAndCollect(check: Record<string, unknown>, json: boolean): Promise<{ code: number; texts: Record<string, string> }> {
  const api = await fakeApi((req, res) => {
    if (req.url!.startsWith(`/api/v1/namespaces/${NS}/secrets/prometheus-reader`))
      return sendJson(res, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'prometheus-reader', namespace: NS },
        data: { token: Buffer.from(SECRET).toString('base64') },
      });
    sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'not found' }, 404);
  });
  const builder = new ClusterBuilder().bootcPool('worker', nodes('w', 4, undefined, { staged: true }));
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 30 }], {
    healthChecks: [{ name: 'echoed', when: ['afterWave'], intervalSeconds: 10, successes: 1, ...check }],
  });
  const file = join(dir, `spec-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  const sim = newSim(builder.snapshot(), { durations: D });
  sim.rollouts.put('test', parse(text).spec);
  // The real source; the simulated clock stands still while it asks (real time on 127.0.0.1).
  const health = (): HealthSource => {
    const h = new KubeHealthSource(clientOf({ server: api.url, token: SA }), kubeConfigFor({ server: api.url, token: SA }));
    sources.push(h);
    return { measure: (c, p, signal) => sim.hold(() => h.measure(c, p, signal)), close: () => h.close() };
  };
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'job@test', health });
  const rcv = await receiver();
  try {
    const o = io();
    const code = await run(['apply', '-f', file, '--auto-approve', '--notify', rcv.url, ...(json ? ['--json'] : [])], { io: o, openDriver });
    const st = io();
    await run(['status'], { io: st, openDriver });
    const stj = io();
    await run(['status', '--json'], { io: stj, openDriver });
    return {
      code,
      texts: {
        'apply stdout': o.out,
        'apply stderr': o.err,
        status: st.out + st.err,
        'status --json': stj.out,
        'the Rollout status': JSON.stringify(sim.rollouts.objects.get('test')?.status ?? null),
        Events: JSON.stringify(sim.rollouts.events),
        'the progress record': JSON.stringify(sim.progress.read(sim.nodes.values())),
        'the --notify payload': rcv.bodies.join('\n'),
      },
    };
  } finally {
    await rcv.close();
  }
}

const cases = (url: string): [string, Record<string, unknown>][] => [
  [
    'a Secret token echoed in an alert label',
    { alerts: { url, auth: { bearerTokenSecret: { namespace: NS, name: 'prometheus-reader', key: 'token' } }, matchers: ['severity="critical"'] } },
  ],
  ['the ServiceAccount token echoed in a series label', { prometheus: { url, auth: 'ServiceAccount', query: 'up', condition: 'every sample == 1' } }],
];

s('the gate halts on the echoed alert or series (exit 5), and no output, status, Event, record or notification shows a piece of the token', async () => {
  const prom = await echoingPrometheus();
  const problems: string[] = [];
  for (const [what, check] of cases(prom.url)) {
    for (const json of [false, true]) {
      const { code, texts } = await applyAndCollect(check, json);
      const how = `${what}${json ? ' (--json)' : ''}`;
      if (code !== 5) problems.push(`${how}: exit ${code}, expected 5: ${texts['apply stderr']}`);
      for (const [where, t] of Object.entries(texts)) {
        const piece = shownPiece(t, [SA, SECRET]);
        if (piece !== null) problems.push(`${how}: ${where} shows ${JSON.stringify(piece)}`);
      }
      // The halt is told everywhere, with the marker where the token was.
      for (const where of ['the Rollout status', 'Events', 'the --notify payload', json ? 'apply stdout' : 'apply stderr'])
        if (!texts[where].includes('[masked]')) problems.push(`${how}: ${where} does not show the halt's observation with [masked]`);
    }
  }
  assert.equal(problems, [], problems.join('\n'));
});

s.run();
