/**
 * One apply at a time (docs/design.md §7): the lock is a Lease held through the driver.
 *
 * - Taking it: `Lease.acquire` asks the driver once, or, with a lock timeout, keeps asking
 *   with backoff (1 s doubling up to 15 s) until the timeout, reporting who holds it. The
 *   driver judges another holder's lease by observed time (src/domain/lease-expiry.ts).
 * - Keeping it: renewed every third of its duration. A renewal that fails for a transient
 *   reason (network, API server, timeout) is retried with backoff (from 1 s, doubling, at most a
 *   tenth of the duration) until the lease would expire; only then is the lock lost. The lease
 *   counts from the time the last successful renewal was SENT (the holder's side of client-go's
 *   rule), never from a time written by another machine. A renewal that finds the Lease gone or
 *   someone else's loses the lock at once, and so does the watch showing it (watchForLoss,
 *   confirmed by one renewal): every wait then ends (docs/design.md §7 "Stopping").
 * - Checking it: `assertHeld` runs before every disruptive step (cordon, drain, reboot request,
 *   pool unpause, each change of the plan); `write` is the gate and a retried write in one. It costs no API request: it uses what the renewal
 *   loop knows plus the Lease as the driver's watch shows it (another holder, or no Lease: lost).
 *   Only when the last confirmed renewal is older than half the duration (renewals are failing
 *   or late) does it wait for one renewal attempt first. It also stops the apply when a stop
 *   was asked for (SIGTERM/SIGINT: `stopRequested`), so every disruptive step is a safe point.
 */
import { LockHeldError, LockNotHeldError } from '../../base/errors.ts';
import { type ClusterDriver, type LockRecord, AbortedError, LockLostError } from '../ports/driver.ts';
import { BOOTCPLAN_LOCK_ID } from '../../domain/labels.ts';
import { retry } from './retry.ts';

/** Why the lock is lost, when the watch shows the Lease gone (`id` null) or another's. */
function lossOf(id: string | null, holder: string | null): string {
  return id === null ? 'its Lease was deleted (bootcplan unlock?)' : `the Lease is now held by ${holder ?? 'nobody'} (lock id ${id})`;
}

/** Waiting for a lock someone else holds (apply --lock-timeout). */
interface LockWait {
  /** Give up (LockHeldError, exit 4) after this long; 0: at once. */
  timeoutSeconds: number;
  /** Told at each refusal while waiting: who holds it, how long this apply has waited. */
  onWait?: (held: LockHeldError, waitedSeconds: number) => void;
  signal?: AbortSignal;
}

export class Lease {
  private lost: LockNotHeldError | null = null;
  /** Driver-clock time the last successful acquire or renewal was sent. */
  private confirmedAt: number;
  private renewing: Promise<void> | null = null;

  private constructor(
    private readonly driver: ClusterDriver,
    private lock: LockRecord,
    private readonly ttlSeconds: number,
    confirmedAt: number,
    private readonly stop?: AbortSignal,
    private readonly onLost?: () => void,
  ) {
    this.confirmedAt = confirmedAt;
  }

  /** Takes the lock, waiting up to `wait.timeoutSeconds` for its holder to let go. */
  static async acquire(
    driver: ClusterDriver,
    req: { holder: string; planId: string; ttlSeconds: number },
    wait: LockWait = { timeoutSeconds: 0 },
    onLost?: () => void,
  ): Promise<Lease> {
    const t0 = driver.clock.now();
    let delay = 1;
    for (;;) {
      const sent = driver.clock.now();
      try {
        return new Lease(driver, await driver.acquireLock(req), req.ttlSeconds, sent, wait.signal, onLost);
      } catch (err) {
        if (!(err instanceof LockHeldError)) throw err;
        const waited = driver.clock.now() - t0;
        const left = wait.timeoutSeconds - waited;
        if (left <= 0 || wait.signal?.aborted) throw err;
        wait.onWait?.(err, waited);
        await driver.clock.sleep(Math.min(delay, left), wait.signal);
        delay = Math.min(delay * 2, 15);
      }
    }
  }

  get lockId(): string {
    return this.lock.lockId;
  }

  /**
   * Renews the lock until `signal` aborts or the lock is lost (kept for `assertHeld`), and
   * watches it meanwhile (watchForLoss).
   */
  async keepRenewed(signal: AbortSignal): Promise<void> {
    const watching = this.watchForLoss(signal);
    let retryDelay = 0;
    const maxDelay = Math.max(0.05, this.ttlSeconds / 10);
    try {
      while (!signal.aborted && !this.lost) {
        const due = retryDelay ? retryDelay : this.confirmedAt + this.ttlSeconds / 3 - this.driver.clock.now();
        await this.driver.clock.sleep(Math.max(0, Math.min(due, this.expiresAt() - this.driver.clock.now())), signal);
        if (this.lostNow()) return;
        const ok = await this.renewOnce();
        retryDelay = ok ? 0 : Math.min(maxDelay, retryDelay ? retryDelay * 2 : Math.min(1, maxDelay));
      }
    } catch {
      // Only the sleep throws here (renewOnce keeps its errors): aborted, or the process is
      // going away. Without renewals the lease is judged expired after its duration anyway.
    }
    await watching;
  }

  /**
   * A lock taken over or deleted (`bootcplan unlock`) is lost as soon as the watch shows it, not
   * at the next renewal up to a third of the lease later: every wait of the apply then ends
   * within the stop bound (docs/design.md §7 "Stopping"). The watch may be behind this apply's own
   * write, so what it shows is confirmed by one renewal, whose answer decides (LockLostError:
   * lost); then only a further change of the Lease is looked at. Costs no request while the
   * Lease stays ours.
   */
  private async watchForLoss(signal: AbortSignal): Promise<void> {
    let confirmed: string | null = null;
    try {
      while (!signal.aborted && !this.lost) {
        const seen = await this.driver.waitFor(
          (s) => {
            const id = s.lock ? (s.lock.metadata.annotations?.[BOOTCPLAN_LOCK_ID] ?? '') : null;
            const holder = s.lock?.spec?.holderIdentity ?? null;
            const key = `${id}\u0000${holder ?? ''}\u0000${s.lock?.metadata.resourceVersion ?? ''}`;
            return id !== this.lock.lockId && key !== confirmed ? { key, id, holder } : null;
          },
          { timeoutSeconds: 7 * 24 * 3600, signal, description: 'the lock taken over or deleted' },
        );
        if (seen === null) continue; // a week without a change: look again
        await this.renewOnce(lossOf(seen.id, seen.holder));
        confirmed = seen.key;
      }
    } catch {
      // Aborted (the apply ends) or the process is going away: nothing more to watch.
    }
  }

  /**
   * The gate before every disruptive step: throws LockNotHeldError (exit 4) when the lock is
   * lost or expired, AbortedError when a stop was asked for. See the file comment for its cost.
   */
  async assertHeld(): Promise<void> {
    this.throwIfStoppedOrLost();
    if (this.driver.clock.now() - this.confirmedAt > this.ttlSeconds / 2) await this.renewOnce();
    this.throwIfStoppedOrLost();
    // The Lease as the watch shows it: gone, or another lock id, is lost (someone ran
    // `unlock`, or took it over). Free: no API request.
    const seen = await this.driver.waitFor(
      (s) => ({ id: s.lock ? (s.lock.metadata.annotations?.[BOOTCPLAN_LOCK_ID] ?? '') : null, holder: s.lock?.spec?.holderIdentity ?? null }),
      { timeoutSeconds: 0, description: 'the lock' },
    );
    if (seen && seen.id !== this.lock.lockId) {
      throw this.setLost(lossOf(seen.id, seen.holder));
    }
  }

  /**
   * A disruptive write under the lock: the gate (assertHeld), then the write, retried on a
   * transient conflict (retry.ts). One call for the two every pool runner made in turn.
   */
  async write<T>(fn: () => Promise<T>): Promise<T> {
    await this.assertHeld();
    return retry(fn);
  }

  /** Sync part of assertHeld (also for callers that cannot wait). */
  throwIfStoppedOrLost(): void {
    if (this.stop?.aborted) throw new AbortedError('stop requested');
    const lost = this.lostNow();
    if (lost) throw lost;
  }

  /** A stop was asked for (SIGTERM/SIGINT). */
  get stopRequested(): boolean {
    return !!this.stop?.aborted;
  }

  /** Why the lock was lost (null while it is held). */
  get lostError(): LockNotHeldError | null {
    return this.lostNow();
  }

  /** The lock is known lost (not merely a stop request). */
  get isLost(): boolean {
    return this.lostNow() !== null;
  }

  release(): Promise<boolean> {
    return this.driver.releaseLock(this.lock.lockId);
  }

  private expiresAt(): number {
    return this.confirmedAt + this.ttlSeconds;
  }

  /** Why the lock is lost: a renewal saw another holder, or no renewal succeeded for the lease's duration (null: held). */
  private lostNow(): LockNotHeldError | null {
    if (this.lost) return this.lost;
    if (this.driver.clock.now() < this.expiresAt()) return null;
    return this.setLost(`no renewal succeeded for ${this.ttlSeconds}s, the lease's whole duration: another apply may have taken it`);
  }

  /** Records the loss (the first reason stays) and returns it, to throw. */
  private setLost(why: string): LockNotHeldError {
    if (this.lost) return this.lost;
    const lost = new LockNotHeldError(why, this.lock.lockId);
    this.lost = lost;
    this.onLost?.();
    return lost;
  }

  /** One renewal (shared by the loop and assertHeld); false when it failed for a transient reason. */
  private async renewOnce(whyIfLost?: string): Promise<boolean> {
    if (!this.renewing) {
      this.renewing = (async () => {
        const sent = this.driver.clock.now();
        try {
          this.lock = await this.driver.renewLock(this.lock.lockId);
          if (!this.lost) this.confirmedAt = Math.max(this.confirmedAt, sent);
        } catch (err) {
          if (err instanceof LockLostError) this.setLost(whyIfLost ?? err.message);
          else throw err;
        }
      })().finally(() => {
        this.renewing = null;
      });
    }
    try {
      await this.renewing;
      return !this.lost;
    } catch {
      return false;
    }
  }
}
