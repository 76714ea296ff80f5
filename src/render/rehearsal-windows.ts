/**
 * The maintenance windows of a rehearsal in words, for the text, Markdown and HTML renderers
 * alike (docs/apply.md "Rehearsal and maintenance windows"): where it started, the rule it
 * kept, and each wait for a window. Pure: times are the rehearsal's, shown in the window's
 * own time zone (Intl, no clock).
 */
import type { RehearsalWindowWait, RehearsalWindows } from '../sim/rehearse.ts';
import { formatDuration, plural } from './format.ts';
import { localTime } from './local-time.ts';

/** The time zone a rehearsal's times are read in: its first window's. */
export function windowsZone(w: RehearsalWindows): string {
  return w.windows[0]?.timezone ?? 'UTC';
}

/** What a wait waited before: "before wave 3 of worker", "before the first write", or "inside wave 1 of worker". */
function waitedBefore(w: RehearsalWindowWait): string {
  if (w.pool === null) return 'before the first write';
  if (w.wave === null) return `before pool ${w.pool}`;
  return `${w.reason === 'window-closed' ? 'inside' : 'before'} wave ${w.wave} of ${w.pool}`;
}

const WHY: Record<RehearsalWindowWait['reason'], string> = {
  'outside-window': 'outside the windows',
  'wave-would-overrun': 'the wave would overrun the open window',
  'window-closed': 'the window closed while its nodes waited to start',
};

/** One wait in words: "waited 4d17h before wave 3 of worker (the wave would overrun): the window opens Sun ...". */
export function waitText(w: RehearsalWindowWait): string {
  const why = WHY[w.reason];
  return `waited ${formatDuration(w.end - w.start)} ${waitedBefore(w)} (${why}) until ${localTime(w.opens, w.timezone)}`;
}

/** A wait on the chart's bar: "waited 5d7h for Sun 2026-12-13 01:00 Asia/Singapore". */
export function waitLabel(w: RehearsalWindowWait): string {
  return `waited ${formatDuration(w.end - w.start)} for ${localTime(w.opens, w.timezone)}`;
}

/**
 * The windows line of a rehearsal's summary: the start, the windows, the rule, the waits.
 * "Windows: started Sun 2026-12-13 01:00 Asia/Singapore; 0 1 * * 0 for 8h (Asia/Singapore); rule: ...; 1 wait, 6d16h in all."
 */
export function windowsSummary(w: RehearsalWindows): string {
  const list = w.windows.map((x) => `${x.schedule} for ${x.duration} (${x.timezone})`).join(', ');
  const waits = w.waits.length
    ? `${plural(w.waits.length, 'wait')} for a window, ${formatDuration(w.waitedSeconds)} in all (counted in the duration)`
    : 'no wait for a window';
  return `Windows: started ${localTime(w.start, windowsZone(w))}; ${list}; rule: ${w.rule}; ${waits}.`;
}
