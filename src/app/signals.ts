/**
 * What `apply` says while it waits for the lock (--lock-timeout), and what it does on
 * SIGTERM and SIGINT while it runs (a Job being killed, Ctrl-C): the first signal becomes
 * a stop request the applier sees (an AbortSignal whose reason is the signal's name), and the
 * applier stops at its next safe point, pauses again the MCO pools it unpaused, records where it
 * stopped, releases the lock and exits 130 (SIGINT) or 143 (SIGTERM). A second signal exits at
 * once with the same code (the Lease then expires on its own after its duration).
 */
import type { LockHeldError } from '../base/errors.ts';
import { formatDuration } from '../render/format.ts';
import type { CliIO, SignalSource, StopSignal } from './ports.ts';

/**
 * The notice while apply waits for the lock: who holds it, how long this apply has waited, of
 * how long; printed when the holder changes and at most every 30 s otherwise.
 */
export function lockWaitNotice(say: (line: string) => void, timeoutSeconds: number): (held: LockHeldError, waited: number) => void {
  let last: { lockId: string; at: number } | null = null;
  return (held, waited) => {
    if (last && last.lockId === held.lockId && waited - last.at < 30) return;
    last = { lockId: held.lockId, at: waited };
    say(`waiting for the lock: held by ${held.holder} since ${held.since} (plan ${held.planId ?? 'unknown'}, lock id ${held.lockId}); waited ${formatDuration(Math.round(waited))} of ${formatDuration(timeoutSeconds)}`);
  };
}

export const processSignals: SignalSource = (handler) => {
  const on = { SIGINT: () => handler('SIGINT'), SIGTERM: () => handler('SIGTERM') };
  process.on('SIGINT', on.SIGINT);
  process.on('SIGTERM', on.SIGTERM);
  return () => {
    process.off('SIGINT', on.SIGINT);
    process.off('SIGTERM', on.SIGTERM);
  };
};

export const exitCodeOfSignal = (s: StopSignal) => (s === 'SIGINT' ? 130 : 143);

/**
 * While `run` runs: the first signal aborts the returned signal (with a one-line notice on
 * stderr), a second one calls `exitNow`.
 */
export async function withStopOnSignal<T>(io: CliIO, source: SignalSource, exitNow: (code: number) => void, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const off = source((sig) => {
    if (!ac.signal.aborted) {
      io.stderr(`bootcplan: ${sig}: stopping at the next safe point (send it again to exit at once)\n`);
      ac.abort(sig);
    } else {
      io.stderr(`bootcplan: ${sig} again: exiting now; the lock is left to expire\n`);
      exitNow(exitCodeOfSignal(sig));
    }
  });
  try {
    return await run(ac.signal);
  } finally {
    off();
  }
}
