/**
 * Commander wiring: parse flags, do the I/O, call the core, map errors to exit codes.
 * `run(argv, io)` is what the binary and the tests call.
 */
import { Command, Option, CommanderError } from 'commander';
import { join } from 'node:path';
import { formatDiagnostic, type Diagnostic } from '../base/diagnostics.ts';
import { buildPlan } from '../plan/planner.ts';
import type { Plan } from '../plan/types.ts';
import { renderJson } from '../render/json.ts';
import { type CliIO, processIO, useColor, writeFileAtomic } from './io.ts';
import { OUTPUT_FORMATS, renderPlan } from './formats.ts';
import { readSpec, readSpecAtRef, requireValidSpec, readSnapshotFile, readPlanFile } from './inputs.ts';
import { specChangesOf } from '../plan/specdiff.ts';
import { EXIT, exitCodeOf, InputError, ClusterApiError, StalePlanError, LockHeldError, RolloutHaltedError, PolicyBlockedError } from '../base/errors.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { registerKubeCommands } from './commands-kube.ts';
import { registerApplyCommands } from './commands-apply.ts';
import { planInput } from './planning.ts';
import type { CliDeps, CommandContext } from './deps.ts';
import { openLiveDriver } from './live.ts';

/** Where `--out` writes: a bare file name goes into plans/. */
export function planOutPath(out: string | true, plan: Plan): string {
  if (out === true) return join('plans', `${plan.spec.name}-${plan.id}.json`);
  return out.includes('/') ? out : join('plans', out);
}

interface ClusterFlags {
  cluster?: string;
  kubeconfig?: string;
  context?: string;
}

async function loadCluster(flags: ClusterFlags, env: Record<string, string | undefined>): Promise<ClusterSnapshot> {
  if (flags.cluster) return readSnapshotFile(flags.cluster);
  const { readLiveSnapshot } = await import('./live.ts');
  return readLiveSnapshot(flags, env);
}

export function buildProgram(deps: CliDeps, setExit: (code: number) => void): Command {
  const ctx: CommandContext = { ...deps, setExit };
  const { io } = deps;
  const program = new Command();
  program
    .name('bootcplan')
    .description('Plan and apply OS-image and boot-image rollouts on OpenShift and bootc clusters')
    .version('0.1.0')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(run with --help for usage)');

  program
    .command('validate')
    .description('check a rollout spec (and, with --cluster, the rules that depend on the cluster)')
    .option('-f, --file <spec>', 'rollout spec', 'bootcplan.yaml')
    .option('--ref <gitref>', 'read the spec at this git revision')
    .option('--cluster <snapshot>', 'also check against this cluster snapshot')
    .action(async (opts) => {
      const read = readSpec(opts.file, opts.ref);
      printDiagnostics(io, read.loaded.diagnostics.filter((d) => d.severity === 'warning'));
      requireValidSpec(read);
      const spec = read.loaded.spec!;
      let extra: Diagnostic[] = [];
      if (opts.cluster) {
        const snapshot = readSnapshotFile(opts.cluster);
        const plan = buildPlan(planInput(read, snapshot));
        extra = plan.diagnostics.filter((d) => !read.loaded.diagnostics.includes(d));
        printDiagnostics(io, extra.filter((d) => d.severity === 'warning'));
        const errs = extra.filter((d) => d.severity === 'error');
        if (errs.length) throw new InputError(`${read.info.path}: ${errs.length} error${errs.length === 1 ? '' : 's'} against ${opts.cluster}`, errs);
      }
      const pools = spec.spec.pools?.length ?? 0;
      io.stdout(`${read.info.path}: valid (${pools} pool${pools === 1 ? '' : 's'}${opts.cluster ? `, checked against ${opts.cluster}` : ''})\n`);
    });

  program
    .command('plan')
    .description('compare the spec with the cluster and show what apply would change')
    .option('-f, --file <spec>', 'rollout spec', 'bootcplan.yaml')
    .option('--ref <gitref>', 'read the spec at this git revision')
    .option('--cluster <snapshot>', 'plan against a snapshot file instead of the live cluster')
    .option('--kubeconfig <path>', 'kubeconfig for the live cluster')
    .option('--context <name>', 'kubeconfig context')
    .addOption(new Option('-o, --output <format>', 'output format').choices([...OUTPUT_FORMATS]).default('text'))
    .option('--out [planfile]', 'save the plan as JSON (a bare name goes into plans/)')
    .option('--full', 'show every managed field, not only the changed ones')
    .option('--detailed-exitcode', 'exit 0 when nothing changes, 2 when something does')
    .option('--base <gitref>', 'also show what changed in the spec since this git revision (e.g. the PR base)')
    .action(async (opts) => {
      const read = readSpec(opts.file, opts.ref);
      requireValidSpec(read);
      let specChanges = null;
      if (opts.base) {
        const base = readSpecAtRef(opts.file, opts.base, '--base');
        specChanges = specChangesOf(base.text, read.text, read.info.path, opts.base, base.info.commit!, opts.ref ?? 'working tree');
      }
      const snapshot = await loadCluster(opts, io.env);
      const plan = buildPlan(planInput(read, snapshot, { now: deps.now(), specChanges }));
      io.stdout(renderPlan(plan, opts.output, { color: useColor(io, io.stdoutIsTTY), full: opts.full }));
      if (opts.out) {
        const path = planOutPath(opts.out, plan);
        writeFileAtomic(path, renderJson(plan));
        io.stderr(`saved plan ${plan.id} to ${path}\n`);
      }
      if (plan.summary.errors) {
        setExit(EXIT.error);
        return;
      }
      if (opts.detailedExitcode) setExit(planHasChanges(plan) ? EXIT.changes : EXIT.ok);
    });

  program
    .command('show')
    .description('render a saved plan')
    .argument('<planfile>', 'a plan saved with plan --out')
    .addOption(new Option('-o, --output <format>', 'output format').choices([...OUTPUT_FORMATS]).default('text'))
    .option('--full', 'show every managed field, not only the changed ones')
    .action(async (file, opts) => {
      const plan = readPlanFile(file);
      io.stdout(renderPlan(plan, opts.output, { color: useColor(io, io.stdoutIsTTY), full: opts.full }));
    });

  registerKubeCommands(program, ctx);
  registerApplyCommands(program, ctx);
  return program;
}

export function planHasChanges(plan: Plan): boolean {
  return plan.changes.some((c) => c.action !== 'noop') || plan.summary.nodes > 0;
}

function printDiagnostics(io: CliIO, ds: readonly Diagnostic[]) {
  for (const d of ds) io.stderr(formatDiagnostic(d) + '\n');
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
