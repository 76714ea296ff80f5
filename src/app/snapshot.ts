/**
 * `bootcplan snapshot` (docs/design.md §2): the live cluster read (every kind bootcplan plans from) and
 * written as a snapshot file (files port) or to stdout, with the identity plans made from it
 * record (src/cluster/identity.ts).
 */
import { Document, isMap, isSeq } from 'yaml';
import { EXIT } from '../base/errors.ts';
import { clusterIdentityOf, KUBE_SYSTEM_NAMESPACE, SNAPSHOT_SERVER_ANNOTATION } from '../cluster/identity.ts';
import { hasShapeOf, type ClusterVersionObject } from '../cluster/kinds.ts';
import { encodeWorkloads, SNAPSHOT_FORMAT_ANNOTATION, SNAPSHOT_FORMAT_WORKLOADS, type WorkloadItem } from '../cluster/workload-file.ts';
import type { SnapshotWorkloads } from '../cluster/workloads.ts';
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
  const { openKubeClient, readLiveObjectsAndWorkloads } = await import('../kube/index.ts');
  const client = openKubeClient(opts.kube, io.env);
  let read;
  try {
    read = await readLiveObjectsAndWorkloads(client);
  } catch (err) {
    throw asClusterApiError(err);
  } finally {
    client.close();
  }
  const json = opts.output ? opts.output === 'json' : !!opts.out?.endsWith('.json');
  const text = snapshotText(read.objects, read.workloads, { source: `live:${client.contextName}`, server: client.server }, json);
  if (opts.out) ports.files.write(opts.out, text, 'private');
  else io.stdout(text);
  const kinds = new Map<string, number>();
  for (const o of read.objects) kinds.set(o.kind, (kinds.get(o.kind) ?? 0) + 1);
  const summary = [...kinds].map(([k, n]) => `${n} ${k}`).join(', ');
  io.stderr(
    `snapshot of ${client.contextName} (${client.server}): ${read.objects.length} objects${summary ? ` (${summary})` : ''}${opts.out ? ` -> ${opts.out}` : ''}\n`,
  );
  io.stderr(
    read.workloads
      ? `workloads: ${read.workloads.pods.length} pods on nodes, ${read.workloads.budgets.length} PodDisruptionBudgets, ${read.workloads.controllers.length} controllers (projected for the drain forecast)\n`
      : 'workloads: not read (pods or PodDisruptionBudgets cannot be listed: the RBAC of examples/rbac.yaml grants it): plans made from this file make no drain forecast\n',
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

/**
 * The snapshot file's text (docs/design.md §5): a List of the objects and, when the workloads were
 * read, their WorkloadProjection item (src/cluster/workload-file.ts), the List saying snapshot
 * format "2". In YAML each row of the item is one flow sequence, as compact as in JSON.
 */
export function snapshotText(
  objects: readonly unknown[],
  workloads: SnapshotWorkloads | null,
  meta: { source: string; server: string },
  json: boolean,
): string {
  const annotations: Record<string, string> = { 'bootcplan.dev/source': meta.source, [SNAPSHOT_SERVER_ANNOTATION]: meta.server };
  if (workloads) annotations[SNAPSHOT_FORMAT_ANNOTATION] = SNAPSHOT_FORMAT_WORKLOADS;
  const item: WorkloadItem | null = workloads ? encodeWorkloads(workloads) : null;
  const list = { apiVersion: 'v1', kind: 'List', metadata: { annotations }, items: item ? [...objects, item] : objects };
  if (json) {
    if (!item) return JSON.stringify(list, null, 2) + '\n';
    // The objects as kubectl prints them; the item's rows one to a line (indented, a row costs its indentation per value).
    const text = JSON.stringify({ ...list, items: [...objects, ITEM_PLACEHOLDER] }, null, 2);
    return text.replace(JSON.stringify(ITEM_PLACEHOLDER), () => compactItemJson(item, '    ')) + '\n';
  }
  const doc = new Document(list);
  const items = doc.get('items', true);
  const last = isSeq(items) ? items.items.at(-1) : null;
  if (item && isMap(last)) {
    for (const key of ['pods', 'budgets', 'controllers', 'values', 'strings', 'columns']) {
      const rows = last.get(key, true);
      if (isSeq(rows) || isMap(rows)) for (const r of rows.items) if (isSeq(r) || isMap(r)) r.flow = true;
      if (key === 'columns' && isMap(rows)) for (const r of rows.items) if (isSeq(r.value)) r.value.flow = true;
    }
  }
  return doc.toString({ lineWidth: 0 });
}

const ITEM_PLACEHOLDER = '\u0000bootcplan-workloads';

/** The item as JSON, each field on its line and each row or table entry on one line. */
function compactItemJson(item: WorkloadItem, indent: string): string {
  const inner = indent + '  ';
  const fields = Object.entries(item).map(([k, v]) => {
    if (!Array.isArray(v) || !v.length) return `${inner}${JSON.stringify(k)}: ${JSON.stringify(v)}`;
    return `${inner}${JSON.stringify(k)}: [\n${v.map((r) => inner + '  ' + JSON.stringify(r)).join(',\n')}\n${inner}]`;
  });
  return `{\n${fields.join(',\n')}\n${indent}}`;
}
