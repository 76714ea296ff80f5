/**
 * What `apply` reports besides its output (docs/gitops.md "The rollout status", "Events", "Notifications"): the rollout status, the Events
 * and the notifications (src/apply/report/rollout-report.ts; --notify checked here, posted by
 * ./notify.ts), the notice while it waits for the lock, and how `apply --step` ends (docs/design.md §3):
 * exit 0 when it advanced or when there is nothing it may do now (outside the window, nodes
 * still staging, another apply running), non-zero only for what needs a human.
 */
import type { Plan } from '../plan/types.ts';
import type { RolloutSpec } from '../rollout-spec/types.ts';
import type { ClusterDriver } from '../apply/ports/driver.ts';
import type { ApplyEvent } from '../apply/ports/events.ts';
import type { ApplyResult } from '../apply/applier.ts';
import { RolloutReporter, exitOf } from '../apply/report/rollout-report.ts';
import type { StatusCore } from '../apply/report/rollout-status.ts';
import { InputError, LockHeldError, LockStuckError, messageOf } from '../base/errors.ts';
import { judgeHeldLock, type LockJudgement } from '../domain/lease-expiry.ts';
import { forDisplay } from '../render/secrets.ts';
import { formatDuration } from '../render/format.ts';
import type { CliIO } from './ports.ts';
import { httpNotifier } from './notify.ts';
import { clusterMismatch } from '../plan/saved/compare.ts';

/**
 * apply --step and a held lock: another apply is running (the lock is renewed, so it is
 * alive) and this run has nothing to do, unless that apply has held it for longer than any
 * one step takes (the examples' Job deadline is 2 h), or stopped renewing it: then it is stuck,
 * and a human looks (exit 4). Both are measured on the observing runs' clocks, from what they
 * kept in the Rollout status (src/domain/lease-expiry.ts judgeHeldLock), never from the times
 * the holder wrote.
 */
export const STEP_LOCK_STUCK_SECONDS = 6 * 3600;

const EXAMPLE = 'e.g. --notify https://hooks.example.com/bootcplan';

/** The URL of --notify, checked before any cluster access: http or https only. Never echoed: it may hold a token. */
export function parseNotifyUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(`--notify: the value is not a URL (an absolute http or https URL is expected; it is not shown, as it may hold a token)`, [], EXAMPLE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InputError(`--notify: only http and https URLs are posted to, not ${url.protocol}`, [], EXAMPLE);
  }
  return url;
}

/**
 * The notice while apply waits for the lock: who holds it, how long this apply has waited, of
 * how long; printed when the holder changes and at most every 30 s otherwise.
 */
export function lockWaitNotice(say: (line: string) => void, timeoutSeconds: number): (held: LockHeldError, waited: number) => void {
  let last: { lockId: string; at: number } | null = null;
  return (held, waited) => {
    if (last && last.lockId === held.lockId && waited - last.at < 30) return;
    last = { lockId: held.lockId, at: waited };
    say(
      `waiting for the lock: held by ${held.holder} since ${held.since} (plan ${held.planId ?? 'unknown'}, lock id ${held.lockId}); waited ${formatDuration(Math.round(waited))} of ${formatDuration(timeoutSeconds)}`,
    );
  };
}

/**
 * A saved plan whose spec no longer verifies (edited after the plan was made, or missing):
 * there is no spec to plan with, but the Rollout (named as the plan records it) still gets
 * "stale: re-plan needed", so the loop shows why nothing happens, on the cluster the plan was
 * made for only. Best effort: any failure here is a warning, and the caller rethrows the
 * StalePlanError (exit 3).
 */
export async function reportUnverifiedPlan(
  open: () => Promise<{ driver: ClusterDriver; close?: () => void }>,
  io: CliIO,
  saved: Plan,
  err: unknown,
): Promise<void> {
  let opened: { driver: ClusterDriver; close?: () => void } | null = null;
  try {
    opened = await open();
    // Never a status on a cluster the plan was not made for (docs/design.md §6): a one-off read, on this error path only.
    const mismatch = clusterMismatch(saved, await opened.driver.snapshot());
    if (mismatch) {
      io.stderr(forDisplay(`warning: the rollout status was not recorded: ${mismatch.message}`) + '\n');
      return;
    }
    const r = new RolloutReporter(opened.driver, saved, { rollout: saved.spec.name, spec: undefined, warn: (l) => io.stderr(forDisplay(l) + '\n') });
    await r.open();
    await r.finish({ error: err }, exitOf({ error: err }));
  } catch (e) {
    io.stderr(forDisplay(`warning: the rollout status was not recorded: ${messageOf(e)}`) + '\n');
  } finally {
    opened?.close?.();
  }
}

export class ApplyReporting {
  private reporter: RolloutReporter | null = null;
  private readonly notify;

  constructor(
    private readonly driver: ClusterDriver,
    private readonly io: CliIO,
    private readonly spec: RolloutSpec,
    private readonly step: boolean,
    notifyUrl: URL | undefined,
  ) {
    this.notify = notifyUrl ? httpNotifier(notifyUrl, (l) => io.stderr(forDisplay(l) + '\n')) : undefined;
  }

  /** Starts reporting for `plan` (reads the Rollout object). */
  async open(plan: Plan): Promise<void> {
    this.reporter = new RolloutReporter(this.driver, plan, {
      rollout: this.spec.metadata.name,
      spec: this.spec.spec,
      notify: this.notify,
      expectObject: this.step,
      warn: (l) => this.io.stderr(forDisplay(l) + '\n'),
    });
    await this.reporter.open();
  }

  readonly onEvent = (e: ApplyEvent): void => this.reporter?.onEvent(e);

  /** The run ended with a result: the final status (and its message, for the summary line). */
  async finished(result: ApplyResult): Promise<StatusCore | null> {
    return this.reporter ? this.reporter.finish({ result }, exitOf({ result })) : null;
  }

  /**
   * The run failed: records why, and returns the error to end with, or null when apply --step
   * should still exit 0 (another apply holds the lock and is alive: it writes the status, this
   * run leaves it). A held lock judged stuck becomes a LockStuckError.
   */
  async failed(err: unknown): Promise<unknown> {
    if (err instanceof LockHeldError && !(err instanceof LockStuckError)) {
      const judged = await this.judgeLock(err);
      if (judged?.stuck && this.step) err = new LockStuckError(err, judged.stuck);
      else if (this.step) {
        if (judged && !(await this.reporter?.keepLockObserved(judged.next)))
          this.warn(
            'the Rollout object is absent: what this run saw of the lock is not kept, so a holder that stopped renewing is not found out across runs (give the Job --lock-timeout longer than the lease, docs/apply.md "Clocks and skew")',
          );
        this.io.stderr(forDisplay(`nothing to do now: ${err.message}`) + '\n');
        return null;
      }
    }
    await this.reporter?.finish({ error: err }, exitOf({ error: err }));
    return err;
  }

  /** The held lock judged against what earlier runs saw; skew reported on stderr. Null when it is gone already. */
  private async judgeLock(err: LockHeldError): Promise<LockJudgement | null> {
    const lock = await this.driver.readLock().catch(() => null);
    if (!lock || lock.lockId !== err.lockId) return null;
    const at = (s: string) => (Number.isFinite(Date.parse(s)) ? Date.parse(s) / 1000 : this.driver.clock.now());
    const judged = judgeHeldLock(
      this.reporter?.lockObserved ?? null,
      { lockId: lock.lockId, holder: lock.holder, acquiredAt: at(lock.since), renewedAt: at(lock.renewedAt), ttlSeconds: lock.ttlSeconds },
      this.driver.clock.now(),
      STEP_LOCK_STUCK_SECONDS,
    );
    for (const s of judged.skew) this.warn(`clock skew: ${s}`);
    return judged;
  }

  private warn(line: string) {
    this.io.stderr(forDisplay(`warning: ${line}`) + '\n');
  }
}
