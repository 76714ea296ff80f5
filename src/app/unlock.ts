/**
 * `bootcplan unlock LOCKID` (docs/design.md §5): releases the apply lock of an apply that died, only
 * when the lock held is the one named (a live apply's lock is never taken by mistake).
 */
import { EXIT, InputError } from '../base/errors.ts';
import type { CommandResult, KubeOptions, Ports } from './ports.ts';

export async function unlockCommand(ports: Ports, lockId: string, kube: KubeOptions): Promise<CommandResult> {
  const { io } = ports;
  const { driver, close } = await ports.openDriver(kube, io);
  try {
    const lock = await driver.readLock();
    if (!lock) {
      io.stdout('no apply lock is held\n');
      return { exitCode: EXIT.ok };
    }
    if (lock.lockId !== lockId) {
      throw new InputError(
        `lock id ${lockId} does not match the lock held by ${lock.holder} since ${lock.since}`,
        [],
        `the current lock id is ${lock.lockId}; check that this apply is really dead before releasing it`,
      );
    }
    await driver.releaseLock(lockId);
    io.stdout(`released lock ${lockId} (held by ${lock.holder} since ${lock.since}, plan ${lock.planId}); apply again to resume\n`);
    return { exitCode: EXIT.ok };
  } finally {
    close?.();
  }
}
