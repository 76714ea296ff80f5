/**
 * The apply's watches under faults, on the real API server (docs/live-clusters.md: the watch
 * paths for 410 Gone and a broken connection, exercised here):
 * - every watch connection dropped mid-apply (their sockets destroyed): each watch resumes
 *   from its last resourceVersion, without a new list, and the apply completes;
 * - every watch made to resume from resourceVersion 1: where that is older than the API
 *   server's watch window (the custom resources, whose watch caches started when their CRD
 *   was created) the server answers 410 Gone and the watch lists again; where the window still
 *   holds it (built-in kinds in a young test server keep their whole history) the watch replays
 *   from there; either way the apply completes.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, setupEnv, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { NodeAgent } from './agent.ts';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST } from '../support/cluster.ts';
import { run } from '../../src/cli/main.ts';
import type { KubeDriver } from '../../src/kube/driver.ts';
import type { Reflector } from '../../src/kube/watch.ts';
import type { CliIO, DriverFactory } from '../../src/app/ports.ts';
import { openLiveDriver } from '../../src/app/live.ts';
import { io } from '../support/cli.ts';

const t = suite('e2e: watch faults during apply');
let env: TestEnv;
let agent: NodeAgent | null = null;
let dir: string;
const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4'];

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-watch-');
});
t.after(() => agent?.stop());

async function scenario(): Promise<string> {
  agent?.stop();
  await resetCluster(env.admin);
  const b = new ClusterBuilder().bootcPool(
    'worker',
    WORKERS.map((name, i) => ({ name, zone: `us-east-1${'abc'[i % 3]}` })),
    { maxUnavailable: 1 },
  );
  await loadObjects(env.admin, b.objects);
  agent = await new NodeAgent(env.admin, { scale: 1 }).start();
  const spec = join(dir, `spec-${Date.now()}.yaml`);
  writeFileSync(spec, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1, soakSeconds: 0, drainTimeoutSeconds: 60 }]));
  return spec;
}

/** The reflectors of the apply's watch cache and its client's open watch sockets (fault injection only). */
const reflectorsOf = (d: KubeDriver): Reflector[] => (d as any).cache.reflectors.map((x: { r: Reflector }) => x.r);
function dropWatchConnections(d: KubeDriver): number {
  const agentSockets = (d.client as any).watchAgent?.sockets ?? {};
  let n = 0;
  for (const list of Object.values<any[]>(agentSockets))
    for (const s of list) {
      s.destroy();
      n++;
    }
  return n;
}

/**
 * Runs apply; at the second reboot event, `fault` is done to the apply's own driver. Returns
 * the exit code, the output, and the driver's watch figures before the fault and at the end.
 */
async function applyWithFault(spec: string, fault: (d: KubeDriver) => void) {
  let driver: KubeDriver | null = null;
  let before: { watches: number; relists: number } | null = null;
  let reboots = 0;
  const openDriver: DriverFactory = async (flags, io) => {
    const o = await openLiveDriver(flags, io);
    driver = o.driver as KubeDriver;
    return {
      ...o,
      close: () => {
        after = driver!.watchStats();
        o.close?.();
      },
    };
  };
  let after: { watches: number; relists: number } | null = null;
  const cap = io();
  const watching: CliIO = {
    ...cap,
    stdout: (s) => {
      cap.stdout(s);
      for (const line of s.split('\n')) {
        if (!line.includes('"type":"reboot"') || ++reboots !== 2 || !driver) continue;
        before = driver.watchStats();
        fault(driver);
      }
    },
  };
  const code = await run(['apply', '-f', spec, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: watching, openDriver });
  return { code, out: cap.out, err: cap.err, before: before!, after: after!, driver: driver! };
}

async function assertRolledOut() {
  const snap = await (await import('../../src/kube/read.ts')).readLiveSnapshot(env.admin);
  for (const bn of snap.bootcNodes) assert.is(bn.status?.booted?.imageDigest, NEW_DIGEST, `${bn.metadata.name} runs the target`);
  for (const n of snap.nodes) assert.not.ok(n.spec?.unschedulable, `${n.metadata.name} is schedulable again`);
  for (const n of WORKERS) assert.is(agent!.log.filter((r) => r.node === n && r.what === 'reboot').length, 1, `${n} rebooted once`);
}

t('every watch connection dropped mid-apply: the watches resume from their resourceVersion (no relist) and the apply completes', async () => {
  const spec = await scenario();
  let dropped = 0;
  const r = await applyWithFault(spec, (d) => {
    dropped = dropWatchConnections(d);
  });
  assert.is(r.code, 0, r.err);
  assert.ok(dropped >= reflectorsOf(r.driver).filter((x) => x.installed).length, `${dropped} watch connections dropped`);
  assert.ok(r.after.watches >= r.before.watches + dropped - 1, `watches reopened: ${r.before.watches} -> ${r.after.watches}`);
  assert.is(r.after.relists, r.before.relists, 'resumed from the last resourceVersion, no new list');
  console.log(
    `e2e: ${dropped} watch connections dropped mid-apply; watches ${r.before.watches} -> ${r.after.watches}, lists ${r.before.relists} -> ${r.after.relists}`,
  );
  await assertRolledOut();
});

t('watches resumed from an expired resourceVersion: 410 Gone, those watches list again, and the apply completes', async () => {
  const spec = await scenario();
  let expired = 0;
  const r = await applyWithFault(spec, (d) => {
    dropWatchConnections(d);
    // Once the events read before the drop are handled (a reconnect waits 200 ms first).
    // Only the custom resources' watches: their watch cache starts after the CRD was made, so
    // resourceVersion 1 is answered 410 Gone. A built-in kind's history in this young test
    // server still reaches back to 1 and would be replayed, with the deletions of earlier suites.
    setTimeout(() => {
      for (const x of reflectorsOf(d))
        if (x.installed && /(openshift\.io|bootc\.dev)\//.test(x.type.apiVersion)) {
          x.resourceVersion = '1';
          expired++;
        }
    }, 50);
  });
  assert.is(r.code, 0, r.err);
  const crds = reflectorsOf(r.driver).filter((x) => x.installed && /(openshift\.io|bootc\.dev)\//.test(x.type.apiVersion)).length;
  assert.ok(
    r.after.relists - r.before.relists >= crds,
    `410 Gone answered by a new list on each custom resource's watch (${crds}): lists ${r.before.relists} -> ${r.after.relists}`,
  );
  console.log(
    `e2e: ${expired} watches resumed from resourceVersion 1: lists ${r.before.relists} -> ${r.after.relists}, watches ${r.before.watches} -> ${r.after.watches}`,
  );
  await assertRolledOut();
});

t.run();
