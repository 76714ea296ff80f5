/**
 * `fleet plan`, `fleet show`, `fleet validate` (docs/design.md §10): a Fleet planned now (every
 * cluster read: snapshot files or live contexts, read-only), a saved fleet plan rendered once
 * its seal holds, a Fleet checked. Nothing is written to a cluster.
 */
import { join } from 'node:path';
import { formatDiagnostic } from '../base/diagnostics.ts';
import { EXIT, InputError } from '../base/errors.ts';
import { renderFleetPlan, type FleetFormat } from '../fleet/outputs.ts';
import { checkFleetPlanSeal } from '../fleet/plan-verify.ts';
import { useColor } from '../render/format.ts';
import { renderPlan } from '../render/formats.ts';
import { forDisplay } from '../render/secrets.ts';
import type { CommandResult, Ports } from './ports.ts';
import { planFleetFile, readFleet, requireValidFleet, readFleetPlanFile, type FleetPlanFlags } from './fleet-inputs.ts';

export interface FleetPlanOptions extends FleetPlanFlags {
  /** The Fleet file. */
  file: string;
  /** Read the Fleet (and the files it names) at this git revision. */
  ref?: string;
  output: FleetFormat;
  /** Save the fleet plan file here (a bare name: in the working directory); `true`: plans/NAME-ID.json. */
  out?: string | true;
}

/** `fleet plan`: exit 1 when a cluster could not be planned (it sits in no batch). */
export async function fleetPlanCommand(ports: Ports, opts: FleetPlanOptions): Promise<CommandResult> {
  const { io } = ports;
  const { fleetPlan: fp } = await planFleetFile(ports, opts.file, opts.ref, opts, io.env, { now: ports.now() });
  io.stdout(await renderFleetPlan(fp, opts.output, useColor(io, io.stdoutIsTTY)));
  if (opts.out) {
    const path = opts.out === true ? join('plans', `${fp.fleet.name}-${fp.id}.json`) : opts.out;
    ports.files.write(path, (await import('../fleet/plan-text.ts')).renderFleetJson(fp), 'private');
    io.stderr(
      `saved fleet plan ${fp.id} to ${path}${fp.summary.failed ? ` (${fp.summary.failed} cluster${fp.summary.failed === 1 ? '' : 's'} failed: they sit in no batch)` : ''}\n`,
    );
  }
  return { exitCode: fp.summary.failed ? EXIT.error : EXIT.ok };
}

export interface FleetShowOptions {
  output: FleetFormat;
  /** Show this cluster's plan instead (-o json: a plan file `bootcplan apply` takes). */
  cluster?: string;
}

/** `fleet show FLEETPLAN`: refused when the file was modified after it was made (exit 3). */
export async function fleetShowCommand(ports: Ports, file: string, opts: FleetShowOptions): Promise<CommandResult> {
  const { io } = ports;
  const fp = readFleetPlanFile(ports, file);
  checkFleetPlanSeal(fp);
  const color = useColor(io, io.stdoutIsTTY);
  if (opts.cluster === undefined) {
    io.stdout(await renderFleetPlan(fp, opts.output, color));
    return { exitCode: EXIT.ok };
  }
  const c = fp.clusters.find((x) => x.name === opts.cluster);
  if (!c)
    throw new InputError(
      `fleet plan ${fp.id} has no cluster ${JSON.stringify(opts.cluster).slice(0, 80)}`,
      [],
      `its clusters: ${fp.clusters
        .slice(0, 20)
        .map((x) => x.name)
        .join(', ')}${fp.clusters.length > 20 ? ', ...' : ''}`,
    );
  if (!c.plan) throw new InputError(`cluster ${c.name} has no plan in fleet plan ${fp.id}: ${c.error?.code}: ${c.error?.message}`, [], c.error?.hint);
  io.stdout(await renderPlan(c.plan, opts.output, { color }));
  return { exitCode: EXIT.ok };
}

/** `fleet validate`: the Fleet's fields, names, overrides and every cluster's effective spec. */
export async function fleetValidateCommand(ports: Ports, opts: { file: string; ref?: string }): Promise<CommandResult> {
  const { io } = ports;
  const read = readFleet(ports, opts.file, opts.ref);
  for (const d of read.loaded.diagnostics.filter((x) => x.severity === 'warning')) io.stderr(formatDiagnostic(forDisplay(d)) + '\n');
  requireValidFleet(read);
  const f = read.loaded.fleet;
  const n = f.spec.clusters.length;
  io.stdout(
    `${read.info.path}: valid (${n} cluster${n === 1 ? '' : 's'}, ${f.spec.strategy?.canaries?.length ?? 0} canar${f.spec.strategy?.canaries?.length === 1 ? 'y' : 'ies'})\n`,
  );
  return { exitCode: EXIT.ok };
}
