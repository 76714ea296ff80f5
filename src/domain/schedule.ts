/**
 * How a plan's waves fall into maintenance windows. Pure: `now` is passed in.
 *
 * Rule (bootcplan's own, docs/design.md §4 maintenanceWindows): a wave starts only if its
 * estimated duration fits in what is left of the window that is open at that moment.
 * Staging is not disruptive and is not counted against windows; cordon, drain and reboot are.
 */
import type { Backend, RebootKind, PhaseDurations } from './types.ts';
import { nodeWindowSeconds } from './timing.ts';
import { openWindowAt, nextWindowAfter, type WindowSpec, type Interval } from './windows.ts';

/** What the schedule reads of a planned pool (a PlanPool of src/plan/types.ts fits). */
export interface ScheduledPool {
  name: string;
  backend: Backend;
  soakSeconds: number;
  /** node names per wave, in rollout order */
  waves: readonly (readonly string[])[];
  nodes: readonly { name: string; reboot: RebootKind }[];
}

export interface WaveSlot {
  pool: string;
  /** 1-based wave number within the pool */
  wave: number;
  /** drain + reboot + ready of the slowest node in the wave */
  seconds: number;
  /** soak after this wave (0 after a pool's last wave) */
  soakSeconds: number;
}

export function waveSlots(pools: readonly ScheduledPool[], d: PhaseDurations): WaveSlot[] {
  const out: WaveSlot[] = [];
  for (const p of pools) {
    const byName = new Map(p.nodes.map((n) => [n.name, n]));
    p.waves.forEach((w, i) => {
      const seconds = Math.max(...w.map((name) => nodeWindowSeconds(d, p.backend, byName.get(name)?.reboot ?? 'hard')));
      out.push({ pool: p.name, wave: i + 1, seconds, soakSeconds: i < p.waves.length - 1 ? p.soakSeconds : 0 });
    });
  }
  return out;
}

/** How many of the slots, in order, fit in `available` seconds (soak after a wave counts only if another wave follows). */
export function slotsThatFit(slots: readonly WaveSlot[], available: number): number {
  let used = 0;
  let n = 0;
  for (const s of slots) {
    const need = used + s.seconds;
    if (need > available) break;
    used = need + s.soakSeconds;
    n++;
  }
  return n;
}

export interface WindowInfo {
  start: string;
  end: string;
  timezone: string;
  /** waves (in plan order) that fit in this window, counted from its start (or from now for the open one) */
  wavesThatFit: number;
}

export interface PlanSchedule {
  evaluatedAt: string;
  open: WindowInfo | null;
  next: WindowInfo | null;
  totalWaves: number;
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

export function planSchedule(windows: readonly WindowSpec[], pools: readonly ScheduledPool[], d: PhaseDurations, now: number): PlanSchedule {
  const slots = waveSlots(pools, d);
  const info = (iv: Interval | null, from: number): WindowInfo | null =>
    iv
      ? {
          start: iso(iv.start),
          end: iso(iv.end),
          timezone: iv.window.timezone ?? 'UTC',
          wavesThatFit: slotsThatFit(slots, (iv.end - Math.max(from, iv.start)) / 1000),
        }
      : null;
  const open = openWindowAt(windows, now);
  const next = nextWindowAfter(windows, now);
  return { evaluatedAt: iso(now), open: info(open, now), next: info(next, next?.start ?? now), totalWaves: slots.length };
}

export type WaveGate =
  { ok: true; windowEnd: number | null } | { ok: false; reason: 'outside-window' | 'wave-would-overrun'; message: string; nextStart: number | null };

/**
 * May a wave of `seconds` start at `now`? No windows configured: always. Otherwise only
 * inside an open window with at least `seconds` left.
 */
export function gateWave(windows: readonly WindowSpec[] | undefined, now: number, seconds: number): WaveGate {
  if (!windows || windows.length === 0) return { ok: true, windowEnd: null };
  const open = openWindowAt(windows, now);
  const next = nextWindowAfter(windows, now);
  const nextText = next ? `the next window opens at ${iso(next.start)} (${next.window.schedule} ${next.window.timezone ?? 'UTC'})` : 'no window is scheduled';
  if (!open) {
    return { ok: false, reason: 'outside-window', message: `outside the maintenance windows; ${nextText}`, nextStart: next?.start ?? null };
  }
  const left = (open.end - now) / 1000;
  if (seconds > left) {
    return {
      ok: false,
      reason: 'wave-would-overrun',
      message: `the next wave needs about ${Math.ceil(seconds / 60)} min but the window closes at ${iso(open.end)} (${Math.floor(left / 60)} min left); ${nextText}`,
      nextStart: next?.start ?? null,
    };
  }
  return { ok: true, windowEnd: open.end };
}
