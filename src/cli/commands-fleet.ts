/**
 * `bootcplan fleet` (docs/design.md §10): the command group and its subcommands' flags, each action
 * handed to the application layer: `plan`, `show`, `validate` (app/fleet-plan.ts), `apply`
 * (app/fleet-apply.ts), `rehearse` (app/fleet-rehearse.ts), `render argocd`
 * (app/fleet-render.ts). The runner, the simulator and the Argo CD renderer are loaded only
 * when their command runs.
 */
import { Option, type Command } from 'commander';
import { FLEET_FORMATS, FLEET_APPLY_FORMATS, FLEET_REHEARSAL_FORMATS } from '../fleet/outputs.ts';
import { fleetPlanCommand, fleetShowCommand, fleetValidateCommand, type FleetPlanOptions, type FleetShowOptions } from '../app/fleet-plan.ts';
import type { FleetApplyOptions } from '../app/fleet-apply.ts';
import type { FleetRehearseOptions } from '../app/fleet-rehearse.ts';
import type { RenderArgoOptions } from '../app/fleet-render.ts';
import {
  kubeconfigOption,
  requestTimeoutOption,
  outputFormatOption,
  eventStreamContext,
  refOption,
  fleetFileOption,
  concurrencyOption,
  trustFleetKubeconfigsOption,
  exitWith,
  refuseSpecBesidePlan,
  type CommandContext,
} from './options.ts';
import { simulationOptions } from './commands-apply.ts';

export function registerFleet(program: Command, ctx: CommandContext): void {
  const fleet = program.command('fleet').description('plan and roll out many clusters in canary-first batches (a Fleet spec)');
  registerFleetPlan(fleet, ctx);
  registerFleetShow(fleet, ctx);
  registerFleetValidate(fleet, ctx);
  registerFleetApply(fleet, ctx);
  registerFleetRehearse(fleet, ctx);
  registerFleetRender(fleet, ctx);
}

function registerFleetPlan(fleet: Command, ctx: CommandContext): void {
  fleet
    .command('plan')
    .description('plan every cluster of the Fleet (snapshot files or live contexts) and show the batches')
    .addOption(fleetFileOption())
    .addOption(refOption())
    .addOption(kubeconfigOption())
    .addOption(requestTimeoutOption())
    .addOption(concurrencyOption())
    .addOption(trustFleetKubeconfigsOption())
    .addOption(outputFormatOption(FLEET_FORMATS))
    .option('--out [fleetplan]', 'save the fleet plan file (JSON) where it is told; without a name: plans/NAME-ID.json')
    .action((opts: FleetPlanOptions) => exitWith(ctx, fleetPlanCommand(ctx, opts)));
}

function registerFleetShow(fleet: Command, ctx: CommandContext): void {
  fleet
    .command('show')
    .description('render a saved fleet plan (refused when it was modified after it was made: exit 3)')
    .argument('<fleetplan>', 'a fleet plan saved with fleet plan --out')
    .addOption(outputFormatOption(FLEET_FORMATS))
    .option('--cluster <name>', "show this cluster's plan instead (-o json: a plan file `bootcplan apply` takes)")
    .action((file: string, opts: FleetShowOptions) => exitWith(ctx, fleetShowCommand(ctx, file, opts)));
}

function registerFleetValidate(fleet: Command, ctx: CommandContext): void {
  fleet
    .command('validate')
    .description("check a Fleet spec: its fields, names, overrides, and every cluster's effective spec")
    .addOption(fleetFileOption())
    .addOption(refOption())
    .action((opts: { file: string; ref?: string }) => exitWith(ctx, fleetValidateCommand(ctx, opts)));
}

function registerFleetApply(fleet: Command, ctx: CommandContext): void {
  fleet
    .command('apply')
    .description("roll the fleet out: canaries first, then batches; each cluster through its own context and lock (exit: the worst cluster's)")
    .argument('[fleetplan]', 'a fleet plan saved with fleet plan --out (default: plan -f FLEET now)')
    .addOption(fleetFileOption('Fleet spec, planned now when no fleet plan file is given'))
    .addOption(kubeconfigOption())
    .addOption(requestTimeoutOption())
    .addOption(concurrencyOption(' while planning with -f'))
    .addOption(trustFleetKubeconfigsOption())
    .option('--auto-approve', 'do not ask for confirmation (needed without a terminal)')
    .option(
      '--lock-timeout <duration>',
      "wait this long for a cluster's lock another apply holds, e.g. after a killed fleet apply (0: that cluster fails with exit 4 at once)",
      '0',
    )
    .addOption(
      outputFormatOption(
        FLEET_APPLY_FORMATS,
        "output format (json: the fleet events and each cluster's apply events as NDJSON on stdout; yaml: a YAML document each)",
      ),
    )
    .action(async (planfile: string | undefined, opts: FleetApplyOptions, cmd: Command) => {
      refuseSpecBesidePlan(cmd, 'fleet apply', planfile);
      const { fleetApplyCommand } = await import('../app/fleet-apply.ts');
      const events = eventStreamContext(ctx, opts.output);
      await exitWith(ctx, fleetApplyCommand(events.ctx, planfile, { ...opts, output: events.output }));
    });
}

function registerFleetRehearse(fleet: Command, ctx: CommandContext): void {
  const cmd = fleet
    .command('rehearse')
    .description('rehearse the whole fleet on simulated clusters (each from its snapshot), batch by batch, and report the fleet makespan')
    .argument('[fleetplan]', 'a fleet plan saved with fleet plan --out')
    .addOption(fleetFileOption('Fleet spec (planned now)'))
    .addOption(kubeconfigOption())
    .addOption(requestTimeoutOption())
    .addOption(concurrencyOption(' with -f'))
    .addOption(trustFleetKubeconfigsOption());
  simulationOptions(cmd)
    .addOption(
      outputFormatOption(FLEET_REHEARSAL_FORMATS, 'output format (markdown: for a pull-request comment; html: the report with the chart of batches over time)'),
    )
    .action(async (fleetplan: string | undefined, opts: FleetRehearseOptions, cmd: Command) => {
      refuseSpecBesidePlan(cmd, 'fleet rehearse', fleetplan);
      const { fleetRehearseCommand } = await import('../app/fleet-rehearse.ts');
      await exitWith(ctx, fleetRehearseCommand(ctx, fleetplan, opts));
    });
}

function registerFleetRender(fleet: Command, ctx: CommandContext): void {
  const render = fleet.command('render').description('render a fleet plan for a distributed engine');
  render
    .command('argocd')
    .description("an Argo CD ApplicationSet whose progressive sync (RollingSync) steps are the fleet's batches, and one directory per cluster")
    .argument('<fleetplan>', 'a fleet plan saved with fleet plan --out')
    .requiredOption(
      '--out-dir <dir>',
      'where to write applicationset.yaml and clusters/<name>/ (a new directory, or one holding only an unchanged previous render)',
    )
    .requiredOption('--repo-url <url>', 'the git repository Argo CD reads the rendered files from')
    .requiredOption('--image <ref>', 'the bootcplan container image the apply Job and CronJob run (Containerfile)')
    .addOption(new Option('--revision <rev>', 'the branch, tag or commit Argo CD syncs (targetRevision)').default('HEAD'))
    .option('--path <path>', "the output directory's path in that repository (default: --out-dir relative to the repository root)")
    .option(
      '--setup-path <path>',
      "a directory of that repository with bootcplan's CRD and RBAC (as examples/), synced before each cluster's directory through DIR/setup, which keeps its objects when an Application is deleted",
    )
    .addOption(new Option('--namespace <ns>', 'the Argo CD namespace of the ApplicationSet').default('openshift-gitops'))
    .addOption(new Option('--project <name>', 'the Argo CD project of the Applications').default('default'))
    .option('--name <name>', 'the ApplicationSet name; each Application is <name>-<cluster> (default: bootcplan-<fleet name>)')
    .action(async (file: string, opts: RenderArgoOptions) => {
      const { fleetRenderArgoCommand } = await import('../app/fleet-render.ts');
      await exitWith(ctx, fleetRenderArgoCommand(ctx, file, opts));
    });
}
