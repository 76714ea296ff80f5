/**
 * Per-node duration jitter (`rehearse --jitter 0.3 --seed N`): real nodes do not drain and
 * reboot in the same time. Each node gets one factor, uniform in [1 - j, 1 + j], that scales
 * its disruptive phases (drain, reboot, soft reboot, until Ready). Staging is not scaled: it
 * runs in parallel before the first admission, off the critical path, and the default stage
 * time (600 s) is the staging limit itself (docs/design.md §7: 10 minutes), so scaling it up would
 * only rehearse a staging halt. The factor depends only on the seed and the node's name, so
 * a rehearsal is deterministic whatever order the nodes run in, and the makespan benchmark's
 * models (bench/strategies.ts) give each node the same factor as the simulator does.
 */
import type { PhaseDurations } from '../plan/types.ts';
import { mulberry32, hashName } from './rng.ts';

export interface JitterOptions {
  /** 0 <= fraction < 1: a node's durations are scaled by a factor in [1 - fraction, 1 + fraction]. */
  fraction: number;
  seed: number;
}

/** The factor a node's durations are scaled by (1 without jitter). */
export function jitterFactor(j: JitterOptions | null | undefined, name: string): number {
  if (!j || j.fraction <= 0) return 1;
  const rng = mulberry32(hashName(j.seed, name));
  rng(); // the first draw of mulberry32 is poorly mixed for close seeds
  return 1 + j.fraction * (2 * rng() - 1);
}

/** A node's phase durations under jitter. */
export function jitteredDurations(d: PhaseDurations, j: JitterOptions | null | undefined, name: string): PhaseDurations {
  const f = jitterFactor(j, name);
  if (f === 1) return d;
  return { stage: d.stage, drain: d.drain * f, reboot: d.reboot * f, softReboot: d.softReboot * f, ready: d.ready * f };
}
