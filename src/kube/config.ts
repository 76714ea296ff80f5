/**
 * Kubeconfig resolution, in kubectl's order:
 *   1. --kubeconfig PATH
 *   2. KUBECONFIG (a list of files separated by ':'; merged, the first file wins)
 *   3. ~/.kube/config
 *   4. the in-cluster service account (a pod: KUBERNETES_SERVICE_HOST and
 *      /var/run/secrets/kubernetes.io/serviceaccount/token), for Argo CD and Flux jobs.
 * `--context NAME` picks a context of the kubeconfig (default: its current-context).
 * When nothing works: a ClusterApiError that says what was tried and what to do.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, delimiter } from 'node:path';
import { KubeConfigFile } from './kubeconfig.ts';
import { ClusterApiError, InputError, fsErrorText, messageOf } from '../base/errors.ts';

export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
  /** kubectl's --request-timeout: "30s", "2m", "1h30m", or whole seconds ("45"); "0": no timeout. */
  requestTimeout?: string;
  /**
   * A kubeconfig given as its content instead of a path, checked before (a file a Fleet names:
   * app/fleet-kubeconfig.ts). It wins over `kubeconfig`; `name` stands for it in messages, `dir`
   * is where its relative file paths point; its contexts are never listed in a hint.
   */
  kubeconfigText?: { text: string; name: string; dir: string };
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, μs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/**
 * Parses --request-timeout as kubectl does (client-go clientcmd: a whole number is
 * seconds, anything else a Go duration such as 1m30s; 0 means no timeout). Seconds.
 */
export function parseRequestTimeout(text: string): number {
  const bad = () =>
    new InputError(
      `--request-timeout ${JSON.stringify(text).slice(0, 60)}: expected a duration such as 30s, 2m or 1h (0: no timeout)`,
      [],
      'as kubectl: a whole number of seconds, or a number with a unit (ms, s, m, h)',
    );
  const t = text.trim();
  if (/^\d{1,12}$/.test(t)) return Number(t);
  if (t.length > 64 || !/^(\d+(\.\d+)?(ns|us|µs|μs|ms|s|m|h))+$/.test(t)) throw bad();
  let seconds = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|μs|ms|s|m|h)/g)) seconds += Number(m[1]) * DURATION_UNITS[m[2]];
  if (!Number.isFinite(seconds)) throw bad();
  return seconds;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

interface ResolvedConfig {
  kc: KubeConfigFile;
  /** "kubeconfig <path>", "KUBECONFIG", "~/.kube/config", "in-cluster service account" */
  origin: string;
  context: string;
}

function loadFile(path: string, origin: string): KubeConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ClusterApiError(`cannot read kubeconfig ${path} (${origin}): ${fsErrorText(err)}`, 'pass an existing file with --kubeconfig, or set KUBECONFIG');
  }
  // Relative paths of certificate files are relative to the kubeconfig's directory.
  return loadText(text, path, origin, path.includes('/') ? path.slice(0, path.lastIndexOf('/')) || '/' : '.');
}

function loadText(text: string, path: string, origin: string, dir: string): KubeConfigFile {
  try {
    return KubeConfigFile.parse(text, dir);
  } catch (err) {
    throw new ClusterApiError(
      `kubeconfig ${path} (${origin}) is not valid: ${messageOf(err).split('\n')[0]}`,
      'check it with `kubectl config view --kubeconfig ' + path + '`',
    );
  }
}

export function resolveKubeConfig(flags: KubeFlags, env: Record<string, string | undefined> = process.env): ResolvedConfig {
  let kc: KubeConfigFile | null = null;
  let origin = '';
  const tried: string[] = [];
  if (flags.kubeconfigText) {
    const { text, name, dir } = flags.kubeconfigText;
    kc = loadText(text, name, 'named by the Fleet', dir);
    origin = `kubeconfig ${name}`;
  } else if (flags.kubeconfig) {
    kc = loadFile(flags.kubeconfig, '--kubeconfig');
    origin = `kubeconfig ${flags.kubeconfig}`;
  } else if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(delimiter).filter(Boolean);
    const existing = files.filter((f) => existsSync(f));
    if (!existing.length)
      throw new ClusterApiError(`KUBECONFIG names no existing file (${files.join(delimiter)})`, 'fix KUBECONFIG, or pass --kubeconfig PATH');
    kc = loadFile(existing[0], 'KUBECONFIG');
    for (const f of existing.slice(1)) kc.merge(loadFile(f, 'KUBECONFIG'));
    origin = `KUBECONFIG ${existing.join(delimiter)}`;
  } else {
    tried.push('no --kubeconfig', 'KUBECONFIG is not set');
    const home = env.HOME ?? env.USERPROFILE;
    const def = home ? join(home, '.kube', 'config') : null;
    if (def && existsSync(def)) {
      kc = loadFile(def, '~/.kube/config');
      origin = def;
    } else {
      tried.push(`${def ?? '~/.kube/config'} does not exist`);
      if (env.KUBERNETES_SERVICE_HOST && existsSync(join(SERVICE_ACCOUNT_DIR, 'token'))) {
        try {
          kc = KubeConfigFile.inCluster(env, SERVICE_ACCOUNT_DIR);
        } catch (err) {
          throw new ClusterApiError(`cannot use the in-cluster service account: ${messageOf(err)}`, `check the token and ca.crt in ${SERVICE_ACCOUNT_DIR}`);
        }
        origin = 'in-cluster service account';
      } else {
        tried.push('not running in a pod with a service account');
      }
    }
  }
  if (!kc) {
    throw new ClusterApiError(
      `no Kubernetes cluster configured: ${tried.join(', ')}`,
      // Every command that reaches a cluster has --kubeconfig; `plan` adds its --cluster (cli/commands-plan.ts).
      'pass --kubeconfig PATH or set KUBECONFIG',
    );
  }
  // The contexts of a file a Fleet names are not listed: the message may end up in a pull-request comment.
  const names = flags.kubeconfigText ? [] : kc.getContexts().map((c) => c.name);
  if (flags.context) {
    if (!kc.getContextObject(flags.context)) {
      throw new ClusterApiError(
        `context "${flags.context}" is not in ${origin}`,
        names.length
          ? `contexts there: ${names.join(', ')}`
          : flags.kubeconfigText
            ? 'check the context the Fleet names against the contexts of that file'
            : 'the kubeconfig has no contexts',
      );
    }
    kc.setCurrentContext(flags.context);
  }
  const context = kc.getCurrentContext();
  if (!context || !kc.getContextObject(context)) {
    throw new ClusterApiError(
      `${origin} has no current context${context ? ` ("${context}" is not defined)` : ''}`,
      names.length ? `pick one with --context (${names.join(', ')})` : 'the kubeconfig defines no context',
    );
  }
  if (!kc.getCurrentCluster())
    throw new ClusterApiError(`context "${context}" of ${origin} names a cluster that is not defined`, 'check it with `kubectl config view`');
  return { kc, origin, context };
}
