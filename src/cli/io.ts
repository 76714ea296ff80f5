/**
 * The CLI's window on the process: output streams, environment, terminals and the
 * confirmation prompt behind one `CliIO` interface (tests pass their own), plus the
 * colour helper every command uses (output files: files.ts). DESIGN §2: human output on stdout,
 * diagnostics and progress on stderr; NO_COLOR respected, no colour when not a TTY.
 */
import { createInterface } from 'node:readline/promises';

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
}

export function processIO(): CliIO {
  return {
    stdout: (s) => process.stdout.write(s),
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
