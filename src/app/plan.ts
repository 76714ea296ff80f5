/**
 * `bootcplan plan` (docs/design.md §2): the spec and the cluster (a snapshot file, else the live
 * cluster) through the planner; the plan printed in the asked format and, with --out, saved as
 * a plan file (plan/saved/writer.ts) that `apply` verifies before it runs it. Nothing is written
 * to the cluster.
 */
import { isAbsolute, join, normalize, resolve, sep } from 'node:path';
import { EXIT, InputError, ClusterApiError } from '../base/errors.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import { buildPlan } from '../plan/planner.ts';
import type { Plan } from '../plan/types.ts';
import { markForReview } from '../plan/saved/seal.ts';
import { planFileText } from '../plan/saved/writer.ts';
import { useColor } from '../render/format.ts';
import { renderPlan, type OutputFormat } from '../render/formats.ts';
import type { CommandResult, KubeOptions, Ports } from './ports.ts';
import { planInput, readSnapshotFile, readSpec, readSpecAtRef, readsStdin, requireValidSpec, selfNodeFrom } from './inputs.ts';
import { readLiveSnapshot } from './live.ts';

export interface PlanOptions {
  /** The spec (`-` reads stdin). */
  file: string;
  /** Read the spec at this git revision. */
  ref?: string;
  /** Plan against this snapshot file instead of the live cluster. */
  cluster?: string;
  /** The live cluster, when no snapshot file is given. */
  kube: KubeOptions;
  output: OutputFormat;
  /** Save the plan file here (a bare name: in the working directory); `true`: plans/NAME-ID.json. */
  out?: string | true;
  /** With `out`: save a plan that has errors, marked review-only. */
  forReview?: boolean;
  full?: boolean;
  /** Exit 0 when nothing changes, 2 when something does. */
  detailedExitcode?: boolean;
  /** Also show what changed in the spec since this git revision. */
  base?: string;
  /** Plan the way back from the run record and the cluster instead (docs/apply.md "Rollback"). */
  rollback?: boolean;
  /** With `rollback`: the whole run, or only the last wave it started. */
  scope?: 'run' | 'wave';
}

export async function planCommand(ports: Ports, opts: PlanOptions): Promise<CommandResult & { plan: Plan }> {
  if (opts.rollback) return rollbackPlanCommand(ports, opts);
  const { io } = ports;
  if (opts.out && readsStdin(opts.file)) {
    throw new InputError(
      'plan --out saves a plan that apply checks against its spec file, and -f - has none',
      [],
      'save the spec to a file and plan with -f FILE --out, or leave out --out',
    );
  }
  const read = readSpec(ports, opts.file, opts.ref);
  requireValidSpec(read);
  if (opts.out && !opts.ref) requireFindableSpec(ports, read.info.path, opts.file);
  let specChanges = null;
  if (opts.base) {
    const base = readSpecAtRef(ports, opts.file, opts.base, '--base');
    const { specChangesOf } = await import('../plan/specdiff.ts'); // loads the diff library
    specChanges = specChangesOf(base.text, read.text, read.info.path, opts.base, base.info.commit, opts.ref ?? 'working tree');
  }
  const snapshot = await loadCluster(ports, opts);
  // In the cluster it plans (a live cluster, NODE_NAME set: an apply Job), its own node goes last.
  const made = buildPlan(planInput(read, snapshot, { now: ports.now(), specChanges, selfNode: opts.cluster ? null : selfNodeFrom(io.env) }));
  return showAndSave(ports, opts, made);
}

/**
 * `plan --rollback` (docs/apply.md "Rollback"): the way back from the run record in the cluster
 * (or a snapshot file), a plan reviewed, sealed and applied like any other. No spec is read: the
 * record names the run's.
 */
async function rollbackPlanCommand(ports: Ports, opts: PlanOptions): Promise<CommandResult & { plan: Plan }> {
  if (opts.base || opts.ref)
    throw new InputError(`plan --rollback plans from the run record and the cluster, not from a spec: ${opts.base ? '--base' : '--ref'} does not apply`);
  const { rollbackInputOfSnapshot, planRollback } = await import('../plan/rollback-planner.ts');
  const snapshot = await loadCluster(ports, opts);
  const input = rollbackInputOfSnapshot(snapshot, opts.scope ?? 'run');
  if ('refused' in input) throw new InputError(`plan --rollback: ${input.refused}`, [], input.hint);
  return showAndSave(ports, opts, planRollback(input, snapshot));
}

/** Prints the plan, saves it with --out, and gives the exit code (errors, --detailed-exitcode). */
async function showAndSave(ports: Ports, opts: PlanOptions, made: Plan): Promise<CommandResult & { plan: Plan }> {
  const { io } = ports;
  const plan = opts.out && opts.forReview && made.summary.errors ? markForReview(made) : made;
  io.stdout(await renderPlan(plan, opts.output, { color: useColor(io, io.stdoutIsTTY), full: opts.full }));
  if (opts.out && plan.summary.errors && !plan.reviewOnly) {
    // A plan with errors can never be applied: saving it would only hand a dead file on.
    io.stderr(
      `not saved: the plan has ${plan.summary.errors} error${plan.summary.errors === 1 ? '' : 's'} and cannot be applied\n  hint: fix the spec and plan again, or add --for-review to save it marked for review only\n`,
    );
  } else if (opts.out) {
    const path = planOutPath(opts.out, plan);
    ports.files.write(path, planFileText(plan), 'private');
    io.stderr(`saved plan ${plan.id} to ${path}${plan.reviewOnly ? ' (for review only: it has errors and is never applied)' : ''}\n`);
  }
  if (plan.summary.errors) return { exitCode: EXIT.error, plan };
  return { exitCode: opts.detailedExitcode && planHasChanges(plan) ? EXIT.changes : EXIT.ok, plan };
}

/** The snapshot to plan against: `--cluster FILE`, else the live cluster from the kubeconfig. */
async function loadCluster(ports: Ports, opts: PlanOptions): Promise<ClusterSnapshot> {
  if (opts.cluster) return readSnapshotFile(ports, opts.cluster);
  try {
    return await readLiveSnapshot(opts.kube, ports.io.env);
  } catch (err) {
    // plan, unlike the other commands that reach a cluster, can do without one.
    if (err instanceof ClusterApiError)
      throw new ClusterApiError(
        err.message,
        err.hint ? `${err.hint}; or plan against a snapshot file with --cluster FILE` : 'plan against a snapshot file with --cluster FILE',
      );
    throw err;
  }
}

/**
 * A saved plan is applied only with the spec it records, read again at its recorded path from
 * the top of the clone, or from the working directory outside git (./saved-plan.ts
 * planSpecFile). A spec in git, or outside git under an absolute path, is found again from its
 * clone or from its own directory. A relative path that climbs out (`-f ../x/bootcplan.yaml`
 * outside git) is found from no directory at all: such a plan is refused now, while the fix is
 * one `cd` away (docs/apply.md, the saved plan paragraph of "Apply and rehearse").
 */
function requireFindableSpec({ git }: Ports, recorded: string, file: string): void {
  if (git.run(['rev-parse', '--show-toplevel'], resolve(file, '..'))?.trim()) return;
  if (isAbsolute(recorded) || !normalize(recorded).split(sep).includes('..')) return;
  throw new InputError(
    `plan --out: the spec ${file} is recorded as ${JSON.stringify(recorded)}, a path that climbs out of the working directory: apply reads a saved plan's spec only inside it (outside git), so no directory could apply this plan`,
    [],
    'run bootcplan plan from the directory that holds the spec (cd there; -f relative to it), or pass -f as an absolute path; or leave out --out to only look',
  );
}

/**
 * Where `--out` writes: where it is told, as `terraform plan -out=F` and a shell redirection do
 * (a bare name in the working directory); without a name, plans/NAME-ID.json.
 */
function planOutPath(out: string | true, plan: Plan): string {
  return out === true ? join('plans', `${plan.spec.name}-${plan.id}.json`) : out;
}

function planHasChanges(plan: Plan): boolean {
  return plan.changes.some((c) => c.action !== 'noop') || plan.summary.nodes > 0;
}
