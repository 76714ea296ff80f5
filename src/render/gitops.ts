/** Shared wording for the maintenance-window schedule and the spec diff (pure). */
import type { Plan } from '../plan/types.ts';

function when(iso: string, tz: string): string {
  const d = new Date(iso);
  const local = new Intl.DateTimeFormat('en-GB', { timeZone: tz, weekday: 'short', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hour12: false }).format(d);
  return `${local} ${tz}`;
}

/** One line about the maintenance windows, or null when the spec has none. */
export function scheduleLine(plan: Plan): string | null {
  const s = plan.schedule;
  if (!s) return null;
  const total = s.totalWaves;
  if (s.open) {
    return `Maintenance window open now, until ${when(s.open.end, s.open.timezone)}: ${s.open.wavesThatFit} of ${total} waves fit.` +
      (s.next ? ` Next window ${when(s.next.start, s.next.timezone)}: ${s.next.wavesThatFit} waves fit.` : '');
  }
  if (s.next) return `Outside the maintenance windows (evaluated ${s.evaluatedAt}); apply waits. Next window ${when(s.next.start, s.next.timezone)} to ${when(s.next.end, s.next.timezone)}: ${s.next.wavesThatFit} of ${total} waves fit.`;
  return `No maintenance window is scheduled: apply will not start any wave.`;
}

export function specChangesTitle(plan: Plan): string | null {
  const sc = plan.specChanges;
  if (!sc) return null;
  if (!sc.unified) return `Spec unchanged since ${sc.base} (${sc.baseCommit.slice(0, 12)}).`;
  return `Spec changes since ${sc.base} (${sc.baseCommit.slice(0, 12)}): ${sc.added} added, ${sc.removed} removed lines in ${sc.path}.`;
}
