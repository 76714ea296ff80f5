/**
 * Health gates on the real API server and a real Prometheus (docs/apply.md "Health gates";
 * docs/safety.md "Health checks"): `bootcplan apply` as the ServiceAccount of examples/rbac.yaml,
 * the node agent playing the bootc daemons, Prometheus scraping an exporter in this process
 * whose gauge e2e_workload_broken is, when the test breaks the workload, the number of BootcNodes
 * that boot the new image: the alert E2EWorkloadBroken fires once a node runs it, with no timer
 * in the test.
 * - a passing PromQL gate (and an alerts gate scoped away from the alert) lets the rollout finish;
 * - an alert that fires after wave 1 halts the rollout before wave 2: exit 5, the status
 *   HealthCheckFailed, an Event;
 * - Prometheus killed while wave 1 reboots: the gate after wave 1 fails "unreachable", exit 5;
 * - the token from a Secret and the CA from a ConfigMap through an https front: a pass with the
 *   right CA, a tls failure with another; the token in no output, status or Event;
 * - the same front echoing the token into the alert that halts the rollout: the label reads
 *   `[masked]`, and no 8-character piece of the token is in any output, status, Event or record.
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
import { startPrometheus, startTlsFront, tlsMaterial, BROKEN_ALERT, type PrometheusHandle, type TlsFront } from './prometheus.ts';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST } from '../support/cluster.ts';
import { run } from '../../src/cli/main.ts';
import { Reflector } from '../../src/kube/watch.ts';
import { BOOTC_NODE } from '../../src/kube/resources.ts';
import { AlreadyExistsError, NotFoundError } from '../../src/apply/ports/driver.ts';
import { io as capturedIO } from '../support/cli.ts';
import { assertNoPiece } from '../support/credentials.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const t = suite('e2e: health gates with a real Prometheus');
const NS = 'openshift-bootcplan';
const ROLLOUTS = `/apis/bootcplan.dev/v1alpha1/namespaces/${NS}/rollouts`;
const WORKERS = ['w-1', 'w-2', 'w-3', 'w-4', 'w-5', 'w-6'];
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const FRONT_TOKEN = 'e2e-gate-token-5b1d9f0c7a3e';
/** The token the echoing front is sent: no 8 characters in common with a path or name of the run. */
const ECHO_TOKEN = 'Zq7vR2kX9pL4mW8nT3bY6cJ1';
let env: TestEnv;
let prom: PrometheusHandle;
let agent: NodeAgent | null = null;
let bootcNodes: Reflector;
let dir: string;
/** When true, e2e_workload_broken is the number of BootcNodes that boot the new image. */
let breakOnNewImage = false;

const onNewImage = () =>
  [...bootcNodes.items.values()].filter((bn) => (bn.status as { booted?: { imageDigest?: string } } | undefined)?.booted?.imageDigest === NEW_DIGEST).length;
const events = (ndjson: string) =>
  ndjson
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

/** A fresh cluster, its Rollout object (for the status) and node agent; returns the spec file. */
async function scenario(healthChecks: unknown[], soakSeconds: number): Promise<string> {
  agent?.stop();
  await resetCluster(env.admin);
  await loadObjects(
    env.admin,
    new ClusterBuilder().bootcPool(
      'worker',
      WORKERS.map((name, i) => ({ name, zone: ZONES[i % 3] })),
      { maxUnavailable: 1 },
    ).objects,
  );
  const text = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds, drainTimeoutSeconds: 60 }], { healthChecks });
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
  return file;
}

async function apply(file: string, extra: string[] = []) {
  const io = capturedIO();
  const t0 = Date.now();
  const code = await run(['apply', '-f', file, '--kubeconfig', env.saKubeconfig, '--auto-approve', '--json', ...extra], { io: io });
  return { code, out: io.out, err: io.err, evs: events(io.out), seconds: (Date.now() - t0) / 1000 };
}

const rolloutStatus = async () => (await env.admin.request('GET', `${ROLLOUTS}/test`)).status;
/** The Events bootcplan reported with `reason`, in `namespace`, for this run's objects (names repeat across suites). */
async function eventsOf(namespace: string, reason: string, since: number): Promise<any[]> {
  const list = await env.admin.request('GET', `/api/v1/namespaces/${namespace}/events`, { query: { fieldSelector: `reason=${reason}` } });
  return list.items.filter((e: any) => Date.parse(e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp) >= since - 1000);
}

const gate = (name: string, kind: Record<string, unknown>, o: Record<string, unknown> = {}) => ({
  name,
  ...kind,
  intervalSeconds: 1,
  successes: 3,
  timeoutSeconds: 30,
  ...o,
});

/** Replaces the object `body` at the collection `path`. */
async function put(path: string, body: any): Promise<void> {
  await env.admin.request('DELETE', `${path}/${body.metadata.name}`).catch((e) => {
    if (!(e instanceof NotFoundError)) throw e;
  });
  await env.admin.request('POST', path, { body });
}
const readerSecret = (token: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'prometheus-reader', namespace: NS }, stringData: { token } });
const caMap = (pem: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'openshift-service-ca.crt', namespace: NS },
  data: { 'service-ca.crt': pem },
});
/** An alerts check through the https front: the token from the Secret, the CA from the ConfigMap. */
const securedAlerts = (url: string) => ({
  alerts: {
    url,
    matchers: ['severity="critical"'],
    heartbeat: 'Watchdog',
    auth: { bearerTokenSecret: { namespace: NS, name: 'prometheus-reader', key: 'token' } },
    ca: { configMap: { namespace: NS, name: 'openshift-service-ca.crt', key: 'service-ca.crt' } },
  },
});
/** Every text of the run a user or the cluster sees: the outputs, the Rollout status, the Events, the progress ConfigMap. */
async function everythingShown(outputs: string[]): Promise<string> {
  return [
    ...outputs,
    JSON.stringify(await rolloutStatus()),
    JSON.stringify(await env.admin.request('GET', `/api/v1/namespaces/${NS}/events`)),
    JSON.stringify(await env.admin.request('GET', '/api/v1/namespaces/default/events')),
    JSON.stringify(await env.admin.request('GET', `/api/v1/namespaces/${NS}/configmaps/bootcplan-progress`).catch(() => ({}))),
  ].join('\n');
}

t.before(async () => {
  env = await setupEnv();
  dir = tempDir('bootcplan-e2e-gates-');
  for (const crd of docsOf(readFileSync(join(ROOT, 'deploy/rollout-crd.yaml'), 'utf8'))) await installCrd(env.admin, crd);
  bootcNodes = new Reflector(env.admin, BOOTC_NODE);
  await bootcNodes.start();
  prom = await startPrometheus({ e2e_workload_broken: () => (breakOnNewImage ? onNewImage() : 0), e2e_error_ratio: 0.001 });
  console.log(`  prometheus: ready ${prom.startSeconds.toFixed(1)} s after the start`);
});

t.after(async () => {
  agent?.stop();
  bootcNodes?.stop();
  await prom?.stop();
});

/** Runs `fn` with the workload breaking on the new image; afterwards the alert is resolved again. */
async function broken(fn: () => Promise<void>): Promise<void> {
  breakOnNewImage = true;
  try {
    await fn();
  } finally {
    breakOnNewImage = false;
    await prom.waitForAlert(BROKEN_ALERT, false);
  }
}

t(
  'a passing PromQL gate (and an alerts gate the alert does not match) lets the rollout finish: a gate before the first write and after each of the 3 waves',
  () =>
    broken(async () => {
      // The alert fires during the run; the alerts check is scoped away from it.
      const file = await scenario(
        [
          gate('error-ratio', { prometheus: { url: prom.url, auth: 'none', query: 'max(e2e_error_ratio)', condition: 'every sample < 0.01' } }),
          gate('team-alerts', { alerts: { url: prom.url, auth: 'none', matchers: ['team="none"'], heartbeat: 'Watchdog' } }),
        ],
        2,
      );
      const r = await apply(file);
      assert.is(r.code, 0, r.err);
      const passes = r.evs.filter((e) => e.type === 'gate-pass');
      assert.equal(
        passes.map((e) => `${e.point}${e.wave ? ` ${e.wave}` : ''}`),
        ['preflight', 'afterWave 1', 'afterWave 2', 'afterWave 3'],
      );
      for (const p of passes) assert.equal(p.checks, ['error-ratio', 'team-alerts']);
      assert.not.ok(r.evs.some((e) => e.type === 'gate-fail'));
      assert.is(onNewImage(), WORKERS.length, 'every worker boots the new image');
      const st = await rolloutStatus();
      assert.is(st.phase, 'Healthy', JSON.stringify(st));
      console.log(
        `  a rollout of 6 nodes in 3 waves with 4 passing gates: ${r.seconds.toFixed(1)} s (gates ${passes.reduce((s, p) => s + p.seconds, 0).toFixed(1)} s)`,
      );
    }),
);

t('an alert that fires after wave 1 halts the rollout before wave 2: exit 5, HealthCheckFailed in the status, an Event, the pool paused', () =>
  broken(async () => {
    const file = await scenario(
      [gate('no-critical-alerts', { alerts: { url: prom.url, auth: 'none', matchers: ['severity="critical"'], heartbeat: 'Watchdog' } })],
      5,
    );
    const since = Date.now();
    const r = await apply(file);
    assert.is(r.code, 5, r.err);
    assert.match(
      r.err,
      /health check no-critical-alerts failed after wave 1\/3 of pool worker: 1 firing alert matches severity="critical": E2EWorkloadBroken\{instance="127\.0\.0\.1:\d+",job="e2e"\}$/m,
      r.err,
    );
    assert.equal(
      r.evs.filter((e) => e.type === 'wave-start').map((e) => e.wave),
      [1],
      'no wave after the first',
    );
    const fail = r.evs.find((e) => e.type === 'gate-fail');
    assert.equal([fail.check, fail.point, fail.wave, fail.reason, fail.onFailure], ['no-critical-alerts', 'afterWave', 1, 'condition', 'halt']);
    assert.is(onNewImage(), 2, 'only the 2 nodes of wave 1 were updated');
    const pool = await env.admin.request('GET', '/apis/node.bootc.dev/v1alpha1/bootcnodepools/worker');
    assert.is(pool.spec.rollout.paused, true, 'the pool is paused');
    const nodes = await env.admin.request('GET', '/api/v1/nodes');
    assert.not.ok(
      nodes.items.some((n: any) => n.spec?.unschedulable),
      'no node left cordoned',
    );
    const st = await rolloutStatus();
    assert.equal([st.phase, st.reason], ['Degraded', 'HealthCheckFailed']);
    assert.match(st.message, /no-critical-alerts.*E2EWorkloadBroken/);
    const poolEvents = (await eventsOf('default', 'HealthCheckFailed', since)).filter((e: any) => e.involvedObject.kind === 'BootcNodePool');
    assert.ok(poolEvents.length >= 1, 'a HealthCheckFailed Event on the BootcNodePool');
    assert.match(poolEvents[0].message, /no-critical-alerts failed after wave 1.*E2EWorkloadBroken/);
    console.log(`  the alert halted the rollout after wave 1 in ${r.seconds.toFixed(1)} s; the failing gate took ${fail.seconds.toFixed(1)} s`);
  }),
);

t(
  'the same alert under a check on trial (mode: observe): the rollout finishes (exit 0); the events, the Rollout status and the Events say it would have failed',
  () =>
    broken(async () => {
      const file = await scenario(
        [gate('no-critical-alerts', { alerts: { url: prom.url, auth: 'none', matchers: ['severity="critical"'], heartbeat: 'Watchdog' }, mode: 'observe' })],
        5,
      );
      const since = Date.now();
      const r = await apply(file);
      assert.is(r.code, 0, r.err);
      assert.is(onNewImage(), WORKERS.length, 'every worker boots the new image');
      assert.not.ok(r.evs.some((e) => e.type === 'gate-fail' || e.type === 'halt'));
      const seen = r.evs.filter((e) => e.type === 'gate-observe');
      const wave1 = seen.find((e) => e.point === 'afterWave' && e.wave === 1);
      assert.ok(wave1, JSON.stringify(seen));
      assert.equal([wave1.mode, wave1.result, wave1.reason, wave1.onFailure], ['observe', 'failed', 'condition', 'halt']);
      assert.match(wave1.observed, /1 firing alert matches severity="critical": E2EWorkloadBroken/);
      const st = await rolloutStatus();
      assert.equal([st.phase, st.reason], ['Healthy', 'Applied']);
      assert.equal(
        st.healthCheck.observing.map((o: any) => [o.name, o.mode, o.result]),
        [['no-critical-alerts', 'observe', 'failed']],
        'the API server kept the observing verdict of the last gate (the CRD schema has it)',
      );
      const observed = (await eventsOf('default', 'HealthCheckObserved', since)).filter((e: any) => e.involvedObject.kind === 'BootcNodePool');
      assert.ok(
        observed.some((e: any) =>
          /no-critical-alerts \(mode: observe, not enforced\) would have failed .*after wave 1\/3 of pool worker: .*E2EWorkloadBroken/.test(e.message),
        ),
        JSON.stringify(observed.map((e: any) => e.message)),
      );
      // eventsOf allows a second of slack (firstTimestamp has whole seconds); the halt of the test
      // before can fall inside it, so the absence is judged on eventTime (microseconds) alone.
      assert.equal(
        (await eventsOf('default', 'HealthCheckFailed', since)).filter(
          (e: any) => e.involvedObject.kind === 'BootcNodePool' && !(e.eventTime && Date.parse(e.eventTime) < since),
        ),
        [],
      );
    }),
);

t(
  'the token from a Secret and the CA from a ConfigMap through an https front: a pass; another CA fails tls (exit 5); the token in no output, status or Event',
  async () => {
    const front: TlsFront = await startTlsFront(prom.url, FRONT_TOKEN);
    try {
      await put(`/api/v1/namespaces/${NS}/secrets`, readerSecret(FRONT_TOKEN));
      await put(`/api/v1/namespaces/${NS}/configmaps`, caMap(front.caPem));
      const check = gate('secured', securedAlerts(front.url), { when: ['preflight'], successes: 1 });
      const ok = await apply(await scenario([check], 0));
      assert.is(ok.code, 0, ok.err);
      assert.ok(front.authorizations.includes(`Bearer ${FRONT_TOKEN}`), "the Secret's token reached the front");
      await put(`/api/v1/namespaces/${NS}/configmaps`, caMap(tlsMaterial().caPem));
      const since = Date.now();
      const seen = front.authorizations.length;
      const bad = await apply(await scenario([check], 0));
      assert.is(bad.code, 5, bad.err);
      assert.match(
        bad.err,
        /preflight: health check secured failed before the first write.*TLS: .*\(CA: ConfigMap openshift-bootcplan\/openshift-service-ca\.crt\[service-ca\.crt\]\)/,
      );
      assert.is(front.authorizations.length, seen, 'nothing reached the front whose certificate was refused');
      const everything = await everythingShown([ok.out, ok.err, bad.out, bad.err]);
      assert.not.ok(everything.includes(FRONT_TOKEN), 'the token appears nowhere');
      assert.ok(
        (await eventsOf(NS, 'HealthCheckFailed', since)).some((e: any) => /secured failed/.test(e.message)),
        'a HealthCheckFailed Event on the Rollout',
      );
    } finally {
      await front.close();
    }
  },
);

t(
  'a debugging proxy echoes the Secret token into a label of the alert that halts the rollout: halted after wave 1, the label [masked], no 8-character piece of the token in any output, status, Event or the progress record',
  () =>
    broken(async () => {
      const front = await startTlsFront(prom.url, ECHO_TOKEN, { echo: true });
      try {
        await put(`/api/v1/namespaces/${NS}/secrets`, readerSecret(ECHO_TOKEN));
        await put(`/api/v1/namespaces/${NS}/configmaps`, caMap(front.caPem));
        const r = await apply(await scenario([gate('echoed', securedAlerts(front.url))], 5));
        assert.is(r.code, 5, r.err);
        assert.match(
          r.err,
          /health check echoed failed after wave 1\/3 of pool worker: 1 firing alert matches severity="critical": E2EWorkloadBroken\{authorization="Bearer \[masked\]",instance=/,
        );
        assert.ok(front.authorizations.includes(`Bearer ${ECHO_TOKEN}`), 'the token reached the front, and came back in the answer');
        assertNoPiece(await everythingShown([r.out, r.err]), [ECHO_TOKEN], 'the outputs, status, Events and progress record');
      } finally {
        await front.close();
      }
    }),
);

t('Prometheus killed while wave 1 reboots: the gate after wave 1 fails, naming the unreachable URL; no wave 2', async () => {
  const file = await scenario(
    [gate('no-critical-alerts', { alerts: { url: prom.url, auth: 'none', matchers: ['severity="critical"'], heartbeat: 'Watchdog' } })],
    2,
  );
  let killedAt = 0;
  const stopOnFirstBoot = bootcNodes.onChange(() => {
    if (!killedAt && onNewImage() >= 1) {
      killedAt = Date.now();
      void prom.kill();
    }
  });
  const r = await apply(file);
  stopOnFirstBoot();
  assert.ok(killedAt > 0, 'Prometheus was killed during the run');
  assert.is(r.code, 5, r.err);
  assert.match(
    r.err,
    new RegExp(
      `health check no-critical-alerts failed after wave 1/3 of pool worker \\(could not measure\\): connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+ \\(${prom.url.replace(/[.]/g, '\\.')}\\)`,
    ),
  );
  assert.equal(
    r.evs.filter((e) => e.type === 'wave-start').map((e) => e.wave),
    [1],
  );
  const fail = r.evs.find((e) => e.type === 'gate-fail');
  assert.equal([fail.point, fail.wave, fail.reason], ['afterWave', 1, 'error']);
  assert.equal([(await rolloutStatus()).reason], ['HealthCheckFailed']);
});

t.run();
