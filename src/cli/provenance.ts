/**
 * "What was reviewed is what runs": before a saved plan is applied, the spec it was made
 * from is read again (at the recorded commit when the plan came from a ref, else the
 * working-tree file at the recorded path) and must hash to the recorded sha256.
 */
import { resolve, join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Plan } from '../plan/types.ts';
import { git, readSpecWorkingTree } from './inputs.ts';
import { StalePlanError, InputError } from '../base/errors.ts';

export interface SpecCheckOptions {
  /** Where to look for the spec; default: the plan's recorded path, relative to the repository root or cwd. */
  specFile?: string;
  cwd?: string;
}

/** Where the spec of a saved plan lives: its recorded path, relative to the repository root (or cwd outside git). */
export function planSpecFile(plan: Plan, cwd: string = process.cwd()): string {
  const top = git(['rev-parse', '--show-toplevel'], cwd)?.trim() ?? null;
  return top && !plan.spec.path.startsWith('/') ? join(top, plan.spec.path) : resolve(cwd, plan.spec.path);
}

export function verifyPlanSpec(plan: Plan, opts: SpecCheckOptions = {}): void {
  const cwd = opts.cwd ?? process.cwd();
  const top = git(['rev-parse', '--show-toplevel'], cwd)?.trim() ?? null;
  let text: string;
  let where: string;
  if (plan.spec.ref && plan.spec.commit) {
    if (!top) throw new InputError(`the plan was made from ${plan.spec.path} at ${plan.spec.ref}; run apply inside a clone of that repository`);
    const blob = git(['show', `${plan.spec.commit}:${plan.spec.path}`], top);
    if (blob === null) {
      throw new StalePlanError(`the spec the plan was made from (${plan.spec.path} at ${plan.spec.commit.slice(0, 12)}) cannot be read`, [
        `commit ${plan.spec.commit} or path ${plan.spec.path} is not in this clone (git fetch?)`,
      ]);
    }
    text = blob;
    where = `${plan.spec.path} at ${plan.spec.commit.slice(0, 12)}`;
  } else {
    const file = opts.specFile ?? (top && !plan.spec.path.startsWith('/') ? join(top, plan.spec.path) : resolve(cwd, plan.spec.path));
    text = readSpecWorkingTree(file).text;
    where = file;
  }
  const sha = createHash('sha256').update(text).digest('hex');
  if (sha !== plan.spec.sha256) {
    throw new StalePlanError(`the spec changed since the plan was made`, [
      `plan ${plan.id} was made from a spec with sha256 ${plan.spec.sha256.slice(0, 16)}…`,
      `${where} now has sha256 ${sha.slice(0, 16)}…`,
    ]);
  }
}
