/**
 * Stopping on the real API server (docs/apply.md "Stopping"; docs/design.md §7), with the built CLI as
 * a process: what was found spinning at full CPU for 14 minutes, the Lease never released, a
 * second SIGTERM ignored, until SIGKILL.
 * - SIGTERM mid-wave of a bootc pool, while other nodes of the pool still stage (the staging
 *   observer waits on them): exit 143 within 5 s, the Lease released (read back), where it
 *   stopped and the nodes in flight saved; the plan applied again finishes, each node rebooted once;
 * - SIGTERM while every node stages (before the first wave): exit 143 within 5 s, Lease released;
 * - NODE_NAME at plan time marks its node and puts it last; applied from a pod on another node,
 *   that node goes last instead, and the saved plan is accepted;
 * - a drain stopped mid-way (a PodDisruptionBudget refusing the eviction): it ends at once and
 *   sends no eviction after the stop.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inDir, io } from '../support/cli.ts';
import { tempDir, setupEnv, resetCluster, loadObjects, createWithStatus, driverFor, type TestEnv } from './env.ts';
import { rejects, sleep } from './helpers.ts';
import { NodeAgent } from './agent.ts';
import { ClusterBuilder, specYaml, NEW } from '../support/cluster.ts';
import { run } from '../../src/cli/main.ts';
import { readLiveSnapshot } from '../../src/kube/read.ts';
import { ensureBuilt } from '../support/built.ts';
import { requestStats } from '../../src/kube/rest.ts';
import { AbortedError } from '../../src/apply/ports/driver.ts';
import { BOOTCPLAN_PROGRESS } from '../../src/apply/ports/node-progress.ts';

const t = suite('e2e: stopping');
let env: TestEnv;
let agent: NodeAgent | null = null;
let dir: string;
const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'];

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-stop-');
});
t.after(() => agent?.stop());

/** A bootc pool of six, two per wave; `stageMs` per node. Returns the saved plan's path. */
async function scenario(name: string, stageMs: (node: string) => number): Promise<string> {
  agent?.stop();
  await resetCluster(env.admin);
  await loadObjects(
    env.admin,
    new ClusterBuilder().bootcPool(
      'worker',
      WORKERS.map((n) => ({ name: n })),
    ).objects,
  );
  // 5 ms per simulated second: a reboot takes 1.5 s, so SIGTERM lands mid-wave.
  agent = await new NodeAgent(env.admin, { scale: 5, stageMs }).start();
  const spec = join(dir, `${name}.yaml`);
  writeFileSync(spec, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]));
  const planFile = join(dir, `${name}-plan.json`);
  const p = io();
  assert.is(await run(['plan', '-f', spec, '--kubeconfig', env.saKubeconfig, '--out', planFile], { io: p }), 0, p.err);
  return planFile;
}

/** The built CLI applying `planFile`; SIGTERM when `when(stdout)` first holds. */
function applyProcess(
  planFile: string,
  when: (out: string) => boolean,
): Promise<{ code: number | null; out: string; err: string; sentAt: number; exitedAt: number }> {
  const child = spawn(process.execPath, [ensureBuilt(), 'apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let sentAt = 0;
  child.stderr.on('data', (d) => (err += d));
  child.stdout.on('data', (d) => {
    out += d;
    if (!sentAt && when(out)) {
      sentAt = Date.now();
      child.kill('SIGTERM');
    }
  });
  const limit = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(limit);
      resolve({ code, out, err, sentAt, exitedAt: Date.now() });
    }),
  );
}

t('SIGTERM mid-wave of a bootc pool, other nodes still staging: exit 143 within 5 s, the Lease released, progress saved; the rerun finishes', async () => {
  // The first wave's nodes stage at once, the others take 6 s: the observer still waits on them.
  const planFile = await scenario('midwave', (n) => (n === 'w-1' || n === 'w-2' ? 200 : 6000));
  const r = await applyProcess(planFile, (out) => /"type":"reboot"/.test(out));
  assert.ok(r.sentAt, `no reboot: ${r.out}\n${r.err}`);
  assert.is(r.code, 143, r.err);
  assert.ok(r.exitedAt - r.sentAt < 5000, `exited ${r.exitedAt - r.sentAt} ms after SIGTERM`);
  assert.match(r.err, /\nbootcplan: stopped by SIGTERM in pool worker, wave 1: .*the lock is released; run apply again to continue\n$/);
  assert.not.match(r.out, /"type":"staged","pool":"worker","node":"w-[3-6]"/, 'the observer was still watching w-3..w-6 staging');
  const snap = await readLiveSnapshot(env.admin);
  assert.is(snap.lock, null, 'the Lease is released');
  const rec = JSON.parse(snap.progress!.data!['run.json']);
  assert.is(rec.pools.worker.interrupted?.reason, 'SIGTERM');
  assert.is(rec.pools.worker.interrupted?.wave, 1);
  const inFlight = snap.nodes
    .filter((n) => n.metadata.annotations?.[BOOTCPLAN_PROGRESS])
    .map((n) => n.metadata.name)
    .sort();
  assert.equal(inFlight, ['w-1', 'w-2'], 'the nodes in flight keep their entries');
  const again = io();
  assert.is(await inDir(dir, () => run(['apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: again })), 0, again.err);
  for (const n of WORKERS) assert.is(agent!.log.filter((x) => x.node === n && x.what === 'reboot').length, 1, `${n} rebooted exactly once`);
  assert.equal(agent!.errors, []);
});

t('SIGTERM while every node stages (before the first wave, the staging observer waiting): exit 143 within 5 s, the Lease released', async () => {
  const planFile = await scenario('staging', () => 30_000);
  const r = await applyProcess(planFile, (out) => /"type":"stage-start"/.test(out));
  assert.ok(r.sentAt, `never staging: ${r.out}\n${r.err}`);
  assert.is(r.code, 143, r.err);
  assert.ok(r.exitedAt - r.sentAt < 5000, `exited ${r.exitedAt - r.sentAt} ms after SIGTERM`);
  assert.match(r.err, /bootcplan: stopped by SIGTERM .*the lock is released/);
  assert.is((await readLiveSnapshot(env.admin)).lock, null, 'the Lease is released');
  assert.not.match(r.out, /"type":"cordon"/, 'nothing was cordoned');
});

t(
  'NODE_NAME at plan time (plan against the live cluster) marks its node and puts it last; applied from a pod on another node, that node goes last instead, and the plan is not stale',
  async () => {
    const planFile = await scenario('self', () => 200);
    // scenario() planned without NODE_NAME; plan again as a pod on w-1 would.
    const spec = join(dir, 'self.yaml');
    const inPod = join(dir, 'self-in-pod.json');
    const p = io({ env: { NO_COLOR: '1', NODE_NAME: 'w-1' } });
    assert.is(await run(['plan', '-f', spec, '--kubeconfig', env.saKubeconfig, '--out', inPod], { io: p }), 0, p.err);
    assert.match(p.out, /last: w-1 runs bootcplan's own pod \(NODE_NAME\): it goes last, in wave 3, since its drain evicts bootcplan/);
    const saved = JSON.parse(readFileSync(inPod, 'utf8'));
    assert.equal(saved.pools[0].waves.at(-1), ['w-6', 'w-1']);
    assert.not.equal(JSON.parse(readFileSync(planFile, 'utf8')).pools[0].waves.at(-1), ['w-6', 'w-1'], 'without NODE_NAME w-1 is in wave 1');
    // The Job later runs on w-2: the saved plan is accepted (re-planned on w-1), and w-2 goes last.
    const a = io({ env: { NO_COLOR: '1', NODE_NAME: 'w-2' } });
    assert.is(await inDir(dir, () => run(['apply', inPod, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: a })), 0, a.err);
    const order = agent!.log.filter((x) => x.what === 'reboot').map((x) => x.node);
    assert.is(order.length, 6);
    assert.is(order.at(-1), 'w-2', `rebooted in this order: ${order.join(' ')}`);
  },
);

t('a drain stopped mid-way (a PodDisruptionBudget refusing the eviction): ends at once, no eviction after the stop', async () => {
  agent?.stop();
  agent = null;
  await resetCluster(env.admin);
  await loadObjects(env.admin, new ClusterBuilder().bootcPool('worker', [{ name: 'w-1' }]).objects);
  await createWithStatus(env.admin, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'guarded', namespace: 'default', labels: { app: 'db' } },
    spec: { nodeName: 'w-1', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  } as any);
  await createWithStatus(env.admin, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'db', namespace: 'default' },
    spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } },
    status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
  } as any);
  // Refusals retried every 200 ms: several evictions before the stop, none after.
  const d = driverFor(env.saKubeconfig, { evictionRetrySeconds: 0.2 });
  try {
    await d.cordon('w-1', 'test');
    const ac = new AbortController();
    const evictions = () =>
      Object.entries(requestStats().byVerbResource)
        .filter(([k]) => k.startsWith('POST '))
        .reduce((a, [, v]) => a + v, 0);
    const before = evictions();
    const drained = d.drain('w-1', { timeoutSeconds: 60, signal: ac.signal });
    await sleep(1000);
    const sent = evictions() - before;
    assert.ok(sent >= 2, `${sent} eviction(s) before the stop`);
    const stoppedAt = Date.now();
    ac.abort();
    await rejects(
      () => drained,
      (e) => e instanceof AbortedError,
    );
    assert.ok(Date.now() - stoppedAt < 500, `ended ${Date.now() - stoppedAt} ms after the stop`);
    await sleep(800);
    assert.is(evictions() - before, sent, 'no eviction after the stop');
    const pods = await env.admin.request('GET', '/api/v1/namespaces/default/pods');
    assert.equal(
      pods.items.map((p: any) => p.metadata.name),
      ['guarded'],
      'the guarded pod stays',
    );
  } finally {
    d.close();
  }
});

t.run();
