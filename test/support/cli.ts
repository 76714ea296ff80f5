/**
 * The CLI inside the test process (docs/development.md "Test layout"): io() is a CliIO that
 * keeps what a command writes; cli() runs `bootcplan ARGS` as the package ships it (the bundle
 * of test/support/built.ts, or the sources when the call hands in a driver) and returns its exit code
 * and output; inDir() runs a function in a working directory, as a job run from a checkout would.
 */
import type { CliIO } from '../../src/app/ports.ts';
import type { CliDeps } from '../../src/cli/main.ts';

/** The shipped run() (test/support/built.ts), loaded at the first cli() call: importing io() or inDir() builds nothing. */
type Run = typeof import('./built.ts').run;

/** A CliIO that keeps its output. */
export interface CapturedIO extends CliIO {
  /** Everything written to stdout so far. */
  out: string;
  /** Everything written to stderr so far. */
  err: string;
  /** Each write to stderr, one entry per call (a progress line is one write). */
  errWrites: string[];
}

/**
 * A CliIO for one command: no terminal, environment `{ NO_COLOR: '1' }`, output kept in `out`
 * and `err`. Each field of `given` replaces the default one (`env` as a whole).
 */
export function io(given: Partial<CliIO> = {}): CapturedIO {
  const captured: CapturedIO = {
    out: '',
    err: '',
    errWrites: [],
    stdout: (s) => {
      captured.out += s;
    },
    stderr: (s) => {
      captured.err += s;
      captured.errWrites.push(s);
    },
    env: { NO_COLOR: '1' },
    stdoutIsTTY: false,
    stderrIsTTY: false,
    ...given,
  };
  return captured;
}

export interface CliOptions extends Partial<Omit<CliDeps, 'io'>> {
  /** The working directory of the run (default: the test process's). */
  cwd?: string;
  /** Fields of the command's IO that differ from io()'s defaults. */
  io?: Partial<CliIO>;
  /** The run() to call instead of the shipped one: the sources' (src/cli/main.ts), for a test of what they say of themselves. */
  entry?: Run;
}

export interface CliResult {
  code: number;
  out: string;
  err: string;
  /** The command's IO, for what `out` and `err` do not show (each stderr write). */
  io: CapturedIO;
}

/** `bootcplan ARGS` with captured output; `o` sets the directory, the IO and the dependencies (driver, clock). */
export async function cli(args: string[], o: CliOptions = {}): Promise<CliResult> {
  const { cwd, io: given, entry = (await import('./built.ts')).run, ...deps } = o;
  const captured = io(given);
  const go = () => entry(args, { ...deps, io: captured });
  const code = cwd === undefined ? await go() : await inDir(cwd, go);
  return { code, out: captured.out, err: captured.err, io: captured };
}

/** Runs `fn` with `dir` as the working directory, and returns to where it was. */
export async function inDir<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    return await fn();
  } finally {
    process.chdir(cwd);
  }
}
