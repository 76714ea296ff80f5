/**
 * The flags several commands share, declared once (DESIGN §2: `-o` always names a format,
 * `--out` always a file; `-f` defaults to bootcplan.yaml), and the typed values their
 * actions receive. Commander names a value by its long flag in camelCase
 * (`--detailed-exitcode` -> `detailedExitcode`).
 */
import { InputError } from '../base/errors.ts';
import { Option, InvalidArgumentError } from 'commander';
import { nearest } from '../base/schema.ts';
import type { KubeOptions, Ports } from '../app/ports.ts';

/** What the actions of every command get: the ports, and where the exit code goes. */
export interface CommandContext extends Ports {
  setExit: (code: number) => void;
}

/** The flags the Kubernetes driver takes, out of a command's options. */
export function kubeFlags(opts: KubeOptions): KubeOptions {
  return { kubeconfig: opts.kubeconfig, context: opts.context, requestTimeout: opts.requestTimeout };
}

/** The rollout spec: `-f SPEC`, and `--ref GITREF` where the command reads git revisions. */
export interface SpecOptions {
  file: string;
  ref?: string;
}

export function kubeconfigOption(): Option {
  return new Option('--kubeconfig <path>', 'kubeconfig of the live cluster (default: KUBECONFIG, ~/.kube/config, in-cluster service account)');
}

export function contextOption(): Option {
  return new Option('--context <name>', 'kubeconfig context');
}

export function requestTimeoutOption(): Option {
  return new Option('--request-timeout <duration>', 'longest wait for one API answer: seconds or a duration such as 30s or 2m; 0 for no limit (default 30s)');
}

export function specFileOption(help = 'rollout spec (- reads stdin)'): Option {
  return new Option('-f, --file <spec>', help).default('bootcplan.yaml');
}

export function refOption(): Option {
  return new Option('--ref <gitref>', 'read the spec at this git revision');
}

/** `--cluster SNAPSHOT`; what the snapshot is for differs per command. */
export function clusterOption(help: string): Option {
  return new Option('--cluster <snapshot>', `${help} (- reads stdin)`);
}

/**
 * `-o FORMAT` with its closed list of formats (text by default; `null`: no default). A value
 * that is no format is refused with the near one (`-o ymal`: did you mean yaml?), or with the
 * hint `misread` gives (e.g. a file name where a format belongs).
 */
export function outputFormatOption(formats: readonly string[], help = 'output format', fallback: string | null = 'text', misread?: (value: string) => string | undefined): Option {
  const option = new Option('-o, --output <format>', help).choices([...formats]);
  if (fallback !== null) option.default(fallback);
  return option.argParser(choiceParser(formats, 'formats', misread));
}

/**
 * The parser of a closed choice (an option's or an argument's: commander's `.choices`, kept for
 * help and completion): a value that is none of them is refused with the near one
 * (`ymal`: did you mean yaml?), else with what `misread` makes of it (`-o plan.yaml`: a file
 * where a format belongs). One line, exit 1 (commander's InvalidArgumentError).
 */
export function choiceParser(choices: readonly string[], noun: string, misread?: (value: string) => string | undefined): (value: string) => string {
  return (value: string) => {
    if (choices.includes(value)) return value;
    const near = nearest(value, choices);
    const hint = near ? `did you mean ${near}?` : misread?.(value);
    throw new InvalidArgumentError(`Allowed ${noun} are ${choices.join(', ')}${hint ? `; ${hint}` : '.'}`);
  };
}

export function fullOption(): Option {
  return new Option('--full', 'show every managed field, not only the changed ones');
}

/**
 * A whole-number flag, read strictly: digits only (no "", "0x10", "1e3" or " 5 ", which
 * Number() would take), within [min, max].
 */
export function parseIntegerFlag(flag: string, text: string, range: { min: number; max: number }): number {
  const n = /^-?\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new InputError(`${flag} ${JSON.stringify(text)}: expected a whole number from ${range.min} to ${range.max}`);
  }
  return n;
}

/** A probability flag, read strictly: a decimal number from 0 to 1 ("0.25", "1", ".5" is refused). */
export function parseFractionFlag(flag: string, text: string): number {
  const n = /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0 && n <= 1)) throw new InputError(`${flag} ${JSON.stringify(text)}: expected a number from 0 to 1, such as 0.05`);
  return n;
}

/**
 * A duration flag (kubectl's grammar: a whole number is seconds, else Go units such as 90s,
 * 5m or 1h30m), at most `maxSeconds`. Seconds.
 */
export function parseDurationFlag(flag: string, text: string, maxSeconds: number): number {
  const t = text.trim();
  const units: Record<string, number> = { ms: 1e-3, s: 1, m: 60, h: 3600 };
  let seconds = NaN;
  if (/^\d{1,12}$/.test(t)) seconds = Number(t);
  else if (t.length <= 64 && /^(\d+(\.\d+)?(ms|s|m|h))+$/.test(t)) {
    seconds = 0;
    for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) seconds += Number(m[1]) * units[m[2]];
  }
  if (!(seconds >= 0 && seconds <= maxSeconds)) throw new InputError(`${flag} ${JSON.stringify(text).slice(0, 60)}: expected a duration such as 90s, 5m or 1h (at most ${maxSeconds / 3600}h; 0: do not wait)`);
  return seconds;
}
