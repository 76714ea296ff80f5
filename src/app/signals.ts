/**
 * The stop-requests port (./ports.ts StopRequests): what `apply` does on SIGTERM and SIGINT while
 * it runs (a Job being killed, Ctrl-C): the first signal becomes a stop request the applier sees
 * (an AbortSignal whose reason is the signal's name), and the applier stops at its next safe
 * point, pauses again the MCO pools it unpaused, records where it stopped, releases the lock and
 * exits 130 (SIGINT) or 143 (SIGTERM). A second signal exits at once with the same code (the
 * Lease then expires on its own after its duration).
 */
import type { CliIO, SignalSource, StopRequests, StopSignal } from './ports.ts';

export const processSignals: SignalSource = (handler) => {
  const on = { SIGINT: () => handler('SIGINT'), SIGTERM: () => handler('SIGTERM') };
  process.on('SIGINT', on.SIGINT);
  process.on('SIGTERM', on.SIGTERM);
  return () => {
    process.off('SIGINT', on.SIGINT);
    process.off('SIGTERM', on.SIGTERM);
  };
};

const exitCodeOfSignal = (s: StopSignal) => (s === 'SIGINT' ? 130 : 143);

/**
 * While `run` runs: the first signal aborts the returned signal (with a one-line notice on
 * stderr: `notice`, else the safe point's), a second one calls `exitNow`.
 */
async function withStopOnSignal<T>(
  io: CliIO,
  source: SignalSource,
  exitNow: (code: number) => void,
  run: (signal: AbortSignal) => Promise<T>,
  notice = 'stopping at the next safe point (send it again to exit at once)',
): Promise<T> {
  const ac = new AbortController();
  const off = source((sig) => {
    if (!ac.signal.aborted) {
      io.stderr(`bootcplan: ${sig}: ${notice}\n`);
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

/** The stop requests of `source`; notices go to the IO of the moment (`-q` silences them). */
export function stopRequests(io: () => CliIO, source: SignalSource, exitNow: (code: number) => void): StopRequests {
  return { during: (run, notice) => withStopOnSignal(io(), source, exitNow, run, notice) };
}
