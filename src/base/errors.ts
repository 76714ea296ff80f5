/**
 * The named errors of bootcplan and their exit codes (docs/design.md §3). Every layer may throw
 * them; each carries its exit code, and the CLI's top-level handler is the only place that
 * turns one into a message and a process exit status.
 */
import type { Diagnostic } from './diagnostics.ts';

export const EXIT = {
  ok: 0,
  error: 1,
  changes: 2,
  stale: 3,
  locked: 4,
  halted: 5,
  policy: 6,
  /** Stopped by SIGINT / SIGTERM at a safe point (128 + the signal number, the shell's convention). */
  sigint: 130,
  sigterm: 143,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * An error whose `name` is its class's (`new.target`): every error class of bootcplan extends
 * it, through BootcplanError when it ends a command, directly when it is a signal between parts
 * (AbortedError, StepWait), so that none sets `name` by hand (test/cli/driver-errors.test.ts
 * reads src/ for a class that extends Error itself).
 */
export class NamedError extends Error {
  constructor(message?: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * The base of every error that ends a command: carries the exit code and, when the class or the
 * thrower knows what to do about it, a `hint` (the CLI prints it under the message).
 */
export abstract class BootcplanError extends NamedError {
  abstract readonly exitCode: ExitCode;
  readonly hint: string | undefined;
  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
  }
}

/** Bad user input: spec, snapshot, plan file, flags. Carries diagnostics with positions. */
export class InputError extends BootcplanError {
  readonly exitCode = EXIT.error;
  readonly diagnostics: Diagnostic[];
  constructor(message: string, diagnostics: Diagnostic[] = [], hint?: string) {
    super(message, hint);
    this.diagnostics = diagnostics;
  }
}

/** The four kinds of input file: two specs, and the plan files each kind's `plan --out` writes. */
export type FileKind = 'Rollout' | 'Fleet' | 'Plan' | 'FleetPlan';

/**
 * A file of one kind given where another belongs (a Fleet to `plan -f`, a fleet plan to
 * `show`): one line naming the command that takes it (cli/main.ts adds it, knowing the command),
 * instead of every field the wrong schema misses. Exit 1, as any bad input.
 */
export class WrongKindError extends InputError {
  readonly file: string;
  readonly found: FileKind;
  readonly wanted: FileKind;
  constructor(file: string, found: FileKind, wanted: FileKind) {
    super(`${file} is ${KIND_LABEL[found]}, not ${KIND_LABEL[wanted]}`);
    this.file = file;
    this.found = found;
    this.wanted = wanted;
  }
}

const KIND_LABEL: Record<FileKind, string> = {
  Rollout: 'a Rollout spec',
  Fleet: 'a Fleet',
  Plan: 'a plan of one cluster',
  FleetPlan: 'a fleet plan',
};

/** The cluster could not be reached or refused a request. */
export class ClusterApiError extends BootcplanError {
  readonly exitCode = EXIT.error;
}

/** The cluster or the spec changed since the plan was made. */
export class StalePlanError extends BootcplanError {
  readonly exitCode = EXIT.stale;
  readonly difference: string[];
  constructor(message: string, difference: string[] = []) {
    super(message, 'run `bootcplan plan` again, review it, and apply the new plan');
    this.difference = difference;
  }
}

/** Another apply holds the lock. */
export class LockHeldError extends BootcplanError {
  readonly exitCode = EXIT.locked;
  readonly holder: string;
  readonly since: string;
  readonly lockId: string;
  readonly planId: string | null;
  constructor(holder: string, since: string, lockId: string, planId: string | null) {
    super(
      `another apply holds the lock: ${holder} since ${since} (plan ${planId ?? 'unknown'}, lock id ${lockId})`,
      `wait for it (apply --lock-timeout 6m waits, and takes a dead apply's lock once it has seen it unchanged for its duration); if that apply is dead, \`bootcplan unlock ${lockId}\``,
    );
    this.holder = holder;
    this.since = since;
    this.lockId = lockId;
    this.planId = planId;
  }
}

/**
 * apply --step found the lock held, and its holder is stuck as the runs observed it (not
 * renewed for the lease's duration plus the skew allowance, or held longer than any step):
 * src/domain/lease-expiry.ts judgeHeldLock. A human looks (exit 4).
 */
export class LockStuckError extends LockHeldError {
  constructor(held: LockHeldError, why: string) {
    super(held.holder, held.since, held.lockId, held.planId);
    this.message = `lock stuck: ${why}; ${held.message}`;
  }
}

/**
 * This apply lost its lock mid-run (a renewal found another holder or no Lease, or no renewal
 * succeeded for the lease's whole duration): it stopped before its next disruptive step.
 */
export class LockNotHeldError extends BootcplanError {
  readonly exitCode = EXIT.locked;
  readonly lockId: string;
  constructor(why: string, lockId: string) {
    super(
      `this apply lost its lock (lock id ${lockId}): ${why}`,
      'it stopped before its next disruptive step; `bootcplan status` shows who holds the lock now and where this apply stopped',
    );
    this.lockId = lockId;
  }
}

/**
 * Stopped by a signal (a Job being killed, Ctrl-C) at a safe point: MCO pools it had unpaused
 * paused again, where it stopped recorded in the progress record, the lock released.
 */
export class InterruptedError extends BootcplanError {
  readonly exitCode: ExitCode;
  readonly signal: 'SIGINT' | 'SIGTERM';
  constructor(signal: 'SIGINT' | 'SIGTERM', where: string) {
    super(`stopped by ${signal} ${where}`);
    this.signal = signal;
    this.exitCode = signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm;
  }
}

/** A node failed or the failure budget ran out; the pool was paused. */
export class RolloutHaltedError extends BootcplanError {
  readonly exitCode = EXIT.halted;
  readonly report: string[];
  constructor(message: string, report: string[] = []) {
    super(message);
    this.report = report;
  }
}

/**
 * The plan targets an image a pool is held back from (docs/apply.md "Holds"): a health check
 * failed on it, or it was rolled back. Nothing was written; `apply --retry` or another image.
 */
export class HeldTargetError extends RolloutHaltedError {}

/**
 * A rollback ran to its end (docs/apply.md "Rollback"): the nodes are back on the image each
 * booted before, and a human still has to look at what failed (exit 5, like a halt).
 */
export class RolledBackError extends RolloutHaltedError {
  /** The nodes the rollback took back. */
  readonly nodes: string[];
  constructor(message: string, report: string[] = [], nodes: string[] = []) {
    super(message, report);
    this.nodes = nodes;
  }
}

/**
 * A health check failed at a gate (docs/apply.md "Health gates"): no further node started, the
 * nodes in flight finished, the pool was paused (a preflight failure wrote nothing at all). A
 * halt like any other (exit 5): a human looks before the rollout goes on.
 */
export class HealthCheckFailedError extends RolloutHaltedError {
  readonly check: string;
  readonly observed: string;
  constructor(message: string, report: string[], check: string, observed: string) {
    super(message, report);
    this.check = check;
    this.observed = observed;
  }
}

/** Outside a maintenance window, or a control-plane replacement the spec does not allow. */
export class PolicyBlockedError extends BootcplanError {
  readonly exitCode = EXIT.policy;
}

/**
 * The maintenance-window policy refused a wave (outside every window, or the wave would overrun
 * the open one). `nextWindow`: when the next window opens (ISO) and in which time zone, for the
 * rollout status ("outside window until 22:00 Europe/Berlin"); null when none is scheduled.
 * `apply --step` reports it as "nothing to do now" (exit 0); a full apply exits 6.
 */
export class OutsideWindowError extends PolicyBlockedError {
  readonly nextWindow: { start: string; timezone: string } | null;
  constructor(message: string, hint: string | undefined, nextWindow: { start: string; timezone: string } | null) {
    super(message, hint);
    this.nextWindow = nextWindow;
  }
}

/** The exit code an error stands for: its own for a named error, 1 for anything else. */
export function exitCodeOf(err: unknown): ExitCode {
  return err instanceof BootcplanError ? err.exitCode : EXIT.error;
}

/** What a file-system error code means, in words (Node.js's own text reads `EISDIR: illegal operation on a directory, read`). */
const FS_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EMFILE: 'too many open files',
  EIO: 'an input/output error',
  EBADF: 'it is closed',
};

/** A file-system error as one short phrase for a message: `cannot read spec x.yaml: permission denied`. */
export function fsErrorText(err: unknown): string {
  const code = errnoOf(err);
  return (code && FS_ERRORS[code]) ?? code ?? messageOf(err);
}

/** The message of a thrown value: an Error's own, else the value as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The code of a Node.js system error (`ENOENT`, `ECONNREFUSED`, ...), or undefined for anything else. */
export function errnoOf(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
