/** Live cluster access for the CLI; the Kubernetes driver is loaded only when needed. */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { ClusterApiError } from '../base/errors.ts';
import { DriverError } from '../apply/driver.ts';
import type { DriverFactory } from './deps.ts';
import type { KubeOptions } from './options.ts';

/** Turns a driver or connection failure into the CLI's ClusterApiError (exit 1, message + hint, no stack). */
export function asClusterApiError(err: unknown): unknown {
  if (err instanceof ClusterApiError || !(err instanceof DriverError)) return err;
  const hint = (err as DriverError & { hint?: string }).hint;
  return new ClusterApiError(err.message, hint);
}

export async function readLiveSnapshot(flags: KubeOptions, env: Record<string, string | undefined>): Promise<ClusterSnapshot> {
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

/** The Kubernetes driver for `apply`, `status` and `unlock`; loaded only when a command needs it. */
export const openLiveDriver: DriverFactory = async (flags, io) => {
  let mod: typeof import('../kube/index.ts');
  try {
    mod = await import('../kube/index.ts');
  } catch (err) {
    throw new ClusterApiError(`the Kubernetes driver cannot be loaded: ${(err as Error).message}`, 'rehearse against a snapshot instead: bootcplan rehearse -f SPEC --cluster SNAPSHOT');
  }
  try {
    const holder = mod.defaultHolder(io.env);
    const driver = mod.openKubeDriver(flags, io.env, { instance: holder });
    return { driver, holder, close: () => (driver as unknown as { close?: () => void }).close?.() };
  } catch (err) {
    throw asClusterApiError(err);
  }
};
