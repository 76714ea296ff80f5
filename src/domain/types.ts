/**
 * The small vocabulary the pure rules share: which operator drives a pool, what kind of
 * reboot a node gets, and how long each phase of a node's update takes. The Plan JSON
 * (src/plan/types.ts, docs/design.md §6) re-exports these under the same names.
 */

/** bootc-operator (BootcNodePool) or the Machine Config Operator (MachineConfigPool only). */
export const BACKENDS = ['bootc', 'mco'] as const;
export type Backend = (typeof BACKENDS)[number];

/** `unknown`: a bootc node whose target is not staged yet, so softRebootCapable cannot be known. */
export const REBOOT_KINDS = ['soft', 'hard', 'unknown'] as const;
export type RebootKind = (typeof REBOOT_KINDS)[number];

/** Seconds per phase (src/domain/timing.ts holds the defaults and the `--durations` parser). */
export interface PhaseDurations {
  stage: number;
  drain: number;
  reboot: number;
  softReboot: number;
  ready: number;
}
