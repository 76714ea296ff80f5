/**
 * `validate`, `plan`, `show` (docs/design.md §2): their flags, and their actions handed to the
 * application layer (app/validate.ts, app/plan.ts, app/show.ts). Nothing here writes to the
 * cluster.
 */
import { Option, type Command } from 'commander';
import { OUTPUT_FORMATS } from '../render/formats.ts';
import type { KubeOptions } from '../app/ports.ts';
import { validateCommand, type ValidateOptions } from '../app/validate.ts';
import { planCommand, type PlanOptions } from '../app/plan.ts';
import { showCommand, type ShowOptions } from '../app/show.ts';
import {
  kubeconfigOption,
  contextOption,
  requestTimeoutOption,
  kubeFlags,
  specFileOption,
  refOption,
  clusterOption,
  outputFormatOption,
  fullOption,
  exitWith,
  choiceParser,
  type CommandContext,
} from './options.ts';

export function registerPlanCommands(program: Command, ctx: CommandContext): void {
  registerValidate(program, ctx);
  registerPlan(program, ctx);
  registerShow(program, ctx);
}

function registerValidate(program: Command, ctx: CommandContext): void {
  program
    .command('validate')
    .description('check a rollout spec (and, with --cluster, the rules that depend on the cluster)')
    .addOption(specFileOption())
    .addOption(refOption())
    .addOption(clusterOption('also check against this cluster snapshot'))
    .action((opts: ValidateOptions) => exitWith(ctx, validateCommand(ctx, opts)));
}

/** The flags of `plan` as commander gives them: the plan's options with the kubeconfig flags apart. */
type PlanFlags = Omit<PlanOptions, 'kube'> & KubeOptions;

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
    .option('--out [planfile]', 'save the plan file (JSON) where it is told; without a name: plans/NAME-ID.json')
    .option('--for-review', 'with --out: save a plan that has errors, marked so that it is never applied')
    .addOption(fullOption())
    .option('--detailed-exitcode', 'exit 0 when nothing changes, 2 when something does')
    .option('--base <gitref>', 'also show what changed in the spec since this git revision (e.g. the PR base)')
    .option(
      '--rollback',
      'plan the way back instead: the nodes the last run updated, back to the image each booted before (from the run record and the cluster)',
    )
    .addOption(
      new Option('--scope <scope>', 'with --rollback: the whole run, or only the last wave it started')
        .choices(['run', 'wave'])
        .argParser(choiceParser(['run', 'wave'], 'scopes'))
        .default('run'),
    )
    .action((opts: PlanFlags) => exitWith(ctx, planCommand(ctx, { ...opts, kube: kubeFlags(opts) })));
}

function registerShow(program: Command, ctx: CommandContext): void {
  program
    .command('show')
    .description('render a saved plan (refused when it was modified after it was made: exit 3)')
    .argument('<planfile>', 'a plan saved with plan --out')
    .addOption(outputFormatOption(OUTPUT_FORMATS))
    .addOption(fullOption())
    .action((file: string, opts: ShowOptions) => exitWith(ctx, showCommand(ctx, file, opts)));
}
