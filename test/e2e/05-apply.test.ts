/**
 * `bootcplan apply` against the real API server, as the ServiceAccount of
 * examples/rbac.yaml, with the node agent playing the daemons:
 * - a full apply through every wave, while a watch records that no pool ever had more than
 *   maxUnavailable nodes unschedulable at once (and counts bootcplan's API requests);
 * - two concurrent applies: one exits 4;
 * - an apply killed (SIGKILL) mid-wave, then unlocked and resumed;
 * - a pool target changed by someone else after the plan: exit 3, nothing written.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { inDir, io } from '../support/cli.ts';
import { tempDir, setupEnv, type TestEnv } from './env.ts';
import { applyWatchingNodes, freshCluster } from './helpers.ts';
import { ensureBuilt, run } from '../support/built.ts';
import type { NodeAgent } from './agent.ts';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST } from '../support/cluster.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { requestStats, resetRequestStats } from '../../src/kube/rest.ts';
import type { KObject } from '../../src/cluster/types.ts';
import { MCO_CURRENT_CONFIG, BOOTCPLAN_CORDONED_BY } from '../../src/domain/labels.ts';
import type { TestObject } from '../support/cluster.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const SA_CONTEXT = 'bootcplan@testenv';
const t = suite('e2e: apply');
let env: TestEnv;
let agent: NodeAgent | null = null;
let dir: string;

const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'];
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const INFRA = ['i-1', 'i-2'];
const BUDGET: Record<string, number> = { worker: 2, infra: 1 };

function cluster(): KObject[] {
  const b = new ClusterBuilder()
    .bootcPool(
      'worker',
      WORKERS.map((name, i) => ({ name, zone: ZONES[i % 3] })),
      { maxUnavailable: 1 },
    )
    .mcoPool(
      'infra',
      INFRA.map((name, i) => ({ name, zone: ZONES[i % 3] })),
    );
  // Workloads to drain: an app pod on each node, and a DaemonSet pod that stays.
  for (const n of [...WORKERS, ...INFRA]) {
    for (const [name, owner] of [
      [`app-${n}`, null],
      [`ds-${n}`, 'DaemonSet'],
    ] as const) {
      b.add({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace: 'default',
          ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: owner, name: 'node-agent', controller: true }] } : {}),
        },
        spec: { nodeName: n, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
      } as KObject);
    }
  }
  return b.objects;
}

const SPEC = specYaml(
  [
    { name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0, drainTimeoutSeconds: 60 },
    { name: 'infra', image: NEW, maxUnavailable: 1, soakSeconds: 0, drainTimeoutSeconds: 60 },
  ],
  { managedBootImages: { machineManagers: [{ resource: 'machinesets', apiGroup: 'machine.openshift.io', selection: { mode: 'All' } }] } },
);

/** Fresh cluster, spec file and node agent. */
async function scenario(): Promise<string> {
  agent = await freshCluster(env, cluster(), agent);
  const spec = join(dir, `bootcplan-${Date.now()}.yaml`);
  writeFileSync(spec, SPEC);
  return spec;
}

/** On every Node event, how many nodes of each pool are unschedulable (and NotReady), at most. */
class BudgetRecorder {
  readonly max: Record<string, number> = {};
  readonly maxNotReady: Record<string, number> = {};
  /** bootcplan's cordon marks seen on cordoned bootc nodes (docs/safety.md rule 6). */
  readonly marks = new Set<string>();
  readonly sample = (nodes: Iterable<TestObject>) => {
    const count: Record<string, number> = {};
    const notReady: Record<string, number> = {};
    for (const n of nodes) {
      const pool = n.metadata.name.startsWith('w-') ? 'worker' : n.metadata.name.startsWith('i-') ? 'infra' : null;
      if (!pool) continue;
      if (n.spec?.unschedulable) count[pool] = (count[pool] ?? 0) + 1;
      if (n.spec?.unschedulable && pool === 'worker') this.marks.add(n.metadata.annotations?.[BOOTCPLAN_CORDONED_BY] ?? '(none)');
      if (!(n.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True')) notReady[pool] = (notReady[pool] ?? 0) + 1;
    }
    for (const [p, c] of Object.entries(count)) this.max[p] = Math.max(this.max[p] ?? 0, c);
    for (const [p, c] of Object.entries(notReady)) this.maxNotReady[p] = Math.max(this.maxNotReady[p] ?? 0, c);
  };
}

const events = (ndjson: string) =>
  ndjson
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

async function assertRolledOut() {
  const snap = await (await import('../../src/kube/read.ts')).readLiveSnapshot(env.admin);
  for (const bn of snap.bootcNodes) assert.is(bn.status?.booted?.imageDigest, NEW_DIGEST, `${bn.metadata.name} runs the target`);
  const rendered = new Map(snap.machineConfigs.map((m) => [m.metadata.name, m]));
  for (const n of snap.nodes) {
    assert.not.ok(n.spec?.unschedulable, `${n.metadata.name} is schedulable again`);
    assert.is(n.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined, `${n.metadata.name}: bootcplan's cordon mark removed with the uncordon`);
    assert.ok(
      (n.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'),
      `${n.metadata.name} is Ready`,
    );
    if (INFRA.includes(n.metadata.name))
      assert.is(rendered.get(n.metadata.annotations?.[MCO_CURRENT_CONFIG] ?? '')?.spec?.osImageURL, NEW, `${n.metadata.name} runs the target config`);
  }
  return snap;
}

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-apply-');
});
t.after(() => agent?.stop());

t('full apply through all waves as the ServiceAccount; never more than maxUnavailable unschedulable', async () => {
  const spec = await scenario();
  const rec = new BudgetRecorder();
  resetRequestStats();
  const { code, out, err, seconds, events: nodeEvents } = await applyWatchingNodes(env, spec, rec.sample);
  assert.is(code, 0, err);
  assert.equal(agent!.errors, []);
  const evs = events(out);
  const waves = (pool: string) => evs.filter((e) => e.type === 'wave-start' && e.pool === pool).length;
  assert.is(waves('worker'), 3, '6 nodes, maxUnavailable 2: 3 waves');
  assert.is(waves('infra'), 2, '2 nodes, maxUnavailable 1: 2 waves');
  assert.is(evs.at(-1).type, 'done');
  // bootcplan's cordons carried its mark (the plan id), written with spec.unschedulable (rule 6).
  assert.equal([...rec.marks], [evs.find((e) => e.type === 'start').message]);
  for (const [pool, budget] of Object.entries(BUDGET)) {
    assert.ok((rec.max[pool] ?? 0) >= 1, `${pool} nodes were cordoned`);
    assert.ok(rec.max[pool] <= budget, `${pool}: ${rec.max[pool]} unschedulable at once, maxUnavailable ${budget}`);
    assert.ok((rec.maxNotReady[pool] ?? 0) <= budget, `${pool}: ${rec.maxNotReady[pool]} NotReady at once`);
  }
  const snap = await assertRolledOut();
  assert.equal(snap.machineConfiguration?.spec?.managedBootImages, {
    machineManagers: [{ resource: 'machinesets', apiGroup: 'machine.openshift.io', selection: { mode: 'All' } }],
  });
  assert.is(snap.lock, null, 'lock released');
  assert.ok(JSON.parse(snap.progress!.data!['run.json']).done, 'progress done');
  const pods = await env.admin.request('GET', '/api/v1/namespaces/default/pods');
  assert.equal(
    pods.items.map((p: any) => p.metadata.name).filter((n: string) => n.startsWith('app-')),
    [],
    'app pods evicted',
  );
  assert.is(pods.items.length, WORKERS.length + INFRA.length, 'DaemonSet pods stay');
  // Each node rebooted exactly once.
  for (const n of WORKERS) assert.is(agent!.log.filter((r) => r.node === n && r.what === 'reboot').length, 1, `${n} rebooted once`);
  const st = requestStats(SA_CONTEXT);
  const nodes = WORKERS.length + INFRA.length;
  const largest = Object.entries(st.largestWritten).sort((a, b) => b[1] - a[1])[0];
  console.log(
    `e2e: full apply of ${nodes} nodes in ${seconds.toFixed(1)}s: ${st.total} API requests by bootcplan (${(st.total / nodes).toFixed(1)} per node); ${JSON.stringify(st.byVerbResource)}; node events watched: ${nodeEvents}; bytes sent ${st.bytesSent} (${Math.round(st.bytesSent / nodes)} per node); largest object written ${largest?.[0]} ${largest?.[1]} bytes; run record ${Buffer.byteLength(JSON.stringify(snap.progress))} bytes`,
  );
  // 106 on 2026-12-03 (docs/performance.md: no reboot entry write, one Event per node; 118 before),
  // plus 7 since the apply's snapshot carries the workloads (one list each of Pods, PDBs, PVCs, PVs,
  // ReplicaSets, Deployments, StatefulSets: docs/apply.md "Drain forecast"), with room for a few
  // re-reads of 409s (a Node the watch cache had not caught up with).
  // A bound that a count of zero would pass proves nothing: the apply made requests (test/kube/request-stats.test.ts).
  assert.ok(st.total >= 2 * nodes, `at least 2 requests per node, counted ${st.total}`);
  assert.ok(st.total <= 119, `at most 119 API requests for the 8-node apply, made ${st.total}: ${JSON.stringify(st.byVerbResource)}`);
  // status reads the finished progress back.
  const s = io();
  assert.is(await run(['status', '--kubeconfig', env.saKubeconfig], { io: s }), 0, s.err);
  assert.match(s.out, /lock: free/);
  assert.match(s.out, /: done/);
});

t('two concurrent applies: one takes the lock, the other exits 4', async () => {
  const spec = await scenario();
  const a = io();
  const b = io();
  const codes = await Promise.all([
    run(['apply', '-f', spec, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: a }),
    run(['apply', '-f', spec, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: b }),
  ]);
  assert.equal([...codes].sort(), [0, 4], `exit codes ${codes.join(', ')}: ${a.err} ${b.err}`);
  const loser = codes[0] === 4 ? a : b;
  assert.match(loser.err, /another apply holds the lock: bootcplan@|another apply holds the lock: .* since/);
  assert.match(loser.err, /hint: .*bootcplan unlock/);
  await assertRolledOut();
});

t('a saved plan applied, killed mid-wave, unlocked and resumed: every node updated once', async () => {
  const spec = await scenario();
  const planFile = join(dir, 'resume-plan.json');
  const p = io();
  assert.is(await run(['plan', '-f', spec, '--kubeconfig', env.saKubeconfig, '--out', planFile], { io: p }), 0, p.err);
  // A saved plan reads only files inside the directory (or repository) it is applied from.
  ensureBuilt(); // the installed command runs dist/
  const child = spawn(process.execPath, [join(ROOT, 'bin/bootcplan.mjs'), 'apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const killedAt = await new Promise<string>((resolveKill, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      for (const e of events(out.slice(0, out.lastIndexOf('\n') + 1))) {
        // Kill in the middle of the second worker wave: a node cordoned and rebooting.
        if (e.type === 'reboot' && e.pool === 'worker' && e.wave === 2) {
          child.kill('SIGKILL');
          resolveKill(e.node);
          return;
        }
      }
    });
    child.on('exit', (c) => reject(new Error(`apply exited (${c}) before the second wave: ${err}`)));
    setTimeout(() => reject(new Error(`no second wave within 60s: ${out}\n${err}`)), 60_000);
  });
  await new Promise((r) => child.on('exit', r));
  assert.ok(killedAt);
  // The lock of the dead apply is still held; a new apply is refused (exit 4) ...
  const refused = io();
  assert.is(await inDir(dir, () => run(['apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: refused })), 4, refused.err);
  // ... `status` shows it and the progress, `unlock` releases it ...
  const st = io();
  assert.is(await run(['status', '--kubeconfig', env.saKubeconfig, '--json'], { io: st }), 0, st.err);
  const status = JSON.parse(st.out);
  assert.ok(status.lock, 'the lock is still held');
  assert.ok(status.progress.pools.worker.wavesDone >= 1, 'wave 1 recorded as finished');
  assert.ok(status.progress.pools.worker.wavesDone < 2, 'wave 2 not finished');
  assert.ok(Object.keys(status.progress.nodesInFlight).length >= 1, 'the node killed mid-update is in flight, from its annotation');
  const u = io();
  assert.is(await run(['unlock', status.lock.lockId, '--kubeconfig', env.saKubeconfig], { io: u }), 0, u.err);
  // ... and the next apply resumes from the unfinished wave.
  const rebootsBefore = agent!.log.filter((r) => r.what === 'reboot').length;
  const again = io();
  assert.is(await inDir(dir, () => run(['apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: again })), 0, again.err);
  const evs = events(again.out);
  const start = evs.find((e) => e.type === 'start');
  assert.ok(start, 'a start event');
  assert.is(start.resumed, true, 'resumed');
  assert.not.ok(
    evs.some((e) => e.type === 'wave-start' && e.pool === 'worker' && e.wave === 1),
    'wave 1 is not run again',
  );
  await assertRolledOut();
  for (const n of WORKERS) assert.is(agent!.log.filter((r) => r.node === n && r.what === 'reboot').length, 1, `${n} rebooted exactly once`);
  assert.ok(agent!.log.filter((r) => r.what === 'reboot').length > rebootsBefore, 'the rest was rebooted by the resumed apply');
});

t('a pool target changed by someone else after the plan: exit 3, nothing written', async () => {
  const spec = await scenario();
  const planFile = join(dir, 'saved-plan.json');
  const p = io();
  assert.is(await run(['plan', '-f', spec, '--kubeconfig', env.saKubeconfig, '--out', planFile], { io: p }), 0, p.err);
  const other = imageRef('someone-else');
  await env.admin.request('PATCH', '/apis/node.bootc.dev/v1alpha1/bootcnodepools/worker', {
    body: { spec: { image: { ref: other } } },
    contentType: 'application/merge-patch+json',
  });
  const a = io();
  const code = await inDir(dir, () => run(['apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve'], { io: a }));
  assert.is(code, 3, a.err);
  assert.match(a.err, /stale plan/);
  assert.match(a.err, /BootcNodePool\/worker/);
  const snap = await (await import('../../src/kube/read.ts')).readLiveSnapshot(env.admin);
  assert.is(snap.bootcNodePools[0].spec!.image!.ref, other, 'the other change is kept');
  assert.not.ok(
    snap.nodes.some((n) => n.spec?.unschedulable),
    'no node cordoned',
  );
  assert.is(snap.lock, null, 'lock released');
});

t.run();
