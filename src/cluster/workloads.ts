/**
 * The workloads a snapshot carries for the drain forecast (docs/apply.md "Drain forecast"): a
 * compact projection of Pods, PodDisruptionBudgets, local PersistentVolumes and the replicas of
 * the pods' controllers, made as each page of a list arrives, so that memory is bounded by the
 * projection and not by the API's answers. The pure rules (src/domain/disruption-budget.ts,
 * src/domain/drain-forecast.ts) read these shapes.
 */
import type { LabelSelector } from '../base/api-types.ts';

/** An IntOrString of a budget: a count, or "N%". */
export type IntOrPercent = number | string;

/** What the drain forecast knows of a pod (the snapshot's projection). */
export interface BudgetPod {
  /** status.phase: Pending, Running, Succeeded, Failed, Unknown. */
  phase: string;
  /** The Ready condition is True (apipod.IsPodReady: the API's only notion of healthy). */
  ready: boolean;
  /** metadata.deletionTimestamp is set. */
  deleting: boolean;
}

/** What the forecast knows of a PodDisruptionBudget: its spec and the status the controller wrote. */
export interface Budget {
  minAvailable: IntOrPercent | null;
  maxUnavailable: IntOrPercent | null;
  /** spec.unhealthyPodEvictionPolicy; null is the default, IfHealthyBudget. */
  unhealthyPodEvictionPolicy: 'IfHealthyBudget' | 'AlwaysAllow' | null;
  generation: number;
  status: BudgetStatus;
}

export interface BudgetStatus {
  observedGeneration: number;
  currentHealthy: number;
  desiredHealthy: number;
  disruptionsAllowed: number;
  expectedPods: number;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
}
export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

/** A pod as the snapshot projects it. */
export interface DrainPod extends BudgetPod {
  namespace: string;
  name: string;
  node: string;
  labels: Record<string, string>;
  /** The owner reference with controller: true, or null for a pod nothing recreates. */
  controller: { kind: string; name: string } | null;
  /** A static pod's mirror (annotation kubernetes.io/config.mirror): the kubelet owns it. */
  mirror: boolean;
  emptyDir: boolean;
  /** The node its local PersistentVolumes pin it to (the PV's nodeAffinity), or null. */
  pinnedTo: string | null;
  requests: { cpuMillis: number; memoryBytes: number };
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
}

export interface DrainBudget extends Budget {
  namespace: string;
  name: string;
  /** spec.selector: null selects no pod, {} every pod of the namespace. */
  selector: LabelSelector | null;
}

export interface DrainNode {
  name: string;
  labels: Record<string, string>;
  /** spec.unschedulable (cordoned). */
  unschedulable: boolean;
  taints: Taint[];
  allocatable: { cpuMillis: number; memoryBytes: number; pods: number };
}

/** What a snapshot holds of the workloads; absent or null in a snapshot that holds none. */
export interface SnapshotWorkloads {
  pods: DrainPod[];
  budgets: DrainBudget[];
  /** spec.replicas of the pods' controllers (ReplicaSet, Deployment, StatefulSet). */
  controllers: { kind: string; namespace: string; name: string; replicas: number }[];
}
