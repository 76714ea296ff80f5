/**
 * A uniform view of a node for planning, whatever drives it (bootc-operator or MCO).
 * Rules: DESIGN §7 "Pools and waves"; bootc-operator classifyNode (internal/controller/rollout.go);
 * MCO node annotations (pkg/daemon/constants).
 */
import type { ClusterSnapshot, Condition, KObject } from '../cluster/types.ts';
import {
  ZONE_LABEL, MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE, MCO_CURRENT_IMAGE, BOOTC_IN_REBOOT_SLOT,
} from './labels.ts';

export type Unavailability = 'not-ready' | 'cordoned' | 'degraded' | 'updating';

export interface NodeView {
  name: string;
  zone: string | null;
  labels: Record<string, string>;
  ready: boolean;
  cordoned: boolean;
  degraded: boolean;
  updating: boolean;
  /** Why the node is out of service now (first applicable), or null when available. */
  unavailable: Unavailability | null;
  bootedImage: string | null;
  bootedDigest: string | null;
  stagedDigest: string | null;
  stagedSoftRebootCapable: boolean;
  /** BootcNode Idle=False/Staged and Degraded!=True: past the staging gate (when the digest matches). */
  stagedIdle: boolean;
  /** Conditions worth showing when the node is reported (Ready, Degraded, Idle). */
  conditions: Condition[];
  createdAt: string | null;
}

export function conditionOf(obj: KObject | undefined | null, type: string): Condition | undefined {
  const list: Condition[] | undefined = obj?.status?.conditions;
  return Array.isArray(list) ? list.find((c) => c && c.type === type) : undefined;
}

/** `quay.io/x/os@sha256:abc…` -> `sha256:abc…`; null for tag references. */
export function digestOf(ref: string | null | undefined): string | null {
  if (!ref) return null;
  const at = ref.indexOf('@sha256:');
  return at >= 0 ? ref.slice(at + 1) : null;
}

export interface NodeIndex {
  nodes: Map<string, KObject>;
  bootcNodes: Map<string, KObject>;
  machineConfigs: Map<string, KObject>;
}

/**
 * A snapshot may carry its own index under this key (non-enumerable): the simulated
 * cluster's live view does, kept up to date as objects come and go, and a lookup through
 * it tells the simulator which objects a waitFor predicate depends on.
 */
export const SNAPSHOT_INDEX = Symbol('bootcplan.snapshotIndex');

export function indexSnapshot(snap: ClusterSnapshot): NodeIndex {
  const own = (snap as unknown as { [SNAPSHOT_INDEX]?: NodeIndex })[SNAPSHOT_INDEX];
  if (own) return own;
  return {
    nodes: new Map(snap.nodes.map((n) => [n.metadata.name, n])),
    bootcNodes: new Map(snap.bootcNodes.map((n) => [n.metadata.name, n])),
    machineConfigs: new Map(snap.machineConfigs.map((m) => [m.metadata.name, m])),
  };
}

export function viewNode(node: KObject, idx: NodeIndex): NodeView {
  const name = node.metadata.name;
  const labels = node.metadata.labels ?? {};
  const annotations = node.metadata.annotations ?? {};
  const ready = conditionOf(node, 'Ready')?.status === 'True';
  const cordoned = node.spec?.unschedulable === true;
  const bn = idx.bootcNodes.get(name);

  let degraded = false;
  let updating = false;
  let bootedImage: string | null = null;
  let bootedDigest: string | null = null;
  let stagedDigest: string | null = null;
  let stagedSoftRebootCapable = false;
  let stagedIdle = false;
  const conditions: Condition[] = [];
  const readyCond = conditionOf(node, 'Ready');
  if (readyCond) conditions.push(pick(readyCond));

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
  } else {
    const state = annotations[MCO_STATE];
    degraded = state === 'Degraded' || state === 'Unreconcilable';
    const current = annotations[MCO_CURRENT_CONFIG];
    const desired = annotations[MCO_DESIRED_CONFIG];
    updating = state === 'Working' || (!!current && !!desired && current !== desired);
    bootedImage = annotations[MCO_CURRENT_IMAGE] ?? (current ? idx.machineConfigs.get(current)?.spec?.osImageURL ?? null : null);
    bootedDigest = digestOf(bootedImage);
    if (state) conditions.push({ type: 'MCOState', status: state, reason: annotations['machineconfiguration.openshift.io/reason'] || undefined });
  }

  const unavailable: Unavailability | null = degraded ? 'degraded' : !ready ? 'not-ready' : updating ? 'updating' : cordoned ? 'cordoned' : null;
  return {
    name, zone: labels[ZONE_LABEL] ?? null, labels, ready, cordoned, degraded, updating, unavailable,
    bootedImage, bootedDigest, stagedDigest, stagedSoftRebootCapable, stagedIdle, conditions,
    createdAt: node.metadata.creationTimestamp ?? null,
  };
}

function pick(c: Condition): Condition {
  const out: Condition = { type: c.type, status: c.status };
  if (c.reason) out.reason = c.reason;
  if (c.message) out.message = c.message;
  return out;
}

/** Does a Kubernetes LabelSelector (matchLabels + matchExpressions) select these labels? */
export function selectorMatches(selector: any, labels: Record<string, string>): boolean {
  if (!selector || typeof selector !== 'object') return false;
  const ml: Record<string, string> = selector.matchLabels ?? {};
  for (const [k, v] of Object.entries(ml)) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const val = labels[e.key];
    const values: string[] = e.values ?? [];
    switch (e.operator) {
      case 'In': if (!has || !values.includes(val)) return false; break;
      case 'NotIn': if (has && values.includes(val)) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false;
    }
  }
  // An empty selector selects everything (metav1.LabelSelectorAsSelector); a missing one nothing.
  return true;
}
