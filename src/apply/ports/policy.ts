/**
 * The maintenance-window policy of an apply (docs/design.md §4 maintenanceWindows): before the
 * first write nothing may happen outside a window; before each wave, the wave's estimated
 * duration (drain + reboot + ready of its slowest node, the plan's phase durations) must
 * fit in what is left of the open window. A refusal stops the apply with exit 6.
 */
import type { Plan, PlanPool } from '../../plan/types.ts';
import type { WindowSpec } from '../../domain/windows.ts';
import { gateWave, waveSlots } from '../../domain/schedule.ts';
import { nextWindowAfter } from '../../domain/windows.ts';

/** Why the policy refuses now, and when the next window opens (ISO, with its time zone). */
export interface PolicyRefusal {
  message: string;
  nextWindow: { start: string; timezone: string } | null;
}

/** A refusal (a plain message, or with the next window), or null when the wave may start. */
export type Policy = (nowEpochSeconds: number, pool: PlanPool | null, wave: number | null) => string | PolicyRefusal | null;

export function windowPolicy(windows: readonly WindowSpec[] | undefined, plan: Plan): Policy | undefined {
  if (!windows || windows.length === 0) return undefined;
  const seconds = new Map(waveSlots(plan.pools, plan.durations).map((s) => [`${s.pool}/${s.wave}`, s.seconds]));
  return (now, pool, wave) => {
    const need = pool && wave !== null ? (seconds.get(`${pool.name}/${wave}`) ?? 0) : 0;
    const gate = gateWave(windows, now * 1000, need);
    if (gate.ok) return null;
    const next = nextWindowAfter(windows, now * 1000);
    return { message: gate.message, nextWindow: next ? { start: new Date(next.start).toISOString(), timezone: next.window.timezone ?? 'UTC' } : null };
  };
}
