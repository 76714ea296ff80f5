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
import { SNAPSHOT_SOURCES, collectionPath, objectPath, type SnapshotSource } from './resources.ts';

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

export async function readLiveSnapshot(client: KubeClient): Promise<ClusterSnapshot> {
  const { objects } = await readLiveObjects(client);
  return snapshotFromObjects(objects, `live:${client.contextName}`, serverHost(client.server));
}
