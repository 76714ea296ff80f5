/**
 * `onFailure: rollback` on the real API server with a real Prometheus (docs/apply.md "Rollback",
 * "Health gates"): the built CLI's `apply -f` as the ServiceAccount of examples/rbac.yaml, the
 * node agent playing bootc-operator and its daemons, Prometheus scraping an exporter in this
 * process whose gauge e2e_workload_broken turns 1 once `threshold` BootcNodes boot the new image
 * (the alert E2EWorkloadBroken then fires: no timer in the test).
 * - scope run, the alert firing once wave 1 boots the new image: the apply rolls wave 1 back at
 *   once and exits 5 (RolledBack); Events for the failure and the rollback; every wave-1 node
 *   back on its previous image and schedulable; no node of a later wave cordoned or asked to
 *   boot the new image; the pool's image back to the origin; the lock released; no node
 *   rebooted more than twice;
 * - scope wave, the alert firing once wave 2 boots it: only wave 2 goes back, wave 1 stays on
 *   the new image, wave 3 is never touched.
 * Six bootc workers in three zones, maxUnavailable 2: three waves.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { tempDir, setupEnv, resetCluster, loadObjects, type TestEnv } from './env.ts';
import { NodeAgent } from './agent.ts';
import { installCrd, docsOf } from './gitops-dry-run.ts';
import { startPrometheus, BROKEN_ALERT, type PrometheusHandle } from './prometheus.ts';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD } from '../support/cluster.ts';
import { run } from '../support/built.ts';
import { readLiveSnapshot } from '../../src/kube/read.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { BOOTC_NODE, NODE } from '../../src/kube/resources.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG } from '../../src/domain/labels.ts';
import { AlreadyExistsError, NotFoundError } from '../../src/apply/ports/driver.ts';
import { io as capturedIO } from '../support/cli.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const OLD_DIGEST = OLD.slice(OLD.indexOf('@') + 1);
const t = suite('e2e: onFailure rollback with a real Prometheus');
const NS = 'openshift-bootcplan';
const ROLLOUTS = `/apis/bootcplan.dev/v1alpha1/namespaces/${NS}/rollouts`;
const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'];
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
let env: TestEnv;
let prom: PrometheusHandle;
let agent: NodeAgent | null = null;
let bootcNodes: Reflector;
let nodeObjects: Reflector;
let dir: string;
/** e2e_workload_broken is 1 while at least this many nodes run the new image (0: never). */
let threshold = 0;
/** How many nodes run the new image: BootcNodes booting it, or (MCO pool) Nodes past their pre-run config. */
let onNew: () => number = () => 0;

type AnyObject = { metadata: { name: string }; spec?: any; status?: any };
const bootedDigest = (bn: AnyObject) => bn.status?.booted?.imageDigest as string | undefined;
const onNewImage = () => [...bootcNodes.items.values()].filter((bn) => bootedDigest(bn as AnyObject) === NEW_DIGEST).length;
const currentConfig = (n: AnyObject): string | undefined =>
  (n as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.[MCO_CURRENT_CONFIG];
const desiredConfig = (n: AnyObject): string | undefined =>
  (n as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.[MCO_DESIRED_CONFIG];
/** MCO nodes on another config than the one the pool ran before (ClusterBuilder.mcoPool: rendered-<pool>-0001, the old image). */
const offOrigin = (pool: string) => () =>
  [...nodeObjects.items.values()].filter(
    (n) => (currentConfig(n as AnyObject) ?? '').startsWith(`rendered-${pool}-`) && currentConfig(n as AnyObject) !== `rendered-${pool}-0001`,
  ).length;
const events = (ndjson: string) =>
  ndjson
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/**
 * What each node went through, from every watch event of the run: cordoned at some point, asked
 * to boot the new image (desiredImage NEW with desiredImageState Booted), the images it booted.
 */
class History {
  cordoned = new Set<string>();
  askedToBootNew = new Set<string>();
  /** MCO: every desiredConfig a node was given. */
  desired = new Map<string, Set<string>>();
  booted = new Map<string, string[]>();
  private stops: (() => void)[] = [];
  constructor() {
    const seeNodes = () => {
      for (const n of nodeObjects.items.values() as Iterable<AnyObject>) {
        if (n.spec?.unschedulable) this.cordoned.add(n.metadata.name);
        const d = desiredConfig(n);
        if (d) this.desired.set(n.metadata.name, (this.desired.get(n.metadata.name) ?? new Set()).add(d));
      }
    };
    const seeBootcNodes = () => {
      for (const bn of bootcNodes.items.values() as Iterable<AnyObject>) {
        const name = bn.metadata.name;
        if (bn.spec?.desiredImage === NEW && bn.spec?.desiredImageState === 'Booted') this.askedToBootNew.add(name);
        const list = this.booted.get(name) ?? [];
        const d = bootedDigest(bn);
        if (d && list[list.length - 1] !== d) list.push(d);
        this.booted.set(name, list);
      }
    };
    seeNodes();
    seeBootcNodes();
    this.stops.push(nodeObjects.onChange(seeNodes), bootcNodes.onChange(seeBootcNodes));
  }
  stop() {
    for (const s of this.stops) s();
  }
}

/**
 * A fresh cluster, its Rollout object (for the status) and node agent; returns the spec file.
 * The workload breaks from `brokenAt` nodes on the new image, armed only once the watches show
 * the fresh cluster (an earlier scenario's nodes would fire the alert before the first write).
 */
async function scenario(healthChecks: unknown[], brokenAt: number, backend: 'bootc' | 'mco' = 'bootc'): Promise<string> {
  agent?.stop();
  await resetCluster(env.admin);
  const members = WORKERS.map((name, i) => ({ name, zone: ZONES[i % 3] }));
  const b = new ClusterBuilder();
  await loadObjects(
    env.admin,
    (backend === 'bootc' ? b.bootcPool('worker', members, { maxUnavailable: 1 }) : b.mcoPool('worker', members, { maxUnavailable: 1 })).objects,
  );
  onNew = backend === 'bootc' ? onNewImage : offOrigin('worker');
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 5, drainTimeoutSeconds: 60 }], { healthChecks });
  await env.admin.request('DELETE', `${ROLLOUTS}/test`).catch((e) => {
    if (!(e instanceof NotFoundError)) throw e;
  });
  for (let i = 0; ; i++) {
    try {
      await env.admin.request('POST', ROLLOUTS, {
        body: { apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 'test', namespace: NS }, spec: parse(text).spec },
      });
      break;
    } catch (e) {
      if (!(e instanceof AlreadyExistsError) || i > 50) throw e; // still being deleted
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  agent = await new NodeAgent(env.admin, { scale: 1 }).start();
  const file = join(dir, `spec-${Date.now()}.yaml`);
  writeFileSync(file, text);
  for (let i = 0; onNew() > 0; i++) {
    if (i > 100) throw new Error(`${onNew()} node(s) on the new image in a fresh cluster`);
    await new Promise((r) => setTimeout(r, 50));
  }
  threshold = brokenAt;
  return file;
}

async function apply(file: string) {
  const io = capturedIO();
  const t0 = Date.now();
  const code = await run(['apply', '-f', file, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json'], { io });
  return { code, out: io.out, err: io.err, evs: events(io.out), seconds: (Date.now() - t0) / 1000 };
}

/** Runs `fn` (which arms the broken workload: scenario()); afterwards the alert is resolved again. */
async function broken(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } finally {
    threshold = 0;
    await prom.waitForAlert(BROKEN_ALERT, false);
  }
}

/** The Events bootcplan reported with `reason` since `since` (object names repeat across suites). */
async function eventsOf(namespace: string, reason: string, since: number): Promise<any[]> {
  const list = await env.admin.request('GET', `/api/v1/namespaces/${namespace}/events`, { query: { fieldSelector: `reason=${reason}` } });
  return list.items.filter((e: any) => Date.parse(e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp) >= since - 1000);
}

const alertCheck = (scope: 'run' | 'wave') => ({
  name: 'no-critical-alerts',
  intervalSeconds: 1,
  successes: 3,
  timeoutSeconds: 30,
  onFailure: 'rollback',
  scope,
  alerts: { url: prom.url, auth: 'none', matchers: ['severity="critical"'], heartbeat: 'Watchdog' },
});

/** Seconds between the first event of `a` and the first of `b` in an apply's events. */
const between = (evs: any[], a: (e: any) => boolean, b: (e: any) => boolean) => evs.find(b).t - evs.find(a).t;
const rebootsOf = (node: string) => agent!.log.filter((r) => r.node === node && r.what === 'reboot').length;

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-rollback-on-failure-');
  for (const crd of docsOf(readFileSync(join(ROOT, 'deploy/rollout-crd.yaml'), 'utf8'))) await installCrd(env.admin, crd);
  bootcNodes = new Reflector(env.admin, BOOTC_NODE);
  nodeObjects = new Reflector(env.admin, NODE);
  await Promise.all([bootcNodes.start(), nodeObjects.start()]);
  prom = await startPrometheus({ e2e_workload_broken: () => (threshold && onNew() >= threshold ? 1 : 0) });
  console.log(`  prometheus: ready ${prom.startSeconds.toFixed(1)} s after the start`);
});

t.after(async () => {
  agent?.stop();
  bootcNodes?.stop();
  nodeObjects?.stop();
  await prom?.stop();
});

t(
  'scope run: an alert that fires once wave 1 boots the new image rolls wave 1 back at once: exit 5 RolledBack, Events, the pool at its origin, no later node touched, at most 2 reboots a node',
  () =>
    broken(async () => {
      const file = await scenario([alertCheck('run')], 1);
      const history = new History();
      const since = Date.now();
      const r = await apply(file);
      history.stop();
      assert.is(r.code, 5, r.err);
      assert.equal(agent!.errors, []);
      assert.match(
        r.err,
        /rolled back 2 node\(s\) of worker to the image each booted before: health check no-critical-alerts failed: 1 firing alert matches severity="critical": E2EWorkloadBroken/,
      );

      // The forward run stopped after wave 1; the gate failed asking for the rollback.
      const forward = r.evs.filter((e) => e.type === 'wave-start' && !e.rollback);
      assert.equal(
        forward.map((e) => e.wave),
        [1],
        'no forward wave after the first',
      );
      const wave1: string[] = forward[0].nodes;
      assert.is(wave1.length, 2);
      const fail = r.evs.find((e) => e.type === 'gate-fail');
      assert.equal([fail.check, fail.point, fail.wave, fail.reason, fail.onFailure], ['no-critical-alerts', 'afterWave', 1, 'condition', 'rollback']);
      const start = r.evs.find((e) => e.type === 'rollback-start');
      assert.ok(start, 'a rollback-start event');
      assert.equal([start.scope, start.nodes, start.pools], ['run', 2, ['worker']]);
      const done = r.evs.find((e) => e.type === 'rollback-done');
      assert.ok(done, 'a rollback-done event');
      assert.equal([...done.nodes].sort(), [...wave1].sort());
      assert.equal(
        r.evs
          .filter((e) => e.type === 'cordon' && e.rollback)
          .map((e) => e.node)
          .sort(),
        [...wave1].sort(),
        'the rollback cordoned exactly wave 1',
      );

      // What the cluster shows.
      const snap = await readLiveSnapshot(env.admin);
      assert.is(snap.bootcNodePools[0].spec?.image?.ref, OLD, "the pool's image is the origin again");
      for (const bn of snap.bootcNodes) assert.is(bn.status?.booted?.imageDigest, OLD_DIGEST, `${bn.metadata.name} boots its previous image`);
      for (const n of snap.nodes) assert.not.ok(n.spec?.unschedulable, `${n.metadata.name} schedulable`);
      assert.is(snap.lock, null, 'the lock is released');
      const later = WORKERS.filter((n) => !wave1.includes(n));
      for (const n of wave1) assert.equal(history.booted.get(n), [OLD_DIGEST, NEW_DIGEST, OLD_DIGEST], `${n}: old, new, old again`);
      for (const n of later) {
        assert.not.ok(history.cordoned.has(n), `${n} was never cordoned`);
        assert.not.ok(history.askedToBootNew.has(n), `${n} was never asked to boot the new image`);
        assert.equal(history.booted.get(n), [OLD_DIGEST], `${n} never booted another image`);
      }
      for (const n of WORKERS) {
        assert.ok(rebootsOf(n) <= 2, `${n}: ${rebootsOf(n)} reboots`);
        assert.is(rebootsOf(n), wave1.includes(n) ? 2 : 0, `${n}: ${rebootsOf(n)} reboots`);
      }

      // The status and the Events a user reads.
      const st = (await env.admin.request('GET', `${ROLLOUTS}/test`)).status;
      assert.equal([st.phase, st.reason], ['Degraded', 'RolledBack'], JSON.stringify(st));
      assert.match(st.message, /rolled back 2 node\(s\).*no-critical-alerts.*E2EWorkloadBroken/);
      const hc = st.healthCheck;
      assert.equal(
        [hc?.name, hc?.point, hc?.pool, hc?.wave, hc?.result],
        ['no-critical-alerts', 'afterWave', 'worker', 1, 'failed'],
        `the failed evaluation is recorded: ${JSON.stringify(hc)}`,
      );
      assert.match(hc.observed, /E2EWorkloadBroken/);
      const failed = (await eventsOf('default', 'HealthCheckFailed', since)).filter(
        (e: any) => e.regarding?.kind === 'BootcNodePool' || e.involvedObject?.kind === 'BootcNodePool',
      );
      assert.ok(
        failed.some((e: any) => /no-critical-alerts failed after wave 1.*on failure: rollback.*E2EWorkloadBroken/.test(e.note ?? e.message)),
        'a HealthCheckFailed Event on the pool',
      );
      const rolledBack = await eventsOf('default', 'NodeRolledBack', since);
      assert.equal(rolledBack.map((e: any) => (e.regarding ?? e.involvedObject).name).sort(), [...wave1].sort(), 'a NodeRolledBack Event per wave-1 node');
      assert.ok(
        (await eventsOf(NS, 'RollbackFinished', since)).some((e: any) => /rolled back 2 node/.test(e.note ?? e.message)),
        'a RollbackFinished Event on the Rollout',
      );

      const rollout = between(
        r.evs,
        (e) => e.type === 'wave-start',
        (e) => e.type === 'gate-start' && e.point === 'afterWave',
      );
      const rollback = done.t - start.t;
      console.log(
        `  scope run: apply ${r.seconds.toFixed(1)} s: wave 1 and its soak ${rollout.toFixed(1)} s, the failing gate ${fail.seconds.toFixed(1)} s, the rollback of 2 nodes ${rollback.toFixed(1)} s`,
      );
    }),
);

t('scope wave: an alert that fires once wave 2 boots the new image rolls back wave 2 only; wave 1 keeps the new image, wave 3 is never touched', () =>
  broken(async () => {
    const file = await scenario([alertCheck('wave')], 3);
    const history = new History();
    const r = await apply(file);
    history.stop();
    assert.is(r.code, 5, r.err);
    assert.equal(agent!.errors, []);
    const forward = r.evs.filter((e) => e.type === 'wave-start' && !e.rollback);
    assert.equal(
      forward.map((e) => e.wave),
      [1, 2],
      'no forward wave after the second',
    );
    const [wave1, wave2]: string[][] = forward.map((e) => e.nodes);
    const fail = r.evs.find((e) => e.type === 'gate-fail');
    assert.equal([fail.point, fail.wave, fail.onFailure], ['afterWave', 2, 'rollback']);
    const start = r.evs.find((e) => e.type === 'rollback-start');
    assert.equal([start.scope, start.nodes], ['wave', 2]);
    assert.equal([...r.evs.find((e) => e.type === 'rollback-done').nodes].sort(), [...wave2].sort());

    const snap = await readLiveSnapshot(env.admin);
    const digest = (n: string) => snap.bootcNodes.find((bn) => bn.metadata.name === n)?.status?.booted?.imageDigest;
    for (const n of wave1) assert.is(digest(n), NEW_DIGEST, `${n} (wave 1) keeps the new image`);
    for (const n of wave2) assert.is(digest(n), OLD_DIGEST, `${n} (wave 2) boots its previous image again`);
    const wave3 = WORKERS.filter((n) => !wave1.includes(n) && !wave2.includes(n));
    for (const n of wave3) {
      assert.is(digest(n), OLD_DIGEST);
      assert.not.ok(history.cordoned.has(n) || history.askedToBootNew.has(n), `${n} (wave 3) never cordoned nor asked to boot the new image`);
    }
    for (const n of snap.nodes) assert.not.ok(n.spec?.unschedulable, `${n.metadata.name} schedulable`);
    assert.is(snap.lock, null, 'the lock is released');
    for (const n of WORKERS) assert.is(rebootsOf(n), wave2.includes(n) ? 2 : wave1.includes(n) ? 1 : 0, `${n}: ${rebootsOf(n)} reboots`);
    const st = (await env.admin.request('GET', `${ROLLOUTS}/test`)).status;
    assert.equal([st.phase, st.reason], ['Degraded', 'RolledBack'], JSON.stringify(st));
    console.log(
      `  scope wave: apply ${r.seconds.toFixed(1)} s; the failing gate ${fail.seconds.toFixed(1)} s, the rollback of wave 2 ${(r.evs.find((e) => e.type === 'rollback-done').t - start.t).toFixed(1)} s`,
    );
  }),
);

t(
  "MCO pool, scope run: an alert that fires once wave 1 runs the new config: bootcplan's MachineConfig deleted, the pool renders its previous config again, wave 1 moves back to it; no later node touched; at most 2 reboots a node",
  () =>
    broken(async () => {
      const file = await scenario([alertCheck('run')], 1, 'mco');
      const history = new History();
      const r = await apply(file);
      history.stop();
      assert.is(r.code, 5, r.err);
      assert.equal(agent!.errors, []);
      const forward = r.evs.filter((e) => e.type === 'wave-start' && !e.rollback);
      assert.equal(
        forward.map((e) => e.wave),
        [1],
        'no forward wave after the first',
      );
      const fail = r.evs.find((e) => e.type === 'gate-fail');
      assert.equal([fail.point, fail.wave, fail.onFailure], ['afterWave', 1, 'rollback']);
      const start = r.evs.find((e) => e.type === 'rollback-start');
      const done = r.evs.find((e) => e.type === 'rollback-done');
      assert.ok(start && done, 'rollback-start and rollback-done');
      // The MCO picks the nodes of a wave itself (bootcplan unpauses until it took the wave's count):
      // wave 1 is the nodes it gave the run's config.
      const runConfig = [...new Set([...history.desired.values()].flatMap((d) => [...d]))].filter((c) => c !== 'rendered-worker-0001');
      assert.is(runConfig.length, 1, `one config of the run: ${runConfig.join(', ')}`);
      const wave1 = WORKERS.filter((n) => history.desired.get(n)?.has(runConfig[0]));
      assert.is(wave1.length, 2, `wave 1: ${wave1.join(', ')}`);
      assert.equal([...done.nodes].sort(), wave1, 'the rollback took exactly the nodes of wave 1');

      const mcp = await env.admin.request('GET', '/apis/machineconfiguration.openshift.io/v1/machineconfigpools/worker');
      assert.is(mcp.spec.configuration.name, 'rendered-worker-0001', 'the pool runs its pre-run config again');
      await env.admin.request('GET', '/apis/machineconfiguration.openshift.io/v1/machineconfigs/99-worker-zz-bootcplan-os-image').then(
        () => assert.unreachable("bootcplan's MachineConfig is gone"),
        (e) => assert.instance(e, NotFoundError),
      );
      const snap = await readLiveSnapshot(env.admin);
      for (const n of snap.nodes) {
        assert.is(currentConfig(n as AnyObject), 'rendered-worker-0001', `${n.metadata.name} on the pre-run config`);
        assert.not.ok(n.spec?.unschedulable, `${n.metadata.name} schedulable`);
      }
      assert.is(snap.lock, null, 'the lock is released');
      for (const n of WORKERS.filter((x) => !wave1.includes(x))) {
        assert.not.ok(history.cordoned.has(n), `${n} was never cordoned`);
        assert.equal([...(history.desired.get(n) ?? [])], ['rendered-worker-0001'], `${n} was never given the run's config`);
      }
      // The MCD reboots a node once per config it applies (agent.ts: `mcd <config>`, then `mcd done`).
      const mcdRuns = (n: string) => agent!.log.filter((x) => x.node === n && x.what.startsWith('mcd rendered-')).length;
      for (const n of WORKERS) assert.is(mcdRuns(n), wave1.includes(n) ? 2 : 0, `${n}: ${mcdRuns(n)} reboots`);
      const st = (await env.admin.request('GET', `${ROLLOUTS}/test`)).status;
      assert.equal([st.phase, st.reason], ['Degraded', 'RolledBack'], JSON.stringify(st));
      console.log(
        `  MCO pool, scope run: apply ${r.seconds.toFixed(1)} s; the failing gate ${fail.seconds.toFixed(1)} s, the rollback of 2 nodes ${(done.t - start.t).toFixed(1)} s`,
      );
    }),
);

t.run();
