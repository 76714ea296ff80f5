/**
 * The commands' inputs, through the files and git ports: the spec (working tree or a git
 * revision) and snapshots, every failure an InputError with diagnostics; and from a read spec to
 * the planner (docs/design.md §1: spec + snapshot -> planner -> Plan), the one place the planner input
 * is assembled.
 */
import { dirname, resolve, relative, basename } from 'node:path';
import { parseRolloutSpec, isValidSpec, type LoadedSpec, type ValidSpec } from '../rollout-spec/load.ts';
import { parseSnapshot } from '../cluster/snapshot-file.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { PlanSpecInfo, Plan, PhaseDurations } from '../plan/types.ts';
import { buildPlan, type PlanInput } from '../plan/planner.ts';
import { InputError, WrongKindError, type FileKind } from '../base/errors.ts';
import { isPlainObject } from '../base/schema.ts';
import type { InputPorts, SpecForPlan } from './ports.ts';
import { STDIN_NAME, STDIN_PATH } from './stdin.ts';
import { nodeFiles } from './files.ts';
import { nodeGit } from './git.ts';

/** The input ports on the process (the real files and git), for code not yet given ports of its own. */
export const nodeInputs: InputPorts = { files: nodeFiles, git: nodeGit };

export interface SpecRead<L extends LoadedSpec = LoadedSpec> {
  loaded: L;
  text: string;
  info: PlanSpecInfo;
}

export interface SpecSource {
  text: string;
  info: Omit<PlanSpecInfo, 'name' | 'sha256'>;
}

/** A spec read at a git revision: its commit is always known. */
export interface SpecAtRef extends SpecSource {
  info: SpecSource['info'] & { commit: string };
}

/** The spec's text at a git revision (`git show COMMIT:PATH`), with the resolved commit. */
export function readSpecAtRef({ files, git }: InputPorts, file: string, ref: string, flag = '--ref'): SpecAtRef {
  const abs = resolve(file);
  const top = git.run(['rev-parse', '--show-toplevel'], files.isDirectory(dirname(abs)) ? dirname(abs) : process.cwd())?.trim();
  if (!top)
    throw new InputError(
      `${flag} ${ref}: ${dirname(abs)} is not inside a git repository`,
      [],
      'run bootcplan from a clone of the repository that holds the spec',
    );
  // `--end-of-options` keeps a ref that starts with "-" from being read as an option.
  const commit = git.run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], top)?.trim();
  if (!commit) throw new InputError(`${flag} ${ref}: no such revision`, [], 'check the branch, tag or commit name (a `git fetch` may be needed in CI)');
  const inRepo = relative(top, abs).split('\\').join('/');
  if (inRepo.startsWith('..')) throw new InputError(`${flag} ${ref}: ${file} is outside the repository at ${top}`);
  const text = git.run(['show', '--end-of-options', `${commit}:${inRepo}`], top);
  if (text === null)
    throw new InputError(
      `${flag} ${ref}: ${inRepo} does not exist at ${ref} (${commit.slice(0, 12)})`,
      [],
      'check the -f path; it is read relative to the repository root at that revision',
    );
  return { text, info: { path: inRepo, ref, commit, dirty: null } };
}

/** Whether the input is read from stdin (`-`). */
export const readsStdin = (file: string) => file === STDIN_PATH;

/** What diagnostics and plans call an input: `<stdin>` for `-`. */
export const inputName = (file: string) => (file === STDIN_PATH ? STDIN_NAME : file);

/**
 * The working-tree spec, with the HEAD commit and whether the file differs from it. `hint` is what
 * a missing or unreadable file says: by default the `-f` of the commands that take one; a saved
 * plan's recorded spec says where the plan looks (./saved-plan.ts).
 */
export function readSpecWorkingTree(
  { files, git }: InputPorts,
  file: string,
  hint = 'pass the spec with -f FILE (default: bootcplan.yaml in the current directory)',
): SpecSource {
  const abs = resolve(file);
  const text = files.readText(file, 'spec', hint);
  // From stdin: no file, so no commit and no "differs from HEAD" to record.
  if (file === STDIN_PATH) return { text, info: { path: STDIN_NAME, ref: null, commit: null, dirty: null } };
  let commit: string | null = null;
  let dirty: boolean | null = null;
  let path = file;
  // The top level and HEAD in one git call (each spawn costs 5-15 ms of start-up); a repository
  // without a commit fails it, and gives its top level alone.
  const both = git.run(['rev-parse', '--show-toplevel', '--verify', '--quiet', '--end-of-options', 'HEAD'], dirname(abs))?.trim().split('\n');
  const top = both?.length === 2 ? both[0] : git.run(['rev-parse', '--show-toplevel'], dirname(abs))?.trim();
  if (top) {
    commit = both?.length === 2 ? both[1] : null;
    const inRepo = relative(top, abs).split('\\').join('/');
    path = inRepo;
    const status = git.run(['status', '--porcelain', '--end-of-options', '--', inRepo], top);
    dirty = status === null ? null : status.trim().length > 0;
  }
  return { text, info: { path, ref: null, commit, dirty } };
}

export function readSpec(ports: InputPorts, file: string, ref?: string): SpecRead {
  if (ref && file === STDIN_PATH)
    throw new InputError(`--ref ${ref} reads the spec from git, and -f - from stdin: pick one`, [], "with --ref, -f names the spec's path in the repository");
  const src = ref ? readSpecAtRef(ports, file, ref) : readSpecWorkingTree(ports, file);
  const loaded = parseRolloutSpec(src.text, inputName(file));
  const { path, ref: at, commit, dirty } = src.info;
  return {
    loaded,
    text: src.text,
    info: { name: loaded.spec?.metadata.name ?? basename(inputName(file)), path, ref: at, commit, sha256: loaded.sha256, dirty },
  };
}

/**
 * The kind of an input file that failed to load as `wanted`, when it is another of bootcplan's
 * kinds (kindOfText). Read only once the file failed, so a good file costs nothing more.
 */
export function otherKindOf(text: string, wanted: FileKind): FileKind | null {
  const found = kindOfText(text);
  return found === wanted ? null : found;
}

/**
 * Which of bootcplan's kinds a file's text is: a plan file (JSON: `kind: FleetPlan`, or a
 * formatVersion without a kind: a plan of one cluster) or a spec (its top-level `kind:` line);
 * null for anything else. Completion asks it of every file it offers (app/completion.ts).
 */
export function kindOfText(text: string): FileKind | null {
  try {
    const doc: unknown = JSON.parse(text);
    if (!isPlainObject(doc)) return null;
    const { kind, formatVersion } = doc;
    if (kind === 'FleetPlan' || kind === 'Fleet' || kind === 'Rollout') return kind;
    return kind === undefined && formatVersion !== undefined ? 'Plan' : null;
  } catch {
    // YAML: a spec names its kind on a top-level line of its own.
    const m = /^kind:[ \t]*(["']?)(Rollout|Fleet)\1[ \t]*(#.*)?$/m.exec(text);
    return m ? (m[2] === 'Fleet' ? 'Fleet' : 'Rollout') : null;
  }
}

/** A spec read without errors (InputError with every diagnostic otherwise): the spec is there after it. */
export function requireValidSpec(read: SpecRead): asserts read is SpecRead<ValidSpec> {
  if (!isValidSpec(read.loaded)) {
    const other = otherKindOf(read.text, 'Rollout');
    if (other) throw new WrongKindError(read.info.path, other, 'Rollout');
    const n = read.loaded.diagnostics.filter((d) => d.severity === 'error').length;
    throw new InputError(`${read.info.path}: ${n} error${n === 1 ? '' : 's'} in the spec`, read.loaded.diagnostics);
  }
}

export function readSnapshotFile({ files }: InputPorts, file: string): ClusterSnapshot {
  const text = files.readText(file, 'snapshot', 'write one with `bootcplan snapshot --out FILE`');
  return snapshotOfText(text, inputName(file));
}

/** A snapshot's text parsed; `name` in its diagnostics; its source `file:NAME` unless given. */
export function snapshotOfText(text: string, name: string, source?: string): ClusterSnapshot {
  const r = parseSnapshot(text, name);
  if (!r.snapshot) {
    throw new InputError(`${name}: not a usable cluster snapshot`, r.diagnostics);
  }
  return source === undefined ? r.snapshot : { ...r.snapshot, source };
}

/** What a command may add to the planner input besides the spec and the snapshot. */
export type PlanExtras = Pick<PlanInput, 'durations' | 'now' | 'specChanges' | 'selfNode'>;

/**
 * The node this process runs on, when it runs in the cluster it plans: NODE_NAME, which the
 * example apply Jobs set from the downward API (spec.nodeName). It goes last in its bootc pool
 * (docs/design.md §7 "Stopping"). Elsewhere (a laptop, CI) it is unset, and nothing moves.
 */
export function selfNodeFrom(env: Record<string, string | undefined>): string | null {
  const n = env.NODE_NAME?.trim();
  return n ? n : null;
}

/** The planner input for a spec that passed `requireValidSpec`; its warnings carry into the plan. */
export function planInput(read: SpecRead<ValidSpec>, snapshot: ClusterSnapshot, extras: PlanExtras = {}): PlanInput {
  return { spec: read.loaded.spec, specMap: read.loaded.map, specInfo: read.info, snapshot, specDiagnostics: read.loaded.diagnostics, ...extras };
}

/** The spec of `-f FILE`, valid, and its planner (apply plans it against the cluster it finds, rehearse against the snapshot). */
export function specFromFile(
  ports: InputPorts,
  file: string,
  durations?: PhaseDurations,
  selfNode: string | null = null,
): SpecForPlan & { plan: (s: ClusterSnapshot) => Plan } {
  const read = readSpec(ports, file);
  requireValidSpec(read);
  const mk = (s: ClusterSnapshot) => buildPlan(planInput(read, s, { durations, selfNode }));
  return { spec: read.loaded.spec, replan: mk, plan: mk };
}
