/**
 * Fleet I/O for the fleet commands, through the files and git ports: the Fleet file (working tree or a git revision, as the Rollout spec is
 * read), each cluster's snapshot (a file relative to the Fleet file, or the live cluster through
 * its kubeconfig context, at most `concurrency` at once), and fleet plan files. A cluster that
 * cannot be read is that cluster's error, never the fleet's.
 */
import { dirname, resolve, basename, relative } from 'node:path';
import { InputError, BootcplanError, WrongKindError, messageOf } from '../base/errors.ts';
import { formatDiagnostic } from '../base/diagnostics.ts';
import { parseFleetSpec, isCheckedFleet, type CheckedFleet, type LoadedFleet } from '../fleet/spec-load.ts';
import type { FleetCluster } from '../fleet/spec-types.ts';
import type { PlanSpecInfo, PhaseDurations } from '../plan/types.ts';
import type { FleetClusterInput } from '../fleet/plan.ts';
import type { FleetPlan, FleetClusterError } from '../fleet/plan-types.ts';
import { parseFleetPlanFile } from '../fleet/plan-file.ts';
import { fleetClusterKubeFlags, fleetRoot, type FleetKubeconfigSource } from './fleet-kubeconfig.ts';
import type { InputPorts, KubeOptions } from './ports.ts';
import { readLiveSnapshotStep } from './live.ts';
import { MAX_INPUT_BYTES } from './files.ts';
import { readSpecAtRef, readSpecWorkingTree, readSnapshotFile, inputName, otherKindOf, snapshotOfText } from './inputs.ts';
import { parseIntegerFlag } from './flags.ts';
import { STDIN_PATH } from './stdin.ts';

export const DEFAULT_FLEET_FILE = 'fleet.yaml';
export const DEFAULT_FLEET_CONCURRENCY = 8;

/** The --concurrency flag, checked (1 to 256), or the default. */
function fleetConcurrency(flag: string | undefined): number {
  return flag === undefined ? DEFAULT_FLEET_CONCURRENCY : parseIntegerFlag('--concurrency', flag, { min: 1, max: 256 });
}

export interface FleetRead<L extends LoadedFleet = LoadedFleet> {
  loaded: L;
  text: string;
  /** As a plan records its spec: path in the repository, commit, sha256 (name: metadata.name). */
  info: PlanSpecInfo;
  /** The directory snapshot and kubeconfig paths are relative to. */
  dir: string;
}

export function readFleet(ports: InputPorts, file: string, ref?: string): FleetRead {
  if (file === STDIN_PATH)
    throw new InputError(
      'a Fleet names snapshot and kubeconfig files relative to its own file, and -f - has none',
      [],
      'pass the Fleet as a file: -f fleet.yaml',
    );
  let src;
  try {
    src = ref ? readSpecAtRef(ports, file, ref) : readSpecWorkingTree(ports, file);
  } catch (err) {
    // The Rollout spec's reader speaks of a "spec" and bootcplan.yaml.
    if (!(err instanceof InputError) || !err.message.startsWith('spec ')) throw err;
    throw new InputError(
      `Fleet ${err.message.slice('spec '.length)}`,
      [],
      `pass the Fleet with -f FILE (default: ${DEFAULT_FLEET_FILE} in the current directory)`,
    );
  }
  const loaded = parseFleetSpec(src.text, inputName(file));
  const { path, ref: at, commit, dirty } = src.info;
  return {
    loaded,
    text: src.text,
    dir: dirname(resolve(file)),
    info: { name: loaded.fleet?.metadata.name ?? basename(file), path, ref: at, commit, sha256: loaded.sha256, dirty },
  };
}

/** A Fleet read without errors (InputError with every diagnostic otherwise): the Fleet is there after it. */
export function requireValidFleet(read: FleetRead): asserts read is FleetRead<CheckedFleet> {
  if (!isCheckedFleet(read.loaded)) {
    const other = otherKindOf(read.text, 'Fleet');
    if (other) throw new WrongKindError(read.info.path, other, 'Fleet');
    const n = read.loaded.diagnostics.filter((d) => d.severity === 'error').length;
    throw new InputError(`${read.info.path}: ${n} error${n === 1 ? '' : 's'} in the Fleet`, read.loaded.diagnostics);
  }
}

interface FleetReadOptions extends KubeOptions {
  concurrency: number;
  /** --trust-fleet-kubeconfigs (fleet-kubeconfig.ts). */
  trustFleetKubeconfigs?: boolean;
  /** The Fleet was read at this revision (--ref): the kubeconfig files it names are read there too. */
  at?: { ref: string; commit: string };
}

/** Where the Fleet was read from (readFleet): with --ref, the revision and its commit. */
export function fleetRevision(read: FleetRead): { ref: string; commit: string } | undefined {
  return read.info.ref && read.info.commit ? { ref: read.info.ref, commit: read.info.commit } : undefined;
}

/** The flags a command that plans a Fleet now takes (`fleet plan`, `fleet apply -f`, `fleet rehearse -f`). */
export interface FleetPlanFlags extends KubeOptions {
  concurrency?: string;
  trustFleetKubeconfigs?: boolean;
}

/**
 * A Fleet planned now: the file read (at `ref`, if given) and checked, every cluster read
 * (--concurrency at once; kubeconfigs the Fleet names at the same revision), then planFleet.
 */
export async function planFleetFile(
  ports: InputPorts,
  file: string,
  ref: string | undefined,
  flags: FleetPlanFlags,
  env: Record<string, string | undefined>,
  o: { now: number; durations?: PhaseDurations },
): Promise<{ read: FleetRead<CheckedFleet>; inputs: Map<string, FleetClusterInput>; fleetPlan: FleetPlan }> {
  const concurrency = fleetConcurrency(flags.concurrency);
  const read = readFleet(ports, file, ref);
  requireValidFleet(read);
  const fleet = read.loaded.fleet;
  const { planFleet } = await import('../fleet/plan.ts');
  const inputs = await readFleetClusters(
    ports,
    fleet.spec.clusters,
    read.dir,
    {
      kubeconfig: flags.kubeconfig,
      requestTimeout: flags.requestTimeout,
      concurrency,
      trustFleetKubeconfigs: flags.trustFleetKubeconfigs,
      at: fleetRevision(read),
    },
    env,
  );
  const fleetPlan = planFleet({
    fleet,
    map: read.loaded.map,
    info: read.info,
    diagnostics: read.loaded.diagnostics,
    clusters: inputs,
    durations: o.durations,
    now: o.now,
  });
  return { read, inputs, fleetPlan };
}

/** Every cluster's snapshot or error, read at most `concurrency` at a time. */
async function readFleetClusters(
  ports: InputPorts,
  clusters: readonly FleetCluster[],
  dir: string,
  opts: FleetReadOptions,
  env: Record<string, string | undefined>,
): Promise<Map<string, FleetClusterInput>> {
  const out = new Map<string, FleetClusterInput>();
  // A Fleet comes in pull requests: it reads no snapshot outside its repository (or its directory outside git).
  const root = clusters.some((c) => c.snapshot !== undefined || c.kubeconfig !== undefined) ? fleetRoot(ports.git, dir) : dir;
  const kubeconfigs: FleetKubeconfigSource = { dir, root, at: opts.at, trust: opts.trustFleetKubeconfigs === true, checked: new Map(), git: ports.git };
  let next = 0;
  const worker = async () => {
    while (next < clusters.length) {
      const c = clusters[next++];
      out.set(c.name, await readCluster(ports, c, dir, root, opts, env, kubeconfigs));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, clusters.length)) }, worker));
  return out;
}

async function readCluster(
  ports: InputPorts,
  c: FleetCluster,
  dir: string,
  root: string,
  opts: FleetReadOptions,
  env: Record<string, string | undefined>,
  kubeconfigs: FleetKubeconfigSource,
): Promise<FleetClusterInput> {
  if (c.snapshot !== undefined) return readFleetSnapshot(ports, c.snapshot, dir, root, opts.at);
  const k = fleetClusterKubeFlags(c, kubeconfigs, opts);
  if ('error' in k) return { error: k.error };
  const r = await readLiveSnapshotStep(k.flags, env);
  if ('snapshot' in r) return { snapshot: r.snapshot };
  return r.step === 'kubeconfig'
    ? { error: withoutFileContent(errorOf('kubeconfig', r.error, `check the context "${c.context}" with \`kubectl config get-contexts\``)) }
    : {
        error: errorOf('unreachable', r.error, `check that the cluster answers: \`kubectl --context ${c.context} get nodes\`; the other clusters were planned`),
      };
}

const OUTSIDE_HINT = 'keep the snapshot files next to the Fleet file, inside the repository';
const SNAPSHOT_HINT = 'write it with `bootcplan snapshot --out FILE` (paths are relative to the Fleet file)';

/**
 * The snapshot file a Fleet names (`path`, relative to its directory `dir`), inside the
 * repository `root`. With `at` (the Fleet was read at a revision: --ref), at that revision, as its
 * kubeconfig files are (fleet-kubeconfig.ts): what a pull request's Fleet is planned against is
 * what that commit holds, never whatever the checkout has. The plan's `cluster.source` is then
 * `git:COMMIT:PATH`, else `file:PATH` relative to the working directory, as `plan --cluster FILE`
 * records it (no absolute path in a plan).
 */
export function readFleetSnapshot(
  ports: InputPorts,
  path: string,
  dir: string,
  root: string,
  at: { ref: string; commit: string } | undefined,
): FleetClusterInput {
  try {
    if (at) {
      const r = ports.git.readFileAt(root, resolve(dir, path), at.commit, MAX_INPUT_BYTES);
      if (!('problem' in r)) return { snapshot: snapshotOfText(r.text, `${at.commit.slice(0, 12)}:${r.inRepo}`, `git:${at.commit}:${r.inRepo}`) };
      const message =
        r.problem === 'outside'
          ? `is outside ${root}`
          : r.problem === 'too-big'
            ? `is more than bootcplan reads (${MAX_INPUT_BYTES / 2 ** 20} MiB)`
            : `is not in ${at.ref} (${at.commit.slice(0, 12)})`;
      const hint =
        r.problem === 'outside'
          ? OUTSIDE_HINT
          : r.problem === 'missing'
            ? 'with --ref, the snapshot files a Fleet names are read at that revision: commit them with the Fleet'
            : SNAPSHOT_HINT;
      return { error: { code: 'snapshot-invalid', message: `snapshot ${JSON.stringify(path)} ${message}`, hint } };
    }
    const file = ports.files.inside(root, resolve(dir, path));
    if (!file) return { error: { code: 'snapshot-invalid', message: `snapshot ${JSON.stringify(path)} is outside ${root}`, hint: OUTSIDE_HINT } };
    return { snapshot: readSnapshotFile(ports, relative(process.cwd(), file) || file) };
  } catch (err) {
    return { error: errorOf('snapshot-invalid', err, SNAPSHOT_HINT) };
  }
}

/**
 * A Fleet comes in pull requests and may name any file as a cluster's kubeconfig: the parser's
 * message about a file that is no kubeconfig may quote its content, and the error ends up in a
 * pull-request comment. It is left out.
 */
function withoutFileContent(e: FleetClusterError): FleetClusterError {
  return { ...e, message: e.message.replace(/( is not valid): .*$/s, "$1 (the parser's message is left out: it may quote the file)") };
}

/** A read failure as the cluster's error: the message, the first diagnostic, the error's own hint first. */
function errorOf(code: FleetClusterError['code'], err: unknown, fallbackHint: string): FleetClusterError {
  const first = err instanceof InputError ? err.diagnostics.find((d) => d.severity === 'error') : undefined;
  const message = [messageOf(err), first ? formatDiagnostic(first).split('\n')[0] : null].filter(Boolean).join(': ');
  return { code, message, hint: (err instanceof BootcplanError ? err.hint : undefined) ?? fallbackHint };
}

export function readFleetPlanFile({ files }: InputPorts, file: string): FleetPlan {
  const text = files.readText(file, 'fleet plan file', 'save a fleet plan with `bootcplan fleet plan --out FILE`');
  const r = parseFleetPlanFile(text, inputName(file));
  if (!r.fleetPlan) {
    const other = otherKindOf(text, 'FleetPlan');
    if (other) throw new WrongKindError(inputName(file), other, 'FleetPlan');
    throw new InputError(`${inputName(file)}: not a usable fleet plan file`, r.diagnostics);
  }
  return r.fleetPlan;
}
