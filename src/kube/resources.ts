/**
 * The resources bootcplan reads and writes, and their REST paths. One table, so the
 * snapshot reader, the watch cache, the driver and the RBAC example agree.
 */
import { BOOTCPLAN_NAMESPACE, LOCK_NAME, PROGRESS_NAME, type ClusterSnapshot } from '../cluster/types.ts';
import { KUBE_SYSTEM_NAMESPACE } from '../cluster/identity.ts';

export interface ResourceType {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

const T = (apiVersion: string, kind: string, plural: string, namespaced: boolean): ResourceType => ({ apiVersion, kind, plural, namespaced });

export const RESOURCES: readonly ResourceType[] = [
  T('v1', 'Node', 'nodes', false),
  T('v1', 'Pod', 'pods', true),
  T('v1', 'ConfigMap', 'configmaps', true),
  // Read by name only: a health check's bearerTokenSecret or CA (src/kube/health-credentials.ts).
  T('v1', 'Secret', 'secrets', true),
  T('v1', 'Namespace', 'namespaces', false),
  T('coordination.k8s.io/v1', 'Lease', 'leases', true),
  T('policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true),
  // The drain forecast's workloads (src/cluster/workload-projection.ts), listed in pages.
  T('v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true),
  T('v1', 'PersistentVolume', 'persistentvolumes', false),
  T('apps/v1', 'ReplicaSet', 'replicasets', true),
  T('apps/v1', 'Deployment', 'deployments', true),
  T('apps/v1', 'StatefulSet', 'statefulsets', true),
  T('machineconfiguration.openshift.io/v1', 'MachineConfigPool', 'machineconfigpools', false),
  T('machineconfiguration.openshift.io/v1', 'MachineConfig', 'machineconfigs', false),
  T('node.bootc.dev/v1alpha1', 'BootcNodePool', 'bootcnodepools', false),
  T('node.bootc.dev/v1alpha1', 'BootcNode', 'bootcnodes', false),
  T('operator.openshift.io/v1', 'MachineConfiguration', 'machineconfigurations', false),
  T('machine.openshift.io/v1', 'ControlPlaneMachineSet', 'controlplanemachinesets', true),
  T('machine.openshift.io/v1beta1', 'MachineSet', 'machinesets', true),
  T('config.openshift.io/v1', 'FeatureGate', 'featuregates', false),
  T('config.openshift.io/v1', 'Infrastructure', 'infrastructures', false),
  T('config.openshift.io/v1', 'ClusterVersion', 'clusterversions', false),
  // The clusterOperators health checks (src/kube/health-source.ts).
  T('config.openshift.io/v1', 'ClusterOperator', 'clusteroperators', false),
  T('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', false),
];

const byKind = new Map(RESOURCES.map((r) => [r.kind, r]));
const byApiVersionKind = new Map(RESOURCES.map((r) => [`${r.apiVersion}/${r.kind}`, r]));

/** The resource type of an object, preferring an exact apiVersion match. */
export function resourceOf(apiVersion: string | undefined, kind: string): ResourceType | undefined {
  return (apiVersion ? byApiVersionKind.get(`${apiVersion}/${kind}`) : undefined) ?? byKind.get(kind);
}

export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
}

/** `/api/v1` or `/apis/group/version` */
export function apiPrefix(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/** Collection path (namespace omitted: all namespaces for namespaced kinds). */
export function collectionPath(r: ResourceType, namespace?: string | null): string {
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${apiPrefix(r.apiVersion)}${ns}/${r.plural}`;
}

export function objectPath(r: ResourceType, name: string, namespace?: string | null): string {
  if (r.namespaced && !namespace) throw new Error(`${r.kind} ${name}: a namespace is needed`);
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}

/**
 * What a snapshot reads (docs/design.md §5): lists of every object of a kind, or a singleton
 * (read by name). `field` is where it lands in the ClusterSnapshot.
 */
export interface SnapshotSource {
  field: keyof ClusterSnapshot;
  type: ResourceType;
  /** Singletons: the object's name. */
  name?: string;
  /** Namespace to list or read in. */
  namespace?: string;
}

/** A resource of RESOURCES by kind (the table above names each one the snapshot reads). */
const R = (kind: string): ResourceType => {
  const r = byKind.get(kind);
  if (!r) throw new Error(`internal: no resource type for kind ${kind}`);
  return r;
};

const MACHINE_API_NAMESPACE = 'openshift-machine-api';
const MCO_NAMESPACE = 'openshift-machine-config-operator';

export const SNAPSHOT_SOURCES: readonly SnapshotSource[] = [
  { field: 'nodes', type: R('Node') },
  { field: 'machineConfigPools', type: R('MachineConfigPool') },
  { field: 'machineConfigs', type: R('MachineConfig') },
  { field: 'bootcNodePools', type: R('BootcNodePool') },
  { field: 'bootcNodes', type: R('BootcNode') },
  // The MCO and the CPMS operator manage MachineSets of openshift-machine-api only.
  { field: 'machineSets', type: R('MachineSet'), namespace: MACHINE_API_NAMESPACE },
  { field: 'machineConfiguration', type: R('MachineConfiguration'), name: 'cluster' },
  { field: 'controlPlaneMachineSet', type: R('ControlPlaneMachineSet'), name: 'cluster', namespace: MACHINE_API_NAMESPACE },
  { field: 'bootImagesConfigMap', type: R('ConfigMap'), name: 'coreos-bootimages', namespace: MCO_NAMESPACE },
  { field: 'featureGate', type: R('FeatureGate'), name: 'cluster' },
  { field: 'infrastructure', type: R('Infrastructure'), name: 'cluster' },
  { field: 'clusterVersion', type: R('ClusterVersion'), name: 'version' },
  // The cluster's identity where there is no ClusterVersion (src/cluster/identity.ts).
  { field: 'kubeSystemNamespace', type: R('Namespace'), name: KUBE_SYSTEM_NAMESPACE },
  { field: 'lock', type: R('Lease'), name: LOCK_NAME, namespace: BOOTCPLAN_NAMESPACE },
  { field: 'progress', type: R('ConfigMap'), name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE },
];

/** The workload kinds the drain forecast reads, listed in pages and projected as each page arrives. */
export const WORKLOAD_SOURCES: readonly ResourceType[] = [
  'Pod',
  'PodDisruptionBudget',
  'PersistentVolumeClaim',
  'PersistentVolume',
  'ReplicaSet',
  'Deployment',
  'StatefulSet',
].map(R);

export const LEASE = R('Lease');
export const CONFIGMAP = R('ConfigMap');
export const NODE = R('Node');
export const POD = R('Pod');
export const BOOTC_NODE = R('BootcNode');
export const BOOTC_NODE_POOL = R('BootcNodePool');
export const MACHINE_CONFIG_POOL = R('MachineConfigPool');
export const SECRET = R('Secret');
export const CLUSTER_OPERATOR = R('ClusterOperator');
