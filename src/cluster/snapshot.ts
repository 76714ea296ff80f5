/**
 * The cluster snapshot (docs/design.md §5) as the planner reads it: which objects it keeps, in which
 * list or singleton each goes, and its fingerprint. The objects come from a snapshot file
 * (src/cluster/snapshot-file.ts), the live read or the simulator; their shapes were checked
 * where they came in.
 */
import { createHash } from 'node:crypto';
import { type ClusterSnapshot, type KObject, BOOTCPLAN_NAMESPACE, LOCK_NAME, PROGRESS_NAME } from './types.ts';
import type { BootEntry, BootcNodeObject, NodeObject } from './kinds.ts';
import { KUBE_SYSTEM_NAMESPACE } from './identity.ts';
import { WorkloadCollector } from './workload-projection.ts';

const apiGroup = (apiVersion: string) => {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
};

type ListField = 'nodes' | 'machineConfigPools' | 'machineConfigs' | 'bootcNodePools' | 'bootcNodes' | 'machineSets';
type SingletonField =
  | 'machineConfiguration'
  | 'controlPlaneMachineSet'
  | 'bootImagesConfigMap'
  | 'featureGate'
  | 'infrastructure'
  | 'clusterVersion'
  | 'kubeSystemNamespace'
  | 'lock'
  | 'progress';

/** Which list of the snapshot an object belongs to, keyed by `group/Kind`. */
const LISTS: Record<string, ListField> = {
  '/Node': 'nodes',
  'machineconfiguration.openshift.io/MachineConfigPool': 'machineConfigPools',
  'machineconfiguration.openshift.io/MachineConfig': 'machineConfigs',
  'node.bootc.dev/BootcNodePool': 'bootcNodePools',
  'node.bootc.dev/BootcNode': 'bootcNodes',
  'machine.openshift.io/MachineSet': 'machineSets',
};

/** Singletons and the name (and namespace) they must have. */
const SINGLETONS: { key: string; field: SingletonField; name: string; namespace?: string }[] = [
  { key: 'operator.openshift.io/MachineConfiguration', field: 'machineConfiguration', name: 'cluster' },
  { key: 'machine.openshift.io/ControlPlaneMachineSet', field: 'controlPlaneMachineSet', name: 'cluster', namespace: 'openshift-machine-api' },
  { key: '/ConfigMap', field: 'bootImagesConfigMap', name: 'coreos-bootimages', namespace: 'openshift-machine-config-operator' },
  { key: 'config.openshift.io/FeatureGate', field: 'featureGate', name: 'cluster' },
  { key: 'config.openshift.io/Infrastructure', field: 'infrastructure', name: 'cluster' },
  { key: 'config.openshift.io/ClusterVersion', field: 'clusterVersion', name: 'version' },
  { key: '/Namespace', field: 'kubeSystemNamespace', name: KUBE_SYSTEM_NAMESPACE },
  { key: 'coordination.k8s.io/Lease', field: 'lock', name: LOCK_NAME, namespace: BOOTCPLAN_NAMESPACE },
  { key: '/ConfigMap', field: 'progress', name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE },
];

/** The `group/Kind` keys of every object a snapshot keeps. */
const KEPT_KINDS = new Set([...Object.keys(LISTS), ...SINGLETONS.map((s) => s.key)]);

/** Whether a snapshot keeps objects of this kind (the others are ignored, docs/design.md §5). */
export function isKeptKind(o: KObject): boolean {
  return KEPT_KINDS.has(`${apiGroup(o.apiVersion)}/${o.kind}`);
}

export function emptySnapshot(source: string): ClusterSnapshot {
  return {
    source,
    fingerprint: '',
    nodes: [],
    machineConfigPools: [],
    machineConfigs: [],
    bootcNodePools: [],
    bootcNodes: [],
    machineSets: [],
    machineConfiguration: null,
    controlPlaneMachineSet: null,
    bootImagesConfigMap: null,
    featureGate: null,
    infrastructure: null,
    clusterVersion: null,
    kubeSystemNamespace: null,
    server: null,
    lock: null,
    progress: null,
  };
}

/**
 * Builds a snapshot from already-parsed objects (used by the file reader, the live reader and
 * tests); `server`: the API server's host, when known (src/cluster/identity.ts serverHost).
 * The objects' shapes were checked where they came in (objectShapeProblem, src/cluster/kinds.ts:
 * parseSnapshot in src/cluster/snapshot-file.ts, src/kube/answers.ts for API answers and watch events), so each goes
 * into its typed list as it is. `workloads`: what the caller already projected (the file reader
 * projects each workload object as it checks it, once); more come from `objects`.
 */
export function snapshotFromObjects(
  objects: readonly KObject[],
  source: string,
  server: string | null = null,
  workloads: WorkloadCollector = new WorkloadCollector(),
): ClusterSnapshot {
  const snap = emptySnapshot(source);
  snap.server = server;
  const lists: Record<ListField, KObject[]> = snap;
  const singletons: Record<SingletonField, KObject | null> = snap;
  for (const o of objects) {
    const key = `${apiGroup(o.apiVersion)}/${o.kind}`;
    const list = LISTS[key];
    if (list) {
      lists[list].push(o);
      continue;
    }
    // A budget whose spec the API server would refuse was refused where the file came in.
    if (workloads.add(o) !== null) continue;
    for (const s of SINGLETONS) {
      if (s.key === key && o.metadata.name === s.name && (s.namespace === undefined || o.metadata.namespace === s.namespace)) {
        singletons[s.field] = o;
      }
    }
  }
  for (const list of Object.values(LISTS)) lists[list].sort(byName);
  const nodeOfHost = new Map(snap.nodes.map((n) => [n.metadata.labels?.['kubernetes.io/hostname'] ?? n.metadata.name, n.metadata.name]));
  snap.workloads = workloads.finish((h) => nodeOfHost.get(h) ?? h);
  // The workloads stay out of the fingerprint (docs/apply.md "Drain forecast"): pods restart and
  // move all the time, and a saved plan is not refused for that; apply re-reads them per node.
  snap.fingerprint = fingerprintOf(snap);
  return snap;
}

/** Every object of a snapshot: the lists, then the singletons, in the order emptySnapshot lays them out. */
export function snapshotObjects(snap: ClusterSnapshot): KObject[] {
  const singletons = [
    snap.machineConfiguration,
    snap.controlPlaneMachineSet,
    snap.bootImagesConfigMap,
    snap.featureGate,
    snap.infrastructure,
    snap.clusterVersion,
    snap.kubeSystemNamespace,
    snap.lock,
    snap.progress,
  ];
  return [
    ...snap.nodes,
    ...snap.machineConfigPools,
    ...snap.machineConfigs,
    ...snap.bootcNodePools,
    ...snap.bootcNodes,
    ...snap.machineSets,
    ...singletons.filter((o) => o !== null),
  ];
}

const byName = (a: KObject, b: KObject) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);

/**
 * sha256 over the objects the planner reads. Fields that change without the desired or
 * observed state changing (metadata.managedFields, metadata.resourceVersion, the Node
 * condition heartbeats) are left out; the rest is hashed as serialized, which is fast
 * enough for 50k-node snapshots (native JSON.stringify, no canonical re-ordering). The
 * kube-system Namespace is read for its uid only, which the plan records and compares on its
 * own (src/cluster/identity.ts): its labels and annotations change nothing that is planned.
 */
export function fingerprintOf(snap: ClusterSnapshot): string {
  const h = createHash('sha256');
  // The views' text in batches, one update per 256 views instead of two per view (40,000 calls
  // into the hash for 10,000 nodes): the same bytes in the same order, so the same digest.
  let batch: string[] = [];
  const add = (view: unknown) => {
    batch.push(JSON.stringify(view), '\n');
    if (batch.length >= 512) {
      h.update(batch.join(''));
      batch = [];
    }
  };
  // The lists in the order of LISTS, then the singletons in the order of SINGLETONS.
  for (const o of snap.nodes) add(nodePlanningView(o));
  for (const o of snap.machineConfigPools) add(withoutVolatileMetadata(o));
  for (const o of snap.machineConfigs) add(withoutVolatileMetadata(o));
  for (const o of snap.bootcNodePools) add(withoutVolatileMetadata(o));
  for (const o of snap.bootcNodes) add(bootcNodePlanningView(o));
  for (const o of snap.machineSets) add(withoutVolatileMetadata(o));
  for (const s of SINGLETONS) {
    const o = snap[s.field];
    if (o && o !== snap.lock && o !== snap.progress && o !== snap.kubeSystemNamespace) add(withoutVolatileMetadata(o));
  }
  h.update(batch.join(''));
  return `sha256:${h.digest('hex')}`;
}

function withoutVolatileMetadata(o: KObject): unknown {
  const { managedFields: _m, resourceVersion: _r, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/**
 * The part of a Node the planner reads. Real Node objects are large (status.images alone
 * lists every cached image) and change all the time (heartbeats, image lists, allocatable),
 * none of which changes a plan.
 */
function nodePlanningView(o: NodeObject): unknown {
  const conds = Array.isArray(o.status?.conditions) ? o.status.conditions.map((c) => [c.type, c.status, c.reason]) : null;
  return [
    o.metadata.name,
    o.metadata.labels ?? null,
    o.metadata.annotations ?? null,
    o.metadata.creationTimestamp ?? null,
    o.spec?.unschedulable ?? false,
    o.spec?.taints ?? null,
    conds,
  ];
}

/** The part of a BootcNode the planner and the applier read (one per node: keep it small). */
function bootcNodePlanningView(o: BootcNodeObject): unknown {
  // `incompatible` (held back: src/domain/bootc-daemon.ts) only when set, so that the fingerprints
  // of snapshots without it stay what they were.
  const entry = (e: BootEntry | null | undefined) =>
    e ? [e.image ?? null, e.imageDigest ?? null, e.softRebootCapable ?? false, ...(e.incompatible === true ? [true] : [])] : null;
  const conds = Array.isArray(o.status?.conditions) ? o.status.conditions.map((c) => [c.type, c.status, c.reason]) : null;
  return [
    o.metadata.name,
    o.metadata.annotations ?? null,
    o.metadata.ownerReferences?.map((r) => r.name) ?? null,
    o.spec ?? null,
    entry(o.status?.booted),
    entry(o.status?.staged),
    conds,
  ];
}
