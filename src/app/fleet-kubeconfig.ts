/**
 * The kubeconfig files a Fleet names (`clusters[].kubeconfig`). A Fleet arrives in a pull
 * request, so such a file is the pull request's, not the operator's machine configuration:
 *   - it is read only inside the repository (or the Fleet's directory outside git), as snapshot
 *     files are; with --ref, at that revision (git show), never from the working tree;
 *   - it may not run a command or read a file of the machine bootcplan runs on: no exec plugin,
 *     auth-provider, token-file, client-certificate, client-key or certificate-authority path
 *     (inline data is fine), unless the operator passes --trust-fleet-kubeconfigs;
 *   - it is parsed and checked here, and the Kubernetes client gets exactly the checked content
 *     (as JSON: no second parse that could read the text differently); @kubernetes/client-node
 *     reads a token-file while it parses, and runs exec plugins on the first request;
 *   - its contexts are never listed in a hint (the error ends up in a pull-request comment).
 * The operator's own --kubeconfig / KUBECONFIG is trusted as before. A refusal is that cluster's
 * error (code `kubeconfig`) naming the field, never a value of the file.
 */
import { statSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InputError, fsErrorText } from '../base/errors.ts';
import { parseYamlWithPositions } from '../base/yaml.ts';
import type { FleetCluster } from '../fleet/spec-types.ts';
import type { FleetClusterError } from '../fleet/plan-types.ts';
import type { Git, KubeOptions } from './ports.ts';
import { insideRoot } from './files.ts';

export const TRUST_FLEET_KUBECONFIGS = '--trust-fleet-kubeconfigs';

/** Where the Fleet's kubeconfig files are read from. */
export interface FleetKubeconfigSource {
  /** The Fleet file's directory: `kubeconfig:` paths are relative to it. */
  dir: string;
  /** The repository root (the Fleet's directory outside git): nothing outside it is read. */
  root: string;
  /** The Fleet was read at this revision (--ref): its kubeconfig files are read there too. */
  at?: { ref: string; commit: string };
  /** --trust-fleet-kubeconfigs */
  trust: boolean;
  /** Each file read and checked once per command (many clusters share one kubeconfig). */
  checked?: Map<string, Checked>;
  /** The git port that reads a file at `at` (ports.ts Git readFileAt). */
  git: Git;
}

type Checked = { kubeconfigText: NonNullable<KubeOptions['kubeconfigText']> } | { refused: string; hint: string };

/** The repository root of `dir`, or `dir` itself outside git. */
export function fleetRoot(git: Git, dir: string): string {
  return git.run(['rev-parse', '--show-toplevel'], dir)?.trim() || dir;
}

/** A kubeconfig is a few KiB; more is no kubeconfig. */
const MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024;

/**
 * The flags that reach cluster `c`: the operator's kubeconfig when the Fleet names none, else
 * the checked content of the file it names, or that cluster's error.
 */
export function fleetClusterKubeFlags(
  c: Pick<FleetCluster, 'context' | 'kubeconfig'>,
  src: FleetKubeconfigSource,
  opts: KubeOptions,
): { flags: KubeOptions } | { error: FleetClusterError } {
  const base = { context: c.context, requestTimeout: opts.requestTimeout };
  if (c.kubeconfig === undefined) return { flags: { ...base, kubeconfig: opts.kubeconfig } };
  let checked = src.checked?.get(c.kubeconfig);
  if (!checked) {
    checked = checkKubeconfig(c.kubeconfig, src);
    src.checked?.set(c.kubeconfig, checked);
  }
  if ('refused' in checked)
    return { error: { code: 'kubeconfig', message: `kubeconfig ${JSON.stringify(c.kubeconfig)} named by the Fleet ${checked.refused}`, hint: checked.hint } };
  return { flags: { ...base, kubeconfigText: checked.kubeconfigText } };
}

function checkKubeconfig(path: string, src: FleetKubeconfigSource): Checked {
  const read = src.at ? readAtRevision(path, src, src.at) : readInWorkingTree(path, src);
  if ('refused' in read) return read;
  const parsed = parseYamlWithPositions(read.text, path, { maxDepth: 0 });
  const doc = parsed.documents.length === 1 ? parsed.documents[0] : undefined;
  if (!isRecord(doc)) {
    const first = parsed.diagnostics.find((d) => d.severity === 'error');
    const at = first?.line ? ` at line ${first.line}` : '';
    return {
      refused: `is not valid${at} (the parser's message is left out: it may quote the file)`,
      hint: 'a kubeconfig is one YAML document: check it with `kubectl config view --kubeconfig FILE`',
    };
  }
  if (!src.trust) {
    const fields = untrustedKubeconfigFields(doc);
    if (fields.length) {
      return {
        refused: `runs a command or reads a file of this machine: ${fields.slice(0, 6).join(', ')}${fields.length > 6 ? `, and ${fields.length - 6} more` : ''}`,
        hint: `a Fleet comes from a pull request: use inline credentials (token, *-data), or leave \`kubeconfig:\` out and pass --kubeconfig; ${TRUST_FLEET_KUBECONFIGS} if you trust every change to the repository`,
      };
    }
  }
  return { kubeconfigText: { text: JSON.stringify(doc), name: read.name, dir: read.dir } };
}

type Read = { text: string; name: string; dir: string } | { refused: string; hint: string };

const KEEP_INSIDE =
  'keep the kubeconfig files a Fleet names inside its repository, or leave `kubeconfig:` out and pass your own with --kubeconfig / KUBECONFIG';

function readInWorkingTree(path: string, src: FleetKubeconfigSource): Read {
  const file = insideRoot(src.root, resolve(src.dir, path));
  if (!file) return { refused: 'is outside the repository', hint: KEEP_INSIDE };
  let st;
  try {
    st = statSync(file);
  } catch {
    return { refused: 'does not exist', hint: 'paths are relative to the Fleet file' };
  }
  if (!st.isFile() || st.size > MAX_KUBECONFIG_BYTES)
    return { refused: `is not a regular file of at most ${MAX_KUBECONFIG_BYTES / 2 ** 20} MiB`, hint: 'name a kubeconfig file' };
  try {
    return { text: readFileSync(file, 'utf8'), name: file, dir: dirname(file) };
  } catch (err) {
    return { refused: `cannot be read (${fsErrorText(err)})`, hint: 'check its permissions' };
  }
}

/** With --ref: `git show COMMIT:PATH`, the path inside the repository (a symbolic link there is read as the link, never followed). */
function readAtRevision(path: string, src: FleetKubeconfigSource, at: { ref: string; commit: string }): Read {
  const abs = resolve(src.dir, path);
  const r = src.git.readFileAt(src.root, abs, at.commit, MAX_KUBECONFIG_BYTES);
  if ('problem' in r) {
    if (r.problem === 'outside') return { refused: 'is outside the repository', hint: KEEP_INSIDE };
    if (r.problem === 'too-big') return { refused: `is more than ${MAX_KUBECONFIG_BYTES / 2 ** 20} MiB`, hint: 'name a kubeconfig file' };
    return {
      refused: `is not in ${at.ref} (${at.commit.slice(0, 12)})`,
      hint: 'with --ref, the kubeconfig files a Fleet names are read at that revision: commit them with the Fleet',
    };
  }
  return { text: r.text, name: `${r.inRepo} at ${at.commit.slice(0, 12)}`, dir: dirname(abs) };
}

/**
 * The fields of a kubeconfig that make the Kubernetes client run a command or read a file
 * (@kubernetes/client-node config_types.ts newUsers/newClusters: `exec`, `auth-provider`,
 * `token-file`, `client-certificate`, `client-key`, `certificate-authority`; the `*-data` fields
 * and `token` are inline). Paths such as `users[0].user.exec`, never a value.
 */
export function untrustedKubeconfigFields(doc: unknown): string[] {
  const out: string[] = [];
  const entries = (key: string) => (isRecord(doc) && Array.isArray(doc[key]) ? (doc[key] as unknown[]) : []);
  entries('clusters').forEach((e, i) => {
    const cluster = isRecord(e) ? e.cluster : undefined;
    if (isRecord(cluster) && present(cluster['certificate-authority'])) out.push(`clusters[${i}].cluster.certificate-authority`);
  });
  entries('users').forEach((e, i) => {
    const user = isRecord(e) ? e.user : undefined;
    if (!isRecord(user)) return;
    for (const field of ['exec', 'auth-provider', 'token-file', 'client-certificate', 'client-key']) {
      if (present(user[field])) out.push(`users[${i}].user.${field}`);
    }
  });
  return out;
}

/** What the client would act on: any value but null, undefined, false and "" (it tests truthiness). */
const present = (v: unknown) => v !== undefined && v !== null && v !== false && v !== '';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The source for a Fleet read from `dir` (its repository root found once). */
export function fleetKubeconfigSource(
  git: Git,
  dir: string,
  at: { ref: string; commit: string } | undefined,
  trust: boolean | undefined,
): FleetKubeconfigSource {
  return { dir, root: fleetRoot(git, dir), at, trust: trust === true, checked: new Map(), git };
}

/** fleet apply: a refusal stops the fleet before any cluster is reached (exit 2), naming the cluster. */
export function requireFleetClusterKubeFlags(
  name: string,
  c: Pick<FleetCluster, 'context' | 'kubeconfig'>,
  src: FleetKubeconfigSource,
  opts: KubeOptions,
): KubeOptions {
  const k = fleetClusterKubeFlags(c, src, opts);
  if ('error' in k) throw new InputError(`cluster ${name}: ${k.error.message}`, [], k.error.hint);
  return k.flags;
}
