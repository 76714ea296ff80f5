/**
 * A moment as the people of a maintenance window read it: "Sun 2026-12-13 01:00
 * Asia/Singapore", the date in ISO order (a day-first or month-first date misreads in half the
 * world), in the window's own time zone. Every output that shows a window's time uses it (plan
 * schedule line, rehearsal waits, fleet rehearsal). Pure: Intl, no clock. A time or zone that does
 * not parse (a crafted plan file) is shown as written instead of failing the whole output (Intl
 * throws a RangeError).
 */
export function localTime(iso: string, timezone: string): string {
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return `${iso} ${timezone}`;
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-GB', {
      timeZone: timezone,
      weekday: 'short',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).formatToParts(new Date(at));
  } catch {
    return `${iso} ${timezone}`;
  }
  const v = (t: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === t)?.value ?? '';
  return `${v('weekday')} ${v('year')}-${v('month')}-${v('day')} ${v('hour')}:${v('minute')} ${timezone}`;
}
