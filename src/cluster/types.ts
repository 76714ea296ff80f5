/** Kubernetes objects as read from a snapshot or the API (only the fields bootcplan touches are typed). */
import type {
  NodeObject,
  MachineConfigPoolObject,
  MachineConfigObject,
  BootcNodePoolObject,
  BootcNodeObject,
  MachineSetObject,
  MachineConfigurationObject,
  ControlPlaneMachineSetObject,
  ConfigMapObject,
  FeatureGateObject,
  InfrastructureObject,
  ClusterVersionObject,
  LeaseObject,
} from './kinds.ts';

export type { ObjectMeta, KObject, Condition } from './objects.ts';
import type { KObject } from './objects.ts';
import type { SnapshotWorkloads } from './workloads.ts';

/**
 * Everything the planner reads about a cluster (docs/design.md §5). A kind missing from the
 * snapshot means "not installed": no BootcNodePool objects => MCO-only pools.
 */
export interface ClusterSnapshot {
  /** "file:examples/cluster.yaml" or "live:<context>" */
  source: string;
  /** sha256 over the objects the planner reads, volatile fields removed. */
  fingerprint: string;
  nodes: NodeObject[];
  machineConfigPools: MachineConfigPoolObject[];
  machineConfigs: MachineConfigObject[];
  bootcNodePools: BootcNodePoolObject[];
  bootcNodes: BootcNodeObject[];
  machineSets: MachineSetObject[];
  machineConfiguration: MachineConfigurationObject | null;
  controlPlaneMachineSet: ControlPlaneMachineSetObject | null;
  bootImagesConfigMap: ConfigMapObject | null;
  featureGate: FeatureGateObject | null;
  infrastructure: InfrastructureObject | null;
  clusterVersion: ClusterVersionObject | null;
  /** The `kube-system` Namespace: its uid is the cluster's identity where there is no ClusterVersion (src/cluster/identity.ts). */
  kubeSystemNamespace: KObject | null;
  /**
   * The API server's host (and port) the snapshot was read from: the kubeconfig's server for a
   * live read, the `bootcplan.dev/server` annotation `bootcplan snapshot` writes on a file's List;
   * null when unknown. Shown beside the identity; never compared (one cluster has many addresses).
   */
  server: string | null;
  /** bootcplan's own lock (Lease) and progress record (ConfigMap), when present. */
  lock: LeaseObject | null;
  progress: ConfigMapObject | null;
  /**
   * The workloads the drain forecast reads (src/cluster/workloads.ts). Absent or null: the
   * snapshot holds none (an older snapshot file), and no drain forecast is made.
   */
  workloads?: SnapshotWorkloads | null;
}

export const BOOTCPLAN_NAMESPACE = 'openshift-bootcplan';
export const LOCK_NAME = 'bootcplan-lock';
export const PROGRESS_NAME = 'bootcplan-progress';

/**
 * One JSON document bootcplan keeps in a cluster: the value under `key` of ConfigMap `name` in
 * BOOTCPLAN_NAMESPACE, with short values beside it for a reader with kubectl. The drivers'
 * record-document stores (src/kube/record-documents.ts, src/sim/progress-store.ts) read and
 * write it whatever it holds; its owner says what a valid one is (the fleet record:
 * src/fleet/record.ts).
 */
export interface RecordDocument<T> {
  name: string;
  key: string;
  /** The document from its text, or why it is not one (the store refuses it with that reason). */
  decode(text: string): T | string;
  /** The values written beside the document, under their own keys. */
  summary(value: T): Record<string, string>;
  /** What deleting a document that does not decode does (the end of the store's hint). */
  whenDeleted: string;
}
