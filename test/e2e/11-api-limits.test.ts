/**
 * What bootcplan writes fits the real API server's bounds (docs/safety.md "Bounded I/O"), as the
 * ServiceAccount of examples/rbac.yaml writes it: the WaveStarted Event of a 100-node wave, a
 * NodeFailed Event with a multi-byte note, the Rollout status with a message far over the CRD's
 * maxLength, an Event about an object with the longest name. Each record is made as the
 * reporter makes it (src/apply/report/rollout-status.ts, fitted by src/apply/ports/api-limits.ts) and
 * written through the Kubernetes driver. The server's own refusal of the unfitted records is
 * checked too, so the bounds are the server's and the test can fail.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setupEnv, resetCluster, loadObjects, driverFor, type TestEnv } from './env.ts';
import { installCrd, docsOf } from './gitops-dry-run.ts';
import { rejects } from './helpers.ts';
import { KubeApiError } from '../../src/kube/rest.ts';
import type { KubeDriver } from '../../src/kube/driver.ts';
import { DriverError } from '../../src/apply/ports/driver.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { planWith } from '../support/apply.ts';
import { clusterEventOf, conditionsOf } from '../../src/apply/report/rollout-status.ts';
import { type RolloutStatus } from '../../src/apply/ports/rollout-object.ts';
import { fitEvent, fitRolloutStatus, EVENT_LIMITS, ROLLOUT_STATUS_LIMITS } from '../../src/apply/ports/api-limits.ts';
import { utf8Length, codePointLength } from '../../src/base/text-budget.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const t = suite("e2e: what bootcplan writes fits the API server's bounds");
const NS = 'openshift-bootcplan';
const ROLLOUTS = `/apis/bootcplan.dev/v1alpha1/namespaces/${NS}/rollouts`;
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };
let env: TestEnv;
let sa: KubeDriver;

/** AWS private DNS names (42 characters): 100 of them make a note of about 4,400 bytes. */
const names = Array.from({ length: 100 }, (_, i) => `ip-10-0-${Math.floor(i / 200)}-${i % 200}.us-east-2.compute.internal`);
const snap = new ClusterBuilder()
  .bootcPool(
    'worker',
    nodes('w', 100).map((n, i) => ({ ...n, name: names[i] })),
  )
  .snapshot();
const plan = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 100, soakSeconds: 0 }]), snap, D).plan;

async function eventsAbout(name: string, ns = 'default'): Promise<any[]> {
  const list = await env.admin.request('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`, { query: { fieldSelector: `regarding.name=${name}` } });
  return list.items;
}

t.before(async () => {
  env = await setupEnv();
  await resetCluster(env.admin);
  // Events other suites' applies left about the same names.
  await env.admin.request('DELETE', '/apis/events.k8s.io/v1/namespaces/default/events');
  for (const crd of docsOf(readFileSync(join(ROOT, 'deploy/rollout-crd.yaml'), 'utf8'))) await installCrd(env.admin, crd);
  await loadObjects(env.admin, snap.nodes.slice(0, 1));
  sa = driverFor(env.saKubeconfig);
});
t.after(() => sa?.close());

t('the WaveStarted Event of a 100-node wave is accepted, its note cut to 1,024 bytes', async () => {
  const wave = plan.pools[0].waves[0];
  assert.is(wave.length, 100);
  const drafted = clusterEventOf({ t: 0, type: 'wave-start', pool: 'worker', wave: 1, waves: 1, nodes: wave }, plan)!;
  assert.ok(utf8Length(drafted.note) > 4000, `${utf8Length(drafted.note)} bytes as drafted`);
  await sa.recordEvent(fitEvent(drafted), null);
  const [ev] = (await eventsAbout('worker')).filter((e) => e.reason === 'WaveStarted');
  assert.ok(ev, 'the Event is stored');
  assert.ok(utf8Length(ev.note) <= EVENT_LIMITS.noteBytes && utf8Length(ev.note) > 1000, `${utf8Length(ev.note)} bytes`);
  assert.match(ev.note, /^wave 1\/1: ip-10-0-0-\d+\.us-east-2\.compute\.internal, .*…$/);
  // The cut bootcplan made before (1,023 characters and "…": 1,026 bytes) is refused.
  const before = { ...drafted, note: drafted.note.slice(0, 1023) + '…' };
  await rejects(
    () =>
      env.admin.request('POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
        body: {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name: 'worker.before' },
          eventTime: new Date().toISOString().replace('Z', '000Z'),
          reportingController: 'bootcplan.dev/apply',
          reportingInstance: 'e2e',
          action: before.action,
          reason: before.reason,
          type: before.type,
          note: before.note,
          regarding: { apiVersion: 'node.bootc.dev/v1alpha1', kind: 'BootcNodePool', name: 'worker' },
        },
      }),
    (e) => e instanceof KubeApiError && e.status === 422 && /note|message/i.test(e.message),
    'a 422 for 1,026 bytes',
  );
});

t('a NodeFailed Event with a multi-byte note: accepted, stored byte for byte, cut on a character boundary', async () => {
  const message = `bootc: ${'镜像拉取失败 😀 '.repeat(300)}`;
  const ev = fitEvent(clusterEventOf({ t: 0, type: 'node-failed', pool: 'worker', node: names[0], message, conditions: [] }, plan)!);
  await sa.recordEvent(ev, null);
  const [stored] = (await eventsAbout(names[0])).filter((e) => e.reason === 'NodeFailed');
  assert.is(stored.note, ev.note);
  assert.ok(utf8Length(stored.note) <= 1024 && utf8Length(stored.note) >= 1020, `${utf8Length(stored.note)} bytes`);
  assert.not.match(stored.note, /\uFFFD/, 'no character was split');
});

t('an Event about an object with a 253-character name gets a valid name of its own', async () => {
  // A "-" at character 200, where names were cut before: "….bbb-.<hex>" is not a DNS subdomain.
  const long = `${'a'.repeat(120)}.${'b'.repeat(78)}-${'c'.repeat(53)}`;
  assert.is(long.length, 253);
  const ev = fitEvent(clusterEventOf({ t: 0, type: 'pool-done', pool: long }, { ...plan, pools: [{ ...plan.pools[0], name: long }] })!);
  await sa.recordEvent(ev, null);
  assert.is((await eventsAbout(long)).length, 1);
});

t("the Rollout status with a message far over the CRD's maxLength: written cut to it; unfitted, refused before any request", async () => {
  await env.admin.request('POST', ROLLOUTS, {
    body: { apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 'limits', namespace: NS }, spec: { pools: [] } },
  });
  const message = `halted: ${names[0]} ${'Degraded: 镜像 😀 '.repeat(1000)} (pool worker)`;
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const core = { phase: 'Degraded', reason: 'Halted', message } as const;
  const status: RolloutStatus = {
    phase: 'Degraded',
    reason: 'Halted',
    message,
    planId: plan.id,
    pool: 'worker',
    wave: null,
    waves: null,
    nextWindow: null,
    lastExitCode: 5,
    updatedAt: now,
    conditions: conditionsOf(core, now, undefined),
  };
  await rejects(
    () => sa.writeRolloutStatus('limits', status),
    (e) => e instanceof DriverError && /status.message: Too long: may not be more than 4096 characters/.test(e.message),
  );
  // What the API server says to the same status: the bound is its own.
  await rejects(
    () => env.admin.request('PATCH', `${ROLLOUTS}/limits/status`, { body: { status }, contentType: 'application/merge-patch+json' }),
    (e) => e instanceof KubeApiError && e.status === 422 && /Too long/.test(e.message),
  );
  await sa.writeRolloutStatus('limits', fitRolloutStatus(status));
  const o = await env.admin.request('GET', `${ROLLOUTS}/limits`);
  assert.is(codePointLength(o.status.message), ROLLOUT_STATUS_LIMITS.message);
  assert.ok(o.status.message.startsWith(`halted: ${names[0]} Degraded: 镜像 😀`) && o.status.message.endsWith('…'));
  assert.is(o.status.conditions.length, 3);
});

t.run();
