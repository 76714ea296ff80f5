/**
 * Silences for the nodes in flight, in the applier on the simulated cluster and the simulated
 * Alertmanager (docs/apply.md "Silences"): created before a node's drain, one per template and
 * node, scoped to that node; extended while it is in flight and never longer than the TTL ahead;
 * expired when its wave's soak is over, on a halt and on a stop; an unreachable Alertmanager fails
 * the preflight with nothing written; an alert gate with `source: prometheus` leaves out the
 * alerts of the nodes in flight and says how many, and still fails on the same alert for a node
 * not in flight.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { SimAlertmanager } from '../../../src/sim/alertmanager.ts';
import { HealthCheckFailedError, InterruptedError, InputError } from '../../../src/base/errors.ts';
import type { HealthSource, Measurement } from '../../../src/apply/ports/health.ts';
import type { ApplyEvent } from '../../../src/apply/ports/events.ts';
import type { PlanHealthCheck } from '../../../src/plan/types.ts';
import { observePrometheusAlerts } from '../../../src/domain/health-observe.ts';
import { SimHealthSource, parseFailCheck, type FailCheckRule } from '../../../src/sim/health.ts';
import { renderStatus, progressSummary } from '../../../src/render/status.ts';
import type { ProgressState } from '../../../src/apply/ports/driver.ts';
import { run } from '../../../src/cli/main.ts';
import { decodeRunRecord } from '../../../src/cluster/run-record.ts';
import { io } from '../../support/cli.ts';
import type { DriverFactory } from '../../../src/app/ports.ts';

const s = suite('silences in the applier');
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };
const AM = { url: 'http://127.0.0.1:9093', auth: 'none' };
const TEMPLATES = ['node="{node}"', 'instance=~"{node}(:.*)?"'];

function setup(o: { count?: number; soak?: number; max?: number; ttl?: number; checks?: Record<string, unknown>[]; mco?: boolean } = {}) {
  const b = new ClusterBuilder();
  const ns = nodes('w', o.count ?? 3, undefined, { staged: true });
  const snap = (o.mco ? b.mcoPool('worker', ns) : b.bootcPool('worker', ns)).snapshot();
  const pool = { name: 'worker', image: NEW, maxUnavailable: o.max ?? 1, soakSeconds: o.soak ?? 120 };
  const extra: Record<string, unknown> = { silences: { alertmanager: AM, matchers: TEMPLATES, ...(o.ttl ? { ttlMinutes: o.ttl } : {}) } };
  if (o.checks) extra.healthChecks = o.checks;
  const { plan, replan } = planWith(specYaml([pool], extra), snap, D);
  const sim = newSim(snap, { durations: D });
  const am = new SimAlertmanager(() => sim.driver('probe').clock.now());
  return { sim, plan, replan, am };
}

const silenceEvents = (events: ApplyEvent[]) => events.filter((e): e is Extract<ApplyEvent, { type: 'silence' }> => e.type === 'silence');
const index = (events: ApplyEvent[], pred: (e: ApplyEvent) => boolean) => events.findIndex(pred);

s('the plan carries the silences with every default; a plan with silences and no port is refused', async () => {
  const { sim, plan, replan } = setup();
  assert.equal(plan.silences, [{ alertmanager: { url: AM.url, auth: 'none', ca: 'system' }, matchers: TEMPLATES, ttlMinutes: 10, pools: ['worker'] }]);
  assert.is(plan.formatVersion, '1.2');
  const r = await runApply(sim, plan, replan);
  assert.instance(r.error, InputError);
  assert.match((r.error as Error).message, /has silences and no Alertmanager port/);
});

s('3 waves: each node is silenced before its drain, on its own name only, and unsilenced when its soak is over', async () => {
  const { sim, plan, replan, am } = setup();
  const activeAt: Record<string, string[]> = {};
  const r = await runApply(sim, plan, replan, {
    silences: am,
    onEventHook: (e) => {
      if (e.type === 'drain-done' || e.type === 'reboot')
        activeAt[`${e.type}:${e.node}`] = am.active().map((x) => `${x.matchers[0].name}=${x.matchers[0].value}`);
    },
  });
  assert.is(r.error, null);
  const nodesInOrder = plan.pools[0].waves.flat();
  assert.is(nodesInOrder.length, 3);
  for (const n of nodesInOrder) {
    // While the node is out of service exactly its two silences exist, none of another node.
    assert.equal(activeAt[`reboot:${n}`]?.sort(), [`instance=${n}(:.*)?`, `node=${n}`], n);
    const created = index(r.events, (e) => e.type === 'silence' && e.action === 'create' && e.node === n);
    const drained = index(r.events, (e) => e.type === 'drain-done' && e.node === n);
    assert.ok(created >= 0 && created < drained, `${n}: silenced before its drain`);
  }
  // Wave 1's silences end after its soak, before wave 2 starts.
  const expire1 = index(r.events, (e) => e.type === 'silence' && e.action === 'expire' && e.node === nodesInOrder[0]);
  const soak1 = index(r.events, (e) => e.type === 'soak' && e.wave === 1);
  const wave2 = index(r.events, (e) => e.type === 'wave-start' && e.wave === 2);
  assert.ok(soak1 >= 0 && soak1 < expire1 && expire1 < wave2, `soak ${soak1} < expire ${expire1} < wave 2 ${wave2}`);
  assert.is(r.events[expire1].t >= r.events[soak1].t + 120 - 1, true, 'not before the soak is over');
  // Six silences in all, each created once, each expired, none left.
  assert.is(am.silences.length, 6);
  assert.equal(am.active(), []);
  for (const x of am.silences) {
    assert.is(x.createdBy, 'bootcplan');
    assert.match(x.comment, new RegExp(`Rollout test, plan ${plan.id}`));
  }
  assert.equal(
    silenceEvents(r.events)
      .filter((e) => e.action !== 'extend')
      .map((e) => `${e.action} ${e.node}`),
    nodesInOrder.flatMap((n) => [`create ${n}`, `expire ${n}`]),
  );
});

s('status lists the silences of the node in flight while it is out of service, and none after its soak', async () => {
  const { sim, plan, replan, am } = setup();
  const [first, second] = plan.pools[0].waves.flat();
  // The progress as `status` reads it, at the first node's reboot and as wave 2 starts (after wave 1's soak).
  const reads: Promise<ProgressState>[] = [];
  const clocks: number[] = [];
  const r = await runApply(sim, plan, replan, {
    silences: am,
    onEventHook: (e, d) => {
      if ((e.type === 'reboot' && e.node === first) || (e.type === 'wave-start' && e.wave === 2)) {
        reads.push(d.readProgress());
        clocks.push(d.clock.now());
      }
    },
  });
  assert.is(r.error, null, String(r.error));
  const [during, after] = await Promise.all(reads);
  const listed = progressSummary(during, true, clocks[0])!.silences;
  const ids = am
    .active()
    .map((x) => x.id)
    .sort();
  assert.equal(ids, [], 'all expired by the end');
  assert.equal(
    listed.map((x) => ({ pool: x.pool, node: x.node, matchers: x.matchers, n: x.ids.length })),
    [{ pool: 'worker', node: first, matchers: [`node="${first}"`, `instance=~"${first}(:.*)?"`], n: 2 }],
  );
  // The ids are Alertmanager's, and the end is the TTL ahead.
  const created = am.silences.filter((x) => x.matchers[0].value === first || x.matchers[0].value === `${first}(:.*)?`).map((x) => x.id);
  assert.equal([...listed[0].ids].sort(), created.sort());
  const create = silenceEvents(r.events).find((e) => e.action === 'create' && e.node === first)!;
  assert.match(create.message, `until ${listed[0].endsAt}:`);
  assert.ok(Date.parse(listed[0].endsAt) / 1000 > clocks[0] && Date.parse(listed[0].endsAt) / 1000 <= clocks[0] + 600);
  const text = renderStatus(null, false, during, clocks[0]);
  assert.match(text, `  silences (Alertmanager):\n    ${first} (worker): node="${first}"; instance=~"${first}(:.*)?" until ${listed[0].endsAt}\n`);
  // After wave 1's soak its silences are expired and the record says so; wave 2's node is not silenced yet.
  assert.equal(progressSummary(after, true, clocks[1])!.silences, []);
  assert.not.match(renderStatus(null, false, after, clocks[1]), /silences/);
  assert.ok(second);
  // And the finished run lists none.
  assert.equal((await sim.driver().readProgress()).run!.silences, undefined);
});

s('bootcplan status (text, -o json) after a killed apply: its silences until they lapse, then none', async () => {
  const { sim, plan, replan, am } = setup();
  const first = plan.pools[0].waves[0][0];
  let killedAt = 0;
  const r = await runApply(sim, plan, replan, {
    silences: am,
    onEventHook: (e, d) => {
      // kill -9 at the node's reboot: nothing more is written, nothing expired.
      if (e.type === 'reboot' && e.node === first) {
        killedAt = d.clock.now();
        am.down = true;
        d.kill();
      }
    },
  });
  assert.ok(r.error, 'killed');
  const openDriver: DriverFactory = async () => ({ driver: sim.driver('status'), holder: 'me@test' });
  const text = io();
  assert.is(await run(['status'], { io: text, openDriver }), 0, text.err);
  const endsAt = am.silences[0].endsAt;
  assert.ok(endsAt > killedAt && endsAt <= killedAt + 600);
  assert.match(
    text.out,
    `\n  silences (Alertmanager):\n    ${first} (worker): node="${first}"; instance=~"${first}(:.*)?" until ${new Date(endsAt * 1000).toISOString().replace('.000Z', 'Z')}`,
  );
  const json = io();
  assert.is(await run(['status', '-o', 'json'], { io: json, openDriver }), 0, json.err);
  const listed = JSON.parse(json.out).progress.silences;
  assert.equal(
    listed.map((x: { node: string; ids: string[] }) => [x.node, x.ids]),
    [[first, am.silences.map((x) => x.id)]],
  );
  // Past the TTL they lapsed in Alertmanager, and status no longer lists them.
  await sim.driver('later').clock.sleep(endsAt - sim.driver('later').clock.now() + 1);
  const later = io();
  assert.is(await run(['status', '-o', 'json'], { io: later, openDriver }), 0, later.err);
  assert.equal(JSON.parse(later.out).progress.silences, []);
});

s('status leaves out the silences a killed apply left once they lapsed', () => {
  const run = {
    planId: '0123456789abcdef',
    startedAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    changesApplied: true,
    pools: {},
    done: false,
    silences: [{ pool: 'worker', node: 'w-01', ids: ['a'], matchers: ['node="w-01"'], endsAt: '2026-01-01T00:10:00Z' }],
  };
  const st: ProgressState = { run, version: '1', nodes: {} };
  const t = Date.parse('2026-01-01T00:05:00Z') / 1000;
  assert.is(progressSummary(st, false, t)!.silences.length, 1);
  assert.match(renderStatus(null, false, st, t), /w-01 \(worker\): node="w-01" until 2026-01-01T00:10:00Z/);
  assert.equal(progressSummary(st, false, t + 600)!.silences, []);
  // The record is read back field by field: silences of another shape are refused, named.
  assert.equal(decodeRunRecord(JSON.stringify(run)), run);
  assert.is(
    decodeRunRecord(JSON.stringify({ ...run, silences: [{ ...run.silences[0], endsAt: 'soon' }] })),
    'has a silence without a pool, a node, ids, matchers (texts) and an endsAt time',
  );
  assert.is(decodeRunRecord(JSON.stringify({ ...run, silences: {} })), 'has silences that are not a list of at most 1024');
});

s('a long soak: the silences are extended in place, never further than the TTL ahead', async () => {
  const { sim, plan, replan, am } = setup({ count: 2, soak: 1800, ttl: 3 });
  let worst = 0;
  const r = await runApply(sim, plan, replan, {
    silences: am,
    onEventHook: (_e, d) => {
      for (const x of am.active()) worst = Math.max(worst, x.endsAt - d.clock.now());
    },
  });
  assert.is(r.error, null);
  const extends_ = silenceEvents(r.events).filter((e) => e.action === 'extend');
  assert.ok(extends_.length >= 2 * 9, `extended every minute of the 30-minute soak: ${extends_.length}`);
  assert.ok(worst <= 3 * 60, `at most the TTL ahead: ${worst} s`);
  // Extended in place: still one silence per template and node, posted many times.
  assert.is(am.silences.length, 4);
  assert.ok(am.silences.every((x) => x.posts > 1));
  assert.equal(am.active(), []);
});

s('an unreachable Alertmanager fails the preflight: exit 5, nothing written, the message names it', async () => {
  const { sim, plan, replan, am } = setup();
  am.down = true;
  const r = await runApply(sim, plan, replan, { silences: am });
  assert.instance(r.error, HealthCheckFailedError);
  assert.is(r.code, 5);
  assert.match(
    (r.error as Error).message,
    /^preflight: the Alertmanager for the silences of pool worker \(http:\/\/127\.0\.0\.1:9093\) did not answer: connect ECONNREFUSED/,
  );
  assert.equal(
    sim.writes.filter((w) => w.op !== 'lock' && w.op !== 'unlock'),
    [],
  );
});

s('a halt and a stop expire every silence', async () => {
  {
    const { sim, plan, replan, am } = setup({ checks: [{ name: 'ok', alerts: { url: AM.url, auth: 'none' }, when: ['afterNode'], intervalSeconds: 10 }] });
    const failing = new SimHealthSource({ failChecks: [parseFailCheck(`ok@node=${plan.pools[0].waves[0][0]}`) as FailCheckRule] });
    const r = await runApply(sim, plan, replan, { silences: am, health: failing });
    assert.instance(r.error, HealthCheckFailedError);
    assert.ok(am.silences.length >= 2);
    assert.equal(am.active(), [], 'halted: none left');
  }
  {
    const { sim, plan, replan, am } = setup();
    const stop = new AbortController();
    const r = await runApply(sim, plan, replan, {
      silences: am,
      signal: stop.signal,
      onEventHook: (e) => {
        if (e.type === 'drain-done') stop.abort('SIGTERM');
      },
    });
    assert.instance(r.error, InterruptedError);
    assert.is(am.silences.length, 2);
    assert.equal(am.active(), [], 'stopped: none left');
  }
});

/** A Prometheus-API alerts source that answers `alerts` and judges them as the real source does. */
function alertsSource(alerts: () => Record<string, string>[]): HealthSource & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    measure(check: PlanHealthCheck): Promise<Measurement> {
      const a = check.alerts!;
      const m = observePrometheusAlerts({ alerts: alerts().map((labels) => ({ labels, state: 'firing' })) }, [], { ...a });
      seen.push(m.observed);
      return Promise.resolve(m);
    },
  };
}

s('source: prometheus: an alert of the node in flight is left out and counted; the same alert of another node fails', async () => {
  const checks = [
    { name: 'nodes', alerts: { url: AM.url, auth: 'none', matchers: ['alertname="KubeNodeNotReady"'], ignore: [] }, when: ['afterNode'], intervalSeconds: 10 },
  ];
  {
    const { sim, plan, replan, am } = setup({ checks });
    const first = plan.pools[0].waves[0][0];
    // The alert fires for the first node while it is in flight (its afterNode gate runs then) and
    // resolves once it is back for good.
    let firing = true;
    const source = alertsSource(() => (firing ? [{ alertname: 'KubeNodeNotReady', node: first }] : []));
    const r = await runApply(sim, plan, replan, {
      silences: am,
      health: source,
      onEventHook: (e) => {
        if (e.type === 'silence' && e.action === 'expire' && e.node === first) firing = false;
      },
    });
    assert.is(r.error, null, String(r.error));
    assert.ok(
      source.seen.some((x) => /^no firing alert matches alertname="KubeNodeNotReady"; ignored 1 alert covered by bootcplan's 2 silences/.test(x)),
      source.seen.join('\n'),
    );
  }
  {
    const { sim, plan, replan, am } = setup({ checks });
    const last = plan.pools[0].waves[2][0];
    const source = alertsSource(() => [{ alertname: 'KubeNodeNotReady', node: last }]);
    const r = await runApply(sim, plan, replan, { silences: am, health: source });
    assert.instance(r.error, HealthCheckFailedError);
    assert.match((r.error as Error).message, new RegExp(`KubeNodeNotReady\\{node="${last}"\\}`));
    assert.equal(am.active(), []);
  }
});

s('MCO pools: the wave nodes are silenced as the wave starts, and unsilenced after the soak', async () => {
  const { sim, plan, replan, am } = setup({ mco: true });
  const r = await runApply(sim, plan, replan, { silences: am });
  assert.is(r.error, null, String(r.error));
  const waves = plan.pools[0].waves;
  for (const [i, w] of waves.entries()) {
    const start = index(r.events, (e) => e.type === 'wave-start' && e.wave === i + 1);
    const created = index(r.events, (e) => e.type === 'silence' && e.action === 'create' && e.node === w[0]);
    assert.ok(created > start, `wave ${i + 1}`);
  }
  assert.is(am.silences.length, 6);
  assert.equal(am.active(), []);
});

s.run();
