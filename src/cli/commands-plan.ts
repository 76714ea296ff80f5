/**
 * `validate`, `plan`, `show` (DESIGN §2): the commands that read a spec and a cluster and
 * print a plan; nothing here writes to the cluster.
 */
import type { Command } from 'commander';
import { join } from 'node:path';
import { formatDiagnostic, type Diagnostic } from '../base/diagnostics.ts';
import { EXIT, InputError, ClusterApiError } from '../base/errors.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { buildPlan } from '../plan/planner.ts';
import type { Plan } from '../plan/types.ts';
import { forDisplay } from '../render/secrets.ts';
import { planFileText } from '../plan/saved/writer.ts';
import { checkPlanSeal } from '../plan/saved/seal.ts';
import { type SpecOptions, kubeconfigOption, contextOption, requestTimeoutOption, kubeFlags, specFileOption, refOption, clusterOption, outputFormatOption, fullOption, type CommandContext } from './options.ts';
import type { CliIO, KubeOptions } from '../app/ports.ts';
import { useColor } from '../render/format.ts';
import { writeFileAtomic, STDIN_PATH } from '../app/files.ts';
import { readLiveSnapshot } from '../app/live.ts';
import { readSpec, readSpecAtRef, requireValidSpec, readSnapshotFile, planInput, selfNodeFrom } from '../app/inputs.ts';
import { readPlanFile } from '../app/saved-plan.ts';
import { OUTPUT_FORMATS, renderPlan, type OutputFormat } from '../render/formats.ts';

export function registerPlanCommands(program: Command, ctx: CommandContext): void {
  registerValidate(program, ctx);
  registerPlan(program, ctx);
  registerShow(program, ctx);
}

// ---- validate ----

interface ValidateOptions extends SpecOptions {
  cluster?: string;
}

function registerValidate(program: Command, ctx: CommandContext): void {
  program
    .command('validate')
    .description('check a rollout spec (and, with --cluster, the rules that depend on the cluster)')
    .addOption(specFileOption())
    .addOption(refOption())
    .addOption(clusterOption('also check against this cluster snapshot'))
    .action((opts: ValidateOptions) => validateAction(ctx, opts));
}

async function validateAction(ctx: CommandContext, opts: ValidateOptions): Promise<void> {
  const { io } = ctx;
  const read = readSpec(ctx, opts.file, opts.ref);
  printDiagnostics(io, read.loaded.diagnostics.filter((d) => d.severity === 'warning'));
  requireValidSpec(read);
  const spec = read.loaded.spec!;
  let extra: Diagnostic[] = [];
  if (opts.cluster) {
    const snapshot = readSnapshotFile(ctx, opts.cluster);
    const plan = buildPlan(planInput(read, snapshot));
    extra = plan.diagnostics.filter((d) => !read.loaded.diagnostics.includes(d));
    printDiagnostics(io, extra.filter((d) => d.severity === 'warning'));
    const errs = extra.filter((d) => d.severity === 'error');
    if (errs.length) throw new InputError(`${read.info.path}: ${errs.length} error${errs.length === 1 ? '' : 's'} against ${opts.cluster}`, errs);
  }
  const pools = spec.spec.pools?.length ?? 0;
  io.stdout(`${read.info.path}: valid (${pools} pool${pools === 1 ? '' : 's'}${opts.cluster ? `, checked against ${opts.cluster}` : ''})\n`);
}

function printDiagnostics(io: CliIO, ds: readonly Diagnostic[]) {
  for (const d of ds) io.stderr(formatDiagnostic(forDisplay(d)) + '\n');
}

// ---- plan ----

interface PlanOptions extends SpecOptions, KubeOptions {
  cluster?: string;
  output: OutputFormat;
  out?: string | true;
  full?: boolean;
  detailedExitcode?: boolean;
  base?: string;
  forReview?: boolean;
}

function registerPlan(program: Command, ctx: CommandContext): void {
  program
    .command('plan')
    .description('compare the spec with the cluster and show what apply would change')
    .addOption(specFileOption())
    .addOption(refOption())
    .addOption(clusterOption('plan against a snapshot file instead of the live cluster'))
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(requestTimeoutOption())
    .addOption(outputFormatOption(OUTPUT_FORMATS))
    .option('--out [planfile]', 'save the plan file (JSON; a bare name goes into plans/)')
    .option('--for-review', 'with --out: save a plan that has errors, marked so that it is never applied')
    .addOption(fullOption())
    .option('--detailed-exitcode', 'exit 0 when nothing changes, 2 when something does')
    .option('--base <gitref>', 'also show what changed in the spec since this git revision (e.g. the PR base)')
    .action((opts: PlanOptions) => planAction(ctx, opts));
}

async function planAction(ctx: CommandContext, opts: PlanOptions): Promise<void> {
  const { io, now, setExit } = ctx;
  if (opts.out && opts.file === STDIN_PATH) {
    throw new InputError('plan --out saves a plan that apply checks against its spec file, and -f - has none', [], 'save the spec to a file and plan with -f FILE --out, or leave out --out');
  }
  const read = readSpec(ctx, opts.file, opts.ref);
  requireValidSpec(read);
  let specChanges = null;
  if (opts.base) {
    const base = readSpecAtRef(ctx, opts.file, opts.base, '--base');
    const { specChangesOf } = await import('../plan/specdiff.ts'); // loads the diff library
    specChanges = specChangesOf(base.text, read.text, read.info.path, opts.base, base.info.commit!, opts.ref ?? 'working tree');
  }
  const snapshot = await loadCluster(ctx, opts, io.env);
  // In the cluster it plans (a live cluster, NODE_NAME set: an apply Job), its own node goes last.
  const made = buildPlan(planInput(read, snapshot, { now: now(), specChanges, selfNode: opts.cluster ? null : selfNodeFrom(io.env) }));
  const plan = opts.out && opts.forReview && made.summary.errors ? (await import('../plan/saved/seal.ts')).markForReview(made) : made;
  io.stdout(await renderPlan(plan, opts.output, { color: useColor(io, io.stdoutIsTTY), full: opts.full }));
  if (opts.out && plan.summary.errors && !plan.reviewOnly) {
    // A plan with errors can never be applied: saving it would only hand a dead file on.
    io.stderr(`not saved: the plan has ${plan.summary.errors} error${plan.summary.errors === 1 ? '' : 's'} and cannot be applied\n  hint: fix the spec and plan again, or add --for-review to save it marked for review only\n`);
  } else if (opts.out) {
    const path = planOutPath(opts.out, plan);
    writeFileAtomic(path, planFileText(plan), 'private');
    io.stderr(`saved plan ${plan.id} to ${path}${plan.reviewOnly ? ' (for review only: it has errors and is never applied)' : ''}\n`);
  }
  if (plan.summary.errors) {
    setExit(EXIT.error);
    return;
  }
  if (opts.detailedExitcode) setExit(planHasChanges(plan) ? EXIT.changes : EXIT.ok);
}

/** The snapshot to plan against: `--cluster FILE`, else the live cluster from the kubeconfig. */
async function loadCluster(ctx: CommandContext, opts: KubeOptions & { cluster?: string }, env: Record<string, string | undefined>): Promise<ClusterSnapshot> {
  if (opts.cluster) return readSnapshotFile(ctx, opts.cluster);
  try {
    return await readLiveSnapshot(kubeFlags(opts), env);
  } catch (err) {
    // plan, unlike the other commands that reach a cluster, can do without one.
    if (err instanceof ClusterApiError) throw new ClusterApiError(err.message, err.hint ? `${err.hint}; or plan against a snapshot file with --cluster FILE` : 'plan against a snapshot file with --cluster FILE');
    throw err;
  }
}

/** Where `--out` writes: a bare file name goes into plans/. */
export function planOutPath(out: string | true, plan: Plan): string {
  if (out === true) return join('plans', `${plan.spec.name}-${plan.id}.json`);
  return out.includes('/') ? out : join('plans', out);
}

export function planHasChanges(plan: Plan): boolean {
  return plan.changes.some((c) => c.action !== 'noop') || plan.summary.nodes > 0;
}

// ---- show ----

interface ShowOptions {
  output: OutputFormat;
  full?: boolean;
}

function registerShow(program: Command, ctx: CommandContext): void {
  program
    .command('show')
    .description('render a saved plan (refused when it was modified after it was made: exit 3)')
    .argument('<planfile>', 'a plan saved with plan --out')
    .addOption(outputFormatOption(OUTPUT_FORMATS))
    .addOption(fullOption())
    .action((file: string, opts: ShowOptions) => showAction(ctx, file, opts));
}

/**
 * A saved plan is shown only under the id it hashes to, as apply verifies it (DESIGN §2): an
 * edited file would otherwise be reviewed under the id of the plan it no longer is.
 */
async function showAction(ctx: CommandContext, file: string, opts: ShowOptions): Promise<void> {
  const { io } = ctx;
  const plan = readPlanFile(ctx, file);
  checkPlanSeal(plan);
  io.stdout(await renderPlan(plan, opts.output, { color: useColor(io, io.stdoutIsTTY), full: opts.full }));
}
