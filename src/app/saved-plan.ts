/**
 * A saved plan, opened before any cluster access (docs/design.md §6 "Sealed plans"): the file read
 * (files port) and parsed (plan/saved/reader.ts), then steps 1 to 4 of plan/saved/verify.ts
 * with the files they need: the spec path kept inside the repository, the spec read again at
 * the recorded commit (git port) or path and checked by hash. What comes back is the verified
 * spec and its re-planner; steps 5 and 6 (plan/saved/compare.ts) follow once the cluster is
 * read. A saved plan a Fleet made is re-planned by the fleet slice (the fleetClusterSpec port).
 */
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import { buildPlan, selfNodeOf } from '../plan/planner.ts';
import { planRollback, rollbackInputOfPlan } from '../plan/rollback-planner.ts';
import { SPEC_API_VERSION, SPEC_KIND, type RolloutSpec } from '../rollout-spec/types.ts';
import { readPlan } from '../plan/saved/reader.ts';
import { checkSavedPlan, checkProvenanceFields, checkSpecHash } from '../plan/saved/verify.ts';
import { DEFAULT_DURATIONS } from '../domain/timing.ts';
import { InputError, StalePlanError, WrongKindError } from '../base/errors.ts';
import type { InputPorts, Ports, SpecForPlan } from './ports.ts';
import { STDIN_NAME } from './stdin.ts';
import { inputName, otherKindOf, planInput, readSpec, readSpecWorkingTree, requireValidSpec } from './inputs.ts';

/** What opening a saved plan needs: the input ports, and the fleet slice for a plan a Fleet made. */
export type SavedPlanPorts = InputPorts & Partial<Pick<Ports, 'fleetClusterSpec'>>;

/** The plan in a plan file (`-` reads stdin), parsed and of this format; its seal is not checked yet. */
export function readPlanFile({ files }: InputPorts, file: string): Plan {
  const text = files.readText(file, 'plan file', 'save a plan with `bootcplan plan --out FILE`');
  try {
    return readPlan(text, inputName(file));
  } catch (err) {
    // A file of another kind fails the plan schema, and its id (a fleet plan's) is not the hash
    // of a plan: named by its kind before either reading.
    const other = err instanceof InputError || err instanceof StalePlanError ? otherKindOf(text, 'Plan') : null;
    if (other) throw new WrongKindError(inputName(file), other, 'Plan');
    throw err;
  }
}

/**
 * Steps 1 to 4: before any cluster access. Returns the verified spec and its re-planner, which
 * plans with `durations`: the planner's own unless a rehearsal gives its own, never the file's
 * (a file cannot make waves look shorter to the maintenance windows).
 */
export function openSavedPlan(ports: SavedPlanPorts, saved: Plan, durations: PhaseDurations = DEFAULT_DURATIONS): SpecForPlan {
  checkSavedPlan(saved);
  // A rollback plan reads no spec file: it is re-planned from its sealed rollback section.
  if (saved.rollback) return specOfRollbackPlan(saved, durations);
  checkPlanProvenance(ports, saved);
  return specOfSavedPlan(ports, saved, durations);
}

/**
 * Step 3: the fields that make bootcplan read files or run git are well formed, and the spec
 * path stays inside the repository (or the working directory outside git).
 */
export function checkPlanProvenance(ports: InputPorts, plan: Plan, cwd: string = process.cwd()): void {
  checkProvenanceFields(plan);
  planSpecFile(ports, plan, cwd);
}

/**
 * A rollback plan (Plan.rollback, docs/apply.md "Rollback") is made from the run record and the
 * cluster, not from a spec file: it is re-planned from its own sealed section (its own node
 * entries mark its nodes in flight). Its status goes to the Rollout object of the run's spec (by
 * name); no maintenance window bounds it.
 */
function specOfRollbackPlan(plan: Plan, durations: PhaseDurations): SpecForPlan {
  const input = rollbackInputOfPlan(plan);
  const spec: RolloutSpec = { apiVersion: SPEC_API_VERSION, kind: SPEC_KIND, metadata: { name: plan.spec.name }, spec: {} };
  return { spec, replan: (s) => planRollback(input, s, { durations, ownPlanId: plan.id }) };
}

/** The spec a saved plan was made from, checked by hash (a changed spec makes the plan stale). */
function specOfSavedPlan(ports: SavedPlanPorts, plan: Plan, durations: PhaseDurations): SpecForPlan {
  if (plan.spec.fleetCluster !== undefined) {
    if (!ports.fleetClusterSpec) throw new Error(`plan ${plan.id} was made by a Fleet, and no fleet slice is wired in`);
    return ports.fleetClusterSpec(plan, durations);
  }
  // What was reviewed is what runs: the spec must still hash to what the plan recorded.
  verifyPlanSpec(ports, plan);
  const read = readSpec(ports, planSpecFile(ports, plan), plan.spec.ref ? (plan.spec.commit ?? plan.spec.ref) : undefined);
  requireValidSpec(read);
  // Re-planned on the node the reviewed plan was made on (if it names one), so that its waves
  // come out as reviewed; the applier takes the node it runs on now last (ApplyOptions.selfNode).
  const selfNode = selfNodeOf(plan);
  return { spec: read.loaded.spec, replan: (s) => buildPlan(planInput(read, s, { durations, selfNode })) };
}

/** Where the spec of a saved plan lives: its recorded path, inside the repository root (or cwd outside git). */
export function planSpecFile({ files, git }: InputPorts, plan: Plan, cwd: string = process.cwd()): string {
  const top = git.run(['rev-parse', '--show-toplevel'], cwd)?.trim() ?? null;
  const root = top ?? resolve(cwd);
  const file = files.inside(root, plan.spec.path);
  if (!file) {
    throw new InputError(
      `plan ${plan.id}: spec path ${JSON.stringify(plan.spec.path)} is outside ${top ? `the repository ${top}` : `the working directory ${root}`}`,
      [],
      isAbsolute(plan.spec.path) && plan.spec.commit === null
        ? `its spec was outside any repository when it was planned: run bootcplan from ${dirname(plan.spec.path)} (or another directory outside git that holds it); bootcplan reads no file outside the working directory`
        : 'apply a plan from the clone of the repository it was made in; bootcplan reads no file outside it',
    );
  }
  return file;
}

/** The snapshot a saved plan was made from (`cluster.source` "file:PATH"), inside the working directory. */
export function planSnapshotFile({ files }: InputPorts, plan: Plan, cwd: string = process.cwd()): string | null {
  const source = plan.cluster.source;
  if (typeof source !== 'string' || !source.startsWith('file:')) return null;
  // Read from stdin when planned (`--cluster -`): no file was ever there to read again.
  if (source === `file:${STDIN_NAME}`)
    throw new InputError(
      `plan ${plan.id} was made from a snapshot read from stdin (--cluster -): there is no file to rehearse it against`,
      [],
      'pass the snapshot again: --cluster SNAPSHOT, or --cluster - < SNAPSHOT',
    );
  // A path a plan file names is read only inside the working directory (docs/apply.md "Apply and rehearse"):
  // anyone can write a plan file, and it must not make bootcplan read files elsewhere.
  const file = files.inside(resolve(cwd), source.slice('file:'.length));
  if (!file)
    throw new InputError(
      `plan ${plan.id}: cluster source ${JSON.stringify(source)} is outside the working directory ${resolve(cwd)}; bootcplan reads no file outside it that a plan file names`,
      [],
      `pass the snapshot with --cluster ${source.slice('file:'.length)} (a path you give is read wherever it is), or rehearse from a directory that holds it`,
    );
  return file;
}

export interface SpecCheckOptions {
  /** Where to look for the spec; default: the plan's recorded path, relative to the repository root or cwd. */
  specFile?: string;
  cwd?: string;
}

/**
 * Step 4, "what was reviewed is what runs": the spec the plan was made from, read again (at the
 * recorded commit when the plan came from a ref, else the working-tree file at the recorded
 * path), must hash to the recorded sha256 (plan/saved/verify.ts checkSpecHash).
 */
export function verifyPlanSpec(ports: InputPorts, plan: Plan, opts: SpecCheckOptions = {}): void {
  const cwd = opts.cwd ?? process.cwd();
  const top = ports.git.run(['rev-parse', '--show-toplevel'], cwd)?.trim() ?? null;
  let text: string;
  let where: string;
  if (plan.spec.ref && plan.spec.commit) {
    if (!top)
      throw new InputError(
        `the plan was made from ${plan.spec.path} at ${plan.spec.ref}, and ${cwd} is not inside a git repository`,
        [],
        // Read from git at its commit: no mount can stand in for the clone.
        recordedSpecHint(plan, cwd, cwd),
      );
    // --end-of-options: whatever the plan file says is never read as an option by git.
    const blob = ports.git.run(['show', '--end-of-options', `${plan.spec.commit}:${plan.spec.path}`], top);
    if (blob === null) {
      throw new StalePlanError(`the spec the plan was made from (${plan.spec.path} at ${plan.spec.commit.slice(0, 12)}) cannot be read`, [
        `commit ${plan.spec.commit} or path ${plan.spec.path} is not in this clone (git fetch?)`,
      ]);
    }
    text = blob;
    where = `${plan.spec.path} at ${plan.spec.commit.slice(0, 12)}`;
  } else {
    const file = opts.specFile ?? planSpecFile(ports, plan, cwd);
    text = readSpecWorkingTree(ports, file, opts.specFile ? undefined : recordedSpecHint(plan, top, cwd)).text;
    where = file;
  }
  checkSpecHash(plan, text, where);
}

/**
 * Where a saved plan's spec is looked for, for the user who ran it elsewhere: its recorded path,
 * from the top of the repository the plan was made in (or the working directory, for a plan made
 * outside git). `-f` cannot point elsewhere: a saved plan names its own spec (docs/cli.md "Saved
 * plans"). Run outside any git clone (an apply Job, whose working directory is the mounted
 * ConfigMap, docs/gitops.md "Repository layout"), the fix is the mount, not a clone.
 */
function recordedSpecHint(plan: Plan, top: string | null, cwd: string): string {
  // `top` is the clone's top level, null outside git.
  const { path, commit } = plan.spec;
  if (top === null)
    return (
      `${resolve(cwd)} is not a git clone, so bootcplan reads the spec at ${path} under the working directory, as the plan records it: ` +
      `mount the spec at ${path} under the working directory (an apply Job: the ConfigMap item whose path is the plan's spec.path, ` +
      `the volume mounted at the container's workingDir), or run bootcplan from the directory the plan was made in` +
      (commit === null ? '' : `, or inside a clone of the repository it was made in (at commit ${commit.slice(0, 12)})`)
    );
  if (commit === null)
    return `the plan reads its spec at ${path}, relative to the working directory it was made in (outside git): run bootcplan from that directory`;
  return `the plan reads its spec at ${path} (made at commit ${commit.slice(0, 12)}), from the top of the repository it was made in: run bootcplan inside a clone of that repository`;
}
