/**
 * Which cluster a snapshot is of (docs/design.md §5, §6): a plan records it and runs only where the
 * cluster has the same identity. Two sites can look alike in every object bootcplan plans
 * from (the same node names, pools and images: a fleet of stores built from one template), so
 * the identity is a value the cluster itself generated when it was installed:
 * - OpenShift: ClusterVersion `version` `spec.clusterID`, "an RFC4122 UUID value" that
 *   "uniquely identifies this cluster" (openshift/api config/v1 ClusterVersionSpec), set by the
 *   installer;
 * - any Kubernetes cluster: the `kube-system` Namespace's `metadata.uid`, which the API server
 *   generates when it creates the namespace at bootstrap (metav1.ObjectMeta uid: "unique in
 *   time and space", "not allowed to change on PUT operations", "populated by the system").
 * The server address is not an identity: one cluster is reached by many (an external name, the
 * in-cluster service, a proxy), and two clusters may be reached by one (a load balancer).
 */
import type { ClusterSnapshot } from './types.ts';

export const CLUSTER_IDENTITY_KINDS = ['ClusterVersion.spec.clusterID', 'Namespace/kube-system.metadata.uid'] as const;
type ClusterIdentityKind = (typeof CLUSTER_IDENTITY_KINDS)[number];

export interface ClusterIdentity {
  kind: ClusterIdentityKind;
  id: string;
}

export const KUBE_SYSTEM_NAMESPACE = 'kube-system';
/** The annotation `bootcplan snapshot` writes on the List: the API server it read from. */
export const SNAPSHOT_SERVER_ANNOTATION = 'bootcplan.dev/server';

/** A UUID is 36 characters; anything much longer is not a value the API server generated. */
const MAX_ID_LENGTH = 128;

const usable = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '' && v.length <= MAX_ID_LENGTH;

/**
 * The identity of the cluster a snapshot is of: ClusterVersion spec.clusterID when the snapshot
 * has a usable one, else the kube-system Namespace uid, else null (a snapshot file that holds
 * neither: written by hand, or by `kubectl get` of a few kinds).
 */
export function clusterIdentityOf(snap: Pick<ClusterSnapshot, 'clusterVersion' | 'kubeSystemNamespace'>): ClusterIdentity | null {
  const clusterID = snap.clusterVersion?.spec?.clusterID;
  if (usable(clusterID)) return { kind: 'ClusterVersion.spec.clusterID', id: clusterID };
  const uid = snap.kubeSystemNamespace?.metadata?.uid;
  if (usable(uid)) return { kind: 'Namespace/kube-system.metadata.uid', id: uid };
  return null;
}

export function sameIdentity(a: ClusterIdentity | null | undefined, b: ClusterIdentity | null | undefined): boolean {
  if (!a || !b) return !a && !b;
  return a.kind === b.kind && a.id === b.id;
}

/**
 * The host (and port, when the URL names one) of an API server URL, as a plan records it;
 * null for anything that is not an http(s) URL.
 */
export function serverHost(server: unknown): string | null {
  if (typeof server !== 'string' || server.length > 2048) return null;
  try {
    const url = new URL(server);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.host || null : null;
  } catch {
    return null;
  }
}

/** One line for messages: `ClusterVersion.spec.clusterID da68bf3a-… (api.example.com:6443)`. */
export function describeCluster(identity: ClusterIdentity | null | undefined, server: string | null | undefined): string {
  const who = identity ? `${identity.kind} ${identity.id}` : 'no recorded identity';
  return server ? `${who} (server ${server})` : who;
}
