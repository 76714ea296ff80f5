/**
 * A Kubernetes object as bootcplan reads it: its metadata, its spec and status as its kind's view
 * (src/cluster/kinds.ts) says they hold, and a condition. Below both kinds.ts and the snapshot
 * (types.ts), which import it, so that neither imports the other.
 */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid?: string; controller?: boolean }[];
  resourceVersion?: string;
  uid?: string;
  generation?: number;
  creationTimestamp?: string;
  [k: string]: unknown;
}

/**
 * An object of the API. `Spec` and `Status`: what its kind's view says they hold
 * (src/cluster/kinds.ts, e.g. NodeObject); unknown until the object's shape was checked.
 */
export interface KObject<Spec = unknown, Status = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Spec | null;
  status?: Status | null;
  data?: Record<string, string> | null;
  [k: string]: unknown;
}

export interface Condition {
  type: string;
  /** 'True', 'False' or 'Unknown' (metav1.ConditionStatus); whatever else a cluster wrote, as it wrote it. */
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** Which object: what a write, a patch, a delete or an Event names. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string | null;
}
