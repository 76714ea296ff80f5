/**
 * Fleet plan JSON, formatVersion "1.0" (docs/design.md §10): the single source of truth for `fleet
 * show`, the fleet renderers, `fleet render argocd`, `fleet apply` and `fleet rehearse`. It
 * seals each cluster's plan (each keeps its own `id`), and is sealed itself: `id` is the content
 * hash of the fleet plan without this field.
 */
import type { Diagnostic } from '../base/diagnostics.ts';
import type { BatchTimeoutAction, FleetFieldOverride } from './spec-types.ts';
import type { Plan, PlanSpecInfo } from '../plan/types.ts';

export const FLEET_PLAN_FORMAT_VERSION = '1.0';
export const FLEET_PLAN_KIND = 'FleetPlan';

/** `canary`: one canary cluster (a batch of its own, whose failure stops the fleet); `batch`: up to maxConcurrency others. */
export const FLEET_BATCH_KINDS = ['canary', 'batch'] as const;
export type FleetBatchKind = (typeof FLEET_BATCH_KINDS)[number];

export interface FleetBatch {
  /** 1-based, in rollout order. */
  index: number;
  kind: FleetBatchKind;
  clusters: string[];
  /** The longest cluster estimate in the batch (clusters of a batch roll at the same time). */
  estimatedSeconds: number;
}

/** Why a cluster has no plan. A closed set: the renderers and `fleet apply` rely on it. */
export const FLEET_CLUSTER_ERRORS = ['unreachable', 'snapshot-invalid', 'plan-errors', 'kubeconfig'] as const;
type FleetClusterErrorCode = (typeof FLEET_CLUSTER_ERRORS)[number];

export interface FleetClusterError {
  code: FleetClusterErrorCode;
  message: string;
  hint?: string;
}

export interface FleetClusterPlan {
  name: string;
  labels: Record<string, string>;
  /** Where the cluster was read from: a kubeconfig context or a snapshot file (as written in the Fleet). */
  source: { context: string | null; kubeconfig: string | null; snapshot: string | null };
  destination: { name: string | null; server: string | null };
  canary: boolean;
  /**
   * Each field of the cluster's effective spec that differs from the shared `spec.rollout`, with
   * the override that set it (effective-spec.ts overriddenFields); empty on the shared rollout.
   * Optional (added after the first fleet plans): absent reads as []. The planner always writes it.
   */
  overriddenBy?: FleetFieldOverride[];
  /** The 1-based batch the cluster rolls in; null when it has no plan it could roll (error) or nothing to change. */
  batch: number | null;
  /**
   * The cluster's own sealed plan (its spec info names the Fleet file and `fleetCluster`), or
   * null when it could not be planned (unreachable, bad snapshot). A plan with error
   * diagnostics is kept for review and sits in no batch.
   */
  plan: Plan | null;
  error: FleetClusterError | null;
}

/** A cluster that could not be planned, or whose plan has errors: it carries its error. */
export type FailedClusterPlan = FleetClusterPlan & { error: FleetClusterError };

export function isFailedCluster(c: FleetClusterPlan): c is FailedClusterPlan {
  return c.error !== null;
}

export interface FleetPlanSummary {
  clusters: number;
  /** Clusters with a plan and no errors. */
  planned: number;
  /** Clusters whose plan changes something (objects or nodes). */
  withChanges: number;
  /** Clusters with an error (no plan, or a plan with errors). */
  failed: number;
  nodes: number;
  batches: number;
  /** Batches in order: each its longest cluster, plus the soak between batches. */
  estimatedSeconds: number;
  errors: number;
  warnings: number;
}

export interface FleetPlan {
  formatVersion: typeof FLEET_PLAN_FORMAT_VERSION;
  kind: typeof FLEET_PLAN_KIND;
  id: string;
  /** The Fleet file, as a Rollout plan records its spec file (name = metadata.name). */
  fleet: PlanSpecInfo;
  strategy: {
    canaries: string[];
    maxConcurrency: { value: string | number; resolved: number; rule: string };
    batchSoakSeconds: number;
    batchTimeoutSeconds: number | null;
    batchTimeoutAction: BatchTimeoutAction;
  };
  batches: FleetBatch[];
  /** Every cluster of the Fleet, in the Fleet's order. */
  clusters: FleetClusterPlan[];
  /** The Fleet spec's own diagnostics (file:line:column in the Fleet file). */
  diagnostics: Diagnostic[];
  summary: FleetPlanSummary;
}
