/**
 * `bootcplan validate` (docs/design.md §2): the spec's own rules, and with a snapshot the rules that
 * depend on the cluster (the planner's diagnostics). Warnings on stderr, errors thrown with
 * their positions (exit 1); nothing is read from a live cluster.
 */
import { formatDiagnostic, type Diagnostic } from '../base/diagnostics.ts';
import { EXIT, InputError } from '../base/errors.ts';
import { buildPlan } from '../plan/planner.ts';
import { forDisplay } from '../render/secrets.ts';
import type { CliIO, CommandResult, Ports } from './ports.ts';
import { planInput, readSnapshotFile, readSpec, requireValidSpec } from './inputs.ts';

export interface ValidateOptions {
  /** The spec (`-` reads stdin). */
  file: string;
  /** Read the spec at this git revision. */
  ref?: string;
  /** Also check against this snapshot file. */
  cluster?: string;
}

export async function validateCommand(ports: Ports, opts: ValidateOptions): Promise<CommandResult> {
  const { io } = ports;
  const read = readSpec(ports, opts.file, opts.ref);
  printDiagnostics(
    io,
    read.loaded.diagnostics.filter((d) => d.severity === 'warning'),
  );
  requireValidSpec(read);
  const spec = read.loaded.spec;
  let extra: Diagnostic[];
  if (opts.cluster) {
    const snapshot = readSnapshotFile(ports, opts.cluster);
    const plan = buildPlan(planInput(read, snapshot));
    extra = plan.diagnostics.filter((d) => !read.loaded.diagnostics.includes(d));
    printDiagnostics(
      io,
      extra.filter((d) => d.severity === 'warning'),
    );
    const errs = extra.filter((d) => d.severity === 'error');
    if (errs.length) throw new InputError(`${read.info.path}: ${errs.length} error${errs.length === 1 ? '' : 's'} against ${opts.cluster}`, errs);
  }
  const pools = spec.spec.pools?.length ?? 0;
  io.stdout(`${read.info.path}: valid (${pools} pool${pools === 1 ? '' : 's'}${opts.cluster ? `, checked against ${opts.cluster}` : ''})\n`);
  return { exitCode: EXIT.ok };
}

function printDiagnostics(io: CliIO, ds: readonly Diagnostic[]) {
  for (const d of ds) io.stderr(formatDiagnostic(forDisplay(d)) + '\n');
}
