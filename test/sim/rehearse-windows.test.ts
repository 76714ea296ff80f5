import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { planWith } from '../support/apply.ts';
import { seeded } from '../support/seeds.ts';
import { rehearse } from '../../src/sim/rehearse.ts';
import { openWindowAt, type WindowSpec } from '../../src/domain/windows.ts';
import { OutsideWindowError } from '../../src/base/errors.ts';

const s = suite('rehearsal keeps the maintenance windows (sim/rehearse.ts)');

const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };
// Monday 2026-12-07 10:00 UTC; the Sunday window opens on 2026-12-13 at 01:00 in Singapore (17:00 UTC on the 12th).
const MONDAY = Date.parse('2026-12-07T10:00:00Z') / 1000;
const SUNDAY: WindowSpec = { schedule: '0 1 * * 0', duration: '8h', timezone: 'Asia/Singapore' };

function setup(windows: WindowSpec[], n = 9, max = 3) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', n)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: max }], { maintenanceWindows: windows }), snap, D);
  return { plan, replan, snap };
}

const waveStarts = (events: readonly { type: string; t: number }[]) => events.filter((e) => e.type === 'wave-start').map((e) => e.t);

s('started on a Monday, a Sunday-only rollout waits for Sunday: the first wave starts inside the window, the wait is in the duration', async () => {
  const { plan, replan, snap } = setup([SUNDAY]);
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot: snap, durations: D, windows: [SUNDAY], start: MONDAY });
  assert.is(error, null, String(error));
  const w = rehearsal.windows!;
  assert.is(w.start, '2026-12-07T10:00:00.000Z');
  assert.is(w.waits.length, 1);
  assert.equal([w.waits[0].pool, w.waits[0].reason, w.waits[0].opens], [null, 'outside-window', '2026-12-12T17:00:00.000Z']);
  const wait = Date.parse('2026-12-12T17:00:00Z') / 1000 - MONDAY;
  assert.is(w.waits[0].end - w.waits[0].start, wait);
  const first = Math.min(...waveStarts(rehearsal.events));
  assert.ok(first >= wait, `first wave at +${first}s, the window opens at +${wait}s`);
  assert.ok(openWindowAt([SUNDAY], (MONDAY + first) * 1000), 'the first wave starts inside the Sunday window');
  assert.ok(rehearsal.durationSeconds > wait, `${rehearsal.durationSeconds}s counts the ${wait}s wait`);
  assert.is(rehearsal.windows!.waitedSeconds, wait);
  assert.ok(rehearsal.events.some((e) => e.type === 'wait' && e.address === 'maintenance window'));
});

s('started inside the window: no wait, and the times are those of a rehearsal without windows', async () => {
  const { plan, replan, snap } = setup([SUNDAY]);
  const open = Date.parse('2026-12-12T17:00:00Z') / 1000;
  const a = await rehearse({ plan, replan, snapshot: snap, durations: D, windows: [SUNDAY], start: open });
  const b = await rehearse({ plan, replan, snapshot: snap, durations: D, start: open });
  assert.equal(a.rehearsal.windows!.waits, []);
  assert.is(a.rehearsal.durationSeconds, b.rehearsal.durationSeconds);
  assert.is(b.rehearsal.windows, undefined);
});

s('the overrun rule: a wave that does not fit what is left waits for the next window, and the wait is counted', async () => {
  // 20 minutes each weekday at 08:00 UTC: staging (600 s, not held to windows) then one wave of 390 s fits, the next does not.
  const win: WindowSpec = { schedule: '0 8 * * 1-5', duration: '20m', timezone: 'UTC' };
  const { plan, replan, snap } = setup([win]);
  const start = Date.parse('2026-12-07T08:00:00Z') / 1000;
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot: snap, durations: D, windows: [win], start });
  assert.is(error, null, String(error));
  const waits = rehearsal.windows!.waits;
  assert.ok(waits.length >= 1);
  assert.equal([waits[0].pool, waits[0].wave, waits[0].reason], ['worker', 2, 'wave-would-overrun']);
  assert.is(waits[0].opens, '2026-12-08T08:00:00.000Z');
  for (const t of waveStarts(rehearsal.events)) assert.ok(openWindowAt([win], (start + t) * 1000), `wave at +${t}s inside the window`);
  assert.ok(rehearsal.durationSeconds >= 86400, 'three waves over three mornings');
  assert.is(rehearsal.pools[0].waves.length, 3);
});

s('a wave longer than any window never starts: the rehearsal stops as apply does (exit 6), it does not wait forever', async () => {
  const win: WindowSpec = { schedule: '0 8 * * *', duration: '5m', timezone: 'UTC' };
  const { plan, replan, snap } = setup([win]);
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot: snap, durations: D, windows: [win], start: MONDAY });
  assert.instance(error, OutsideWindowError);
  assert.match(rehearsal.stopped ?? '', /the next wave needs about 7 min/);
  assert.is(rehearsal.reboots.hard + rehearsal.reboots.soft, 0);
});

// A node starts when its wave is admitted (wave-start names it): the gate apply keeps
// (src/domain/schedule.ts gateWave). Staging inside the wave is not held to windows (docs/design.md §4).
s('property: no rehearsed node starts (wave start, cordon) outside its window, and every node is in a wave', async () => {
  const windowArb = fc.record({
    hour: fc.integer({ min: 0, max: 23 }),
    days: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 7 }),
    minutes: fc.integer({ min: 10, max: 300 }),
    timezone: fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Singapore', 'America/New_York'),
  });
  await fc.assert(
    fc.asyncProperty(windowArb, fc.integer({ min: 0, max: 14 * 86400 }), fc.integer({ min: 2, max: 7 }), async (w, offset, n) => {
      const win: WindowSpec = { schedule: `0 ${w.hour} * * ${[...w.days].sort().join(',')}`, duration: `${w.minutes}m`, timezone: w.timezone };
      const { plan, replan, snap } = setup([win], n, 2);
      const start = MONDAY + offset;
      const { rehearsal } = await rehearse({ plan, replan, snapshot: snap, durations: D, windows: [win], start });
      for (const e of rehearsal.events) {
        if (e.type !== 'wave-start' && e.type !== 'cordon') continue;
        const at = (start + e.t) * 1000;
        assert.ok(
          openWindowAt([win], at),
          `${e.type} of wave ${e.wave} (${e.type === 'cordon' ? e.node : e.nodes.join(', ')}) at ${new Date(at).toISOString()} is inside ${win.schedule} ${win.timezone}`,
        );
      }
      if (!rehearsal.stopped) assert.is(rehearsal.pools[0].waves.flatMap((x) => x.nodes).length, n);
    }),
    seeded(3404, 25),
  );
});

s('staging that outlasts the window: the rehearsal cordons no node after it closes, waits for the next window and finishes', async () => {
  // docs/apply.md "Maintenance windows inside a wave": the plan estimates staging at 300 s, the nodes take 1500 s.
  const win: WindowSpec = { schedule: '0 8 * * 1-5', duration: '20m', timezone: 'UTC' };
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3, stagingTimeoutSeconds: 3600 }], { maintenanceWindows: [win] });
  const { plan, replan } = planWith(spec, snap, { ...D, stage: 300 });
  const start = Date.parse('2026-12-07T08:00:00Z') / 1000;
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot: snap, durations: { ...D, stage: 1500 }, windows: [win], start });
  assert.is(error, null, String(error));
  const cordons = rehearsal.events.filter((e) => e.type === 'cordon');
  assert.is(cordons.length, 6);
  for (const e of cordons) assert.ok(openWindowAt([win], (start + e.t) * 1000), `cordon at +${e.t}s inside the window`);
  const w = rehearsal.windows!.waits[0];
  assert.equal([w.pool, w.wave, w.reason, w.opens], ['worker', 1, 'window-closed', '2026-12-08T08:00:00.000Z']);
});

s.run();
