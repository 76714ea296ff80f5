/**
 * The maintenance windows in words (the plan's `schedule`, docs/design.md §6): the line every plan output
 * (text, Markdown, HTML) gives the schedule the planner evaluated. Pure: the plan carries the
 * times, the evaluation instant included.
 */
import type { Plan } from '../plan/types.ts';
import { localTime as when } from './local-time.ts';

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
