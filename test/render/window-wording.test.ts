/**
 * The maintenance-window line of every plan output (src/render/window-wording.ts): open now,
 * closed with a next window, none scheduled, and a crafted time or zone shown as written.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { scheduleLine } from '../../src/render/window-wording.ts';
import type { PlanSchedule } from '../../src/plan/types.ts';
import { demoPlan } from '../support/render.ts';

const plan = demoPlan();
const line = (schedule: PlanSchedule | null) => scheduleLine({ ...plan, schedule });
const window = (start: string, end: string, timezone: string, wavesThatFit: number) => ({ start, end, timezone, wavesThatFit });

test('no schedule in the plan: no line', () => {
  assert.is(line(null), null);
});

test('an open window: until when, in its zone, and the next one', () => {
  const s: PlanSchedule = {
    evaluatedAt: '2026-09-14T20:30:00Z',
    open: window('2026-09-14T20:00:00Z', '2026-09-15T00:00:00Z', 'Europe/Berlin', 3),
    next: window('2026-09-15T20:00:00Z', '2026-09-16T00:00:00Z', 'Europe/Berlin', 5),
    totalWaves: 7,
  };
  assert.is(
    line(s),
    'Maintenance window open now, until Tue 2026-09-15 02:00 Europe/Berlin: 3 of 7 waves fit. Next window Tue 2026-09-15 22:00 Europe/Berlin: 5 waves fit.',
  );
  assert.is(line({ ...s, next: null }), 'Maintenance window open now, until Tue 2026-09-15 02:00 Europe/Berlin: 3 of 7 waves fit.');
});

test('outside the windows: apply waits for the next one', () => {
  assert.is(
    line({ evaluatedAt: '2026-09-14T10:00:00Z', open: null, next: window('2026-09-14T22:00:00Z', '2026-09-15T02:00:00Z', 'UTC', 2), totalWaves: 4 }),
    'Outside the maintenance windows (evaluated 2026-09-14T10:00:00Z); apply waits. Next window Mon 2026-09-14 22:00 UTC to Tue 2026-09-15 02:00 UTC: 2 of 4 waves fit.',
  );
});

test('no window scheduled at all: apply starts no wave', () => {
  assert.is(
    line({ evaluatedAt: '2026-09-14T10:00:00Z', open: null, next: null, totalWaves: 4 }),
    'No maintenance window is scheduled: apply will not start any wave.',
  );
});

test('a time or zone that does not parse (a crafted plan file) is shown as written', () => {
  const s: PlanSchedule = { evaluatedAt: 'x', open: window('x', 'not-a-time', 'Mars/Olympus', 1), next: null, totalWaves: 1 };
  assert.is(line(s), 'Maintenance window open now, until not-a-time Mars/Olympus: 1 of 1 waves fit.');
});

test.run();
