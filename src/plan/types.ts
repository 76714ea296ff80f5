/**
 * Plan JSON, formatVersion "1.0" (docs/design.md §6). The single source of truth: renderers and
 * the applier read only this. Fields named in the design are never renamed.
 */
import type { Diagnostic } from '../base/diagnostics.ts';
import type { Condition } from '../cluster/types.ts';
import type { ClusterIdentity } from '../cluster/identity.ts';
import type { Operation } from 'fast-json-patch';
import type { Backend, RebootKind, PhaseDurations } from '../domain/types.ts';
import type { BootImageMachineSet } from '../domain/bootimages-effects.ts';

/** The vocabulary and effect shapes the pure rules own (src/domain/), under their Plan JSON names. */
export type { Backend, RebootKind, PhaseDurations } from '../domain/types.ts';
export { BACKENDS, REBOOT_KINDS } from '../domain/types.ts';
export type { BootImageMachineSet } from '../domain/bootimages-effects.ts';

export const PLAN_FORMAT_VERSION = '1.0';
/**
 * "1.1": a plan with at least one pool that rolls in slots (PlanPool.rollout). A 1.0 reader
 * would take such a pool's admission batches for barriers, so those plans say 1.1 and a 1.0
 * bootcplan refuses them; plans without slots stay "1.0", byte for byte.
 */
export const PLAN_FORMAT_VERSION_SLOTS = '1.1';
/**
 * "1.2": a plan with health checks (Plan.healthChecks, PlanPool.gates), or a rollback plan
 * (Plan.rollback; docs/apply.md "Rollback"). A 1.0 or 1.1 reader would apply it without its gates,
 * or a rollback as a forward plan without the checks that make it one, so those plans say 1.2 and
 * an older bootcplan refuses them; plans without either stay "1.0" / "1.1", byte for byte.
 */
export const PLAN_FORMAT_VERSION_HEALTH = '1.2';
export const PLAN_FORMAT_VERSION_ROLLBACK = PLAN_FORMAT_VERSION_HEALTH;
export const PLAN_FORMAT_VERSIONS = [PLAN_FORMAT_VERSION, PLAN_FORMAT_VERSION_SLOTS, PLAN_FORMAT_VERSION_HEALTH, PLAN_FORMAT_VERSION_CONCURRENT] as const;
export { PLAN_FORMAT_VERSION_CONCURRENT, PLAN_FORMAT_VERSION_DRAIN, POOL_FAILURE_POLICIES } from './run-types.ts';
export type { PlanDrainForecast, PlanPoolDrain, PoolFailurePolicy, PlanConcurrency } from './run-types.ts';
import { PLAN_FORMAT_VERSION_CONCURRENT } from './run-types.ts';
import type { PlanDrainForecast, PlanPoolDrain, PlanConcurrency } from './run-types.ts';
type PlanFormatVersion = (typeof PLAN_FORMAT_VERSIONS)[number];
export type { RolloutMode } from '../rollout-spec/types.ts';
import type { RolloutMode } from '../rollout-spec/types.ts';

/* The closed vocabularies, as values too: the plan-file reader (plan/saved/schema.ts) checks them. */
export const CHANGE_ACTIONS = ['create', 'update', 'delete', 'noop'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];
export const RISKS = ['none', 'disruptive', 'replacement'] as const;
export type Risk = (typeof RISKS)[number];
/**
 * Why a node that needs the target is not scheduled. `pool-conflict`: another pool would roll it
 * too (or it is a control-plane node in another pool); `no-bootcnode`: the bootc-operator has no
 * BootcNode for it; `pool-owned`: a MachineConfigPool owns its BootcNodePool;
 * `mco-updating`: its MachineConfigPool has rendered a config the MCO has not rolled out yet;
 * `tag-unresolved`: the target is a tag the BootcNodePool has not resolved to a digest yet
 * (status.targetDigest); `not-managed`: the node lacks the `bootc.dev/managed` label the
 * bootc-operator's daemon selects on; `no-bootcnode-status`: its BootcNode has no status (the daemon
 * has not reported); `incompatible`: its booted entry has local mutations (rpm-ostree layering;
 * BootcNode status.booted.incompatible); `pool-paused`: the pool is paused (spec or administrator),
 * and the plan writes no new image to it, so nothing stages. `not-ready` covers DiskPressure and
 * NetworkUnavailable too (the MCO's CheckNodeReady); `updating` is MCO work in flight on the node.
 */
export const BLOCKED_BY = [
  'cordoned',
  'not-ready',
  'degraded',
  'updating',
  'pool-paused',
  'no-budget',
  'pool-conflict',
  'no-bootcnode',
  'pool-owned',
  'mco-updating',
  'tag-unresolved',
  'not-managed',
  'no-bootcnode-status',
  'incompatible',
] as const;
export type BlockedBy = (typeof BLOCKED_BY)[number];

/** Why a change exists. A closed set so that bots and the applier can rely on it. */
export const CHANGE_REASONS = [
  'pool-image',
  'pool-max-unavailable',
  'pool-rollout-settings',
  'pool-os-image-machineconfig',
  'migrate-legacy-empty-machinemanagers',
  'managed-boot-images',
  'boot-image-skew-enforcement',
  'cpms-strategy',
  // A rollback (Plan.rollback): a BootcNodePool's image, an MCO pool's osImage MachineConfig, back.
  'pool-image-rollback',
  'pool-os-image-rollback',
] as const;
export type ChangeReason = (typeof CHANGE_REASONS)[number];

/** Something the applier must wait for after a change before the next one (ordered steps). */
type WaitCondition =
  | { kind: 'skew-enforcement-not-automatic'; description: string }
  /**
   * A rollback of an MCO pool: the pool's spec.configuration.name must come back to `rendered`,
   * the config its nodes ran before the run; any other name halts (docs/apply.md "Rollback").
   */
  | { kind: 'pool-rendered'; pool: string; rendered: string; description: string };

export interface PlanChange {
  /** `Kind/name` or `Kind/namespace/name`: stable key of the object. */
  address: string;
  apiVersion: string;
  kind: string;
  namespace: string | null;
  name: string;
  action: ChangeAction;
  reason: ChangeReason;
  /** RFC 6902 patch against the live object; every replace/remove is preceded by a `test` of the old value. */
  patch: Operation[];
  /** The managed fields only, as observed (null on create). */
  before: unknown;
  /** The managed fields only, as desired (null on delete). */
  after: unknown;
  /** For create: the whole object to create. */
  object?: unknown;
  risk: Risk;
  /** 1-based execution order. */
  order: number;
  /** The pool this change belongs to, when it belongs to one. */
  pool?: string | null;
  /** Wait for this condition before the next change (two-step orderings). */
  waitAfter?: WaitCondition | null;
  /** Human explanation; never drives behaviour. */
  description?: string;
}

export interface PlanNode {
  name: string;
  zone: string | null;
  from: string | null;
  to: string;
  reboot: RebootKind;
  /**
   * 1-based wave, or null when the node is blocked. In a slots pool: the node's admission
   * batch (positions (wave-1) x waveSize + 1 .. wave x waveSize of the admission order); batches
   * do not wait for each other, they only mark where the applier re-plans (staleness check).
   */
  wave: number | null;
  staged: boolean;
  blockedBy: BlockedBy | null;
  /** Shown for blocked nodes so a reviewer can see why. */
  conditions?: Condition[];
  /**
   * The node ran the pod that made the plan (PlanInput.selfNode, NODE_NAME): placed last in its
   * bootc pool, since its drain evicts bootcplan (src/domain/waves.ts selfLast). Only when true.
   */
  runsBootcplan?: true;
  /** The node's value of Plan.concurrency.spread.key (null: none); only with a spread rule. */
  spreadValue?: string | null;
  /** The forecast of this node's drain in its wave or slot (docs/apply.md "Drain forecast"). */
  drainForecast?: PlanDrainForecast;
}

/** The check names of a pool per gate point, and the least time its gates add to its estimate. */
export interface PlanPoolGates {
  preflight: string[];
  afterWave: string[];
  afterNode: string[];
  /** Seconds the pool's gates add to estimatedSeconds at least (src/plan/health.ts gateSeconds). */
  minSeconds: number;
}

export interface PlanPool {
  name: string;
  backend: Backend;
  targetImage: string;
  targetDigest: string | null;
  controlPlane: boolean;
  priority: number;
  paused: boolean;
  rebootPolicy: 'RebootOnly' | 'AllowSoftReboot';
  drainTimeoutSeconds: number | null;
  soakSeconds: number;
  /**
   * The spec's stagingTimeoutSeconds, present only when the spec sets it (absent: the default,
   * 600 s, docs/design.md §7), so that plans of specs without it are the same as before it existed.
   */
  stagingTimeoutSeconds?: number;
  /**
   * The BootcNodePool's `spec.rollout.rebootTimeoutSeconds` as the snapshot read it, present only
   * when the cluster sets it (bootc pools); apply's reboot wait ends at the shorter of it and
   * bootcplan's own bound (src/domain/bootc-daemon.ts rebootWait).
   */
  rebootTimeoutSeconds?: number;
  maxUnavailable: { value: string | number; resolved: number; rule: string };
  /** Nodes in the pool now, up to date, and out of service before anything starts. */
  nodeCount: number;
  upToDate: number;
  unavailableNow: string[];
  /** Nodes per wave after unavailable nodes used their share of the budget. */
  waveSize: number;
  nodes: PlanNode[];
  /** Waves in order; in a slots pool the admission batches, whose concatenation is the admission order. */
  waves: string[][];
  estimatedSeconds: number;
  /**
   * Present only when the pool rolls in slots (spec `rollout: slots`, formatVersion "1.1"); absent
   * means waves. A slots pool's estimatedSeconds simulates admission (src/domain/timing.ts
   * estimateSlotsSeconds), and wavesEstimatedSeconds is what the same nodes would take in waves.
   */
  rollout?: Extract<RolloutMode, 'slots'>;
  wavesEstimatedSeconds?: number;
  /** Present when health checks gate the pool (formatVersion "1.2"). */
  gates?: PlanPoolGates;
  /** The way back (in rollback plans: the way being taken). */
  rollback?: PlanPoolRollback;
  /**
   * MCO-only pools: the plan's other pools that render this pool's OS-image MachineConfig too
   * (src/plan/inherited-pools.ts), paused before it is written. Present only when non-empty.
   */
  inheritedBy?: string[];
  /** Present when the spec sets the pool's `drain` (formatVersion "1.3"). */
  drain?: PlanPoolDrain;
}

export { ROLLBACK_REFUSED_BY } from './rollback-types.ts';
export type { RollbackRefusedBy, PlanPoolRollback, PlanRollback, RollbackTrigger, PoolOrigin } from './rollback-types.ts';
import type { PlanPoolRollback, PlanRollback } from './rollback-types.ts';

export interface PlanSpecInfo {
  name: string;
  path: string;
  ref: string | null;
  commit: string | null;
  sha256: string;
  /** The working-tree file differs from the commit (only without --ref). */
  dirty: boolean | null;
  /**
   * Set when the plan was made from a Fleet file (`fleet plan`): the cluster of that Fleet whose
   * effective spec (shared Rollout spec + overrides) was planned. Absent for a Rollout spec.
   */
  fleetCluster?: string;
}

export interface PlanClusterInfo {
  source: string;
  fingerprint: string;
  version: string | null;
  platform: string | null;
  /**
   * The cluster the plan was made for (src/cluster/identity.ts): apply and rehearse refuse to run
   * it on a cluster of another identity (exit 3). Absent when the snapshot held none, so plans of
   * such snapshots keep the id they had before identities were recorded; such a plan runs only
   * where no identity is found either (a rehearsal against a snapshot file), never on a live cluster.
   */
  identity?: ClusterIdentity;
  /** The API server host the snapshot was read from (shown with the identity; absent when unknown). */
  server?: string;
}

export interface BootImagesPlan {
  machineSets: BootImageMachineSet[];
  controlPlaneMachineSet: { from: string | null; to: string | null; replacement: boolean; why: string } | null;
}

export interface PlanSummary {
  create: number;
  update: number;
  delete: number;
  nodes: number;
  waves: number;
  softReboots: number;
  hardReboots: number;
  blocked: number;
  estimatedSeconds: number;
  errors: number;
  warnings: number;
  /** With health checks: how many checks, and how many gate evaluations the plan runs at least. */
  healthChecks?: number;
  gates?: number;
}

// ---------------------------------------------------------------------------------------
// Health checks (docs/spec.md "Health checks"): the effective checks, with every default filled
// in, as the applier runs them (it reads only the plan).

export type { GatePoint, OnFailure, RollbackScope, HealthCheckKind, HealthCheckMode } from '../rollout-spec/types.ts';
export { GATE_POINTS, ON_FAILURE, ROLLBACK_SCOPES, HEALTH_CHECK_KINDS, HEALTH_CHECK_MODES } from '../rollout-spec/types.ts';
import type { GatePoint, OnFailure, RollbackScope, HealthCheckKind, HealthCheckMode } from '../rollout-spec/types.ts';
import type { ParsedCondition } from '../domain/health-condition.ts';
import type { Matcher } from '../domain/alert-matchers.ts';

export interface PlanObjectKeyRef {
  namespace: string;
  name: string;
  key: string;
}
export type PlanHealthAuth = 'ServiceAccount' | 'none' | { bearerTokenSecret: PlanObjectKeyRef };
export type PlanHealthCa = 'system' | { configMap: PlanObjectKeyRef } | { secret: PlanObjectKeyRef };

export interface PlanHealthEndpoint {
  url: string;
  auth: PlanHealthAuth;
  ca: PlanHealthCa;
}
interface PlanPrometheusCheck extends PlanHealthEndpoint {
  query: string;
  condition: string;
  parsed: ParsedCondition;
  onEmpty: 'fail' | 'pass';
}
interface PlanAlertsCheck extends PlanHealthEndpoint {
  source: 'prometheus' | 'alertmanager';
  matchers: string[];
  ignore: string[];
  states: ('firing' | 'pending')[];
  /** "" : none. */
  heartbeat: string;
  /**
   * Never in a plan file: the matchers of the silences bootcplan holds for the nodes in flight as
   * the gate measures (src/apply/gates/silences.ts), one list per silence; the alerts they cover are
   * left out and counted (src/domain/health-observe.ts).
   */
  silenced?: Matcher[][];
}
interface PlanClusterOperatorsCheck {
  names: string[];
  ignore: string[];
}
export interface PlanConditionCheck {
  apiVersion: string;
  kind: string;
  namespace: string | null;
  name: string;
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string | null;
}

export interface PlanHealthCheck {
  /** Unique per pool; a pool that replaced an inherited check of the same name has an entry of its own. */
  name: string;
  kind: HealthCheckKind;
  prometheus?: PlanPrometheusCheck;
  alerts?: PlanAlertsCheck;
  clusterOperators?: PlanClusterOperatorsCheck;
  condition?: PlanConditionCheck;
  when: GatePoint[];
  intervalSeconds: number;
  successes: number;
  failureLimit: number;
  timeoutSeconds: number;
  requestTimeoutSeconds: number;
  /**
   * observe: measured and recorded, never acted on (a gate on trial); onFailure is what it does
   * once enforced. Absent: enforce (so an enforcing check is carried as plans before modes carry it).
   */
  mode?: HealthCheckMode;
  onFailure: OnFailure;
  scope: RollbackScope;
  /** The pools this entry gates. */
  pools: string[];
}

/**
 * Silences for the nodes in flight (docs/spec.md "Silences"), every default filled in: the
 * Alertmanager, the matcher templates (src/domain/silences.ts; one silence per template and node)
 * and the TTL, for the pools that have them (a pool's own section is an entry of its own).
 */
export interface PlanSilences {
  alertmanager: PlanHealthEndpoint;
  matchers: string[];
  ttlMinutes: number;
  pools: string[];
}

/** Where the waves fall in the maintenance windows, as evaluated when the plan was made. */
export type { PlanSchedule } from '../domain/schedule.ts';
import type { PlanSchedule } from '../domain/schedule.ts';
import type { SpecChanges } from './specdiff.ts';

export interface Plan {
  formatVersion: PlanFormatVersion;
  /** Content hash of the plan (without this field): the applier's lock and progress records carry it. */
  id: string;
  spec: PlanSpecInfo;
  cluster: PlanClusterInfo;
  changes: PlanChange[];
  bootImages: BootImagesPlan;
  pools: PlanPool[];
  /** The effective health checks, once each (src/plan/health.ts); present only when there are any. */
  healthChecks?: PlanHealthCheck[];
  /** The silences for the nodes in flight (src/plan/silences.ts); present only when there are any. */
  silences?: PlanSilences[];
  diagnostics: Diagnostic[];
  durations: PhaseDurations;
  summary: PlanSummary;
  /** With `plan --base REF`: what the change does to the spec file itself. */
  specChanges?: SpecChanges | null;
  /**
   * Saved with `plan --out --for-review` although the plan has errors: a file to read, never
   * to apply (part of the id, so it cannot be dropped without the id changing).
   */
  reviewOnly?: boolean;
  /** Present when the spec has maintenance windows. Not part of the plan id (it depends on the clock). */
  schedule?: PlanSchedule | null;
  /** A rollback plan (`plan --rollback`): what it reverses (formatVersion "1.2"). */
  rollback?: PlanRollback;
  /** Pools in parallel (formatVersion "1.3"); absent: pools roll one after another. */
  concurrency?: PlanConcurrency;
}
