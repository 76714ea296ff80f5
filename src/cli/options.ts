/**
 * The flags several commands share, declared once (docs/design.md §2: `-o` always names a format,
 * `--out` always a file; `-f` defaults to bootcplan.yaml), and the typed values their
 * actions receive. Commander names a value by its long flag in camelCase
 * (`--detailed-exitcode` -> `detailedExitcode`).
 */
import { Option, InvalidArgumentError, type Command } from 'commander';
import { nearest } from '../base/schema.ts';
import { InputError, type FileKind } from '../base/errors.ts';
import type { CommandResult, KubeOptions, Ports } from '../app/ports.ts';
import { DEFAULT_FLEET_FILE, DEFAULT_FLEET_CONCURRENCY } from '../app/fleet-inputs.ts';
import { TRUST_FLEET_KUBECONFIGS } from '../app/fleet-kubeconfig.ts';
import { ndjsonAsYaml } from '../render/formats.ts';

/** What the actions of every command get: the ports, and where the exit code goes. */
export interface CommandContext extends Ports {
  setExit: (code: number) => void;
}

/** An action's end: the exit code of the application layer's result (its errors go on to cli/main.ts). */
export async function exitWith(ctx: CommandContext, result: Promise<CommandResult>): Promise<void> {
  ctx.setExit((await result).exitCode);
}

/**
 * The context of a command that prints an event stream (`apply`, `fleet apply`): with `-o yaml`,
 * the NDJSON it writes with json, each line turned into a YAML document (render/formats.ts
 * ndjsonAsYaml), so both formats carry the same events.
 */
export function eventStreamContext<F extends string>(ctx: CommandContext, output: F): { ctx: CommandContext; output: F | 'json' } {
  if (output !== 'yaml') return { ctx, output };
  const io = ctx.io;
  return { ctx: { ...ctx, io: { ...io, stdout: (text) => io.stdout(ndjsonAsYaml(text)) } }, output: 'json' };
}

/** The flags the Kubernetes driver takes, out of a command's options. */
export function kubeFlags(opts: KubeOptions): KubeOptions {
  return { kubeconfig: opts.kubeconfig, context: opts.context, requestTimeout: opts.requestTimeout };
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

/**
 * A saved plan names the spec it was made from and is re-read from there (docs/cli.md "Saved
 * plans"), as `terraform apply PLANFILE` takes no configuration: a `-f` given beside a plan file
 * would be ignored, so it is refused (exit 1) rather than let the user think it was read.
 * `command` is the command's name as typed (`apply`, `fleet apply`).
 */
export function refuseSpecBesidePlan(cmd: Command, command: string, planfile: string | undefined): void {
  if (planfile === undefined || cmd.getOptionValueSource('file') !== 'cli') return;
  const file = String(cmd.getOptionValue('file'));
  throw new InputError(
    `${command} ${planfile} -f ${file}: a saved plan names the spec it was made from, and -f would not be read`,
    [],
    `pass one of them: ${command} ${planfile} carries out the plan as reviewed, with the spec it recorded; ${command} -f ${file} plans the spec now`,
  );
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
export function outputFormatOption(
  formats: readonly string[],
  help = 'output format',
  fallback: string | null = 'text',
  misread?: (value: string) => string | undefined,
): Option {
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

/** `-f, --file FLEET`, default fleet.yaml (`help` says what the command does with it). */
export function fleetFileOption(help = 'Fleet spec'): Option {
  return new Option('-f, --file <fleet>', help).default(DEFAULT_FLEET_FILE);
}

/** `--concurrency N`: how many clusters are read at once (`when`: e.g. " with -f", for commands that also take a fleet plan file). */
export function concurrencyOption(when = ''): Option {
  return new Option('--concurrency <n>', `clusters read at once${when} (default ${DEFAULT_FLEET_CONCURRENCY})`);
}

/** `--trust-fleet-kubeconfigs` (app/fleet-kubeconfig.ts: what a Fleet's kubeconfig files may not do without it). */
export function trustFleetKubeconfigsOption(): Option {
  return new Option(
    TRUST_FLEET_KUBECONFIGS,
    'let the kubeconfig files the Fleet names run exec plugins and auth providers and read token, certificate and key files (off: the Fleet comes from a pull request)',
  );
}

/** The commands that read a spec with `-f`, and those that take a plan file, in each family. */
const SPEC_VERBS = ['validate', 'plan', 'apply', 'rehearse'];
const PLAN_VERBS = ['show', 'apply', 'rehearse'];

/**
 * The command line that takes a file of kind `found`, for the command `command` (as typed:
 * `plan`, `fleet show`) that was given it: the same verb in the other family where there is
 * one (`plan -f FLEET` -> `fleet plan -f FLEET`, `fleet show PLAN` -> `show PLAN`), else the
 * family's reader of that kind (`plan` of a spec, `show` of a plan).
 */
export function commandForKind(command: string, found: FileKind, file: string): string {
  const verb = command.replace(/^fleet /, '');
  const fleet = found === 'Fleet' || found === 'FleetPlan' ? 'fleet ' : '';
  if (found === 'Rollout' || found === 'Fleet') return `${fleet}${SPEC_VERBS.includes(verb) ? verb : 'plan'} -f ${file}`;
  return `${fleet}${PLAN_VERBS.includes(verb) ? verb : 'show'} ${file}`;
}

/** Every long flag of the program and its subcommands, without its dashes (`out`, `no-color`). */
function longFlags(cmd: Command, into = new Set<string>()): Set<string> {
  for (const o of cmd.options) if (o.long) into.add(o.long.slice(2));
  for (const c of cmd.commands) longFlags(c, into);
  return into;
}

/**
 * Terraform spells long flags with one dash (`-out=F`, `-no-color`, `-json`, `-auto-approve`);
 * bootcplan, as kubectl and every commander program, with two, and reads `-out=F` as `-o ut=F`
 * (short flags take their value attached). Accepting both spellings would make `-o` ambiguous,
 * so a word before `--` that is one dash and a long flag's name is refused with the right
 * spelling (docs/cli.md "Conventions"), before commander reads it as short flags.
 */
export function refuseSingleDashLongFlags(program: Command, argv: readonly string[]): void {
  const flags = longFlags(program);
  flags.add('help').add('version');
  for (const word of argv) {
    if (word === '--') return;
    const m = /^-([a-z][a-z-]+)(=.*)?$/.exec(word);
    if (!m || !flags.has(m[1])) continue;
    const right = m[1] === 'json' ? '-o json' : `--${m[1]}${m[2] ?? ''}`;
    throw new InputError(
      `${word}: long flags take two dashes here (${word} is Terraform's spelling; bootcplan would read it as -${m[1][0]} ${m[1].slice(1)}${m[2] ?? ''})`,
      [],
      `use ${right}`,
    );
  }
}
