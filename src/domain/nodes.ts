/**
 * A uniform view of a node for planning, whatever drives it (bootc-operator or MCO).
 * Rules: docs/design.md §7 "Pools and waves"; bootc-operator classifyNode (internal/controller/rollout.go);
 * MCO node annotations (pkg/daemon/constants); node availability as the MCO counts it
 * (docs/safety.md rules 5 and 7: mcoNodeHealth, mcoNodeWork below).
 */
import type { ClusterSnapshot, Condition, KObject } from '../cluster/types.ts';
import { ZONE_LABEL, MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE, MCO_REASON, MCO_CURRENT_IMAGE, BOOTC_IN_REBOOT_SLOT } from './labels.ts';
import type { BootcNodeObject, ClusterLabelSelector, MachineConfigObject, NodeObject, ObjectWithConditions } from '../cluster/kinds.ts';

type Unavailability = 'not-ready' | 'cordoned' | 'degraded' | 'updating';

export interface NodeView {
  name: string;
  zone: string | null;
  labels: Record<string, string>;
  /** The Ready condition is True. */
  ready: boolean;
  /** No DiskPressure or NetworkUnavailable condition says otherwise (mcoNodeHealth). */
  healthy: boolean;
  cordoned: boolean;
  degraded: boolean;
  updating: boolean;
  /**
   * Why the node is out of service now (first applicable), or null when available. An
   * unhealthy node (DiskPressure, NetworkUnavailable) is `not-ready`, as the MCO's
   * CheckNodeReady calls it; MCO work in flight is `updating`, for bootc nodes too.
   */
  unavailable: Unavailability | null;
  bootedImage: string | null;
  bootedDigest: string | null;
  stagedDigest: string | null;
  stagedSoftRebootCapable: boolean;
  /** BootcNode Idle=False/Staged and Degraded!=True: past the staging gate (when the digest matches). */
  stagedIdle: boolean;
  /** Conditions worth showing when the node is reported (Ready, failing DiskPressure / NetworkUnavailable, Degraded, Idle, MCOState). */
  conditions: Condition[];
  createdAt: string | null;
}

export function conditionOf(obj: ObjectWithConditions | undefined | null, type: string): Condition | undefined {
  const list = obj?.status?.conditions;
  if (!Array.isArray(list)) return undefined;
  // A loop, not find(): called several times for each of thousands of nodes.
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c && c.type === type) return c;
  }
  return undefined;
}

/**
 * The name in the first owner reference of a kind (with `controller`, the first one marked
 * controller: metav1.GetControllerOf), or null. A loop: one call per BootcNode of the cluster.
 */
export function ownerOf(obj: KObject, kind: string, controller: boolean): string | null {
  const refs = obj.metadata.ownerReferences;
  if (!refs) return null;
  for (let i = 0; i < refs.length; i++) {
    const r = refs[i];
    if (r.kind === kind && (!controller || r.controller === true)) return r.name ?? null;
  }
  return null;
}

/** `quay.io/x/os@sha256:abc…` -> `sha256:abc…`; null for tag references. */
export function digestOf(ref: string | null | undefined): string | null {
  if (!ref) return null;
  const at = ref.indexOf('@sha256:');
  return at >= 0 ? ref.slice(at + 1) : null;
}

export interface NodeIndex {
  nodes: Map<string, NodeObject>;
  bootcNodes: Map<string, BootcNodeObject>;
  machineConfigs: Map<string, MachineConfigObject>;
}

/**
 * A snapshot may carry its own index: the simulated cluster's live view does, kept up to date
 * as objects come and go, and a lookup through it tells the simulator which objects a waitFor
 * predicate depends on. Copies of the snapshot do not carry it.
 */
const OWN_INDEX = new WeakMap<ClusterSnapshot, NodeIndex>();

/** Makes `index` the one indexSnapshot returns for this snapshot object. */
export function attachIndex(snap: ClusterSnapshot, index: NodeIndex): void {
  OWN_INDEX.set(snap, index);
}

export function indexSnapshot(snap: ClusterSnapshot): NodeIndex {
  const own = OWN_INDEX.get(snap);
  if (own) return own;
  return { nodes: byName(snap.nodes), bootcNodes: byName(snap.bootcNodes), machineConfigs: byName(snap.machineConfigs) };
}

/** Name -> object, without an entry pair per object (20,000 of them in a 10,000-node snapshot). */
function byName<T extends KObject>(objects: readonly T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const o of objects) map.set(o.metadata.name, o);
  return map;
}

/**
 * Node health as the MCO sees it (docs/safety.md rule 7): openshift/machine-config-operator
 * pkg/controller/common/layered_node_state.go, LayeredNodeState.CheckNodeReady (release-4.18:
 * pkg/controller/node/status.go checkNodeReady). It loops over the conditions present: a node
 * is not ready when Ready is not True, DiskPressure is not False or NetworkUnavailable is not
 * False (an absent condition passes, Unknown fails), or when spec.unschedulable is set.
 * MemoryPressure and PIDPressure are not part of that rule and are not checked here. The
 * Ready condition and the cordon are NodeView.ready and .cordoned; this returns the other
 * two, failing: the conditions that make the node unhealthy.
 */
function mcoNodeHealth(node: NodeObject): { healthy: boolean; failing: Condition[] } {
  const failing: Condition[] = [];
  const disk = conditionOf(node, 'DiskPressure');
  if (disk && disk.status !== 'False') failing.push(disk);
  const network = conditionOf(node, 'NetworkUnavailable');
  if (network && network.status !== 'False') failing.push(network);
  return { healthy: failing.length === 0, failing };
}

/**
 * MCO work on a node (docs/safety.md rule 5), from its annotations (pkg/daemon/constants):
 * LayeredNodeState.IsNodeDone (pkg/controller/common/layered_node_state.go) wants
 * currentConfig == desiredConfig and state == Done; a node that is not done is unavailable
 * (IsUnavailableForUpdate) unless the daemon is failing. So: `inFlight` when desiredConfig is
 * set and differs from currentConfig, or the state is present and not Done; `failed` when the
 * state is Degraded or Unreconcilable (bootcplan counts a failed node as out of service too,
 * where the MCO stops counting a node failing on its target). A node without MCO
 * annotations (a cluster without the MCO) has no MCO work.
 */
function mcoNodeWork(annotations: Record<string, string>): { inFlight: boolean; failed: boolean; configMoving: boolean; state: string | null } {
  const state = annotations[MCO_STATE] ?? null;
  const current = annotations[MCO_CURRENT_CONFIG];
  const desired = annotations[MCO_DESIRED_CONFIG];
  const failed = state === 'Degraded' || state === 'Unreconcilable';
  const configMoving = !!desired && desired !== current;
  return { inFlight: configMoving || (state !== null && state !== 'Done'), failed, configMoving, state };
}

export function viewNode(node: NodeObject, idx: NodeIndex): NodeView {
  const name = node.metadata.name;
  const labels = node.metadata.labels ?? {};
  const annotations = node.metadata.annotations ?? {};
  const readyCond = conditionOf(node, 'Ready');
  const ready = readyCond?.status === 'True';
  const cordoned = node.spec?.unschedulable === true;
  const bn = idx.bootcNodes.get(name);

  let degraded: boolean;
  let updating: boolean;
  let bootedImage: string | null;
  let bootedDigest: string | null;
  let stagedDigest: string | null = null;
  let stagedSoftRebootCapable = false;
  let stagedIdle = false;
  const conditions: Condition[] = [];
  if (readyCond) conditions.push(pick(readyCond));
  const { healthy, failing } = mcoNodeHealth(node);
  for (const c of failing) conditions.push(pick(c));
  const mco = mcoNodeWork(annotations);

  if (bn) {
    const deg = conditionOf(bn, 'Degraded');
    const idle = conditionOf(bn, 'Idle');
    degraded = deg?.status === 'True';
    // bootc-operator: Idle=False/Rebooting means a reboot was issued; the slot annotation means
    // the operator (or a bootcplan apply that was interrupted) took the node out of service.
    updating = (idle?.status === 'False' && idle.reason === 'Rebooting') || bn.metadata.annotations?.[BOOTC_IN_REBOOT_SLOT] !== undefined;
    bootedImage = bn.status?.booted?.image ?? null;
    bootedDigest = bn.status?.booted?.imageDigest ?? null;
    stagedDigest = bn.status?.staged?.imageDigest ?? null;
    stagedSoftRebootCapable = bn.status?.staged?.softRebootCapable === true;
    stagedIdle = idle?.status === 'False' && idle.reason === 'Staged' && !degraded;
    if (deg) conditions.push(pick(deg));
    if (idle) conditions.push(pick(idle));
    // On OpenShift a bootc node is in a MachineConfigPool too: the MCO may be updating it
    // (a new rendered config for its role), and that node is out of service as well.
    if (mco.inFlight) {
      updating = true;
      degraded ||= mco.failed;
      conditions.push(mcoStateCondition(mco, annotations));
    }
  } else {
    const current = annotations[MCO_CURRENT_CONFIG];
    degraded = mco.failed;
    // A failed daemon is `degraded` (and still `updating` while its config moves: the MCO
    // pool runner reports such a node as failed during its wave).
    updating = mco.configMoving || (mco.inFlight && !mco.failed);
    bootedImage = annotations[MCO_CURRENT_IMAGE] ?? (current ? (idx.machineConfigs.get(current)?.spec?.osImageURL ?? null) : null);
    bootedDigest = digestOf(bootedImage);
    if (mco.state !== null || mco.configMoving) conditions.push(mcoStateCondition(mco, annotations));
  }

  const unavailable: Unavailability | null = degraded ? 'degraded' : !ready || !healthy ? 'not-ready' : updating ? 'updating' : cordoned ? 'cordoned' : null;
  return {
    name,
    zone: labels[ZONE_LABEL] ?? null,
    labels,
    ready,
    healthy,
    cordoned,
    degraded,
    updating,
    unavailable,
    bootedImage,
    bootedDigest,
    stagedDigest,
    stagedSoftRebootCapable,
    stagedIdle,
    conditions,
    createdAt: node.metadata.creationTimestamp ?? null,
  };
}

/** The MCO daemon's state of a node, shown as a condition when MCO work is in flight. */
function mcoStateCondition(mco: ReturnType<typeof mcoNodeWork>, annotations: Record<string, string>): Condition {
  return {
    type: 'MCOState',
    status: mco.state ?? 'unknown',
    reason:
      annotations[MCO_REASON] ||
      (mco.configMoving ? `desiredConfig ${annotations[MCO_DESIRED_CONFIG]}, currentConfig ${annotations[MCO_CURRENT_CONFIG] ?? 'none'}` : undefined),
  };
}

function pick(c: Condition): Condition {
  const out: Condition = { type: c.type, status: c.status };
  if (c.reason) out.reason = c.reason;
  if (c.message) out.message = c.message;
  return out;
}

/** Does a Kubernetes LabelSelector (matchLabels + matchExpressions) select these labels? */
export function selectorMatches(selector: ClusterLabelSelector | null | undefined, labels: Record<string, string>): boolean {
  if (!selector || typeof selector !== 'object') return false;
  const ml: Record<string, string> = selector.matchLabels ?? {};
  for (const k of Object.keys(ml)) if (labels[k] !== ml[k]) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const val = labels[e.key];
    const values: string[] = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(val)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(val)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  // An empty selector selects everything (metav1.LabelSelectorAsSelector); a missing one nothing.
  return true;
}
