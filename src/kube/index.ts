/** Entry points of the Kubernetes driver, for the CLI. */
import { resolveKubeConfig, parseRequestTimeout, type KubeFlags } from './config.ts';
import { KubeClient, type KubeClientOptions } from './rest.ts';
import { KubeDriver, type KubeDriverOptions } from './driver.ts';

export { KubeDriver } from './driver.ts';
export { defaultHolder, microTime } from './lease-lock.ts';
export { skippedByDrain } from './node-ops.ts';
export { KubeClient, KubeApiError, KubeRequestError, requestStats, resetRequestStats, type KubeClientOptions } from './rest.ts';
export { resolveKubeConfig, parseRequestTimeout, type KubeFlags } from './config.ts';
export { readLiveObjectsAndWorkloads, readLiveSnapshot } from './read.ts';
export { KubeRecordDocuments } from './record-documents.ts';
export { KubeHealthSource } from './health-source.ts';
export { KubeAlertmanagerSilences } from './alertmanager-silences.ts';

/** A client of the kubeconfig's cluster; `flags.requestTimeout` (kubectl's format) wins over `opts`. */
export function openKubeClient(flags: KubeFlags, env: Record<string, string | undefined> = process.env, opts: KubeClientOptions = {}): KubeClient {
  const timeout = flags.requestTimeout !== undefined ? { requestTimeoutSeconds: parseRequestTimeout(flags.requestTimeout) } : {};
  return new KubeClient(resolveKubeConfig(flags, env).kc, { env, ...opts, ...timeout });
}

export function openKubeDriver(
  flags: KubeFlags,
  env: Record<string, string | undefined> = process.env,
  opts: KubeDriverOptions & { client?: KubeClientOptions } = {},
): KubeDriver {
  return new KubeDriver(openKubeClient(flags, env, opts.client), opts);
}
export { CredentialMask } from './credential-mask.ts';
