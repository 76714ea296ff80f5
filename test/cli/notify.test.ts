/**
 * apply --notify URL (docs/gitops.md "Notifications"): a small JSON document on wave start, halt and done,
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
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { newSim } from '../support/apply.ts';
import { run } from '../../src/cli/main.ts';
import { spawn } from 'node:child_process';
import { bundledModule } from '../support/built.ts';
import type { NotifyDocument } from '../../src/apply/report/rollout-report.ts';
import type { DriverFactory } from '../../src/app/ports.ts';
import { httpNotifier, scrubUrl, NOTIFY_ANSWER_BYTES } from '../../src/app/notify.ts';
import { parseNotifyUrl } from '../../src/app/apply-report.ts';
import { io } from '../support/cli.ts';

const s = suite('apply --notify');
const dir = mkdtempSync(join(tmpdir(), 'bootcplan-notify-'));
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

interface Receiver {
  url: string;
  docs: any[];
  headers: Record<string, string | string[] | undefined>[];
  close: () => Promise<void>;
}
async function receiver(answer: (res: import('node:http').ServerResponse) => void = (res) => res.writeHead(204).end()): Promise<Receiver> {
  const docs: any[] = [];
  const headers: Receiver['headers'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      docs.push(JSON.parse(body));
      headers.push(req.headers);
      answer(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/bootcplan?token=s3cret`,
    docs,
    headers,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
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
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', r.url], { io: o, openDriver }), 0, o.err);
    assert.equal(
      r.docs.map((d: NotifyDocument) => `${d.event} ${d.phase} ${d.message}`),
      ['wave-start Progressing wave 1/2 of pool worker', 'wave-start Progressing wave 2/2 of pool worker', `done Healthy plan ${r.docs[0].planId} applied`],
    );
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
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', r.url], { io: o, openDriver }), 5);
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
    assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', r.url], { io: o, openDriver }), 0, o.err);
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
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', url], { io: o, openDriver }), 0, o.err);
  assert.match(o.err, /warning: --notify: the wave-start notification to http:\/\/127\.0\.0\.1:\d+ failed: .*ECONNREFUSED/);
});

s('a receiver that never answers: the notifier gives up after its timeout with a warning', async () => {
  const r = await receiver(() => undefined);
  try {
    const warnings: string[] = [];
    const t0 = Date.now();
    await httpNotifier(
      new URL(r.url),
      (l) => warnings.push(l),
      200,
    )({
      kind: 'bootcplan.dev/rollout-notification',
      event: 'done',
      rollout: 'x',
      planId: 'p',
      phase: 'Healthy',
      message: 'm',
      pool: null,
      wave: null,
      waves: null,
      at: 'now',
    });
    assert.ok(Date.now() - t0 < 2000);
    assert.equal(warnings, [`warning: --notify: the done notification to ${new URL(r.url).origin} failed: no answer within 0.2s`]);
  } finally {
    await r.close();
  }
});

const DOC: NotifyDocument = {
  kind: 'bootcplan.dev/rollout-notification',
  event: 'done',
  rollout: 'x',
  planId: 'p',
  phase: 'Healthy',
  message: 'm',
  pool: null,
  wave: null,
  waves: null,
  at: 'now',
};

/** A receiver that answers 200 and then streams its body for ever; counts what it could write. */
async function endlessReceiver() {
  const seen = { written: 0, closedAt: 0 };
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) seen.written += chunk.length;
        if (!res.destroyed) {
          seen.written += chunk.length;
          res.once('drain', pump);
        }
      };
      res.on('close', () => (seen.closedAt = Date.now()));
      pump();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/bootcplan?token=s3cret`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

s('a receiver that streams an endless answer: the compiled notifier reads a few KiB, drops the connection at once, and its process stays small', async () => {
  const compiled = await bundledModule('src/app/notify.ts');
  const r = await endlessReceiver();
  try {
    // The module compiled as the bundle compiles it, in a process of its own, so that its peak
    // RSS is its own.
    const script = `
      const { httpNotifier } = await import(${JSON.stringify(compiled)});
      const warnings = [];
      const t0 = Date.now();
      await httpNotifier(new URL(process.argv[1]), (l) => warnings.push(l))(${JSON.stringify(DOC)});
      const ms = Date.now() - t0;
      // The peak of this process image: VmHWM starts afresh at exec, while getrusage's maxRSS
      // keeps the forked parent's (the test runner's) high-water mark on Linux.
      const { readFileSync, existsSync } = await import('node:fs');
      const hwm = existsSync('/proc/self/status') ? Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) : NaN;
      process.stdout.write(JSON.stringify({ ms, warnings, maxRssMb: (Number.isFinite(hwm) ? hwm : process.resourceUsage().maxRSS) / 1024 }));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, r.url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise((res) => child.on('exit', res));
    assert.is(code, 0, err);
    const got = JSON.parse(out);
    console.log(
      `notify: endless answer: the notifier returned after ${got.ms} ms; its peak RSS ${got.maxRssMb.toFixed(0)} MB; the receiver pushed ${(r.seen.written / 1024).toFixed(0)} KiB before the drop (${NOTIFY_ANSWER_BYTES} bytes read)`,
    );
    // The default timeout is 5 s: reading the whole stream until then grew a process to 1.1 GB.
    assert.ok(got.ms < 1500, `the notifier returned after ${got.ms} ms`);
    assert.ok(got.maxRssMb < 120, `peak RSS ${got.maxRssMb.toFixed(0)} MB`);
    assert.equal(got.warnings, [], 'a 2xx answer is a delivered notification');
    assert.ok(r.seen.closedAt > 0, 'the connection was dropped');
    // What the receiver could push before the drop: its own socket buffers, not the stream.
    assert.ok(r.seen.written < 16 * 1024 * 1024, `the receiver wrote ${r.seen.written} bytes before the connection closed`);
  } finally {
    await r.close();
  }
});

s('a receiver that answers 200 and trickles its body: the timeout still ends the exchange, and the notification counts as delivered', async () => {
  const r = await receiver((res) => {
    res.writeHead(200);
    const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write('.')), 20);
    res.on('close', () => clearInterval(t));
  });
  try {
    const warnings: string[] = [];
    const t0 = Date.now();
    await httpNotifier(new URL(r.url), (l) => warnings.push(l), 300)(DOC);
    const ms = Date.now() - t0;
    assert.ok(ms >= 280 && ms < 1500, `${ms} ms`);
    // Its 200 came: the notification was delivered, only the rest of the answer was not waited for.
    assert.equal(warnings, []);
    assert.is(r.docs.length, 1);
  } finally {
    await r.close();
  }
});

s('a redirect is not followed: the notification failed, and the warning says so without the Location', async () => {
  const elsewhere = await receiver();
  const r = await receiver((res) => res.writeHead(307, { location: `${elsewhere.url}&stolen=1` }).end());
  try {
    const warnings: string[] = [];
    await httpNotifier(new URL(r.url), (l) => warnings.push(l))(DOC);
    assert.is(r.docs.length, 1);
    assert.is(elsewhere.docs.length, 0, 'nothing was posted to the redirect target');
    assert.equal(warnings, [
      `warning: --notify: ${new URL(r.url).origin} answered 307, a redirect, to the done notification: redirects are not followed, so it was not delivered`,
    ]);
  } finally {
    await r.close();
    await elsewhere.close();
  }
});

s('the token, path and user info of the URL are never printed (refused, redirected, unreachable); the user info is sent as basic authentication', async () => {
  const secrets = ['s3cret', 'hooks', 'bootcplan?', 'alice', 'pa55word'];
  const withUser = (u: string) => u.replace('http://', 'http://alice:pa55word@');
  const cases: Array<[string, (res: import('node:http').ServerResponse) => void]> = [
    ['500', (res) => res.writeHead(500).end('no route for POST /hooks/bootcplan?token=s3cret')],
    ['redirect', (res) => res.writeHead(302, { location: 'http://127.0.0.1:9/x?token=s3cret' }).end()],
  ];
  for (const [name, answer] of cases) {
    const r = await receiver(answer);
    try {
      const { file, openDriver } = setup(2);
      const o = io();
      const code = await run(['apply', '-f', file, '--auto-approve', '--notify', withUser(r.url)], { io: o, openDriver });
      assert.is(code, 0, o.err);
      assert.match(o.err, /warning: --notify: /, name);
      for (const x of secrets) assert.not.ok((o.out + o.err).includes(x), `${name}: "${x}" printed:\n${o.err}`);
      assert.is(r.headers[0].authorization, `Basic ${Buffer.from('alice:pa55word').toString('base64')}`, name);
    } finally {
      await r.close();
    }
  }
  const closed = await receiver();
  await closed.close();
  const { file, openDriver } = setup(2);
  const o = io();
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', withUser(closed.url)], { io: o, openDriver }), 0, o.err);
  assert.match(o.err, /ECONNREFUSED/);
  for (const x of secrets) assert.not.ok((o.out + o.err).includes(x), `refused: "${x}" printed:\n${o.err}`);
});

s('an error text that quotes the URL is scrubbed of its path, query, fragment and user info, as written or decoded', () => {
  const url = new URL('https://alice:pa%2055@hooks.example.com:8443/services/T0/B1/xyz%20tok?token=s3cret#frag');
  const text = `cannot reach ${url.href}; POST /services/T0/B1/xyz tok?token=s3cret as alice with pa 55`;
  const out = scrubUrl(text, url);
  assert.is(out, 'cannot reach https://hooks.example.com:8443; POST … as … with …');
});

s('an unparsable --notify value is not echoed (it may hold a token)', async () => {
  const { file } = setup(2);
  const o = io();
  assert.is(
    await run(['apply', '-f', file, '--auto-approve', '--notify', 'hooks.example.com/x?token=s3cret'], {
      io: o,
      openDriver: async () => {
        throw new Error('not reached');
      },
    }),
    1,
  );
  assert.match(o.err, /--notify: the value is not a URL/);
  assert.not.match(o.err, /s3cret/);
  assert.throws(
    () => parseNotifyUrl('ftp://alice:s3cret@host/x'),
    (e: Error) => /not ftp:/.test(e.message) && !e.message.includes('s3cret'),
  );
});

s('--notify with a URL that is not http(s): exit 1 before the cluster is read', async () => {
  const { file } = setup(2);
  const o = io();
  let opened = false;
  const openDriver: DriverFactory = async () => {
    opened = true;
    throw new Error('not reached');
  };
  assert.is(await run(['apply', '-f', file, '--auto-approve', '--notify', 'file:///etc/passwd'], { io: o, openDriver }), 1);
  assert.match(o.err, /--notify: only http and https URLs are posted to, not file:/);
  assert.is(opened, false);
});

s.run();
