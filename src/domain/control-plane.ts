/**
 * The control plane rolls one node at a time, always (docs/safety.md rule 2; docs/design.md §7 "Sharing
 * the cluster").
 *
 * Upstream, the MCO does not cap the master pool: machine-config-operator
 * pkg/controller/node/node_controller.go `maxUnavailable` returns 1 only for the arbiter pool
 * (`if pool.Name == ctrlcommon.MachineConfigPoolArbiter { return 1, nil }`) and honours any
 * other value on `master`. What protects etcd is the PodDisruptionBudget
 * openshift-etcd/etcd-quorum-guard (openshift/cluster-etcd-operator
 * bindata/etcd/quorumguard-pdb.yaml, `maxUnavailable: 1`), which blocks the second drain; the
 * openshift/api doc of MachineConfigPoolSpec.MaxUnavailable says so ("Drain will respect Pod
 * Disruption Budgets (PDBs) such as etcd quorum guards, even if maxUnavailable is greater than
 * one"). A second master would then sit cordoned, half-updated, behind a blocked drain.
 * bootcplan therefore writes 1 to the control-plane pool and refuses a spec that asks for more.
 * Pure.
 */
import type { ResolvedBudget } from './budget.ts';
import { ROLE_LABEL_PREFIX } from './labels.ts';
import type { ClusterLabelSelector } from '../cluster/kinds.ts';

const CONTROL_PLANE_MAX_UNAVAILABLE = 1;

/** The node-role labels of control-plane nodes (kubeadm / OpenShift: master, control-plane). */
const CONTROL_PLANE_ROLE_LABELS = [`${ROLE_LABEL_PREFIX}master`, `${ROLE_LABEL_PREFIX}control-plane`] as const;

export function isControlPlaneNode(labels: Record<string, string> | undefined): boolean {
  return !!labels && CONTROL_PLANE_ROLE_LABELS.some((k) => Object.prototype.hasOwnProperty.call(labels, k));
}

/** A LabelSelector that asks for a control-plane role label (matchLabels, or In/Exists). */
export function selectorAsksForControlPlane(selector: ClusterLabelSelector | null | undefined): boolean {
  if (!selector) return false;
  const isRole = (k: string) => CONTROL_PLANE_ROLE_LABELS.some((r) => r === k);
  if (Object.keys(selector.matchLabels ?? {}).some(isRole)) return true;
  return (selector.matchExpressions ?? []).some((e) => isRole(e.key) && (e.operator === 'Exists' || e.operator === 'In'));
}

interface ControlPlaneBudget {
  /** What is written to the pools: always 1. */
  budget: ResolvedBudget;
  /** What the spec asked for when it is more than 1 (an error), else null. */
  tooMany: number | null;
}

/** The control-plane pool's budget from what the spec asked for: 1, and whether that was more. */
export function controlPlaneBudget(requested: ResolvedBudget): ControlPlaneBudget {
  return {
    budget: { value: requested.value, resolved: CONTROL_PLANE_MAX_UNAVAILABLE, rule: 'control plane: 1 node at a time (etcd quorum), whatever the spec says' },
    tooMany: requested.resolved > CONTROL_PLANE_MAX_UNAVAILABLE ? requested.resolved : null,
  };
}

/**
 * Control-plane nodes out of service anywhere in the cluster, whatever pool they are in (or
 * none): etcd counts members, not pools, so a control-plane pool's budget is spent by every one
 * of them (the etcd-quorum-guard PodDisruptionBudget covers all control-plane nodes alike).
 */
export function controlPlaneNodesOutOfService<T extends { name: string; labels: Record<string, string>; unavailable: string | null }>(nodes: Iterable<T>): T[] {
  const out: T[] = [];
  for (const n of nodes) if (n.unavailable !== null && isControlPlaneNode(n.labels)) out.push(n);
  return out;
}
