/**
 * The Fleet spec, `bootcplan.dev/v1alpha1` kind `Fleet` (docs/design.md §10), after validation: many
 * clusters sharing one Rollout spec, with per-label and per-cluster overrides, rolled out in
 * batches. The strategy names follow Red Hat TALM's ClusterGroupUpgrade (`canaries`,
 * `maxConcurrency`, batch `timeout`, `batchTimeoutAction`) and Argo CD's progressive syncs.
 */
import type { HealthCheckSpec, MaintenanceWindow, RolloutMode, RolloutSpec, SilencesSpec, SPEC_API_VERSION } from '../rollout-spec/types.ts';
import type { LabelSelector } from '../base/api-types.ts';

export const FLEET_KIND = 'Fleet';

/** What happens to a batch whose clusters have not all finished within batchTimeoutSeconds (TALM batchTimeoutAction). */
export const BATCH_TIMEOUT_ACTIONS = ['continue', 'abort'] as const;
export type BatchTimeoutAction = (typeof BATCH_TIMEOUT_ACTIONS)[number];

/** The fields of one shared pool a cluster or a label may override, matched by pool name. */
interface FleetPoolOverride {
  name: string;
  image?: string;
  allowTags?: boolean;
  /** integer >= 1 or "N%", as for pools. */
  maxUnavailable?: number | string;
  rollout?: RolloutMode;
  soakSeconds?: number;
  paused?: boolean;
}

/** What a cluster (or every cluster a selector matches) changes in the shared Rollout spec. */
export interface FleetOverride {
  pools?: FleetPoolOverride[];
  /** Replaces the shared list. */
  maintenanceWindows?: MaintenanceWindow[];
  /** The site's IANA time zone, for every window (shared or overridden) that names none. */
  timezone?: string;
  /** Merged by name into the shared spec.rollout.healthChecks (an entry replaces, enabled: false drops). */
  healthChecks?: HealthCheckSpec[];
  /** Replaces the shared spec.rollout.silences whole (enabled: false: none for the cluster). */
  silences?: SilencesSpec;
}

/** Applied, in file order, to every cluster whose labels the selector matches. */
interface FleetLabelOverride extends FleetOverride {
  clusterSelector: LabelSelector;
}

export interface FleetCluster {
  name: string;
  /** Exactly one of context (a live cluster through the kubeconfig) and snapshot (a file). */
  context?: string;
  snapshot?: string;
  /** A kubeconfig file for this cluster only (default: --kubeconfig / KUBECONFIG). */
  kubeconfig?: string;
  labels?: Record<string, string>;
  /** Applied after every label override. */
  overrides?: FleetOverride;
  /** The Argo CD destination of this cluster's Application (default: name = the cluster's name). */
  destination?: { name?: string; server?: string };
}

export interface FleetStrategy {
  /** Cluster names; each is a batch of its own, in this order, before the others. A canary failure stops the fleet. */
  canaries?: string[];
  /** Clusters per batch after the canaries: integer >= 1 or "N%" of the non-canary clusters (floor, minimum 1). Default 1. */
  maxConcurrency?: number | string;
  /** Wait after each batch before the next. Default 0. */
  batchSoakSeconds?: number;
  /** A batch not finished after this long times out (no default: no timeout). */
  batchTimeoutSeconds?: number;
  /** Default `abort`. */
  batchTimeoutAction?: BatchTimeoutAction;
}

/**
 * A field of one cluster's effective spec that differs from the shared `spec.rollout`, and the
 * override whose value won (the fleet plan records them per cluster, for the reviewer).
 */
export interface FleetFieldOverride {
  /** `pools.NAME.FIELD` (image, allowTags, maxUnavailable, rollout, soakSeconds, paused), `maintenanceWindows`, `timezone`, `healthChecks.NAME` or `silences`. */
  field: string;
  /** The shared value (a field left out counts as its default); null: none (a time zone: UTC). */
  shared: string | number | boolean | null;
  value: string | number | boolean | null;
  /** The override's path in the Fleet file, and its selector as `key=value,...` (null: the cluster's own overrides). */
  by: { path: string; selector: string | null };
}

export interface FleetSpec {
  apiVersion: typeof SPEC_API_VERSION;
  kind: typeof FLEET_KIND;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    /** The Rollout spec's `spec` every cluster shares (same fields, same validation). */
    rollout: RolloutSpec['spec'];
    clusters: FleetCluster[];
    overrides?: FleetLabelOverride[];
    strategy?: FleetStrategy;
  };
}
