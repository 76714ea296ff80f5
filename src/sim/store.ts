/**
 * The object store of the simulated cluster: the live objects by kind, namespace and name,
 * the live view of them as a ClusterSnapshot that reports what is read of it, and the
 * change marks that tell the read tracking which waits to evaluate again.
 */
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import { hasShapeOf, objectShapeProblem, type BootcNodeObject, type MachineConfigObject, type NodeObject, type ViewOf } from '../cluster/kinds.ts';
import { LOCK_NAME, PROGRESS_NAME } from '../cluster/types.ts';
import { emptySnapshot, fingerprintOf } from '../cluster/snapshot.ts';
import { KUBE_SYSTEM_NAMESPACE } from '../cluster/identity.ts';
import { attachIndex, type NodeIndex } from '../domain/nodes.ts';
import { ReadTracker, TrackedMap } from './reads.ts';
import { DriverError } from '../apply/ports/driver.ts';

/** Where changes are reported (the read tracking's watchers). */
interface ChangeMarks {
  changed(o: KObject): void;
  changedAll(): void;
}

const keyOf = (kind: string, name: string, namespace?: string | null) => `${kind}/${namespace ?? ''}/${name}`;
type ListKey = 'nodes' | 'machineConfigPools' | 'machineConfigs' | 'bootcNodePools' | 'bootcNodes' | 'machineSets';
type SingletonKey =
  | 'machineConfiguration'
  | 'controlPlaneMachineSet'
  | 'featureGate'
  | 'infrastructure'
  | 'clusterVersion'
  | 'bootImagesConfigMap'
  | 'progress'
  | 'lock'
  | 'kubeSystemNamespace';
const LIST_OF: Record<string, ListKey> = {
  Node: 'nodes',
  MachineConfigPool: 'machineConfigPools',
  MachineConfig: 'machineConfigs',
  BootcNodePool: 'bootcNodePools',
  BootcNode: 'bootcNodes',
  MachineSet: 'machineSets',
};
const SINGLETON_OF: Record<string, SingletonKey> = {
  MachineConfiguration: 'machineConfiguration',
  ControlPlaneMachineSet: 'controlPlaneMachineSet',
  FeatureGate: 'featureGate',
  Infrastructure: 'infrastructure',
  ClusterVersion: 'clusterVersion',
};

export class ObjectStore {
  readonly tracker = new ReadTracker();
  /** Nodes, BootcNodes and MachineConfigs by name: the live index (lookups are tracked reads). */
  readonly nodes = new TrackedMap<NodeObject>('Node', this.tracker);
  readonly bootcNodes = new TrackedMap<BootcNodeObject>('BootcNode', this.tracker);
  readonly machineConfigs = new TrackedMap<MachineConfigObject>('MachineConfig', this.tracker);
  readonly index: NodeIndex = { nodes: this.nodes, bootcNodes: this.bootcNodes, machineConfigs: this.machineConfigs };
  /** Bumped on every change; `structure` when objects come or go. */
  version = 0;
  private structure = 0;
  private objects = new Map<string, KObject>();
  private viewCache: { structure: number; snap: ClusterSnapshot } | null = null;

  /** `server`: the API server of the snapshot the simulation was built from (its identity comes along with its objects). */
  constructor(
    private readonly source: string,
    private readonly marks: ChangeMarks,
    private readonly server: string | null = null,
  ) {}

  /** Adds an object; one of a kind the index holds must have its view's shape (src/cluster/kinds.ts). */
  put(o: KObject) {
    const k = keyOf(o.kind, o.metadata.name, o.metadata.namespace);
    this.objects.set(k, o);
    if (hasShapeOf(o, 'Node')) this.nodes.set(o.metadata.name, o);
    else if (hasShapeOf(o, 'BootcNode')) this.bootcNodes.set(o.metadata.name, o);
    else if (hasShapeOf(o, 'MachineConfig')) this.machineConfigs.set(o.metadata.name, o);
    this.structureChanged();
  }
  /**
   * Puts an object a client wrote (a patch's result, a create), refused as the API server's
   * schema validation refuses it (422 Invalid) when a field its view names has the wrong type.
   */
  putWritten(o: KObject) {
    const problem = objectShapeProblem(o, o.kind);
    if (problem) throw new DriverError(`${o.kind} "${o.metadata.name}" is invalid: ${problem.path}: ${problem.message}`);
    this.put(o);
  }
  remove(kind: string, name: string, namespace?: string | null) {
    this.objects.delete(keyOf(kind, name, namespace));
    if (kind === 'Node') this.nodes.delete(name);
    else if (kind === 'BootcNode') this.bootcNodes.delete(name);
    else if (kind === 'MachineConfig') this.machineConfigs.delete(name);
    this.structureChanged();
  }
  /** Objects came or went (or anything may have changed): every waiter is evaluated again. */
  structureChanged() {
    this.version++;
    this.structure++;
    this.marks.changedAll();
  }
  /** Every in-place change of a live object ends here: the waiters that read it are evaluated again. */
  changed(o: KObject | undefined) {
    this.version++;
    if (o) this.marks.changed(o);
  }
  /** The live object of `kind`, as its view (the objects came checked: snapshots, patchObject). */
  get<K extends string>(kind: K, name: string, namespace?: string | null): ViewOf<K> | undefined {
    const o = this.objects.get(keyOf(kind, name, namespace));
    return o && hasShapeOf(o, kind) ? o : undefined;
  }

  /**
   * The current state as a snapshot of the live objects (not cloned): read-only for the
   * caller. The same object is returned until objects are added or removed, so callers
   * may cache indexes keyed by it; the objects in it change in place.
   */
  view(): ClusterSnapshot {
    if (this.viewCache && this.viewCache.structure === this.structure) return this.viewCache.snap;
    const snap = this.buildSnapshot([...this.objects.values()], false);
    this.viewCache = { structure: this.structure, snap };
    return snap;
  }

  /** A self-contained copy of the current state. */
  snapshotCopy(): ClusterSnapshot {
    return this.buildSnapshot(structuredClone([...this.objects.values()]));
  }

  /**
   * Makes the live view report what is read of it: a list is a read of every object of its
   * kind, a singleton a read of that object, the fingerprint a read of everything; nodes,
   * BootcNodes and MachineConfigs looked up by name (through the index the view carries,
   * see indexSnapshot) are reads of those objects only.
   */
  private trackReads(snap: ClusterSnapshot, fingerprint: () => string) {
    const t = this.tracker;
    const define = (key: string, get: () => unknown) =>
      Object.defineProperty(snap, key, {
        enumerable: true,
        configurable: true,
        get,
        set: (v) => Object.defineProperty(snap, key, { value: v, writable: true, enumerable: true, configurable: true }),
      });
    for (const [kind, list] of Object.entries(LIST_OF)) {
      const arr = snap[list];
      define(list, () => {
        t.readKind(kind);
        return arr;
      });
    }
    const keys: SingletonKey[] = [...Object.values(SINGLETON_OF), 'bootImagesConfigMap', 'progress', 'lock', 'kubeSystemNamespace'];
    for (const key of keys) {
      const o = snap[key];
      define(key, () => {
        if (o && t.active) t.read(o);
        return o;
      });
    }
    define('fingerprint', () => {
      t.readAll();
      return fingerprint();
    });
    attachIndex(snap, this.index);
  }

  private buildSnapshot(objs: KObject[], frozen = true): ClusterSnapshot {
    const snap = emptySnapshot(this.source);
    snap.server = this.server;
    // The store's objects have their views' shapes (put, SimCluster.patchObject): each goes into its typed place as it is.
    const lists: Record<ListKey, KObject[]> = snap;
    const singletons: Record<SingletonKey, KObject | null> = snap;
    for (const o of objs) {
      const list = LIST_OF[o.kind];
      const singleton = SINGLETON_OF[o.kind];
      if (list) lists[list].push(o);
      else if (singleton) singletons[singleton] = o;
      else if (o.kind === 'ConfigMap' && o.metadata.name === 'coreos-bootimages') singletons.bootImagesConfigMap = o;
      else if (o.kind === 'ConfigMap' && o.metadata.name === PROGRESS_NAME) singletons.progress = o;
      else if (o.kind === 'Lease' && o.metadata.name === LOCK_NAME) singletons.lock = o;
      else if (o.kind === 'Namespace' && o.metadata.name === KUBE_SYSTEM_NAMESPACE) snap.kubeSystemNamespace = o;
    }
    for (const list of Object.values(LIST_OF)) lists[list].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
    // Computed on first use (a frozen copy) or on every use (the live view).
    let fp: string | null = null;
    const fingerprint = () => (frozen ? (fp ??= fingerprintOf(snap)) : fingerprintOf(snap));
    Object.defineProperty(snap, 'fingerprint', { enumerable: true, configurable: true, get: fingerprint });
    if (!frozen) this.trackReads(snap, fingerprint);
    return snap;
  }
}
