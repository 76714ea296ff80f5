/**
 * One apply at a time (DESIGN §7): the lock is a Lease held through the driver, renewed
 * every third of its duration while the apply runs. A renewal that fails is kept and
 * reported at the next check, before the next write: an apply that lost its lock stops
 * (exit 4) rather than write beside another one.
 */
import { LockHeldError } from '../base/errors.ts';
import { type ClusterDriver, type LockRecord, AbortedError, LockLostError, isoOf } from './driver.ts';

export class Lease {
  private lost: Error | null = null;

  /** `lock`: what `driver.acquireLock` returned. */
  constructor(private readonly driver: ClusterDriver, private lock: LockRecord, private readonly ttlSeconds: number) {}

  /** Renews the lock until `signal` aborts; a failure is kept for `check`. */
  async keepRenewed(signal: AbortSignal): Promise<void> {
    try {
      while (!signal.aborted) {
        await this.driver.clock.sleep(this.ttlSeconds / 3, signal);
        this.lock = await this.driver.renewLock(this.lock.lockId);
      }
    } catch (err) {
      if (!(err instanceof AbortedError)) this.lost = err as Error;
    }
  }

  /** Throws when a renewal failed: LockHeldError when someone else took the lock. */
  check(): void {
    if (!this.lost) return;
    if (this.lost instanceof LockLostError) throw new LockHeldError('someone else (this apply lost its lock)', isoOf(this.driver.clock.now()), this.lock.lockId, null);
    throw this.lost;
  }

  release(): Promise<boolean> {
    return this.driver.releaseLock(this.lock.lockId);
  }
}
