/**
 * Maintenance windows: a five-field cron expression (minute hour day-of-month month
 * day-of-week) for the window's start, evaluated in an IANA time zone, plus a duration.
 * croner does the cron arithmetic (including DST transitions); this module only checks
 * input and turns windows into intervals. Pure: the "now" is always passed in.
 */
import { Cron } from 'croner';
import { messageOf } from '../base/errors.ts';

export function checkCron(expr: string): string | null {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) {
    return `"${expr}" has ${parts.length} fields; a cron schedule has exactly 5 (minute hour day-of-month month day-of-week)`;
  }
  try {
    new Cron(expr, { paused: true }).stop();
    return null;
  } catch (err) {
    return messageOf(err).replace(/^CronPattern: /, '');
  }
}

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const DURATION_RE = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** "4h", "90m", "1h30m", "45s" -> seconds; null when malformed or zero. */
export function parseDurationSeconds(text: string): number | null {
  const m = DURATION_RE.exec(text.trim());
  if (!m || (!m[1] && !m[2] && !m[3])) return null;
  const s = Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
  return s > 0 ? s : null;
}

export interface WindowSpec {
  schedule: string;
  duration: string;
  timezone?: string;
}

export interface Interval {
  /** epoch milliseconds */
  start: number;
  end: number;
  window: WindowSpec;
}

/** The window open at `now`, if any (the latest start <= now whose end is after now). */
export function openWindowAt(windows: readonly WindowSpec[], now: number): Interval | null {
  let best: Interval | null = null;
  for (const w of windows) {
    const dur = parseDurationSeconds(w.duration);
    if (!dur) continue;
    const cron = new Cron(w.schedule, { paused: true, timezone: w.timezone ?? 'UTC' });
    // The last start that could still be open is at most `dur` before now.
    const from = new Date(now - dur * 1000 - 1000);
    let next = cron.nextRun(from);
    while (next && next.getTime() <= now) {
      const start = next.getTime();
      const end = start + dur * 1000;
      if (end > now && (!best || end > best.end)) best = { start, end, window: w };
      next = cron.nextRun(next);
    }
    cron.stop();
  }
  return best;
}

/** The first window that starts after `now`. */
export function nextWindowAfter(windows: readonly WindowSpec[], now: number): Interval | null {
  let best: Interval | null = null;
  for (const w of windows) {
    const dur = parseDurationSeconds(w.duration);
    if (!dur) continue;
    const cron = new Cron(w.schedule, { paused: true, timezone: w.timezone ?? 'UTC' });
    const next = cron.nextRun(new Date(now));
    cron.stop();
    if (next && (!best || next.getTime() < best.start)) {
      best = { start: next.getTime(), end: next.getTime() + dur * 1000, window: w };
    }
  }
  return best;
}
