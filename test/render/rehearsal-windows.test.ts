import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { waitText, windowsSummary } from '../../src/render/rehearsal-windows.ts';
import { localTime } from '../../src/render/local-time.ts';
import type { RehearsalWindows } from '../../src/sim/rehearse.ts';

const s = suite('rehearsal windows in words (render/rehearsal-windows.ts)');

const W: RehearsalWindows = {
  start: '2026-12-07T10:00:00.000Z',
  rule: 'the rule',
  windows: [{ schedule: '0 1 * * 0', duration: '8h', timezone: 'Asia/Singapore' }],
  waits: [
    {
      start: 0,
      end: 457200,
      pool: null,
      wave: null,
      reason: 'outside-window',
      message: 'outside the maintenance windows',
      opens: '2026-12-12T17:00:00.000Z',
      timezone: 'Asia/Singapore',
    },
  ],
  waitedSeconds: 457200,
};

s('a moment in the window’s own time zone, with its weekday', () => {
  assert.is(localTime('2026-12-12T17:00:00.000Z', 'Asia/Singapore'), 'Sun 2026-12-13 01:00 Asia/Singapore');
  assert.is(localTime('2026-12-12T17:00:00.000Z', 'Europe/Berlin'), 'Sat 2026-12-12 18:00 Europe/Berlin');
  assert.is(localTime('not a time', 'UTC'), 'not a time UTC');
  // A crafted plan file's zone: shown as written, not a RangeError.
  assert.is(localTime('2026-12-12T17:00:00.000Z', 'Mars/Olympus'), '2026-12-12T17:00:00.000Z Mars/Olympus');
});

s('a wait names what it waited before, why, and until when', () => {
  assert.is(waitText(W.waits[0]), 'waited 5d7h before the first write (outside the windows) until Sun 2026-12-13 01:00 Asia/Singapore');
  assert.is(
    waitText({ ...W.waits[0], pool: 'worker', wave: 3, reason: 'wave-would-overrun', end: 3600 }),
    'waited 1h before wave 3 of worker (the wave would overrun the open window) until Sun 2026-12-13 01:00 Asia/Singapore',
  );
  assert.is(
    waitText({ ...W.waits[0], pool: 'worker', wave: 1, reason: 'window-closed', end: 3600 }),
    'waited 1h inside wave 1 of worker (the window closed while its nodes waited to start) until Sun 2026-12-13 01:00 Asia/Singapore',
  );
});

s('the summary: start, windows, rule and the waits counted', () => {
  assert.is(
    windowsSummary(W),
    'Windows: started Mon 2026-12-07 18:00 Asia/Singapore; 0 1 * * 0 for 8h (Asia/Singapore); rule: the rule; 1 wait for a window, 5d7h in all (counted in the duration).',
  );
  assert.match(windowsSummary({ ...W, waits: [], waitedSeconds: 0 }), /; no wait for a window\.$/);
});

s.run();
