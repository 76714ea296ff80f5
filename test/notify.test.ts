/**
 * apply --notify URL (README "GitOps"): a small JSON document on wave start, halt and done,
 * posted to a receiver on 127.0.0.1; a receiver that refuses, fails or never answers is a
 * warning and never fails the apply.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ClusterBuilder, specYaml, NEW, nodes } from './builders.ts';
import { newSim } from './apply-harness.ts';
import { run } from '../src/cli/main.ts';
import type { CliIO } from '../src/cli/io.ts';
import type { DriverFactory } from '../src/cli/deps.ts';
import { httpNotifier } from '../src/cli/notify.ts';
import type { NotifyDocument } from '../src/apply/rollout-report.ts';

const s = suite('apply --notify');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-notify-'));
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

function io() {
  const o = { out: '', err: '', io: null as unknown as CliIO };
  o.io = { stdout: (x) => (o.out += x), stderr: (x) => (o.err += x), env: { NO_COLOR: '1' }, stdoutIsTTY: false, stderrIsTTY: false };
  return o;
}

interface Receiver { url: string; docs: any[]; headers: Record<string, string | string[] | undefined>[]; close: () => Promise<void> }
async function receiver(answer: (res: import('node:http').ServerResponse) => void = (res) => res.writeHead(204).end()): Promise<Receiver> {
  const docs: any[] = [];
  const headers: Receiver['headers'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => { docs.push(JSON.parse(body)); headers.push(req.headers); answer(res); });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/hooks/bootcplan?token=s3cret`, docs, headers, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

function setup(count: number, o: { rebootFailRate?: number } = {}) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', count)).snapshot();
  const file = join(dir, `spec-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]));
  const sim = newSim(snap, { durations: D, ...(o.rebootFailRate ? { faults: { seed: 1, rebootFailRate: o.rebootFailRate } } : {}) });
  sim.rollouts.put('test', {});
  const openDriver: DriverFactory = async () => ({ driver: sim.driver(), holder: 'job@test' });
  return { file, sim, openDriver };
}

s('a full apply posts wave-start for each wave and done, as JSON', async () => {
  const r = await receiver();
  try {
    const { file, openDriver } = setup(4);
    const o = io();
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', r.url], { io: o.io, openDriver }), 0, o.err);
    assert.equal(r.docs.map((d: NotifyDocument) => `${d.event} ${d.phase} ${d.message}`), [
      'wave-start Progressing wave 1/2 of pool worker',
      'wave-start Progressing wave 2/2 of pool worker',
      `done Healthy plan ${r.docs[0].planId} applied`,
    ]);
    const d = r.docs[0] as NotifyDocument;
    assert.equal(Object.keys(d), ['kind', 'event', 'rollout', 'planId', 'phase', 'message', 'pool', 'wave', 'waves', 'at']);
    assert.equal([d.kind, d.rollout, d.pool, d.wave, d.waves], ['bootcplan.dev/rollout-notification', 'test', 'worker', 1, 2]);
    assert.match(d.at, /^2026-09-14T\d\d:\d\d:\d\dZ$/);
    assert.is(r.headers[0]['content-type'], 'application/json');
    assert.is(o.err.includes('warning'), false, o.err);
  } finally {
    await r.close();
  }
});

s('a halt is posted with the failed node', async () => {
  const r = await receiver();
  try {
    const { file, openDriver } = setup(4, { rebootFailRate: 1 });
    const o = io();
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', r.url], { io: o.io, openDriver }), 5);
    const halt = r.docs.find((d: NotifyDocument) => d.event === 'halt');
    assert.ok(halt, JSON.stringify(r.docs));
    assert.equal([halt.phase, halt.pool], ['Degraded', 'worker']);
    assert.match(halt.message, /^halted: w-\d\d Degraded after the reboot/);
  } finally {
    await r.close();
  }
});

s('a receiver answering 500 or a closed port: one warning each, naming only the origin; the apply succeeds', async () => {
  const r = await receiver((res) => res.writeHead(500).end('boom'));
  try {
    const { file, openDriver } = setup(2);
    const o = io();
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', r.url], { io: o.io, openDriver }), 0, o.err);
    assert.match(o.err, /warning: --notify: http:\/\/127\.0\.0\.1:\d+ answered 500 to the wave-start notification/);
    assert.not.match(o.err, /s3cret/);
  } finally {
    await r.close();
  }
  const closed = await receiver();
  const url = closed.url;
  await closed.close();
  const { file, openDriver } = setup(2);
  const o = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', url], { io: o.io, openDriver }), 0, o.err);
  assert.match(o.err, /warning: --notify: the wave-start notification to http:\/\/127\.0\.0\.1:\d+ failed: .*ECONNREFUSED/);
});

s('a receiver that never answers: the notifier gives up after its timeout with a warning', async () => {
  const r = await receiver(() => undefined);
  try {
    const warnings: string[] = [];
    const t0 = Date.now();
    await httpNotifier(new URL(r.url), (l) => warnings.push(l), 200)({ kind: 'bootcplan.dev/rollout-notification', event: 'done', rollout: 'x', planId: 'p', phase: 'Healthy', message: 'm', pool: null, wave: null, waves: null, at: 'now' });
    assert.ok(Date.now() - t0 < 2000);
    assert.equal(warnings, [`warning: --notify: the done notification to ${new URL(r.url).origin} failed: no answer within 0.2s`]);
  } finally {
    await r.close();
  }
});

s('--notify with a URL that is not http(s): exit 1 before the cluster is read', async () => {
  const { file } = setup(2);
  const o = io();
  let opened = false;
  const openDriver: DriverFactory = async () => { opened = true; throw new Error('not reached'); };
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', 'file:///etc/passwd'], { io: o.io, openDriver }), 1);
  assert.match(o.err, /--notify: only http and https URLs are posted to, not file:/);
  assert.is(opened, false);
});

s.run();
