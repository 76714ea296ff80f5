/**
 * The entry: `run(argv, deps)` is what bin/bootcplan.mjs and the tests call. It builds the
 * commander program from the command groups (commands-plan: validate/plan/show,
 * commands-apply: apply/rehearse, commands-cluster: snapshot/status/unlock) and maps every
 * error to its exit code and a one-screen message (docs/design.md §3). Nothing in src/ imports this
 * file.
 */
import { Command, CommanderError } from 'commander';
import { formatDiagnostic } from '../base/diagnostics.ts';
import { forDisplay } from '../render/secrets.ts';
import {
  EXIT,
  exitCodeOf,
  BootcplanError,
  InputError,
  WrongKindError,
  StalePlanError,
  InterruptedError,
  RolloutHaltedError,
  messageOf,
} from '../base/errors.ts';
import { registerApplyCommands } from './commands-apply.ts';
import { registerSnapshotCommand, registerLockCommands } from './commands-cluster.ts';
import { registerPlanCommands } from './commands-plan.ts';
import { registerFleet } from './commands-fleet.ts';
import { packageVersion, registerVersionCommand } from './version.ts';
import { COMPLETE_COMMAND, KUBECTL_COMPLETE_COMMAND, completeWords, registerCompletionCommand } from './complete.ts';
import { completionText, fileSources } from '../app/completion.ts';
import { commandForKind, refuseSingleDashLongFlags, type CommandContext } from './options.ts';
import type { CliIO, DriverFactory, Files, Git, Ports, SignalSource } from '../app/ports.ts';
import { askOnTerminal, processIO } from '../app/io.ts';
import { processSignals, stopRequests } from '../app/signals.ts';
import { nodeFiles } from '../app/files.ts';
import { nodeGit } from '../app/git.ts';
import { specOfFleetClusterPlan } from '../app/fleet-saved-plan.ts';
import { openLiveDriver } from '../app/live.ts';
import { STDIN_PATH } from '../app/stdin.ts';

/** `-q`/`-v`, as the actions of one run see them, and the command that ran (`fleet plan`). */
export interface Verbosity {
  quiet: boolean;
  verbose: boolean;
  command?: string;
}

/** What run() and buildProgram() take: the IO, the driver factory and the clock; each other input not given is the real one. */
export interface CliDeps {
  io: CliIO;
  openDriver: DriverFactory;
  now: () => number;
  /** How the command names itself (default bootcplan). */
  name?: string;
  /** SIGTERM/SIGINT while apply runs (default: the process's). */
  signals?: SignalSource;
  /** Exits the process at once (a second signal); default process.exit. */
  exitNow?: (code: number) => void;
  files?: Files;
  git?: Git;
  fleetClusterSpec?: Ports['fleetClusterSpec'];
}

/** The ports of the commands: `deps`, and the real adapter of each port not given (app/ports.ts); `io()`: the IO of the moment (`-q` replaces it). */
function portsOf(deps: CliDeps, io: () => CliIO): Ports {
  const inputs = { files: deps.files ?? nodeFiles, git: deps.git ?? nodeGit };
  return {
    io: deps.io,
    openDriver: deps.openDriver,
    now: deps.now,
    name: deps.name ?? 'bootcplan',
    stops: stopRequests(io, deps.signals ?? processSignals, deps.exitNow ?? ((c) => process.exit(c))),
    ask: (question) => (io().ask ?? askOnTerminal)(question),
    ...inputs,
    fleetClusterSpec: deps.fleetClusterSpec ?? ((plan, durations) => specOfFleetClusterPlan(inputs, plan, durations)),
  };
}

export function buildProgram(deps: CliDeps, setExit: (code: number) => void, verbosity: Verbosity = { quiet: false, verbose: false }): Command {
  const ctx: CommandContext = { ...portsOf(deps, () => ctx.io), setExit };
  const program = new Command();
  program
    .name(ctx.name)
    .description('Plan and apply OS-image and boot-image rollouts on OpenShift and bootc clusters')
    .version(packageVersion())
    .exitOverride()
    .configureOutput({ writeOut: deps.io.stdout, writeErr: deps.io.stderr })
    .showHelpAfterError('(run with --help for usage)')
    // Unknown commands and flags name the near one: `plna` -> plan, `--clustr` -> --cluster.
    .showSuggestionAfterError(true)
    .option('-q, --quiet', 'print only errors on stderr: no warnings, progress or notes')
    .option('-v, --verbose', 'also print how long the command took and, for an internal error, its stack')
    // Terraform's -no-color, kubectl's and git's --no-color: the same as NO_COLOR=1 (no-color.org).
    .option('--no-color', 'no colour and plain ASCII symbols in any output, as with NO_COLOR=1')
    .hook('preAction', (_program, action) => beforeAction(ctx, action, verbosity));
  // In the order `bootcplan --help` lists them.
  registerPlanCommands(program, ctx); // validate, plan, show
  registerSnapshotCommand(program, ctx);
  registerApplyCommands(program, ctx); // apply, rehearse
  registerLockCommands(program, ctx); // status, unlock
  registerFleet(program, ctx); // fleet plan, show, validate (and the fleet subcommands it registers)
  registerVersionCommand(program, ctx);
  registerCompletionCommand(program, ctx);
  return program;
}

/** Checks that hold for every command, and `-q`: warnings and notes go nowhere (errors still show). */
function beforeAction(ctx: CommandContext, action: Command, verbosity: Verbosity): void {
  const opts = action.optsWithGlobals<{ quiet?: boolean; verbose?: boolean; color?: boolean; file?: string; cluster?: string }>();
  if (opts.quiet && opts.verbose) throw new InputError('-q and -v contradict each other', [], 'pick one');
  // One stdin, one input: the second reader would find it empty.
  const readers = [
    opts.file === STDIN_PATH && '-f -',
    opts.cluster === STDIN_PATH && '--cluster -',
    action.args.includes(STDIN_PATH) && 'a plan file -',
  ].filter(Boolean);
  if (readers.length > 1) throw new InputError(`${readers.join(' and ')} both read stdin, which holds one input`, [], 'pass all but one of them as files');
  verbosity.command = commandPath(action);
  verbosity.quiet = !!opts.quiet;
  verbosity.verbose = !!opts.verbose;
  if (opts.quiet) ctx.io = { ...ctx.io, stderr: () => {} };
  // Every renderer asks render/format.ts useColor, which reads NO_COLOR from the IO's environment.
  if (opts.color === false) ctx.io = { ...ctx.io, env: { ...ctx.io.env, NO_COLOR: '1' } };
}

/** The command as typed, without the program's name: `plan`, `fleet render argocd`. */
function commandPath(action: Command): string {
  const names: string[] = [];
  for (let c: Command | null = action; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * The one place that maps errors to exit codes and one-screen messages: a named error
 * (BootcplanError, the driver's errors included) prints its message, its details and the hint
 * its class or its thrower set, and exits with its own code (docs/design.md §3).
 */
export function reportError(io: CliIO, err: unknown, verbose = false, command?: { path: string; name: string }): number {
  // Messages carry data (node names, API messages, file names): shown through forDisplay, so
  // that control and bidi characters are escaped and credentials masked (docs/safety.md
  // "What is masked in outputs").
  const say = (text: string) => io.stderr(forDisplay(text) + '\n');
  if (err instanceof BootcplanError) {
    if (err instanceof WrongKindError && command) {
      // One line: the kind found and the command that takes it (docs/cli.md "Conventions").
      say(`error: ${err.message}: use \`${command.name} ${commandForKind(command.path, err.found, err.file)}\``);
    } else if (err instanceof InputError) {
      const shown = err.diagnostics.slice(0, 40);
      for (const d of shown) io.stderr(formatDiagnostic(forDisplay(d)) + '\n');
      if (err.diagnostics.length > shown.length) say(`... and ${err.diagnostics.length - shown.length} more`);
      say(`error: ${err.message}`);
    } else if (err instanceof StalePlanError) {
      say(`error: stale plan: ${err.message}`);
      for (const l of err.difference) say(`  ${l}`);
    } else if (err instanceof InterruptedError) {
      say(`bootcplan: ${err.message}`);
    } else if (err instanceof RolloutHaltedError) {
      say(`error: rollout halted: ${err.message}`);
      for (const l of err.report) say(`  ${l}`);
    } else {
      // The driver's errors among them: a cluster failure the applier did not turn into another
      // named error (a conflict that kept coming back, an object that vanished), never "a bug".
      say(`error: ${err.message}`);
    }
    if (err.hint) say(`  hint: ${err.hint}`);
    return err.exitCode;
  }
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.error;
  // Internal errors: one line and where to report it; the stack only with BOOTCPLAN_DEBUG.
  say(`error: internal error: ${messageOf(err)}`);
  say('  hint: this is a bug in bootcplan; rerun with BOOTCPLAN_DEBUG=1 and report the output');
  if ((io.env.BOOTCPLAN_DEBUG || verbose) && err instanceof Error && err.stack) for (const l of err.stack.split('\n')) say(l);
  return exitCodeOf(err);
}

/** The entry (bin/bootcplan.mjs, tests): each dependency not given is the real one. */
export async function run(argv: string[], given: Partial<CliDeps> = {}): Promise<number> {
  const deps: CliDeps = { ...given, io: given.io ?? processIO(), openDriver: given.openDriver ?? openLiveDriver, now: given.now ?? Date.now };
  let code: number = EXIT.ok;
  const verbosity: Verbosity = { quiet: false, verbose: false };
  const program = buildProgram(deps, (c) => (code = c), verbosity);
  // Shell and kubectl plugin completion (complete.ts, app/completion.ts): the words are data, never parsed as options.
  if (argv[0] === COMPLETE_COMMAND || argv[0] === KUBECTL_COMPLETE_COMMAND) {
    const route = argv[0] === COMPLETE_COMMAND ? 'scripts' : 'kubectl';
    deps.io.stdout(completionText(completeWords(program, argv.slice(1), fileSources(deps.io.env), route)));
    return EXIT.ok;
  }
  const started = deps.now();
  try {
    refuseSingleDashLongFlags(program, argv);
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    code = reportError(deps.io, err, verbosity.verbose, verbosity.command ? { path: verbosity.command, name: deps.name ?? 'bootcplan' } : undefined);
  }
  if (deps.io.stdoutFailure) {
    // A failed write to stdout is reported on the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    if (deps.io.stdoutFailure()) code = EXIT.error;
  }
  if (verbosity.verbose) deps.io.stderr(`bootcplan ${program.args[0] ?? ''}: exit ${code} after ${((deps.now() - started) / 1000).toFixed(2)}s\n`);
  return code;
}
