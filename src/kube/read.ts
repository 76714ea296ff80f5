/**
 * Reads a live snapshot (docs/design.md §5): every kind of the snapshot contract, in parallel.
 * A resource type the server does not have (a CRD that is not installed: 404 on the
 * collection) is "not installed" and contributes nothing; a missing singleton is null.
 */
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { snapshotFromObjects } from '../cluster/snapshot.ts';
import { serverHost } from '../cluster/identity.ts';
import { NotFoundError } from '../apply/ports/driver.ts';
import type { KubeClient } from './rest.ts';
import { KubeApiError } from './api-errors.ts';
import { SNAPSHOT_SOURCES, WORKLOAD_SOURCES, collectionPath, objectPath, type SnapshotSource } from './resources.ts';
import { WorkloadCollector } from '../cluster/workload-projection.ts';
import type { SnapshotWorkloads } from '../cluster/workloads.ts';

export interface LiveRead {
  objects: KObject[];
  /** Resource types that are not installed (e.g. "bootcnodepools.node.bootc.dev"). */
  notInstalled: string[];
}

/** Fields the server keeps for itself; a snapshot file does not need them. */
export function cleanObject<T extends KObject>(o: T, apiVersion: string, kind: string): T {
  o.apiVersion ??= apiVersion;
  o.kind ??= kind;
  delete o.metadata.managedFields;
  return o;
}

const groupName = (s: SnapshotSource) => `${s.type.plural}${s.type.apiVersion.includes('/') ? '.' + s.type.apiVersion.split('/')[0] : ''}`;

export async function readLiveObjects(client: KubeClient): Promise<LiveRead> {
  const notInstalled = new Set<string>();
  const results = await Promise.all(
    SNAPSHOT_SOURCES.map(async (s): Promise<KObject[]> => {
      if (s.name) {
        try {
          const o = await client.request('GET', objectPath(s.type, s.name, s.namespace), {
            what: `${s.type.kind} ${s.namespace ? s.namespace + '/' : ''}${s.name}`,
            expect: s.type.kind,
          });
          return [cleanObject(o, s.type.apiVersion, s.type.kind)];
        } catch (err) {
          if (err instanceof NotFoundError) return [];
          throw err;
        }
      }
      try {
        const list = await client.list(collectionPath(s.type, s.namespace), s.type, { what: `list ${s.type.plural}` });
        return list.items.map((o) => cleanObject(o, s.type.apiVersion, s.type.kind));
      } catch (err) {
        if (err instanceof NotFoundError) {
          notInstalled.add(groupName(s));
          return [];
        }
        throw err;
      }
    }),
  );
  return { objects: results.flat(), notInstalled: [...notInstalled] };
}

/**
 * The workloads of the drain forecast: each kind listed in pages, every page projected as it
 * arrives (the raw objects are not kept). A kind the server refuses to list (403: the
 * ServiceAccount lacks `list`, as before the drain forecast) or does not serve gives no workloads.
 */
async function readLiveWorkloads(client: KubeClient): Promise<WorkloadCollector | null> {
  try {
    const parts = await Promise.all(
      WORKLOAD_SOURCES.map(async (type) => {
        let part = new WorkloadCollector();
        await client.list(
          collectionPath(type),
          type,
          { what: `list ${type.plural}` },
          (o) => part.add(cleanObject(o, type.apiVersion, type.kind)),
          () => (part = new WorkloadCollector()),
        );
        return part;
      }),
    );
    const all = new WorkloadCollector();
    for (const p of parts) all.merge(p);
    return all;
  } catch (err) {
    if (err instanceof NotFoundError || (err instanceof KubeApiError && err.status === 403)) return null;
    throw err;
  }
}

/** The workloads of a live read, each pod's local volume resolved to the node of its hostname label. */
function finishWorkloads(collector: WorkloadCollector, nodes: readonly KObject[]): SnapshotWorkloads | null {
  const nodeOfHost = new Map(nodes.map((n) => [n.metadata.labels?.['kubernetes.io/hostname'] ?? n.metadata.name, n.metadata.name]));
  return collector.finish((h) => nodeOfHost.get(h) ?? h);
}

/**
 * The workloads alone, for a snapshot built from the watch cache (src/kube/driver.ts): the cache
 * does not watch them (its Reflectors keep whole objects, every pod of the cluster for the whole
 * apply), so each call lists and projects them afresh, page by page. Null: not readable (403).
 */
export async function readLiveWorkloadsOf(client: KubeClient, nodes: readonly KObject[]): Promise<SnapshotWorkloads | null> {
  const collector = await readLiveWorkloads(client);
  return collector ? finishWorkloads(collector, nodes) : null;
}

/** Every kind of the snapshot and the workloads' projection, read in parallel (what `bootcplan snapshot` writes). */
export async function readLiveObjectsAndWorkloads(client: KubeClient): Promise<LiveRead & { workloads: SnapshotWorkloads | null }> {
  const [read, collector] = await Promise.all([readLiveObjects(client), readLiveWorkloads(client)]);
  const workloads = collector
    ? finishWorkloads(
        collector,
        read.objects.filter((o) => o.kind === 'Node' && o.apiVersion === 'v1'),
      )
    : null;
  return { ...read, workloads };
}

export async function readLiveSnapshot(client: KubeClient): Promise<ClusterSnapshot> {
  const { objects, workloads } = await readLiveObjectsAndWorkloads(client);
  const snap = snapshotFromObjects(objects, `live:${client.contextName}`, serverHost(client.server));
  snap.workloads = workloads;
  return snap;
}
