/** The Rollout spec, `bootcplan.dev/v1alpha1` kind `Rollout` (docs/design.md §4), after validation. */
import type { BootImageSkewEnforcement, ManagedBootImages } from '../base/api-types.ts';

export const SPEC_API_VERSION = 'bootcplan.dev/v1alpha1';
export const SPEC_KIND = 'Rollout';

export const REBOOT_POLICIES = ['RebootOnly', 'AllowSoftReboot'] as const;
export type RebootPolicy = (typeof REBOOT_POLICIES)[number];

/**
 * How a pool's nodes are admitted: `waves` (the default) start a group of up to maxUnavailable
 * nodes and wait for the whole group before the next; `slots` admit the next node, in the
 * plan's order, as soon as the budget has room (a node finishes), never more than
 * maxUnavailable out of service at once.
 */
export const ROLLOUTS = ['waves', 'slots'] as const;
export type RolloutMode = (typeof ROLLOUTS)[number];

/** What the applier does with a drain that cannot finish: halt the rollout, or skip the node. */
export const ON_BLOCKED = ['halt', 'skip'] as const;
export type OnBlocked = (typeof ON_BLOCKED)[number];

export interface DrainSpec {
  timeoutSeconds?: number;
  onBlocked?: OnBlocked;
  maxSkippedNodes?: number;
}

export const CPMS_STRATEGIES = ['RollingUpdate', 'OnDelete'] as const;
export type CpmsStrategy = (typeof CPMS_STRATEGIES)[number];

export interface PoolSpec {
  name: string;
  image: string;
  allowTags?: boolean;
  /** integer >= 1 or "N%" (validated by parseMaxUnavailable). */
  maxUnavailable?: number | string;
  rebootPolicy?: RebootPolicy;
  /** The older name of drain.timeoutSeconds (both set is an error: src/rollout-spec/drain-schema.ts). */
  drainTimeoutSeconds?: number;
  /** What a drain may take, and what happens to one that cannot finish (docs/apply.md "Drain forecast"). */
  drain?: DrainSpec;
  /** bootc pools: the staging limit (docs/design.md §7; default 600). */
  stagingTimeoutSeconds?: number;
  soakSeconds?: number;
  paused?: boolean;
  priority?: number;
  /** `waves` (default) or `slots`. */
  rollout?: RolloutMode;
  /** Merged by name with the Rollout's spec.healthChecks (src/plan/health.ts effectiveChecks). */
  healthChecks?: HealthCheckSpec[];
  /** Replaces the Rollout's spec.silences whole for this pool (src/plan/silences.ts). */
  silences?: SilencesSpec;
}

export interface ControlPlaneMachineSetSpec {
  strategy?: CpmsStrategy;
  allowReplacement?: boolean;
}

export interface MaintenanceWindow {
  schedule: string;
  duration: string;
  timezone?: string;
}

// ---------------------------------------------------------------------------------------
// Health checks (docs/design.md §11; docs/spec.md "Health checks"): gates between waves.

/** Where a check gates: before the first write, after each wave's soak, after each node is back. */
export const GATE_POINTS = ['preflight', 'afterWave', 'afterNode'] as const;
export type GatePoint = (typeof GATE_POINTS)[number];
/**
 * What a failed check does: pause the pool and stop (exit 5); pause it likewise, and let
 * `apply --retry` alone continue past the failed gate (docs/apply.md "Holds"); or go back to the
 * images the run replaced.
 */
export const ON_FAILURE = ['halt', 'pause', 'rollback'] as const;
export type OnFailure = (typeof ON_FAILURE)[number];
/** Whether a check's failure acts (enforce) or is only recorded as the verdict it would have given (observe: a gate on trial). */
export const HEALTH_CHECK_MODES = ['enforce', 'observe'] as const;
export type HealthCheckMode = (typeof HEALTH_CHECK_MODES)[number];
/** What a rollback takes back: every node this run updated, or the failed wave's. */
export const ROLLBACK_SCOPES = ['run', 'wave'] as const;
export type RollbackScope = (typeof ROLLBACK_SCOPES)[number];
/** The kinds of check; a check has exactly one of them. */
export const HEALTH_CHECK_KINDS = ['prometheus', 'alerts', 'clusterOperators', 'condition'] as const;
export type HealthCheckKind = (typeof HEALTH_CHECK_KINDS)[number];
export const ON_EMPTY = ['fail', 'pass'] as const;
export const ALERT_SOURCES = ['prometheus', 'alertmanager'] as const;
export const ALERT_STATES = ['firing', 'pending'] as const;
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/** One key of a ConfigMap or Secret, by name. */
export interface ObjectKeyRef {
  namespace: string;
  name: string;
  key?: string;
}
/** Who bootcplan is to Prometheus: its own Kubernetes identity's bearer token, nobody, or a token from a Secret. */
export type HealthAuth = 'ServiceAccount' | 'none' | { bearerTokenSecret: ObjectKeyRef };
/** The CA that signs the Prometheus server's certificate: the system roots, or a PEM bundle in the cluster. */
export type HealthCa = 'system' | { configMap: ObjectKeyRef } | { secret: ObjectKeyRef };

/** Where a Prometheus-API check reads from. */
export interface HealthEndpointSpec {
  /** Default on OpenShift: the in-cluster thanos-querier (src/plan/health.ts). */
  url?: string;
  auth?: HealthAuth;
  ca?: HealthCa;
}

export interface PrometheusCheckSpec extends HealthEndpointSpec {
  query: string;
  /** The grammar of src/domain/health-condition.ts. */
  condition: string;
  onEmpty?: (typeof ON_EMPTY)[number];
}

export interface AlertsCheckSpec extends HealthEndpointSpec {
  source?: (typeof ALERT_SOURCES)[number];
  /** Prometheus matchers (src/domain/alert-matchers.ts), AND-ed. */
  matchers?: string[];
  ignore?: string[];
  states?: (typeof ALERT_STATES)[number][];
  heartbeat?: string;
}

export interface ClusterOperatorsCheckSpec {
  names?: string[];
  ignore?: string[];
}

export interface ObjectConditionCheckSpec {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  type: string;
  status?: (typeof CONDITION_STATUSES)[number];
  reason?: string;
}

export interface HealthCheckSpec {
  name: string;
  prometheus?: PrometheusCheckSpec;
  alerts?: AlertsCheckSpec;
  clusterOperators?: ClusterOperatorsCheckSpec;
  condition?: ObjectConditionCheckSpec;
  when?: GatePoint[];
  intervalSeconds?: number;
  successes?: number;
  failureLimit?: number;
  timeoutSeconds?: number;
  requestTimeoutSeconds?: number;
  mode?: HealthCheckMode;
  onFailure?: OnFailure;
  scope?: RollbackScope;
  /** false: off (in a pool's list: drops the inherited check of this name). */
  enabled?: boolean;
}

/**
 * Silences for the nodes in flight (docs/design.md §11; docs/spec.md "Silences"): an Alertmanager, and
 * matcher templates (src/domain/silences.ts), each one silence per node while it is out of service.
 */
export interface SilencesSpec {
  alertmanager?: HealthEndpointSpec;
  matchers?: string[];
  ttlMinutes?: number;
  /** false: no silences (in a pool: none for this pool). */
  enabled?: boolean;
}

/** What a halting pool does to the pools rolling beside it (docs/apply.md "Pools in parallel"). */
export const ON_POOL_FAILURE = ['haltAll', 'haltPool'] as const;
export type OnPoolFailure = (typeof ON_POOL_FAILURE)[number];

/** At most maxPerValue nodes out of service share a value of node label `key`, across pools. */
export interface SpreadSpec {
  key: string;
  maxPerValue: number;
}

export interface RolloutSpec {
  apiVersion: typeof SPEC_API_VERSION;
  kind: typeof SPEC_KIND;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    pools?: PoolSpec[];
    managedBootImages?: ManagedBootImages;
    bootImageSkewEnforcement?: BootImageSkewEnforcement;
    controlPlaneMachineSet?: ControlPlaneMachineSetSpec;
    maintenanceWindows?: MaintenanceWindow[];
    healthChecks?: HealthCheckSpec[];
    silences?: SilencesSpec;
    /** Cluster-wide budget: integer >= 1 or "N%" of the nodes the rollout touches. */
    maxUnavailable?: number | string;
    spread?: SpreadSpec;
    onPoolFailure?: OnPoolFailure;
  };
}
