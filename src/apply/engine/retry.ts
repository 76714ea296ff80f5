/**
 * A write retried on a transient conflict (HTTP 409: another writer changed the object between
 * our read and our write), a few times, at once. Every writer of the applier uses it (the plan's
 * changes, the progress record, a pool's pause, a stop's clean-up); it imports only the driver
 * port, so that none of them imports another for it.
 */
import { ConflictError } from '../ports/driver.ts';

/** Retries transient conflicts (HTTP 409) a few times, at once. */
export async function retry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= 8) throw err;
    }
  }
}
