/**
 * The named errors of bootcplan and their exit codes (DESIGN §3). The CLI's top-level
 * handler is the only place that turns them into exit codes.
 */
import type { Diagnostic } from '../spec/diagnostics.ts';

export const EXIT = {
  ok: 0,
  error: 1,
  changes: 2,
  stale: 3,
  locked: 4,
  halted: 5,
  policy: 6,
} as const;

/** Bad user input: spec, snapshot, plan file, flags. Carries diagnostics with positions. */
export class InputError extends Error {
  readonly diagnostics: Diagnostic[];
  readonly hint?: string;
  constructor(message: string, diagnostics: Diagnostic[] = [], hint?: string) {
    super(message);
    this.name = 'InputError';
    this.diagnostics = diagnostics;
    this.hint = hint;
  }
}

/** The cluster could not be reached or refused a request. */
export class ClusterApiError extends Error {
  readonly hint?: string;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'ClusterApiError';
    this.hint = hint;
  }
}

/** The cluster or the spec changed since the plan was made. */
export class StalePlanError extends Error {
  readonly difference: string[];
  constructor(message: string, difference: string[] = []) {
    super(message);
    this.name = 'StalePlanError';
    this.difference = difference;
  }
}

/** Another apply holds the lock. */
export class LockHeldError extends Error {
  readonly holder: string;
  readonly since: string;
  readonly lockId: string;
  readonly planId: string | null;
  constructor(holder: string, since: string, lockId: string, planId: string | null) {
    super(`another apply holds the lock: ${holder} since ${since} (plan ${planId ?? 'unknown'}, lock id ${lockId})`);
    this.name = 'LockHeldError';
    this.holder = holder;
    this.since = since;
    this.lockId = lockId;
    this.planId = planId;
  }
}

/** A node failed or the failure budget ran out; the pool was paused. */
export class RolloutHaltedError extends Error {
  readonly report: string[];
  constructor(message: string, report: string[] = []) {
    super(message);
    this.name = 'RolloutHaltedError';
    this.report = report;
  }
}

/** Outside a maintenance window, or a control-plane replacement the spec does not allow. */
export class PolicyBlockedError extends Error {
  readonly hint?: string;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'PolicyBlockedError';
    this.hint = hint;
  }
}

export function exitCodeOf(err: unknown): number {
  if (err instanceof StalePlanError) return EXIT.stale;
  if (err instanceof LockHeldError) return EXIT.locked;
  if (err instanceof RolloutHaltedError) return EXIT.halted;
  if (err instanceof PolicyBlockedError) return EXIT.policy;
  return EXIT.error;
}
