/**
 * `bootcplan fleet` (DESIGN §10): registers the command group and its `plan`, `show` and
 * `validate` subcommands; the other fleet subcommands register themselves from their own files
 * through the calls in `registerFleet` (one line each). Nothing here writes to a cluster.
 */
import type { Command } from 'commander';
import { join } from 'node:path';
import { formatDiagnostic } from '../base/diagnostics.ts';
import { EXIT, InputError } from '../base/errors.ts';
import type { FleetPlan } from '../fleet/plan-types.ts';
import { forDisplay } from '../render/secrets.ts';
import { kubeconfigOption, requestTimeoutOption, outputFormatOption, refOption, type CommandContext } from './options.ts';
import { planFleetFile, readFleet, requireValidFleet, readFleetPlanFile, fleetFileOption, concurrencyOption } from './fleet-inputs.ts';
import { checkFleetPlanSeal } from './fleet-sealed.ts';
import { trustFleetKubeconfigsOption } from './fleet-kubeconfig.ts';
import { registerFleetApply } from './commands-fleet-apply.ts';

import { registerFleetRehearse } from './commands-fleet-rehearse.ts';

import { registerFleetRender } from './commands-fleet-render.ts';
import { useColor } from '../render/format.ts';
import type { KubeOptions } from '../app/ports.ts';
import { writeFileAtomic } from '../app/files.ts';
import { renderPlan } from '../render/formats.ts';

export const FLEET_FORMATS = ['text', 'json', 'markdown'] as const;
export type FleetFormat = (typeof FLEET_FORMATS)[number];

export function registerFleet(program: Command, ctx: CommandContext): void {
  const fleet = program.command('fleet').description('plan and roll out many clusters in canary-first batches (a Fleet spec)');
  registerFleetPlan(fleet, ctx);
  registerFleetShow(fleet, ctx);
  registerFleetValidate(fleet, ctx);
  registerFleetApply(fleet, ctx);

  registerFleetRehearse(fleet, ctx);

  registerFleetRender(fleet, ctx);
}

export async function renderFleetPlan(fp: FleetPlan, format: string, color: boolean): Promise<string> {
  switch (format) {
    case 'json': return (await import('../fleet/plan-text.ts')).renderFleetJson(fp);
    case 'markdown': return (await import('../fleet/plan-markdown.ts')).renderFleetMarkdown(fp);
    default: return (await import('../fleet/plan-text.ts')).renderFleetText(fp, { color });
  }
}

// ---- fleet plan ----

interface FleetPlanOptions extends KubeOptions {
  file: string;
  ref?: string;
  output: FleetFormat;
  out?: string | true;
  concurrency?: string;
  trustFleetKubeconfigs?: boolean;
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
    .option('--out [fleetplan]', 'save the fleet plan file (JSON; a bare name goes into plans/)')
    .action((opts: FleetPlanOptions) => fleetPlanAction(ctx, opts));
}

async function fleetPlanAction({ io, now, setExit }: CommandContext, opts: FleetPlanOptions): Promise<void> {
  const { fleetPlan: fp } = await planFleetFile(opts.file, opts.ref, opts, io.env, { now: now() });
  io.stdout(await renderFleetPlan(fp, opts.output, useColor(io, io.stdoutIsTTY)));
  if (opts.out) {
    const path = opts.out === true ? join('plans', `${fp.fleet.name}-${fp.id}.json`) : opts.out.includes('/') ? opts.out : join('plans', opts.out);
    writeFileAtomic(path, (await import('../fleet/plan-text.ts')).renderFleetJson(fp), 'private');
    io.stderr(`saved fleet plan ${fp.id} to ${path}${fp.summary.failed ? ` (${fp.summary.failed} cluster${fp.summary.failed === 1 ? '' : 's'} failed: they sit in no batch)` : ''}\n`);
  }
  if (fp.summary.failed) setExit(EXIT.error);
}

// ---- fleet show ----

function registerFleetShow(fleet: Command, ctx: CommandContext): void {
  fleet
    .command('show')
    .description('render a saved fleet plan (refused when it was modified after it was made: exit 3)')
    .argument('<fleetplan>', 'a fleet plan saved with fleet plan --out')
    .addOption(outputFormatOption(FLEET_FORMATS))
    .option('--cluster <name>', 'show this cluster\'s plan instead (-o json: a plan file `bootcplan apply` takes)')
    .action(async (file: string, opts: { output: FleetFormat; cluster?: string }) => {
      const fp = readFleetPlanFile(file);
      checkFleetPlanSeal(fp);
      const color = useColor(ctx.io, ctx.io.stdoutIsTTY);
      if (opts.cluster === undefined) {
        ctx.io.stdout(await renderFleetPlan(fp, opts.output, color));
        return;
      }
      const c = fp.clusters.find((x) => x.name === opts.cluster);
      if (!c) throw new InputError(`fleet plan ${fp.id} has no cluster ${JSON.stringify(opts.cluster).slice(0, 80)}`, [], `its clusters: ${fp.clusters.slice(0, 20).map((x) => x.name).join(', ')}${fp.clusters.length > 20 ? ', ...' : ''}`);
      if (!c.plan) throw new InputError(`cluster ${c.name} has no plan in fleet plan ${fp.id}: ${c.error?.code}: ${c.error?.message}`, [], c.error?.hint);
      ctx.io.stdout(await renderPlan(c.plan, opts.output, { color }));
    });
}

// ---- fleet validate ----

function registerFleetValidate(fleet: Command, ctx: CommandContext): void {
  fleet
    .command('validate')
    .description('check a Fleet spec: its fields, names, overrides, and every cluster\'s effective spec')
    .addOption(fleetFileOption())
    .addOption(refOption())
    .action((opts: { file: string; ref?: string }) => {
      const read = readFleet(opts.file, opts.ref);
      for (const d of read.loaded.diagnostics.filter((x) => x.severity === 'warning')) ctx.io.stderr(formatDiagnostic(forDisplay(d)) + '\n');
      requireValidFleet(read);
      const f = read.loaded.fleet!;
      const n = f.spec.clusters.length;
      ctx.io.stdout(`${read.info.path}: valid (${n} cluster${n === 1 ? '' : 's'}, ${f.spec.strategy?.canaries?.length ?? 0} canar${f.spec.strategy?.canaries?.length === 1 ? 'y' : 'ies'})\n`);
    });
}
