import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openWindowAt, nextWindowAfter, parseDurationSeconds, checkCron } from '../../src/domain/windows.ts';
import { gateWave, planSchedule, slotsThatFit, type WaveSlot } from '../../src/domain/schedule.ts';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../support/cluster.ts';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { buildPlan } from '../../src/plan/planner.ts';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';

const s = suite('maintenance windows');
const berlin = [{ schedule: '0 22 * * 1-5', duration: '4h', timezone: 'Europe/Berlin' }];
const at = (iso: string) => Date.parse(iso);

s('durations and cron checks', () => {
  assert.is(parseDurationSeconds('4h'), 14400);
  assert.is(parseDurationSeconds('1h30m'), 5400);
  assert.is(parseDurationSeconds('90m'), 5400);
  assert.is(parseDurationSeconds('0h'), null);
  assert.is(parseDurationSeconds('4 hours'), null);
  assert.is(checkCron('0 22 * * 1-5'), null);
  assert.match(checkCron('0 22 * * 1-5 2027')!, /exactly 5/);
});

s('open window in the time zone of the window, across midnight', () => {
  // Wednesday 2026-12-02 22:30 in Berlin is 21:30 UTC (CET, UTC+1)
  const open = openWindowAt(berlin, at('2026-12-02T21:30:00Z'))!;
  assert.is(new Date(open.start).toISOString(), '2026-12-02T21:00:00.000Z');
  assert.is(new Date(open.end).toISOString(), '2026-12-03T01:00:00.000Z');
  // 01:30 Berlin the next night is still inside Wednesday's window? no: it ended at 02:00 Berlin = 01:00 UTC
  assert.ok(openWindowAt(berlin, at('2026-12-03T00:59:00Z')));
  assert.is(openWindowAt(berlin, at('2026-12-03T01:00:00Z')), null);
  // Saturday night: no window (Mon-Fri only); the next is Monday 22:00 Berlin
  assert.is(openWindowAt(berlin, at('2026-12-05T21:30:00Z')), null);
  assert.is(new Date(nextWindowAfter(berlin, at('2026-12-05T21:30:00Z'))!.start).toISOString(), '2026-12-07T21:00:00.000Z');
});

s('summer time moves the window in UTC', () => {
  const july = openWindowAt(berlin, at('2026-07-01T20:30:00Z'))!;
  assert.is(new Date(july.start).toISOString(), '2026-07-01T20:00:00.000Z');
});

s('gate: no windows means always; outside means blocked with the next start; a wave that would overrun is blocked', () => {
  assert.equal(gateWave([], at('2026-12-02T12:00:00Z'), 3600), { ok: true, windowEnd: null });
  const outside = gateWave(berlin, at('2026-12-02T12:00:00Z'), 600);
  assert.is(outside.ok, false);
  if (!outside.ok) {
    assert.is(outside.reason, 'outside-window');
    assert.is(new Date(outside.nextStart!).toISOString(), '2026-12-02T21:00:00.000Z');
    assert.match(outside.message, /next window opens at 2026-12-02T21:00:00Z/);
  }
  const inside = gateWave(berlin, at('2026-12-02T21:10:00Z'), 3600);
  assert.is(inside.ok, true);
  const late = gateWave(berlin, at('2026-12-03T00:30:00Z'), 3600);
  assert.is(late.ok, false);
  if (!late.ok) assert.is(late.reason, 'wave-would-overrun');
});

s('waves that fit: soak counts only between waves', () => {
  const slots: WaveSlot[] = [
    { pool: 'a', wave: 1, seconds: 100, soakSeconds: 50 },
    { pool: 'a', wave: 2, seconds: 100, soakSeconds: 0 },
  ];
  assert.is(slotsThatFit(slots, 99), 0);
  assert.is(slotsThatFit(slots, 100), 1);
  assert.is(slotsThatFit(slots, 249), 1);
  assert.is(slotsThatFit(slots, 250), 2);
});

s('plan schedule: next window and how many waves fit in it', () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 30)).snapshot();
  const plan = planFor(
    specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3, soakSeconds: 300 }], {
      maintenanceWindows: [{ schedule: '0 22 * * 1-5', duration: '1h', timezone: 'Europe/Berlin' }],
    }),
    snap,
  );
  const sched = planSchedule(
    plan.spec ? [{ schedule: '0 22 * * 1-5', duration: '1h', timezone: 'Europe/Berlin' }] : [],
    plan.pools,
    plan.durations,
    at('2026-12-02T12:00:00Z'),
  );
  assert.is(sched.totalWaves, 10);
  assert.is(sched.open, null);
  assert.is(sched.next!.start, '2026-12-02T21:00:00Z');
  // each wave: drain 60 + reboot 300 + ready 30 = 390 s, soak 300: 3600 s fit 5 waves (5*390 + 4*300 = 3150)
  assert.is(sched.next!.wavesThatFit, 5);
});

s('plan output shows the next window and how many waves fit (injected clock)', () => {
  const windows = [{ schedule: '0 22 * * 1-5', duration: '1h', timezone: 'Europe/Berlin' }];
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 30)).snapshot();
  const loaded = parseRolloutSpec(
    specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3, soakSeconds: 300 }], { maintenanceWindows: windows }),
    'spec.yaml',
  );
  const mk = (now: string) =>
    buildPlan({
      spec: loaded.spec!,
      specMap: loaded.map,
      snapshot: snap,
      now: at(now),
      specInfo: { name: 'test', path: 'spec.yaml', ref: null, commit: null, sha256: loaded.sha256, dirty: null },
    });
  const outside = mk('2026-12-02T12:00:00Z');
  const inside = mk('2026-12-02T21:30:00Z');
  assert.is(outside.id, inside.id, 'the clock is not part of the plan id');
  assert.match(
    renderText(outside),
    /Outside the maintenance windows .* Next window Wed 2026-12-02 22:00 Europe\/Berlin to Wed 2026-12-02 23:00 Europe\/Berlin: 5 of 10 waves fit\./,
  );
  assert.match(renderText(inside), /Maintenance window open now, until Wed 2026-12-02 23:00 Europe\/Berlin: 3 of 10 waves fit\./);
  assert.match(renderMarkdown(outside), /5 of 10 waves fit/);
  assert.match(renderHtml(inside), /3 of 10 waves fit/);
});

s.run();
