/**
 * The process's streams, terminals, environment and confirmation prompt behind the `CliIO`
 * port (./ports.ts; tests pass their own). docs/design.md §2: human output on stdout, diagnostics and
 * progress on stderr.
 */
import { createInterface } from 'node:readline/promises';
import { fsErrorText } from '../base/errors.ts';
import type { CliIO } from './ports.ts';

/**
 * A write to stdout fails after the fact (an 'error' event: a full disk, a closed pipe), and
 * unhandled it ends the process with a stack trace. A reader that stopped early (`| head`,
 * EPIPE) wanted no more: the rest is dropped quietly and the command keeps its exit code. Any
 * other failure means the output is incomplete: one line on stderr, exit 1 (set here, and by
 * run() through `failure`, whichever comes last).
 */
function guardedStdout(): { write: (s: string) => void; failure: () => string | null } {
  let failure: string | null = null;
  let closed = false;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    closed = true;
    if (err.code === 'EPIPE' || failure) return;
    failure = `cannot write to stdout: ${fsErrorText(err)}`;
    const full = err.code === 'ENOSPC' || err.code === 'EDQUOT';
    process.stderr.write(`error: ${failure}\n${full ? '  hint: write the output where there is room (or with --out FILE, where the command has it)\n' : ''}`);
    process.exitCode = 1;
  });
  return {
    write: (s) => {
      if (!closed) process.stdout.write(s);
    },
    failure: () => failure,
  };
}

export function processIO(): CliIO {
  const out = guardedStdout();
  return {
    stdout: out.write,
    stdoutFailure: out.failure,
    stderr: (s) => process.stderr.write(s),
    env: process.env,
    stdoutIsTTY: !!process.stdout.isTTY,
    stderrIsTTY: !!process.stderr.isTTY,
    stderrColumns: process.stderr.columns,
    ask: askOnTerminal,
  };
}

/** One line read from the process's stdin, the question on stderr (stdout may be piped). */
export async function askOnTerminal(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
