/**
 * `bootcplan snapshot` (docs/design.md §2): the live cluster read (every kind bootcplan plans from) and
 * written as a snapshot file (files port) or to stdout, with the identity plans made from it
 * record (src/cluster/identity.ts).
 */
import { stringify } from 'yaml';
import { EXIT } from '../base/errors.ts';
import { clusterIdentityOf, KUBE_SYSTEM_NAMESPACE, SNAPSHOT_SERVER_ANNOTATION } from '../cluster/identity.ts';
import { hasShapeOf, type ClusterVersionObject } from '../cluster/kinds.ts';
import { forDisplay } from '../render/secrets.ts';
import type { CommandResult, KubeOptions, Ports } from './ports.ts';
import { asClusterApiError } from './live.ts';

interface SnapshotOptions {
  kube: KubeOptions;
  /** yaml or json; unset: json for an `out` file ending in .json, else yaml. */
  output?: 'yaml' | 'json';
  /** Write the snapshot to this file instead of stdout. */
  out?: string;
}

export async function snapshotCommand(ports: Ports, opts: SnapshotOptions): Promise<CommandResult> {
  const { io } = ports;
  const { openKubeClient, readLiveObjects } = await import('../kube/index.ts');
  const client = openKubeClient(opts.kube, io.env);
  let read;
  try {
    read = await readLiveObjects(client);
  } catch (err) {
    throw asClusterApiError(err);
  } finally {
    client.close();
  }
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { annotations: { 'bootcplan.dev/source': `live:${client.contextName}`, [SNAPSHOT_SERVER_ANNOTATION]: client.server } },
    items: read.objects,
  };
  const json = opts.output ? opts.output === 'json' : !!opts.out?.endsWith('.json');
  const text = json ? JSON.stringify(list, null, 2) + '\n' : stringify(list, { lineWidth: 0 });
  if (opts.out) ports.files.write(opts.out, text, 'private');
  else io.stdout(text);
  const kinds = new Map<string, number>();
  for (const o of read.objects) kinds.set(o.kind, (kinds.get(o.kind) ?? 0) + 1);
  const summary = [...kinds].map(([k, n]) => `${n} ${k}`).join(', ');
  io.stderr(
    `snapshot of ${client.contextName} (${client.server}): ${read.objects.length} objects${summary ? ` (${summary})` : ''}${opts.out ? ` -> ${opts.out}` : ''}\n`,
  );
  // The identity plans made from this file record (src/cluster/identity.ts).
  const clusterVersion = read.objects.find((o): o is ClusterVersionObject => hasShapeOf(o, 'ClusterVersion') && o.metadata.name === 'version') ?? null;
  const kubeSystemNamespace = read.objects.find((o) => o.kind === 'Namespace' && o.metadata.name === KUBE_SYSTEM_NAMESPACE) ?? null;
  const identity = clusterIdentityOf({ clusterVersion, kubeSystemNamespace });
  io.stderr(
    forDisplay(
      identity
        ? `cluster identity: ${identity.kind} ${identity.id}`
        : 'cluster identity: none found (no ClusterVersion clusterID, no kube-system Namespace): plans made from this file run on no live cluster',
    ) + '\n',
  );
  if (read.notInstalled.length) io.stderr(`not installed: ${read.notInstalled.join(', ')}\n`);
  return { exitCode: EXIT.ok };
}
