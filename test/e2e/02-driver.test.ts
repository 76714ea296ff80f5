/**
 * The Kubernetes driver against the real apiserver: JSON patch with `test` preconditions on
 * custom resources, create conflicts, the Lease lock (races, expiry, renewal), the progress
 * ConfigMap, drains through the Eviction API with PodDisruptionBudgets, and watches.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setupEnv, resetCluster, loadObjects, driverFor, createWithStatus, type TestEnv } from './env.ts';
import { rejects, sleep } from './helpers.ts';
import { NodeAgent } from './agent.ts';
import { ClusterBuilder, NEW } from '../support/cluster.ts';
import { LockHeldError } from '../../src/base/errors.ts';
import {
  PreconditionFailedError,
  AlreadyExistsError,
  NotFoundError,
  DrainTimeoutError,
  LockLostError,
  DriverError,
  AbortedError,
  ProgressMovedError,
  type ProgressRecord,
} from '../../src/apply/ports/driver.ts';
import { KubeApiError, requestStats } from '../../src/kube/rest.ts';
import type { KubeDriver } from '../../src/kube/driver.ts';
import type { TestObject } from '../support/cluster.ts';

const t = suite('e2e: Kubernetes driver');
let env: TestEnv;
const drivers: KubeDriver[] = [];
const open = (kubeconfig: string, opts = {}) => {
  const d = driverFor(kubeconfig, opts);
  drivers.push(d);
  return d;
};

t.before(async () => {
  env = await setupEnv();
  await resetCluster(env.admin);
  const b = new ClusterBuilder().bootcPool(
    'worker',
    [
      { name: 'w-1', zone: 'us-east-1a' },
      { name: 'w-2', zone: 'us-east-1b' },
    ],
    { maxUnavailable: 1 },
  );
  await loadObjects(env.admin, b.objects);
});
t.after(() => {
  for (const d of drivers) d.close();
});

t('patch: JSON patch with test ops on a custom resource; a failed test writes nothing', async () => {
  const d = open(env.saKubeconfig);
  const ref = { apiVersion: 'node.bootc.dev/v1alpha1', kind: 'BootcNodePool', name: 'worker' };
  const snap = await d.snapshot();
  const before = snap.bootcNodePools[0];
  const out = await d.patch(ref, [
    { op: 'test', path: '/spec/image/ref', value: before.spec!.image!.ref },
    { op: 'replace', path: '/spec/rollout/maxUnavailable', value: 2 },
  ]);
  assert.is((out as TestObject).spec.rollout.maxUnavailable, 2);
  const e = await rejects(
    () =>
      d.patch(ref, [
        { op: 'test', path: '/spec/image/ref', value: 'quay.io/other@sha256:' + '0'.repeat(64) },
        { op: 'replace', path: '/spec/rollout/maxUnavailable', value: 3 },
      ]),
    (e) => e instanceof PreconditionFailedError,
  );
  assert.is(e.path, '/spec/image/ref');
  const after = (await d.snapshot()).bootcNodePools[0];
  assert.is(after.spec!.rollout!.maxUnavailable, 2, 'nothing written');
  await rejects(
    () => d.patch({ ...ref, name: 'nope' }, [{ op: 'add', path: '/spec/x', value: 1 }]),
    (e) => e instanceof NotFoundError,
  );
  // The schema still applies to a JSON patch: an enum violation is a plain API error (422).
  const inv = await rejects(
    () =>
      d.patch({ apiVersion: 'node.bootc.dev/v1alpha1', kind: 'BootcNode', name: 'w-1' }, [
        { op: 'replace', path: '/spec/desiredImageState', value: 'Rebooted' },
      ]),
    (e) => e instanceof KubeApiError && e.status === 422,
  );
  assert.match(inv.message, /Unsupported value: "Rebooted"/);
});

t('create: AlreadyExistsError; cordon/uncordon; setDesiredImageState; setPoolPaused', async () => {
  const d = open(env.saKubeconfig);
  // The MachineConfig bootcplan creates for an MCO-only pool (examples/rbac.yaml admits only these).
  const mc = {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: {
      name: '99-worker-zz-bootcplan-os-image',
      labels: { 'machineconfiguration.openshift.io/role': 'worker', 'bootcplan.dev/managed-by': 'bootcplan' },
    },
    spec: { osImageURL: NEW },
  };
  const created = await d.create(mc);
  assert.ok(created.metadata.uid);
  await rejects(
    () => d.create(mc),
    (e) => e instanceof AlreadyExistsError,
  );
  assert.is(await d.cordon('w-1', 'test'), 'cordoned');
  assert.is(await d.cordon('w-1', 'test'), 'already-cordoned');
  let s = await d.snapshot();
  assert.is(s.nodes.find((n) => n.metadata.name === 'w-1')!.spec!.unschedulable, true);
  assert.is(s.nodes.find((n) => n.metadata.name === 'w-1')!.metadata.annotations?.['bootcplan.dev/cordoned-by'], 'test', 'marked in the same patch');
  assert.is(await d.uncordon('w-1', 'another-plan'), 'not-ours');
  assert.is(await d.uncordon('w-1', 'test'), 'uncordoned');
  s = await d.snapshot();
  assert.is(s.nodes.find((n) => n.metadata.name === 'w-1')!.spec!.unschedulable, undefined);
  assert.is(s.nodes.find((n) => n.metadata.name === 'w-1')!.metadata.annotations?.['bootcplan.dev/cordoned-by'], undefined, 'mark removed with the uncordon');
  // An administrator's cordon (no mark) is not bootcplan's to undo.
  await env.admin.request('PATCH', '/api/v1/nodes/w-1', { body: { spec: { unschedulable: true } }, contentType: 'application/merge-patch+json' });
  assert.is(await d.cordon('w-1', 'test'), 'already-cordoned');
  assert.is(await d.uncordon('w-1', 'test'), 'not-ours');
  s = await d.snapshot();
  assert.is(s.nodes.find((n) => n.metadata.name === 'w-1')!.spec!.unschedulable, true, "the administrator's cordon stays");
  await env.admin.request('PATCH', '/api/v1/nodes/w-1', { body: { spec: { unschedulable: null } }, contentType: 'application/merge-patch+json' });
  await d.setDesiredImageState('w-2', 'Staged');
  await d.setPoolPaused('BootcNodePool', 'worker', false, 'test');
  await d.setPoolPaused('BootcNodePool', 'worker', true, 'test');
  s = await d.snapshot();
  assert.is(s.bootcNodePools[0].spec!.rollout!.paused, true);
  assert.is(s.bootcNodes.find((n) => n.metadata.name === 'w-2')!.spec!.desiredImageState, 'Staged');
});

t('lock: one winner among concurrent acquirers; held, renewed, released; an expired lock is taken over', async () => {
  const racers = Array.from({ length: 6 }, () => open(env.saKubeconfig));
  const results = await Promise.allSettled(racers.map((d, i) => d.acquireLock({ holder: `racer-${i}`, planId: `plan-${i}`, ttlSeconds: 2 })));
  const won = results.filter((r) => r.status === 'fulfilled');
  assert.is(won.length, 1, 'exactly one apply holds the lock');
  for (const r of results) if (r.status === 'rejected') assert.instance(r.reason, LockHeldError);
  const lock = (won[0] as PromiseFulfilledResult<any>).value;
  const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
  assert.is(loser.reason.lockId, lock.lockId);
  assert.is(loser.reason.holder, lock.holder);
  const d = racers[0];
  const read = await d.readLock();
  assert.is(read?.lockId, lock.lockId);
  assert.is(read?.ttlSeconds, 2);
  const renewed = await racers[1].renewLock(lock.lockId);
  assert.is(renewed.lockId, lock.lockId);
  await rejects(
    () => d.renewLock('not-the-id'),
    (e) => e instanceof LockLostError,
  );
  assert.is(await d.releaseLock('not-the-id'), false);
  // Expiry: nobody renews for longer than the TTL; the next apply takes the lock over.
  await sleep(2300);
  const next = await d.acquireLock({ holder: 'next', planId: 'plan-next', ttlSeconds: 30 });
  assert.is.not(next.lockId, lock.lockId);
  await rejects(
    () => racers[2].renewLock(lock.lockId),
    (e) => e instanceof LockLostError,
  );
  const snap = await d.snapshot();
  assert.is(snap.lock?.spec!.holderIdentity, 'next');
  assert.is(snap.lock?.metadata.annotations?.['bootcplan.dev/plan-id'], 'plan-next');
  assert.is(await d.releaseLock(next.lockId), true);
  assert.is(await d.readLock(), null);
});

// Plan ids as the planner makes them: run records with any other planId are refused on read
// (src/cluster/run-record.ts).
const P1 = '0123456789abcdef';
const P2 = 'fedcba9876543210';

t('progress: the run record written against its resourceVersion, node entries on the Nodes, read back by a rerun and `status`', async () => {
  const d = open(env.saKubeconfig);
  assert.equal(await d.readProgress(), { run: null, version: null, nodes: {} });
  const p: ProgressRecord = {
    planId: P1,
    startedAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    changesApplied: true,
    pools: { worker: { wavesDone: 1, done: false } },
    done: false,
  };
  const v1 = await d.writeProgress(p, null);
  const v2 = await d.writeProgress({ ...p, updatedAt: '2026-01-01T00:01:00Z' }, v1);
  // A second apply that read the record before: its write against the old version is refused.
  await rejects(
    () => d.writeProgress({ ...p, planId: P2 }, v1),
    (e) => e instanceof ProgressMovedError && e instanceof LockLostError,
  );
  await rejects(
    () => d.writeProgress({ ...p, planId: P2 }, null),
    (e) => e instanceof ProgressMovedError,
  );
  // A node's entry goes with the cordon, in one write; alone otherwise.
  const entry = { planId: P1, pool: 'worker', wave: 1, step: 'cordon' as const, wasCordoned: false };
  assert.is(await d.cordon('w-2', P1, entry), 'cordoned');
  await d.writeNodeProgress('w-1', { ...entry, step: 'reboot', rebootAt: '2026-01-01T00:02:00Z', rebootKind: 'hard' });
  const back = await open(env.saKubeconfig).readProgress(); // a fresh process: GET + one LIST of nodes
  assert.equal(back.run, { ...p, updatedAt: '2026-01-01T00:01:00Z' });
  assert.is(back.version, v2);
  assert.equal(back.nodes, { 'w-1': { ...entry, step: 'reboot', rebootAt: '2026-01-01T00:02:00Z', rebootKind: 'hard' }, 'w-2': entry });
  assert.is(await d.uncordon('w-2', P1, { ...entry, step: 'done' }), 'uncordoned');
  const n = await env.admin.request('GET', '/api/v1/nodes/w-2');
  assert.not.ok(n.spec.unschedulable);
  assert.is(JSON.parse(n.metadata.annotations['bootcplan.dev/progress']).step, 'done');
  const snap = await d.snapshot();
  assert.is(snap.progress?.data?.['plan-id'], P1);
});

t('drain: evictions, DaemonSet and mirror pods skipped, a PodDisruptionBudget refusal (429) retried', async () => {
  const agent = await new NodeAgent(env.admin).start();
  try {
    const d = open(env.saKubeconfig);
    const pod = (name: string, extra: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels, ...extra },
      spec: { nodeName: 'w-2', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
    });
    await createWithStatus(env.admin, pod('web-1') as any);
    await createWithStatus(env.admin, {
      ...pod('guarded', {}, { app: 'db' }),
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    } as any);
    await createWithStatus(
      env.admin,
      pod('ds-agent', {
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: '0b0b0b0b-0000-0000-0000-000000000001', controller: true }],
      }) as any,
    );
    await createWithStatus(env.admin, pod('static-w-2', { annotations: { 'kubernetes.io/config.mirror': 'abc' } }) as any);
    // No disruption controller runs: the test writes the PDB status itself (0 allowed).
    await createWithStatus(env.admin, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'db', namespace: 'default' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } },
      status: { observedGeneration: 1, disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
    } as any);
    await rejects(
      () => d.drain('w-2', { timeoutSeconds: 5 }),
      (e) => e instanceof DriverError && /not cordoned/.test(e.message),
    );
    await d.cordon('w-2', 'test');
    // Blocked by the PDB: times out and names the pod and the refusal.
    const e = await rejects(
      () => d.drain('w-2', { timeoutSeconds: 1 }),
      (e) => e instanceof DrainTimeoutError,
    );
    assert.match(e.message, /default\/guarded \(.*disruption budget/i);
    // The budget frees up while the drain retries.
    const started = Date.now();
    const before = requestStats('bootcplan@testenv').byVerbResource;
    setTimeout(() => {
      env.admin
        .request('PATCH', '/apis/policy/v1/namespaces/default/poddisruptionbudgets/db/status', {
          body: { status: { disruptionsAllowed: 1 } },
          contentType: 'application/merge-patch+json',
        })
        .catch((e) => console.error('PDB status:', e.message));
    }, 700);
    await d.drain('w-2', { timeoutSeconds: 10 });
    assert.ok(Date.now() - started >= 600, 'waited for the budget');
    // The node's pods came from one watch that streamed them first where the server can
    // (WatchList; kube-apiserver 1.35 on an etcd with RequestWatchProgress), else from a list
    // and a watch; the first drain found out which, so this one tries nothing else.
    const after = requestStats('bootcplan@testenv').byVerbResource;
    const delta = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
    assert.is(delta('WATCH pods'), 1, JSON.stringify(after));
    assert.ok(delta('GET pods') <= 1, JSON.stringify(after));
    const pods = await env.admin.request('GET', '/api/v1/namespaces/default/pods');
    assert.equal(pods.items.map((p: any) => p.metadata.name).sort(), ['ds-agent', 'static-w-2']);
    await d.uncordon('w-2', 'test');
  } finally {
    agent.stop();
  }
});

t('waitFor: resolves on a watch event, survives the server ending watches, times out with null, aborts', async () => {
  const d = open(env.saKubeconfig, { watchTimeoutSeconds: 1 });
  const label = (v: string) =>
    env.admin.request('PATCH', '/api/v1/nodes/w-1', { body: { metadata: { labels: { 'e2e/mark': v } } }, contentType: 'application/merge-patch+json' });
  assert.is(await d.waitFor((s) => s.nodes.length === 2 && 'two', { timeoutSeconds: 5 }), 'two');
  const t0 = Date.now();
  setTimeout(() => void label('a'), 300);
  const v = await d.waitFor((s) => s.nodes.find((n) => n.metadata.labels?.['e2e/mark'] === 'a')?.metadata.name, { timeoutSeconds: 10 });
  assert.is(v, 'w-1');
  assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
  // The server ends every watch after 1 s here; changes are still seen after resuming.
  await sleep(2500);
  setTimeout(() => void label('b'), 100);
  assert.is(await d.waitFor((s) => s.nodes.some((n) => n.metadata.labels?.['e2e/mark'] === 'b'), { timeoutSeconds: 10 }), true);
  assert.ok(d.watchStats().watches >= 2 * 14, `watches resumed (${JSON.stringify(d.watchStats())})`);
  assert.is(await d.waitFor(() => false, { timeoutSeconds: 0.3 }), null);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  await rejects(
    () => d.waitFor(() => false, { timeoutSeconds: 10, signal: ac.signal }),
    (e) => e instanceof AbortedError,
  );
  // Our own writes are visible to the next wait at once.
  await d.cordon('w-1', 'test');
  assert.is(await d.waitFor((s) => s.nodes.find((n) => n.metadata.name === 'w-1')?.spec?.unschedulable === true, { timeoutSeconds: 0 }), true);
  await d.uncordon('w-1', 'test');
});

t.run();
