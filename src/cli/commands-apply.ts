/**
 * `apply` and `rehearse` (docs/design.md §2): their flags, and their actions handed to the application
 * layer (app/apply.ts, app/rehearse.ts), each loaded when its command runs (the applier, the
 * simulator and their renderers stay out of the start-up of the other commands).
 */
import type { Command } from 'commander';
import { APPLY_FORMATS, REHEARSAL_FORMATS } from '../render/formats.ts';
import type { KubeOptions } from '../app/ports.ts';
import { parseDurationFlag } from '../app/flags.ts';
import type { RehearseOptions } from '../app/rehearse.ts';
import {
  kubeconfigOption,
  contextOption,
  requestTimeoutOption,
  kubeFlags,
  specFileOption,
  clusterOption,
  outputFormatOption,
  exitWith,
  eventStreamContext,
  refuseSpecBesidePlan,
  type CommandContext,
} from './options.ts';

export function registerApplyCommands(program: Command, ctx: CommandContext): void {
  registerApply(program, ctx);
  registerRehearse(program, ctx);
}

/** The flags of `apply` as commander gives them. */
interface ApplyFlags extends KubeOptions {
  file: string;
  autoApprove?: boolean;
  step?: boolean;
  output: (typeof APPLY_FORMATS)[number];
  /** The older spelling of -o json. */
  json?: boolean;
  lockTimeout: string;
  notify?: string;
  retry?: boolean;
}

function registerApply(program: Command, ctx: CommandContext): void {
  program
    .command('apply')
    .description('carry a plan out in waves (a saved plan, or plan the spec now and apply it)')
    .argument('[planfile]', 'a plan saved with plan --out')
    .addOption(specFileOption('rollout spec (plans it against the cluster first)'))
    .addOption(kubeconfigOption())
    .addOption(contextOption())
    .addOption(requestTimeoutOption())
    .option('--auto-approve', 'with -f: do not ask for confirmation (needed without a terminal); a saved plan file is never asked about')
    .option('--step', 'advance at most one wave; exit 0 also when nothing may be done now (outside the window, staging, another apply running)')
    .addOption(outputFormatOption(APPLY_FORMATS, 'output format (json: the events as NDJSON on stdout; yaml: a YAML document each)'))
    .option('--json', 'the same as -o json')
    .option('--lock-timeout <duration>', 'wait this long for a lock another apply holds (e.g. 5m; 0: exit 4 at once)', '0')
    .option('--notify <url>', 'POST a small JSON document to this URL on wave start, halt, done and stale (failures are warnings)')
    .option(
      '--retry',
      "lift the holds on this plan's images (a pool held after a failed health check or a rollback) and apply them again; a pool paused by onFailure: pause goes on past the gate that paused it",
    )
    .action(async (planfile: string | undefined, flags: ApplyFlags, cmd: Command) => {
      refuseSpecBesidePlan(cmd, 'apply', planfile);
      const lockTimeoutSeconds = parseDurationFlag('--lock-timeout', flags.lockTimeout, 24 * 3600);
      const events = eventStreamContext(ctx, flags.json ? 'json' : flags.output);
      const opts = { ...flags, kube: kubeFlags(flags), json: events.output === 'json', lockTimeoutSeconds };
      // The applier is loaded only when apply runs (start-up of the other commands: docs/performance.md).
      const { applySavedPlan, applySpec } = await import('../app/apply.ts');
      await exitWith(ctx, planfile ? applySavedPlan(events.ctx, planfile, opts) : applySpec(events.ctx, opts));
    });
}

/** Adds --durations, --fail-rate, --jitter, --seed, --fail-check, --fail-check-rate and --start. */
export function simulationOptions(cmd: Command): Command {
  return cmd
    .option('--durations <list>', 'phase durations in seconds: stage=600,drain=60,reboot=300,soft-reboot=60,ready=30')
    .option('--fail-rate <r>', 'probability that a reboot fails (0..1)')
    .option('--jitter <fraction>', "per-node duration jitter: each node's durations scaled by a factor in [1 - fraction, 1 + fraction] (0..0.9)")
    .option('--seed <n>', 'seed for the faults and the jitter', '1')
    .option(
      '--fail-check <check@point>',
      'make a health check fail at a gate (repeatable): NAME@preflight, NAME@wave=N, NAME@POOL:wave=N, NAME@node=NODE (fleet: CLUSTER/NAME@POINT, POINT may be batch)',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--fail-check-rate <r>', 'probability that each health check fails at each gate (0..1), drawn from a stream of its own (--seed)')
    .option(
      '--start <time>',
      'when the simulated apply is started, e.g. 2026-12-13T01:00:00+08:00 (default: now if a maintenance window is open, else when the next one opens)',
    );
}

function registerRehearse(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('rehearse')
    .description('run the apply against a simulated cluster built from a snapshot and report the timeline')
    .argument('[planfile]', 'a plan saved with plan --out')
    .addOption(specFileOption())
    .addOption(clusterOption('the snapshot to simulate (default for a saved plan: the snapshot it was made from)'));
  simulationOptions(cmd)
    .option('--events', 'also list every event (text output)')
    .addOption(
      outputFormatOption(
        REHEARSAL_FORMATS,
        'output format (markdown: for a pull-request comment; html: the plan report with the timeline drawn from the rehearsal)',
      ),
    )
    .action(async (planfile: string | undefined, opts: RehearseOptions, cmd: Command) => {
      refuseSpecBesidePlan(cmd, 'rehearse', planfile);
      // The simulator is loaded only when rehearse runs.
      const { rehearseCommand } = await import('../app/rehearse.ts');
      await exitWith(ctx, rehearseCommand(ctx, planfile, opts));
    });
}
