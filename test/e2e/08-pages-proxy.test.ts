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

t.run();
