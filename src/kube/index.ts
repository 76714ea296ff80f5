/** Entry points of the Kubernetes driver, for the CLI. */
import { resolveKubeConfig, type KubeFlags } from './config.ts';
import { KubeClient } from './rest.ts';
import { KubeDriver, type KubeDriverOptions } from './driver.ts';

export { KubeDriver } from './driver.ts';
export { defaultHolder, microTime } from './lease-lock.ts';
export { skippedByDrain } from './node-ops.ts';
export { KubeClient, KubeApiError, requestStats, resetRequestStats } from './rest.ts';
export { resolveKubeConfig } from './config.ts';
export { readLiveObjects, readLiveSnapshot } from './read.ts';

export function openKubeClient(flags: KubeFlags, env: Record<string, string | undefined> = process.env): KubeClient {
  return new KubeClient(resolveKubeConfig(flags, env).kc);
}

export function openKubeDriver(flags: KubeFlags, env: Record<string, string | undefined> = process.env, opts: KubeDriverOptions = {}): KubeDriver {
  return new KubeDriver(openKubeClient(flags, env), opts);
}
