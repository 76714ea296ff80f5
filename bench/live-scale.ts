/**
 * Scale run on the real API server (docs/performance.md; not part of `npm test`): loads N Nodes with
 * their BootcNodes (and one app pod each, to drain) into the test kube-apiserver
 * (test/e2e/env.ts), runs a full `bootcplan apply` with the node agent playing the daemons
 * (test/e2e/agent.ts, short durations), and reports the apply's API requests per node, bytes
 * it sent per node, the largest object it wrote, wall time and peak RSS (the apply runs in a
 * process of its own: bench/live-apply-child.ts).
 *   KUBEBUILDER_ASSETS=... npx tsx bench/live-scale.ts [N=1000]     (also: npm run bench:live)
 * Prints one JSON line; bench/run.ts includes it when BENCH_LIVE=1.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setupEnv, resetCluster, tempDir, ensureNamespace, createWithStatus, clientFor } from '../test/e2e/env.ts';
import { NodeAgent } from '../test/e2e/agent.ts';
import { ClusterBuilder, specYaml, NEW } from '../test/support/cluster.ts';
import type { KObject } from '../src/cluster/types.ts';

export interface LiveScale {
  nodes: number;
  code: number;
  wallSeconds: number;
  loadSeconds: number;
  requests: number;
  requestsPerNode: number;
  bytesSentPerNode: number;
  largestWritten: { resource: string; bytes: number };
  largestBootcplanObject: number;
  peakRssMB: number;
  waves: number;
  reboots: number;
  byResource: Record<string, number>;
  byVerbResource: Record<string, number>;
}

export async function liveScale(n: number): Promise<LiveScale> {
  const env = await setupEnv();
  await resetCluster(env.admin);
  const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  const names = Array.from({ length: n }, (_, i) => `w-${String(i).padStart(4, '0')}`);
  const b = new ClusterBuilder().bootcPool(
    'worker',
    names.map((name, i) => ({ name, zone: zones[i % 3] })),
    { maxUnavailable: 1 },
  );
  for (const name of names) {
    b.add({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `app-${name}`, namespace: 'default' },
      spec: { nodeName: name, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
    } as KObject);
  }
  const t0 = Date.now();
  for (const ns of new Set(b.objects.map((o) => o.metadata.namespace).filter((x): x is string => !!x))) await ensureNamespace(env.admin, ns);
  const objs = b.objects;
  for (let i = 0; i < objs.length; i += 64) await Promise.all(objs.slice(i, i + 64).map((o) => createWithStatus(env.admin, o)));
  const loadSeconds = (Date.now() - t0) / 1000;
  // The agent's own client, with room for an API server under load.
  const agent = await new NodeAgent(clientFor(env.kubeconfig, { requestTimeoutSeconds: 300 }), { scale: 0.02 }).start();
  const dir = tempDir('bootcplan-bench-live-');
  const spec = join(dir, 'spec.yaml');
  writeFileSync(spec, specYaml([{ name: 'worker', image: NEW, maxUnavailable: '10%', soakSeconds: 0, drainTimeoutSeconds: 120 }]));
  let r: any;
  try {
    // Asynchronously: the node agent runs in this process's event loop meanwhile.
    const child = promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', new URL('./live-apply-child.ts', import.meta.url).pathname, spec, env.saKubeconfig],
      { encoding: 'utf8', maxBuffer: 64 << 20, timeout: Number(process.env.BENCH_LIVE_TIMEOUT ?? 3600) * 1000 },
    );
    child.child.stderr?.pipe(process.stderr);
    const { stdout: out } = await child;
    r = JSON.parse(out.trim().split('\n').pop()!);
  } finally {
    agent.stop();
    if (agent.errors.length) console.error(`node agent errors: ${agent.errors.slice(0, 5).join('; ')}`);
  }
  const cm = await env.admin.request('GET', '/api/v1/namespaces/openshift-bootcplan/configmaps/bootcplan-progress');
  const largest = Object.entries<number>(r.stats.largestWritten).sort((a, b) => b[1] - a[1])[0] ?? ['none', 0];
  return {
    nodes: n,
    code: r.code,
    wallSeconds: r.wallSeconds,
    loadSeconds,
    requests: r.stats.total,
    requestsPerNode: r.stats.total / n,
    bytesSentPerNode: r.stats.bytesSent / n,
    largestWritten: { resource: largest[0], bytes: largest[1] },
    largestBootcplanObject: Buffer.byteLength(JSON.stringify(cm)),
    peakRssMB: r.peakRssMB,
    waves: r.waves,
    reboots: r.reboots,
    byResource: r.stats.byResource,
    byVerbResource: r.stats.byVerbResource,
    ...(r.code !== 0 ? { err: r.err } : {}),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await liveScale(Number(process.argv[2] ?? 1000));
  console.log(JSON.stringify(r));
  process.exit(0);
}
