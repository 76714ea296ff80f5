/** The Rollout spec, `bootcplan.dev/v1alpha1` kind `Rollout` (DESIGN §4), after validation. */
import type { BootImageSkewEnforcement, ManagedBootImages } from '../base/api-types.ts';

export const SPEC_API_VERSION = 'bootcplan.dev/v1alpha1';
export const SPEC_KIND = 'Rollout';

export const REBOOT_POLICIES = ['RebootOnly', 'AllowSoftReboot'] as const;
export type RebootPolicy = (typeof REBOOT_POLICIES)[number];

/**
 * How a pool's nodes are admitted: `waves` (the default) start a group of up to maxUnavailable
 * nodes and wait for the whole group before the next; `slots` admit the next node, in the
 * plan's order, as soon as the budget has room (a node finishes), never more than
 * maxUnavailable out of service at once.
 */
export const ROLLOUTS = ['waves', 'slots'] as const;
export type RolloutMode = (typeof ROLLOUTS)[number];

export const CPMS_STRATEGIES = ['RollingUpdate', 'OnDelete'] as const;
export type CpmsStrategy = (typeof CPMS_STRATEGIES)[number];

export interface PoolSpec {
  name: string;
  image: string;
  allowTags?: boolean;
  /** integer >= 1 or "N%" (validated by parseMaxUnavailable). */
  maxUnavailable?: number | string;
  rebootPolicy?: RebootPolicy;
  drainTimeoutSeconds?: number;
  /** bootc pools: the staging limit (DESIGN §7; default 600). */
  stagingTimeoutSeconds?: number;
  soakSeconds?: number;
  paused?: boolean;
  priority?: number;
  /** `waves` (default) or `slots`. */
  rollout?: RolloutMode;
}

export interface ControlPlaneMachineSetSpec {
  strategy?: CpmsStrategy;
  allowReplacement?: boolean;
}

export interface MaintenanceWindow {
  schedule: string;
  duration: string;
  timezone?: string;
}

export interface RolloutSpec {
  apiVersion: typeof SPEC_API_VERSION;
  kind: typeof SPEC_KIND;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    pools?: PoolSpec[];
    managedBootImages?: ManagedBootImages;
    bootImageSkewEnforcement?: BootImageSkewEnforcement;
    controlPlaneMachineSet?: ControlPlaneMachineSetSpec;
    maintenanceWindows?: MaintenanceWindow[];
  };
}
