/**
 * API responses on the real API server (docs/safety.md "Input limits"): LISTs longer than one page are read
 * whole (limit/continue), by the snapshot reader and by the watch cache, which then watches
 * from the list's resourceVersion; and the kubeconfig's proxy-url is honoured through a
 * small HTTP CONNECT proxy on 127.0.0.1, by the CLI and by the driver.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, setupEnv, resetCluster, loadObjects, clientFor, createWithStatus, type TestEnv } from './env.ts';
import { fakeProxy, type FakeProxy } from '../support/fake-api.ts';
import { socks5Proxy, connectProxy } from '../support/proxies.ts';
import { ClusterBuilder, nodes } from '../support/cluster.ts';
import { KubeDriver } from '../../src/kube/driver.ts';
import { readLiveObjects } from '../../src/kube/read.ts';
import { requestStats, type KubeClient } from '../../src/kube/rest.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { io } from '../support/cli.ts';
import { run } from '../support/built.ts'; // the bundle, as the package ships it

const t = suite('e2e: paginated lists and proxy-url');
let env: TestEnv;
let dir: string;
const closers: (() => void | Promise<void>)[] = [];
const NODE_COUNT = 30;

t.before(async () => {
  env = await setupEnv();
  await resetCluster(env.admin);
  dir = tempDir('bootcplan-e2e-pages-');
  await loadObjects(env.admin, new ClusterBuilder().bootcPool('worker', nodes('w', NODE_COUNT), { maxUnavailable: 3 }).objects);
});
t.after(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const paged = (): KubeClient => {
  const c = clientFor(env.saKubeconfig, { listPageSize: 10 });
  closers.push(() => c.close());
  return c;
};

t(`${NODE_COUNT} Nodes and BootcNodes read in pages of 10: every object once, the pages counted`, async () => {
  const c = paged();
  const before = requestStats(c.contextName).byResource.nodes ?? 0;
  const list = await c.list('/api/v1/nodes', { kind: 'Node' });
  const names = list.items.map((o) => o.metadata.name);
  assert.is(names.length, NODE_COUNT);
  assert.is(new Set(names).size, NODE_COUNT, 'no object twice');
  assert.ok(/^\d+$/.test(list.resourceVersion), `resourceVersion ${list.resourceVersion}`);
  const pages = (requestStats(c.contextName).byResource.nodes ?? 0) - before;
  assert.ok(pages >= 3 && pages <= 4, `${pages} pages`);
  const read = await readLiveObjects(c);
  assert.is(read.objects.filter((o) => o.kind === 'Node').length, NODE_COUNT);
  assert.is(read.objects.filter((o) => o.kind === 'BootcNode').length, NODE_COUNT);
  console.log(`e2e: ${NODE_COUNT} Nodes listed in ${pages} pages of 10`);
});

t('the watch cache lists in pages, then sees a Node created after the list (watch from the list resourceVersion)', async () => {
  const d = new KubeDriver(paged());
  closers.push(() => d.close());
  assert.is(await d.waitFor((s) => s.nodes.length === NODE_COUNT && s.bootcNodes.length === NODE_COUNT, { timeoutSeconds: 10 }), true);
  setTimeout(() => void createWithStatus(env.admin, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'late-1' }, spec: {} } as any), 200);
  assert.is(await d.waitFor((s) => s.nodes.length === NODE_COUNT + 1 && s.nodes.some((n) => n.metadata.name === 'late-1'), { timeoutSeconds: 10 }), true);
  await env.admin.request('DELETE', '/api/v1/nodes/late-1');
});

/** The ServiceAccount's kubeconfig with a proxy-url added to its cluster. */
function proxiedKubeconfig(proxyUrl: string): string {
  const text = readFileSync(env.saKubeconfig, 'utf8').replace(/(\n\s+server: .*\n)/, `$1    proxy-url: ${proxyUrl}\n`);
  assert.match(text, /proxy-url/);
  const path = join(dir, `proxied-${Math.random().toString(36).slice(2)}.kubeconfig`);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

t('proxy-url: `snapshot` and the driver reach the API server through an HTTP CONNECT proxy', async () => {
  const proxy: FakeProxy = await fakeProxy();
  closers.push(() => proxy.close());
  const kubeconfig = proxiedKubeconfig(proxy.url);
  const file = join(dir, 'cluster.yaml');
  const s = io();
  assert.is(await run(['snapshot', '--kubeconfig', kubeconfig, '--out', file], { io: s }), 0, s.err);
  const snap = parseSnapshot(readFileSync(file, 'utf8'), file).snapshot!;
  assert.is(snap.nodes.length, NODE_COUNT);
  const server = new URL(env.server);
  assert.ok(proxy.tunnels.length >= 1, 'the snapshot went through the proxy');
  assert.ok(
    proxy.tunnels.every((x) => x === `${server.hostname}:${server.port}`),
    proxy.tunnels.join(', '),
  );
  const tunnels = proxy.tunnels.length;
  const d = new KubeDriver(clientFor(kubeconfig));
  closers.push(() => d.close());
  assert.is(await d.waitFor((x) => x.nodes.length === NODE_COUNT, { timeoutSeconds: 10 }), true);
  await d.cordon('w-01', 'test');
  assert.is(await d.waitFor((x) => x.nodes.find((n) => n.metadata.name === 'w-01')?.spec!.unschedulable === true, { timeoutSeconds: 5 }), true);
  await d.uncordon('w-01', 'test');
  assert.is(await d.readLock(), null);
  assert.ok(proxy.tunnels.length > tunnels, 'watches and writes went through the proxy too');
  console.log(`e2e: through the CONNECT proxy: ${proxy.tunnels.length} tunnels`);
});

t('proxy-url: a proxy that is down is one clean error (exit 1), never the API server directly', async () => {
  const proxy = await fakeProxy();
  await proxy.close();
  const c = io();
  assert.is(await run(['snapshot', '--kubeconfig', proxiedKubeconfig(proxy.url)], { io: c }), 1);
  assert.match(
    c.err,
    /^error: cannot reach the Kubernetes API at https:\/\/127\.0\.0\.1:\d+ through proxy http:\/\/127\.0\.0\.1:\d+ \(context "bootcplan@testenv"\): ECONNREFUSED/m,
  );
  assert.match(c.err, /hint: check that the proxy/);
  assert.not.match(c.err, /internal error|\n\s+at /);
  assert.is(c.out, '');
});

/**
 * The ServiceAccount's kubeconfig with its server named `kubernetes.default.svc` (a name in the
 * test API server's certificate that does not resolve here: only the proxies, which map it to
 * 127.0.0.1, reach it, as a bastion resolves a cluster's private names), and `extra` lines
 * added to its cluster.
 */
function privateNameKubeconfig(extra: string[]): string {
  const port = new URL(env.server).port;
  let text = readFileSync(env.saKubeconfig, 'utf8').replace(/(\n\s+server: )https:\/\/127\.0\.0\.1:\d+\n/, `$1https://kubernetes.default.svc:${port}\n`);
  assert.match(text, /kubernetes\.default\.svc/);
  text = text.replace(/(\n(\s+)server: .*\n)/, (_, line: string, indent: string) => line + extra.map((l) => `${indent}${l}\n`).join(''));
  const path = join(dir, `private-${Math.random().toString(36).slice(2)}.kubeconfig`);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}
const PRIVATE = { 'kubernetes.default.svc': '127.0.0.1' };

t('proxy-url socks5:// (an `ssh -D` bastion): `snapshot` and the driver through a real SOCKS5 proxy, names resolved by it', async () => {
  const socks = await socks5Proxy({ hosts: PRIVATE });
  closers.push(() => socks.close());
  const port = new URL(env.server).port;
  const kubeconfig = privateNameKubeconfig([`proxy-url: ${socks.url}`]);
  const file = join(dir, 'cluster-socks.yaml');
  const s = io();
  assert.is(await run(['snapshot', '--kubeconfig', kubeconfig, '--out', file], { io: s }), 0, s.err);
  assert.is(parseSnapshot(readFileSync(file, 'utf8'), file).snapshot!.nodes.length, NODE_COUNT);
  assert.ok(socks.targets.length >= 1, 'the snapshot went through the SOCKS5 proxy');
  assert.ok(
    socks.targets.every((x) => x === `kubernetes.default.svc:${port}`),
    socks.targets.join(', '),
  );
  const carried = socks.targets.length;
  const d = new KubeDriver(clientFor(kubeconfig));
  closers.push(() => d.close());
  assert.is(await d.waitFor((x) => x.nodes.length === NODE_COUNT, { timeoutSeconds: 10 }), true);
  await d.cordon('w-02', 'test');
  assert.is(await d.waitFor((x) => x.nodes.find((n) => n.metadata.name === 'w-02')?.spec!.unschedulable === true, { timeoutSeconds: 5 }), true);
  await d.uncordon('w-02', 'test');
  assert.ok(socks.targets.length > carried, 'watches and writes through the SOCKS5 proxy too');
  console.log(`e2e: through the SOCKS5 proxy: ${socks.targets.length} connections`);
  // The SOCKS5 proxy down: one clean line naming it (exit 1).
  await socks.close();
  const c = io();
  assert.is(await run(['snapshot', '--kubeconfig', kubeconfig], { io: c }), 1);
  assert.match(
    c.err,
    /^error: cannot reach the Kubernetes API at https:\/\/kubernetes\.default\.svc:\d+ through proxy socks5:\/\/127\.0\.0\.1:\d+ \(context "bootcplan@testenv"\): ECONNREFUSED/m,
  );
  assert.not.match(c.err, /internal error|\n\s+at /);
});

t('no proxy-url: HTTPS_PROXY carries `snapshot` through a real CONNECT proxy, NO_PROXY bypasses it, proxy-url wins over it', async () => {
  const http = await connectProxy({ hosts: PRIVATE });
  closers.push(() => http.close());
  const port = new URL(env.server).port;
  const kubeconfig = privateNameKubeconfig([]);
  const withEnv = (extra: Record<string, string>) => io({ env: { NO_COLOR: '1', ...extra } });
  const s = withEnv({ HTTPS_PROXY: http.url });
  assert.is(await run(['snapshot', '--kubeconfig', kubeconfig, '--out', join(dir, 'cluster-env.yaml')], { io: s }), 0, s.err);
  assert.ok(http.targets.length >= 1, 'through the proxy of HTTPS_PROXY');
  assert.ok(
    http.targets.every((x) => x === `kubernetes.default.svc:${port}`),
    http.targets.join(', '),
  );
  const carried = http.targets.length;
  // NO_PROXY: straight to the server, whose name does not resolve here.
  const bypass = withEnv({ https_proxy: http.url, no_proxy: 'localhost,.svc' });
  assert.is(await run(['snapshot', '--kubeconfig', kubeconfig], { io: bypass }), 1);
  assert.match(
    bypass.err,
    /^error: cannot reach the Kubernetes API at https:\/\/kubernetes\.default\.svc:\d+ \(context "bootcplan@testenv"\): (ENOTFOUND|EAI_AGAIN)/m,
  );
  assert.is(http.targets.length, carried, 'NO_PROXY: the proxy carried nothing');
  // HTTP_PROXY is not for an https:// server (Go's rule): straight to it too.
  const wrong = withEnv({ HTTP_PROXY: http.url });
  assert.is(await run(['snapshot', '--kubeconfig', kubeconfig], { io: wrong }), 1);
  assert.is(http.targets.length, carried);
  // The kubeconfig's proxy-url wins over HTTPS_PROXY.
  const socks = await socks5Proxy({ hosts: PRIVATE });
  closers.push(() => socks.close());
  const both = withEnv({ HTTPS_PROXY: http.url });
  assert.is(
    await run(['snapshot', '--kubeconfig', privateNameKubeconfig([`proxy-url: ${socks.url}`]), '--out', join(dir, 'c2.yaml')], { io: both }),
    0,
    both.err,
  );
  assert.ok(socks.targets.length >= 1);
  assert.is(http.targets.length, carried);
  // The environment's proxy down: one clean line naming the variable.
  await http.close();
  const down = withEnv({ HTTPS_PROXY: http.url });
  assert.is(await run(['snapshot', '--kubeconfig', kubeconfig], { io: down }), 1);
  assert.match(
    down.err,
    /^error: cannot reach the Kubernetes API at https:\/\/kubernetes\.default\.svc:\d+ through proxy http:\/\/127\.0\.0\.1:\d+ \(HTTPS_PROXY\) .*ECONNREFUSED/m,
  );
  assert.match(down.err, /hint: .*HTTPS_PROXY.*NO_PROXY/);
  assert.not.match(down.err, /internal error|\n\s+at /);
});

t.run();
