/** Live cluster access for the CLI; the Kubernetes driver is loaded only when needed. */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { ClusterApiError } from '../base/errors.ts';
import { DriverError } from '../apply/driver.ts';

export interface LiveFlags {
  kubeconfig?: string;
  context?: string;
}

/** Turns a driver or connection failure into the CLI's ClusterApiError (exit 1, message + hint, no stack). */
export function asClusterApiError(err: unknown): unknown {
  if (err instanceof ClusterApiError || !(err instanceof DriverError)) return err;
  const hint = (err as DriverError & { hint?: string }).hint;
  return new ClusterApiError(err.message, hint);
}

export async function readLiveSnapshot(flags: LiveFlags, env: Record<string, string | undefined> = process.env): Promise<ClusterSnapshot> {
  const { openKubeClient, readLiveSnapshot: read } = await import('../kube/index.ts');
  const client = openKubeClient(flags, env);
  try {
    return await read(client);
  } catch (err) {
    throw asClusterApiError(err);
  } finally {
    client.close();
  }
}
