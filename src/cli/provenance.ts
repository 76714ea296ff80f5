/**
 * "What was reviewed is what runs": before a saved plan is applied, the spec it was made
 * from is read again (at the recorded commit when the plan came from a ref, else the
 * working-tree file at the recorded path) and must hash to the recorded sha256.
 */
import { resolve } from 'node:path';
import type { Plan } from '../plan/types.ts';
import { StalePlanError, InputError } from '../base/errors.ts';
import { checkProvenanceFields, checkSpecHash } from '../plan/saved/verify.ts';
import { git } from '../app/git.ts';
import { insideRoot } from '../app/files.ts';
import { readSpecWorkingTree, nodeInputs } from '../app/inputs.ts';

export interface SpecCheckOptions {
  /** Where to look for the spec; default: the plan's recorded path, relative to the repository root or cwd. */
  specFile?: string;
  cwd?: string;
}

/**
 * The fields of a plan file that make bootcplan read files or run git (issue "Sealed plans and
 * hostile input"): the spec commit must be a full hex object id (a commit such as
 * `--output=<path>` would be an option to git), and the spec path must stay inside the
 * repository (or the working directory outside git).
 */
export function checkPlanProvenance(plan: Plan, cwd: string = process.cwd()): void {
  checkProvenanceFields(plan);
  planSpecFile(plan, cwd);
}

/** Where the spec of a saved plan lives: its recorded path, inside the repository root (or cwd outside git). */
export function planSpecFile(plan: Plan, cwd: string = process.cwd()): string {
  const top = git(['rev-parse', '--show-toplevel'], cwd)?.trim() ?? null;
  const root = top ?? resolve(cwd);
  const file = insideRoot(root, plan.spec.path);
  if (!file) {
    throw new InputError(`plan ${plan.id}: spec path ${JSON.stringify(plan.spec.path)} is outside ${top ? `the repository ${top}` : `the working directory ${root}`}`, [], 'apply a plan from the clone of the repository it was made in; bootcplan reads no file outside it');
  }
  return file;
}

/** The snapshot a saved plan was made from (`cluster.source` "file:PATH"), inside the working directory. */
export function planSnapshotFile(plan: Plan, cwd: string = process.cwd()): string | null {
  const source = plan.cluster.source;
  if (typeof source !== 'string' || !source.startsWith('file:')) return null;
  const file = insideRoot(resolve(cwd), source.slice('file:'.length));
  if (!file) throw new InputError(`plan ${plan.id}: cluster source ${JSON.stringify(source)} is outside the working directory`, [], 'pass the snapshot with --cluster FILE');
  return file;
}

export function verifyPlanSpec(plan: Plan, opts: SpecCheckOptions = {}): void {
  const cwd = opts.cwd ?? process.cwd();
  const top = git(['rev-parse', '--show-toplevel'], cwd)?.trim() ?? null;
  let text: string;
  let where: string;
  if (plan.spec.ref && plan.spec.commit) {
    if (!top) throw new InputError(`the plan was made from ${plan.spec.path} at ${plan.spec.ref}; run apply inside a clone of that repository`);
    // --end-of-options: whatever the plan file says is never read as an option by git.
    const blob = git(['show', '--end-of-options', `${plan.spec.commit}:${plan.spec.path}`], top);
    if (blob === null) {
      throw new StalePlanError(`the spec the plan was made from (${plan.spec.path} at ${plan.spec.commit.slice(0, 12)}) cannot be read`, [
        `commit ${plan.spec.commit} or path ${plan.spec.path} is not in this clone (git fetch?)`,
      ]);
    }
    text = blob;
    where = `${plan.spec.path} at ${plan.spec.commit.slice(0, 12)}`;
  } else {
    const file = opts.specFile ?? planSpecFile(plan, cwd);
    text = readSpecWorkingTree(nodeInputs, file).text;
    where = file;
  }
  checkSpecHash(plan, text, where);
}
