/**
 * The lock that holds, on the real API server (docs/apply.md, the lock and "Stopping"):
 * - a second apply takes the Lease mid-wave: the first apply stops before its next disruptive
 *   step (exit 4), and the saved plan applied again finishes, each node rebooted once;
 * - a real `bootcplan apply` process sent SIGTERM while an MCO pool is unpaused for a wave: it
 *   exits 143 with one line, the pool paused again, the lock released; the rerun finishes;
 * - expiry is judged by observed time: a live holder whose clock is an hour behind keeps its
 *   Lease, a dead holder whose clock was a day ahead loses it after one lease duration;
 * - `apply --step` meets a Lease in 2099 that nobody renews: exit 0 with a clock-skew warning,
 *   what it saw kept in the Rollout status (the CRD's schema keeps status.lockObserved), and a
 *   run ten minutes later by its clock exits 4 (docs/apply.md "Clocks and skew").
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inDir, io } from '../support/cli.ts';
import { tempDir, setupEnv, resetCluster, loadObjects, driverFor, type TestEnv } from './env.ts';
import { rejects, sleep } from './helpers.ts';
import { NodeAgent } from './agent.ts';
import { ClusterBuilder, specYaml, NEW } from '../support/cluster.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { NODE, BOOTC_NODE } from '../../src/kube/resources.ts';
import { wallClock } from '../../src/kube/driver.ts';
import { ensureBuilt, run } from '../support/built.ts';
import { Lease } from '../../src/apply/engine/lease.ts';
import { LockHeldError } from '../../src/base/errors.ts';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { NotFoundError, AlreadyExistsError } from '../../src/apply/ports/driver.ts';
import type { CliIO, DriverFactory } from '../../src/app/ports.ts';
import type { TestObject } from '../support/cluster.ts';

const t = suite('e2e: lock');
let env: TestEnv;
let agent: NodeAgent | null = null;
let dir: string;
const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'];

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-lock-');
});
t.after(() => agent?.stop());

/** When each node was first seen cordoned, and its BootcNode first asked to reboot (ms, wall clock). */
class FirstSeen {
  readonly cordoned = new Map<string, number>();
  readonly booted = new Map<string, number>();
  private nodes = new Reflector(env.admin, NODE);
  private bns = new Reflector(env.admin, BOOTC_NODE);
  constructor() {
    this.nodes.onChange(() => {
      for (const n of this.nodes.items.values() as Iterable<TestObject>)
        if (n.spec?.unschedulable && !this.cordoned.has(n.metadata.name)) this.cordoned.set(n.metadata.name, Date.now());
    });
    this.bns.onChange(() => {
      for (const b of this.bns.items.values() as Iterable<TestObject>)
        if (b.spec?.desiredImageState === 'Booted' && !this.booted.has(b.metadata.name)) this.booted.set(b.metadata.name, Date.now());
    });
  }
  async start() {
    await Promise.all([this.nodes.start(), this.bns.start()]);
    return this;
  }
  stop() {
    this.nodes.stop();
    this.bns.stop();
  }
}

t(
  'a second apply takes the Lease mid-wave: the first stops before its next disruptive step (exit 4); the plan applied again finishes, each node rebooted once',
  async () => {
    agent?.stop();
    await resetCluster(env.admin);
    await loadObjects(
      env.admin,
      new ClusterBuilder().bootcPool(
        'worker',
        WORKERS.map((name) => ({ name })),
      ).objects,
    );
    // Slow enough (5 ms per simulated second: a reboot takes 1.5 s) that the next step is clearly later.
    agent = await new NodeAgent(env.admin, { scale: 5 }).start();
    const spec = join(dir, 'steal.yaml');
    writeFileSync(spec, specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]));
    const planFile = join(dir, 'steal-plan.json');
    const p = io();
    assert.is(await run(['plan', '-f', spec, '--kubeconfig', env.saKubeconfig, '--out', planFile], { io: p }), 0, p.err);
    const seen = await new FirstSeen().start();
    const thief = driverFor(env.saKubeconfig);
    // Assigned in the stdout callback: declared so that TypeScript does not narrow it to null.
    let stolen = null as Promise<number> | null;
    const cap = io();
    const hooked: CliIO = {
      ...cap,
      stdout: (s) => {
        cap.stdout(s);
        // At the first reboot: someone runs `unlock` on this live apply, and a CronJob's apply takes the lock.
        if (!stolen && /"type":"reboot"/.test(s)) {
          stolen = (async () => {
            const cur = (await thief.readLock())!;
            assert.ok(await thief.releaseLock(cur.lockId));
            await thief.acquireLock({ holder: 'cronjob@cluster', planId: 'other', ttlSeconds: 300 });
            return Date.now();
          })();
        }
      },
    };
    const code = await inDir(dir, () => run(['apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: hooked }));
    const endedAt = Date.now();
    assert.ok(stolen, `no reboot event: ${cap.out}\n${cap.err}`);
    const stolenAt = await stolen!;
    seen.stop();
    assert.is(code, 4, cap.err);
    // Seen on the watch at once: the unlock (the Lease deleted), or already the new holder's Lease.
    assert.match(
      cap.err,
      /error: this apply lost its lock \(lock id [0-9a-f]+\): (its Lease was deleted \(bootcplan unlock\?\)|the Lease is now held by cronjob@cluster)/,
      cap.err,
    );
    assert.ok(endedAt - stolenAt < 3000, `stopped ${endedAt - stolenAt} ms after the lock was taken (it did not wait for the reboots)`);
    // Nothing disruptive after the lock was taken (the watch brings the new Lease within milliseconds).
    const late = [...seen.cordoned, ...seen.booted].filter(([, at]) => at > stolenAt + 300);
    assert.equal(late, [], `written after the lock was taken at ${stolenAt}: ${JSON.stringify(late)}`);
    assert.ok(seen.booted.size < WORKERS.length, 'later waves were not started');
    const snap = await thief.snapshot();
    assert.is(snap.lock?.spec?.holderIdentity, 'cronjob@cluster', "the first apply left the new holder's lock alone");
    // The CronJob's apply goes away; the saved plan applied again resumes and finishes.
    assert.ok(await thief.releaseLock((await thief.readLock())!.lockId));
    thief.close();
    const again = io();
    assert.is(await inDir(dir, () => run(['apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: again })), 0, again.err);
    for (const n of WORKERS) assert.is(agent!.log.filter((r) => r.node === n && r.what === 'reboot').length, 1, `${n} rebooted exactly once`);
    assert.equal(agent!.errors, []);
  },
);

t(
  'SIGTERM to a real apply process while an MCO pool is unpaused: exit 143, one line, pool paused again, lock released; the rerun finishes, each node rebooted once',
  async () => {
    agent?.stop();
    await resetCluster(env.admin);
    const INFRA = ['i-1', 'i-2', 'i-3'];
    await loadObjects(
      env.admin,
      new ClusterBuilder().mcoPool(
        'infra',
        INFRA.map((name) => ({ name })),
      ).objects,
    );
    agent = await new NodeAgent(env.admin, { scale: 5 }).start();
    const spec = join(dir, 'sigterm.yaml');
    writeFileSync(spec, specYaml([{ name: 'infra', image: NEW, maxUnavailable: 1, soakSeconds: 0 }]));
    const planFile = join(dir, 'sigterm-plan.json');
    const p = io();
    assert.is(await run(['plan', '-f', spec, '--kubeconfig', env.saKubeconfig, '--out', planFile], { io: p }), 0, p.err);
    const child = spawn(process.execPath, [ensureBuilt(), 'apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let sent = false;
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      // The MCO cordons the first node of wave 2: bootcplan has the pool unpaused for that wave.
      if (!sent && /"type":"cordon","pool":"infra","node":"[^"]+","wave":2/.test(out)) {
        sent = true;
        child.kill('SIGTERM');
      }
    });
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    assert.ok(sent, `no wave 2: ${out}\n${err}`);
    assert.is(code, 143, err);
    assert.match(err, /bootcplan: SIGTERM: stopping at the next safe point/);
    assert.match(err, /\nbootcplan: stopped by SIGTERM in pool infra, wave 2: .*lock is released; run apply again to continue\n$/);
    const snap = await (await import('../../src/kube/read.ts')).readLiveSnapshot(env.admin);
    assert.is(snap.machineConfigPools.find((m) => m.metadata.name === 'infra')?.spec?.paused, true, 'paused again: the MCO takes no more nodes');
    assert.is(snap.lock, null, 'lock released');
    const rec = JSON.parse(snap.progress!.data!['run.json']);
    assert.is(rec.pools.infra.interrupted?.wave, 2);
    const again = io();
    assert.is(await inDir(dir, () => run(['apply', planFile, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io: again })), 0, again.err);
    // The MCO's daemon (the agent) records `mcd <config>` when it starts a node's update and reboot.
    for (const n of INFRA)
      assert.is(
        agent!.log.filter((r) => r.node === n && r.what.startsWith('mcd ') && r.what !== 'mcd done').length,
        1,
        `${n} updated and rebooted exactly once`,
      );
    assert.equal(agent!.errors, []);
  },
);

/** A driver whose clock is `skew` seconds off (it writes renewTime from it). */
const skewed = (skew: number) =>
  driverFor(env.saKubeconfig, { clock: { now: () => wallClock.now() + skew, sleep: (seconds, signal) => wallClock.sleep(seconds, signal) } });

t('expiry by observed time: a live holder an hour behind keeps its Lease; a dead holder a day ahead loses it after one lease duration', async () => {
  await resetCluster(env.admin);
  const req = { holder: 'contender', planId: 'p', ttlSeconds: 30 };
  // A live holder whose clock is an hour behind: its renewTime is an hour old by ours, but it keeps changing.
  const behind = skewed(-3600);
  const lock = await behind.acquireLock({ holder: 'behind@elsewhere', planId: 'p0', ttlSeconds: 2 });
  let renewing = true;
  const renewer = (async () => {
    while (renewing) {
      await sleep(400);
      if (renewing) await behind.renewLock(lock.lockId);
    }
  })();
  const contender = driverFor(env.saKubeconfig);
  const t0 = Date.now();
  await rejects(
    () => Lease.acquire(contender, req, { timeoutSeconds: 4 }),
    (e) => e instanceof LockHeldError && e.holder === 'behind@elsewhere',
  );
  assert.ok(Date.now() - t0 >= 4000, 'it waited the whole timeout');
  renewing = false;
  await renewer;
  // It dies: 2 s after the contender first sees the Lease unchanged, the Lease is taken over.
  const t1 = Date.now();
  const took = await Lease.acquire(contender, req, { timeoutSeconds: 10 });
  const waited = (Date.now() - t1) / 1000;
  assert.ok(waited >= 1.5 && waited < 5, `taken over after ${waited}s`);
  assert.ok(await took.release());
  behind.close();
  // A dead holder whose clock was a day ahead: its renewTime lies a day in the future, and is
  // still taken over after one lease duration of observation (a clock comparison: never).
  const ahead = skewed(86400);
  await ahead.acquireLock({ holder: 'ahead@elsewhere', planId: 'p1', ttlSeconds: 2 });
  ahead.close();
  const fresh = driverFor(env.saKubeconfig);
  await rejects(
    () => fresh.acquireLock(req),
    (e) => e instanceof LockHeldError,
    'held at first sight',
  );
  const t2 = Date.now();
  const second = await Lease.acquire(fresh, req, { timeoutSeconds: 10 });
  assert.ok((Date.now() - t2) / 1000 < 5);
  assert.ok(await second.release());
  contender.close();
  fresh.close();
});

const ROLLOUTS = '/apis/bootcplan.dev/v1alpha1/namespaces/openshift-bootcplan/rollouts';

/** deploy/rollout-crd.yaml installed (Established) and a Rollout object `name` with `spec`, as a GitOps engine syncs it. */
async function rolloutObject(name: string, spec: unknown): Promise<void> {
  const crd = parse(readFileSync(join(process.cwd(), 'deploy/rollout-crd.yaml'), 'utf8'));
  await env.admin.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd }).catch((e) => {
    if (!(e instanceof AlreadyExistsError)) throw e;
  });
  for (let i = 0; i < 100; i++) {
    const got: any = await env.admin.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rollouts.bootcplan.dev');
    if (got.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True')) break;
    await sleep(100);
  }
  await env.admin.request('DELETE', `${ROLLOUTS}/${name}`).catch((e) => {
    if (!(e instanceof NotFoundError)) throw e;
  });
  for (let i = 0; i < 50; i++) {
    try {
      await env.admin.request('POST', ROLLOUTS, {
        body: { apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name, namespace: 'openshift-bootcplan' }, spec },
      });
      return;
    } catch (e) {
      if (!(e instanceof AlreadyExistsError)) throw e; // still being deleted
      await sleep(100);
    }
  }
}

t(
  "apply --step and a Lease in 2099 that nobody renews: exit 0 with a clock-skew warning and status.lockObserved kept; 10 minutes later by the run's clock: exit 4, LockStuck",
  async () => {
    await resetCluster(env.admin);
    await loadObjects(
      env.admin,
      new ClusterBuilder().bootcPool(
        'worker',
        WORKERS.slice(0, 2).map((name) => ({ name })),
      ).objects,
    );
    const text = specYaml([{ name: 'worker', image: NEW }]);
    const file = join(dir, 'skew-spec.yaml');
    writeFileSync(file, text);
    await rolloutObject('test', parse(text).spec);
    const dead = skewed(73 * 365 * 86400);
    await dead.acquireLock({ holder: 'laptop@2099', planId: 'p0', ttlSeconds: 2 });
    dead.close();
    const first = io();
    assert.is(await run(['apply', '-f', file, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--step'], { io: first }), 0, first.err);
    assert.match(first.err, /warning: clock skew: the lock Lease's renewTime 2099-\S+ is 7\dy ahead of this clock/);
    assert.match(first.err, /nothing to do now: another apply holds the lock: laptop@2099/);
    const kept: any = await env.admin.request('GET', `${ROLLOUTS}/test`);
    assert.is(kept.status?.lockObserved?.holder, 'laptop@2099', `the CRD keeps status.lockObserved: ${JSON.stringify(kept.status)}`);
    // The next CronJob run, 10 minutes later (its clock), sees the same record: stuck.
    const later: DriverFactory = async () => {
      const d = skewed(600);
      return { driver: d, holder: 'job-2@e2e', close: () => d.close() };
    };
    const second = io();
    assert.is(await run(['apply', '-f', file, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--step'], { io: second, openDriver: later }), 4, second.err);
    assert.match(second.err, /lock stuck: its holder has not renewed it/);
    const after: any = await env.admin.request('GET', `${ROLLOUTS}/test`);
    assert.equal([after.status?.phase, after.status?.reason, after.status?.lastExitCode], ['Degraded', 'LockStuck', 4]);
  },
);

t.run();
