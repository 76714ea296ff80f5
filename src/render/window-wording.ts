/**
 * The maintenance windows in words (the plan's `schedule`, docs/design.md §6): the line every plan output
 * (text, Markdown, HTML) gives the schedule the planner evaluated. Pure: the plan carries the
 * times, the evaluation instant included.
 */
import type { Plan } from '../plan/types.ts';

/**
 * "Mon, 14/09/2026, 22:00 Europe/Berlin". A time or zone that does not parse (a crafted plan
 * file) is shown as written instead of failing the whole output (Intl throws a RangeError).
 */
function when(iso: string, tz: string): string {
  try {
    const local = new Intl.DateTimeFormat('en-GB', {
      timeZone: tz,
      weekday: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    }).format(new Date(iso));
    return `${local} ${tz}`;
  } catch {
    return `${iso} ${tz}`;
  }
}

/** One line about the maintenance windows, or null when the spec has none. */
export function scheduleLine(plan: Plan): string | null {
  const s = plan.schedule;
  if (!s) return null;
  const total = s.totalWaves;
  if (s.open) {
    return (
      `Maintenance window open now, until ${when(s.open.end, s.open.timezone)}: ${s.open.wavesThatFit} of ${total} waves fit.` +
      (s.next ? ` Next window ${when(s.next.start, s.next.timezone)}: ${s.next.wavesThatFit} waves fit.` : '')
    );
  }
  if (s.next)
    return `Outside the maintenance windows (evaluated ${s.evaluatedAt}); apply waits. Next window ${when(s.next.start, s.next.timezone)} to ${when(s.next.end, s.next.timezone)}: ${s.next.wavesThatFit} of ${total} waves fit.`;
  return `No maintenance window is scheduled: apply will not start any wave.`;
}
