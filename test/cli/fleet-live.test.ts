/**
 * `fleet plan` over live contexts (docs/fleets.md): clusters are read at most --concurrency at once;
 * a cluster that does not answer, or whose context is not in the kubeconfig, is that cluster's
 * error with a hint, and the others are still planned (exit 1, the whole fleet printed).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fakeApi, closeFakes, sendJson, type FakeServer } from '../support/fake-api.ts';
import { FleetBuilder } from '../support/fleet.ts';
import { cli } from '../support/cli.ts';

const s = suite('fleet plan over live contexts');

/** The CLI's environment: no kubeconfig of the user's, only the files the Fleet names. */
const NO_KUBECONFIG = { io: { env: { KUBECONFIG: '/nonexistent' } } };

function kubeconfig(servers: Record<string, string>): string {
  const names = Object.keys(servers);
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    ...names.flatMap((n) => [`- name: ${n}`, '  cluster:', `    server: ${servers[n]}`, '    insecure-skip-tls-verify: true']),
    'users:',
    '- name: u',
    '  user:',
    '    token: not-a-real-token',
    'contexts:',
    ...names.flatMap((n) => [`- name: ${n}-admin`, '  context:', `    cluster: ${n}`, '    user: u']),
    `current-context: ${names[0]}-admin`,
    '',
  ].join('\n');
}

s.after(closeFakes);

s('at most --concurrency clusters at once; refused, unreachable and unknown contexts are per-cluster errors; the snapshot cluster is planned', async () => {
  let active = 0;
  let peak = 0;
  // A cluster read sends several requests at once. Each server holds every request from its first
  // one for 60 ms and then refuses them all together, so it is busy exactly from its first request
  // until its answer; a request after that (none is expected: the read stopped) is refused at once.
  const refuse = (res: Parameters<Parameters<typeof fakeApi>[0]>[1]) =>
    sendJson(res, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message: 'nodes is forbidden' }, 403);
  const servers: FakeServer[] = [];
  for (let i = 0; i < 5; i++) {
    let held: Parameters<typeof refuse>[0][] | null = null;
    let answered = false;
    const me = await fakeApi((_req, res) => {
      if (answered) return refuse(res);
      if (held) return void held.push(res);
      held = [res];
      active++;
      peak = Math.max(peak, active);
      setTimeout(() => {
        answered = true;
        active--;
        for (const r of held!) refuse(r);
      }, 60);
    });
    servers.push(me);
  }
  const b = new FleetBuilder().cluster('local');
  const live: Record<string, string> = { down: 'http://127.0.0.1:1' };
  servers.forEach((srv, i) => {
    live[`l${i}`] = srv.url;
  });
  for (const name of Object.keys(live)) b.cluster(name, { context: `${name}-admin`, kubeconfig: 'kube.yaml' });
  b.cluster('ghost', { context: 'ghost-admin', kubeconfig: 'kube.yaml' });
  const w = b.write();
  writeFileSync(join(w.dir, 'kube.yaml'), kubeconfig(live));
  const r = await cli(['fleet', 'plan', '-f', w.file, '--concurrency', '2', '--request-timeout', '5s'], NO_KUBECONFIG);
  assert.is(r.code, 1, r.err);
  assert.ok(peak >= 1 && peak <= 2, `peak ${peak}`);
  assert.match(r.out, /local +1 +1 +3 +3 +\S+ +ok/);
  assert.match(r.out, /\n {2}down: unreachable: .*\n(.*\n)* {4}hint: /);
  assert.match(r.out, /\n {2}l0: unreachable: .*forbidden/i);
  assert.match(r.out, /\n {2}ghost: kubeconfig: context "ghost-admin" is not in .*kube\.yaml/);
  assert.match(r.out, /Fleet: 1 of 8 clusters planned, 1 with changes; 3 nodes in 1 batch .* 7 clusters failed\./);
});

s('a kubeconfig that is no kubeconfig: the error never quotes the file (a Fleet may name any file)', async () => {
  const b = new FleetBuilder().cluster('a', { context: 'a-admin', kubeconfig: 'secret.txt' });
  const w = b.write();
  writeFileSync(join(w.dir, 'secret.txt'), 'aws_secret_access_key: "wJalrXUtnFEMI\n  - [unclosed: {\n');
  const r = await cli(['fleet', 'plan', '-f', w.file, '-o', 'markdown'], NO_KUBECONFIG);
  assert.is(r.code, 1);
  // Refused by the check of Fleet-named kubeconfigs (fleet-kubeconfig.ts) before the Kubernetes client parses it.
  assert.match(
    r.out,
    /`kubeconfig`: kubeconfig "secret\.txt" named by the Fleet is not valid at line \d+ \(the parser's message is left out: it may quote the file\)/,
  );
  assert.not.match(r.out + r.err, /wJalrXUtnFEMI|aws_secret/);
});

s('--concurrency is a whole number from 1', async () => {
  const w = new FleetBuilder().cluster('a').write();
  for (const bad of ['0', 'x', '1.5', '-2']) {
    const r = await cli(['fleet', 'plan', '-f', w.file, '--concurrency', bad], NO_KUBECONFIG);
    assert.is(r.code, 1, bad);
    assert.match(r.err, /--concurrency .*expected a whole number from 1 to 256/, bad);
  }
});

s.run();
