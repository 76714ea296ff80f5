/**
 * What bootcplan writes fits the API's bounds (docs/safety.md "Bounded I/O"): an Event's note
 * in 1,024 UTF-8 bytes (k8s.io/kubernetes pkg/apis/core/validation/events.go counts with Go's
 * len()), the Rollout status within the maxLength of deploy/rollout-crd.yaml (characters), an
 * Event's name a DNS subdomain, an MCO pool's name a label value. The simulator refuses what
 * the API server would, so the apply paths below fail if a bound is missed.
 * e2e: test/e2e/11-api-limits.test.ts writes the same records to a real API server.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { seeded } from '../support/seeds.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { cutToBytes, cutToChars, utf8Length, codePointLength } from '../../src/base/text-budget.ts';
import { EVENT_LIMITS, ROLLOUT_STATUS_LIMITS, fitEvent, eventProblems, rolloutStatusProblems } from '../../src/apply/ports/api-limits.ts';
import { clusterEventOf } from '../../src/apply/report/rollout-status.ts';
import { type ClusterEventRecord } from '../../src/apply/ports/rollout-object.ts';
import { RolloutReporter } from '../../src/apply/report/rollout-report.ts';
import { eventName } from '../../src/kube/rollout-object.ts';
import { isDns1123Subdomain } from '../../src/domain/kube-names.ts';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import type { RolloutStatus } from '../../src/apply/ports/rollout-object.ts';
import { planWith, runApply, newSim } from '../support/apply.ts';
import { ROOT } from '../support/built.ts';
import { RolloutHaltedError } from '../../src/base/errors.ts';

const s = suite('API limits of what bootcplan writes');
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

/** Well-formed UTF-16: no surrogate half left without its partner. */
const wellFormed = (x: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(x);

s('utf8Length counts what Go len() counts: 1, 2, 3 and 4 bytes, a lone surrogate as U+FFFD', () => {
  for (const x of ['', 'a', 'é', '€', '漢', '😀', 'a€😀', '\uD800', 'x\uDC00y']) {
    assert.is(utf8Length(x), Buffer.byteLength(x, 'utf8'), JSON.stringify(x));
  }
});

s('cutToBytes: the ellipsis is inside the budget, the cut is on a character boundary', () => {
  assert.is(cutToBytes('abc', 3), 'abc');
  assert.is(cutToBytes('abcd', 3), '…', 'the ellipsis alone takes 3 bytes');
  assert.is(cutToBytes('abcdefgh', 6), 'abc…');
  // "€" is 3 bytes: a budget of 8 holds the ellipsis and one "€" (6 bytes), not two (9).
  assert.is(cutToBytes('€€€€', 8), '€…');
  assert.is(utf8Length(cutToBytes('€€€€', 8)), 6);
  // A 4-byte emoji is never split into a lone surrogate.
  assert.is(cutToBytes('ab😀😀', 8), 'ab…');
  assert.is(cutToBytes('ab😀😀', 9), 'ab😀…');
  assert.is(cutToBytes('x'.repeat(2000), EVENT_LIMITS.noteBytes).length, 1022, '1,021 characters and the 3-byte ellipsis');
  assert.is(utf8Length(cutToBytes('é'.repeat(600), 1024)), 1023, '510 two-byte characters and the ellipsis: 1,023 bytes, as the 1,024th would split one');
});

s('property: a cut fits its byte budget, keeps a prefix, and is well-formed UTF-16', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 3, max: 1200 }), (text, max) => {
      const out = cutToBytes(text, max);
      assert.ok(utf8Length(out) <= max);
      if (utf8Length(text) <= max) assert.is(out, text);
      else {
        assert.ok(out.endsWith('…') && text.startsWith(out.slice(0, -1)));
        // Nothing more would fit: the next character is wider than what is left.
        const next = [...text.slice(out.length - 1)][0];
        assert.ok(utf8Length(out) + utf8Length(next) > max);
      }
      assert.ok(wellFormed(out) || !wellFormed(text));
    }),
    seeded(20261204, 500),
  );
});

s('cutToChars counts code points (OpenAPI maxLength), an emoji as one', () => {
  assert.is(cutToChars('😀😀😀', 3), '😀😀😀');
  assert.is(cutToChars('😀😀😀😀', 3), '😀😀…');
  assert.is(codePointLength(cutToChars('€'.repeat(5000), 4096)), 4096);
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.integer({ min: 1, max: 300 }), (text, max) => {
      const out = cutToChars(text, max);
      assert.ok(codePointLength(out) <= max);
      assert.ok(out === text || (out.endsWith('…') && text.startsWith(out.slice(0, -1))));
    }),
    seeded(7, 300),
  );
});

/** Node names as a cloud provider gives them (AWS private DNS names: 42 characters). */
const awsNames = (count: number) => nodes('w', count).map((n, i) => ({ ...n, name: `ip-10-0-${Math.floor(i / 200)}-${i % 200}.us-east-2.compute.internal` }));

s('a 100-node wave: the WaveStarted Event is recorded, its note cut to 1,024 bytes, naming the first nodes', async () => {
  const snap = new ClusterBuilder().bootcPool('worker', awsNames(100)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 100, soakSeconds: 0 }]), snap, D);
  assert.is(plan.pools[0].waves.length, 1);
  const sim = newSim(snap, { durations: D });
  sim.rollouts.put('test', {});
  const warnings: string[] = [];
  const driver = sim.driver();
  const reporter = new RolloutReporter(driver, plan, { rollout: 'test', spec: {}, warn: (m) => warnings.push(m) });
  await reporter.open();
  const r = await runApply(sim, plan, replan, { onEventHook: (e) => reporter.onEvent(e) });
  await reporter.finish({ result: r.result! }, 0);
  assert.equal(warnings, [], 'every Event and status write was accepted');
  const wave = sim.rollouts.events.find((e) => e.reason === 'WaveStarted');
  assert.ok(wave, 'the WaveStarted Event was recorded');
  assert.ok(utf8Length(wave.note) <= EVENT_LIMITS.noteBytes, `${utf8Length(wave.note)} bytes`);
  assert.ok(utf8Length(wave.note) > 1000, 'the budget is used, not wasted');
  assert.match(wave.note, /^wave 1\/1: ip-10-0-0-\d+\.us-east-2\.compute\.internal, .*…$/);
  assert.is(sim.rollouts.events.filter((e) => e.reason === 'NodeUpdated').length, 100);
});

s('a node failure message of multi-byte text: the NodeFailed note fits in bytes, the halted status in characters', async () => {
  const plan = planWith(
    specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1, soakSeconds: 0 }]),
    new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot(),
    D,
  ).plan;
  const message = `bootc: ${'镜像拉取失败 😀 '.repeat(600)}`;
  const ev = clusterEventOf({ t: 0, type: 'node-failed', pool: 'worker', node: 'w-00', message, conditions: [] }, plan)!;
  assert.ok(utf8Length(ev.note) > 1024, 'the record as drafted is too long');
  const fitted = fitEvent(ev);
  assert.equal(eventProblems(fitted), []);
  assert.ok(wellFormed(fitted.note) && fitted.note.startsWith('bootc: 镜像拉取失败'));
  // Through the reporter into the simulator, which refuses what the API server refuses.
  const sim = newSim(new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot(), { durations: D });
  sim.rollouts.put('test', {});
  const warnings: string[] = [];
  const reporter = new RolloutReporter(sim.driver(), plan, { rollout: 'test', spec: {}, warn: (m) => warnings.push(m) });
  await reporter.open();
  reporter.onEvent({ t: 0, type: 'node-failed', pool: 'worker', node: 'w-00', message, conditions: [] });
  reporter.onEvent({ t: 1, type: 'halt', pool: 'worker', node: 'w-00', message: `node w-00 failed: ${message}` });
  await reporter.finish({ error: new RolloutHaltedError(`pool worker: node w-00 failed: ${message}`) }, 5);
  assert.equal(warnings, []);
  const st = sim.rollouts.objects.get('test')!.status as RolloutStatus;
  assert.equal(rolloutStatusProblems(st), []);
  assert.is(codePointLength(st.message), ROLLOUT_STATUS_LIMITS.message);
  assert.ok(st.message.startsWith('halted: w-00 bootc: 镜像拉取失败') && st.message.endsWith('…') && wellFormed(st.message));
  for (const c of st.conditions) assert.ok(codePointLength(c.message) <= ROLLOUT_STATUS_LIMITS.conditionMessage);
  const failed = sim.rollouts.events.find((e) => e.reason === 'NodeFailed')!;
  assert.ok(utf8Length(failed.note) <= 1024 && utf8Length(failed.note) >= 1020, `${utf8Length(failed.note)} bytes`);
});

s('the simulator refuses an Event or a status the API server would refuse (so the paths above can fail)', () => {
  const sim = newSim(new ClusterBuilder().bootcPool('worker', nodes('w', 1)).snapshot(), { durations: D });
  sim.rollouts.put('test', {});
  const ev: ClusterEventRecord = {
    regarding: { apiVersion: 'v1', kind: 'Node', name: 'w-00' },
    type: 'Normal',
    reason: 'NodeUpdated',
    action: 'Uncordon',
    note: 'é'.repeat(513),
  };
  assert.throws(() => sim.rollouts.record(0, ev, null), /note: can have at most 1024 bytes, has 1026/);
  const st = {
    phase: 'Degraded',
    reason: 'Error',
    message: 'x'.repeat(4097),
    planId: 'p',
    pool: null,
    wave: null,
    waves: null,
    nextWindow: null,
    lastExitCode: 1,
    updatedAt: 'now',
    conditions: [],
  } as const;
  assert.throws(() => sim.rollouts.writeStatus('test', { ...st, conditions: [] }), /status.message: Too long: may not be more than 4096 characters/);
});

s("the limits are the CRD's: every maxLength and maxItems of the Rollout status in deploy/rollout-crd.yaml", () => {
  const crd = parse(readFileSync(join(ROOT, 'deploy/rollout-crd.yaml'), 'utf8'));
  const status = crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties;
  const cond = status.conditions.items.properties;
  const L = ROLLOUT_STATUS_LIMITS;
  assert.equal(
    [
      status.message.maxLength,
      status.reason.maxLength,
      status.planId.maxLength,
      status.pool.maxLength,
      status.conditions.maxItems,
      cond.type.maxLength,
      cond.reason.maxLength,
      cond.message.maxLength,
    ],
    [L.message, L.reason, L.planId, L.pool, L.conditions, L.conditionType, L.conditionReason, L.conditionMessage],
  );
  for (const [k, v] of Object.entries<any>(status.lockObserved.properties)) assert.is(v.maxLength, L.lockObservedField, `status.lockObserved.${k}`);
  // Every string field of the status has a bound (or an enum / a format).
  for (const [k, v] of Object.entries<any>({ ...status, ...Object.fromEntries(Object.entries(cond).map(([k2, v2]) => [`conditions.${k2}`, v2])) })) {
    if (v.type === 'string') assert.ok(v.maxLength || v.enum || v.format, `status.${k} has no maxLength`);
  }
});

s('an Event name is a DNS subdomain for any object name, the longest included', () => {
  const t = 1_789_000_000.123;
  for (const name of [
    'w-00',
    'a'.repeat(253),
    `${'a'.repeat(120)}.${'b'.repeat(78)}-${'c'.repeat(53)}`,
    `${'a'.repeat(230)}-${'b'.repeat(22)}`,
    `${'a'.repeat(234)}.b-c`,
    'ip-10-0-1-2.us-east-2.compute.internal',
  ]) {
    for (const seq of [1, 99999]) {
      const n = eventName(name, t, seq);
      assert.ok(isDns1123Subdomain(n), `${n} (${n.length})`);
      assert.ok(n.startsWith(name.slice(0, 199)));
    }
  }
  assert.is(eventName('w-00', t, 1), 'w-00.18d3ce05868154c1');
});

s('an MCO pool whose name cannot be a label value: a plan error, before anything is written', () => {
  const long = `infra-${'x'.repeat(60)}`;
  const snap = new ClusterBuilder().mcoPool(long, nodes('i', 2)).snapshot();
  const { plan } = planWith(specYaml([{ name: long, image: NEW, maxUnavailable: 1 }]), snap, D);
  const d = plan.diagnostics.find((x) => x.code === 'pool-name-not-a-label-value');
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d.severity, 'error');
  assert.match(d.message, /machineconfiguration\.openshift\.io\/role/);
});

s.run();
