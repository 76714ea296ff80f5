/**
 * The entry: `run(argv, deps)` is what bin/bootcplan.mjs and the tests call. It builds the
 * commander program from the command groups (commands-plan: validate/plan/show,
 * commands-apply: apply/rehearse, commands-cluster: snapshot/status/unlock) and maps every
 * error to its exit code and a one-screen message (DESIGN §3). Nothing in src/ imports this
 * file.
 */
import { Command, CommanderError } from 'commander';
import { formatDiagnostic } from '../base/diagnostics.ts';
import { DriverError } from '../apply/driver.ts';
import { EXIT, exitCodeOf, InputError, ClusterApiError, StalePlanError, LockHeldError, RolloutHaltedError, PolicyBlockedError } from '../base/errors.ts';
import { registerApplyCommands } from './commands-apply.ts';
import { registerSnapshotCommand, registerLockCommands } from './commands-cluster.ts';
import { registerPlanCommands } from './commands-plan.ts';
import type { CliDeps, CommandContext } from './deps.ts';
import { type CliIO, processIO } from './io.ts';
import { openLiveDriver } from './live.ts';

export function buildProgram(deps: CliDeps, setExit: (code: number) => void): Command {
  const ctx: CommandContext = { ...deps, setExit };
  const program = new Command();
  program
    .name('bootcplan')
    .description('Plan and apply OS-image and boot-image rollouts on OpenShift and bootc clusters')
    .version('0.1.0')
    .exitOverride()
    .configureOutput({ writeOut: deps.io.stdout, writeErr: deps.io.stderr })
    .showHelpAfterError('(run with --help for usage)');
  // In the order `bootcplan --help` lists them.
  registerPlanCommands(program, ctx); // validate, plan, show
  registerSnapshotCommand(program, ctx);
  registerApplyCommands(program, ctx); // apply, rehearse
  registerLockCommands(program, ctx); // status, unlock
  return program;
}

/** The one place that maps errors to exit codes and one-screen messages. */
export function reportError(io: CliIO, err: unknown): number {
  if (err instanceof InputError) {
    const shown = err.diagnostics.slice(0, 40);
    for (const d of shown) io.stderr(formatDiagnostic(d) + '\n');
    if (err.diagnostics.length > shown.length) io.stderr(`... and ${err.diagnostics.length - shown.length} more\n`);
    io.stderr(`error: ${err.message}\n`);
    if (err.hint) io.stderr(`  hint: ${err.hint}\n`);
  } else if (err instanceof StalePlanError) {
    io.stderr(`error: stale plan: ${err.message}\n`);
    for (const l of err.difference) io.stderr(`  ${l}\n`);
    io.stderr('  hint: run `bootcplan plan` again, review it, and apply the new plan\n');
  } else if (err instanceof LockHeldError) {
    io.stderr(`error: ${err.message}\n  hint: wait for it to finish; if that apply is dead, \`bootcplan unlock ${err.lockId}\`\n`);
  } else if (err instanceof RolloutHaltedError) {
    io.stderr(`error: rollout halted: ${err.message}\n`);
    for (const l of err.report) io.stderr(`  ${l}\n`);
  } else if (err instanceof PolicyBlockedError || err instanceof ClusterApiError) {
    io.stderr(`error: ${err.message}\n`);
    if (err.hint) io.stderr(`  hint: ${err.hint}\n`);
  } else if (err instanceof DriverError) {
    // A cluster failure the applier did not turn into a named error (a conflict that kept
    // coming back, an object that vanished): a cluster problem, exit 1, never "a bug".
    io.stderr(`error: ${err.message}\n`);
    const hint = (err as DriverError & { hint?: string }).hint;
    io.stderr(`  hint: ${hint ?? 'check the cluster (bootcplan status shows what the last apply did), then run the command again'}\n`);
  } else if (err instanceof CommanderError) {
    return err.exitCode === 0 ? EXIT.ok : EXIT.error;
  } else {
    // Internal errors: one line and where to report it; the stack only with BOOTCPLAN_DEBUG.
    const e = err as Error;
    io.stderr(`error: internal error: ${e?.message ?? String(err)}\n  hint: this is a bug in bootcplan; rerun with BOOTCPLAN_DEBUG=1 and report the output\n`);
    if (io.env.BOOTCPLAN_DEBUG && e?.stack) io.stderr(e.stack + '\n');
  }
  return exitCodeOf(err);
}

/** The entry (bin/bootcplan.mjs, tests): each dependency not given is the real one. */
export async function run(argv: string[], given: Partial<CliDeps> = {}): Promise<number> {
  const deps: CliDeps = { io: given.io ?? processIO(), openDriver: given.openDriver ?? openLiveDriver, now: given.now ?? Date.now };
  let code: number = EXIT.ok;
  const program = buildProgram(deps, (c) => (code = c));
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    return reportError(deps.io, err);
  }
  return code;
}
