/** Live cluster access for the CLI; the Kubernetes driver is loaded only when needed. */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { ClusterApiError, messageOf } from '../base/errors.ts';
import { DriverError } from '../apply/ports/driver.ts';
import type { DriverFactory, KubeOptions } from './ports.ts';

/** Turns a driver or connection failure into the CLI's ClusterApiError (exit 1, message + hint, no stack). */
export function asClusterApiError(err: unknown): unknown {
  if (err instanceof ClusterApiError || !(err instanceof DriverError)) return err;
  return new ClusterApiError(err.message, err.hint);
}

export async function readLiveSnapshot(flags: KubeOptions, env: Record<string, string | undefined>): Promise<ClusterSnapshot> {
  const r = await readLiveSnapshotStep(flags, env);
  if ('error' in r) throw r.error;
  return r.snapshot;
}

/**
 * The live snapshot, or the error and the step that failed: `kubeconfig` (no cluster to reach:
 * the file, the context) or `cluster` (the cluster did not answer, or refused). `fleet plan`
 * reports either as that cluster's error and plans the others.
 */
export async function readLiveSnapshotStep(
  flags: KubeOptions,
  env: Record<string, string | undefined>,
): Promise<{ snapshot: ClusterSnapshot } | { step: 'kubeconfig' | 'cluster'; error: unknown }> {
  const { openKubeClient, readLiveSnapshot: read } = await import('../kube/index.ts');
  let client;
  try {
    client = openKubeClient(flags, env);
  } catch (err) {
    return { step: 'kubeconfig', error: asClusterApiError(err) };
  }
  try {
    return { snapshot: await read(client) };
  } catch (err) {
    return { step: 'cluster', error: asClusterApiError(err) };
  } finally {
    client.close();
  }
}

/** The Kubernetes driver for `apply`, `status` and `unlock`, and the health source; loaded only when a command needs it. */
export const openLiveDriver: DriverFactory = async (flags, io) => {
  let mod: typeof import('../kube/index.ts');
  try {
    mod = await import('../kube/index.ts');
  } catch (err) {
    throw new ClusterApiError(
      `the Kubernetes driver cannot be loaded: ${messageOf(err)}`,
      'rehearse against a snapshot instead: bootcplan rehearse -f SPEC --cluster SNAPSHOT',
    );
  }
  try {
    const holder = mod.defaultHolder(io.env);
    const mask = new mod.CredentialMask();
    const driver = mod.openKubeDriver(flags, io.env, { instance: holder });
    return {
      driver,
      holder,
      records: new mod.KubeRecordDocuments(driver.client),
      close: () => driver.close(),
      // The health checks ask as bootcplan's own identity (auth: ServiceAccount) through the same client; the applier closes it.
      // One credential mask for both: a credential either holds is masked in the answers of both.
      health: () => new mod.KubeHealthSource(driver.client, driver.client.kc, { mask }),
      silences: () => new mod.KubeAlertmanagerSilences(driver.client, driver.client.kc, mask),
    };
  } catch (err) {
    throw asClusterApiError(err);
  }
};
