/**
 * The CLI's window on the process: output streams, environment, terminals and the
 * confirmation prompt behind one `CliIO` interface (tests pass their own), plus the
 * colour helper every command uses (output files: files.ts). DESIGN §2: human output on stdout,
 * diagnostics and progress on stderr; NO_COLOR respected, no colour when not a TTY.
 */
import { createInterface } from 'node:readline/promises';
import { fsErrorText } from '../base/errors.ts';

export interface CliIO {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: Record<string, string | undefined>;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** The terminal's width when stderr is one (progress lines are cut to it). */
  stderrColumns?: number;
  /** Whether a person can answer a prompt; unset: when stdout and stderr are both terminals. */
  stdinIsTTY?: boolean;
  /** Asks one question and returns the answer; unset: a prompt on the process's stdin/stderr. */
  ask?: (question: string) => Promise<string>;
  /** Why stdout could not take the output (a full disk), once that is known; run() then exits 1. */
  stdoutFailure?: () => string | null;
}

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
  return { write: (s) => { if (!closed) process.stdout.write(s); }, failure: () => failure };
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

export function useColor(io: CliIO, tty: boolean): boolean {
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  if (io.env.FORCE_COLOR && io.env.FORCE_COLOR !== '0') return true;
  return tty;
}
