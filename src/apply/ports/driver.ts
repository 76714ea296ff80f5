/**
 * The ClusterDriver: everything the applier needs from a cluster, and nothing more.
 * Two implementations: the simulated cluster (src/sim/cluster.ts, virtual clock) and the
 * Kubernetes driver (src/kube/, on @kubernetes/client-node). The applier is written only
 * against this interface, so a rehearsal runs exactly the code an apply runs.
 *
 * Conventions for every implementation:
 * - Every method is async and may reject with ConflictError (a transient 409: retry),
 *   PreconditionFailedError (a JSON-patch `test` failed: the object moved), NotFoundError,
 *   or DriverError (anything else). The applier retries ConflictError itself.
 * - Objects are identified by kind + name (+ namespace); all bootcplan touches are
 *   cluster-scoped except the lock and progress record (namespace BOOTCPLAN_NAMESPACE).
 * - Time comes only from `clock`: the simulator drives a virtual clock, the Kubernetes
 *   driver the wall clock. The applier never calls Date.now() or setTimeout.
 */
import type { Operation } from 'fast-json-patch';
import type { ClusterSnapshot, KObject } from '../../cluster/types.ts';
import type { ObjectRef } from '../../cluster/objects.ts';
export type { ObjectRef } from '../../cluster/objects.ts';
import type { RolloutStatus, RolloutCondition, ClusterEventRecord } from './rollout-object.ts';
import type { LockSighting } from '../../domain/lease-expiry.ts';
import { BootcplanError, EXIT, NamedError } from '../../base/errors.ts';

/** Seconds since the Unix epoch (fractions allowed). */
export type Seconds = number;

export interface Clock {
  /** Current time, seconds since the epoch. */
  now(): Seconds;
  /** Resolves after `seconds`; rejects with AbortedError when `signal` aborts first. */
  sleep(seconds: number, signal?: AbortSignal): Promise<void>;
}

export type PoolKind = 'MachineConfigPool' | 'BootcNodePool';
/** ClusterDriver.cordon: bootcplan cordoned the node now (and marked it), or it was unschedulable already. */
export type CordonResult = 'cordoned' | 'already-cordoned';
/** ClusterDriver.uncordon: undone, only a stale mark removed, or not bootcplan's cordon (left alone). */
export type UncordonResult = 'uncordoned' | 'mark-cleared' | 'not-ours';
export type DesiredImageState = 'Staged' | 'Booted';

export interface LockRecord {
  /** Opaque id, needed by `unlock`. */
  lockId: string;
  /** Who holds it: user@host, CI job name, ... */
  holder: string;
  /** The plan being applied. */
  planId: string;
  /** ISO 8601: when the lock was acquired. */
  since: string;
  /** ISO 8601: last renewal. */
  renewedAt: string;
  /** The lock expires this long after the last renewal (Lease leaseDurationSeconds). */
  ttlSeconds: number;
}

export interface WaitOptions {
  /** Give up after this long (then waitFor resolves with `null`). */
  timeoutSeconds: number;
  /** Stop waiting (waitFor rejects with AbortedError). */
  signal?: AbortSignal;
  /** Human description, for logs and debugging. */
  description?: string;
}

export interface DrainOptions {
  /** null: no limit (bootc-operator and `kubectl drain` default). */
  timeoutSeconds: number | null;
  /** Stop evicting and waiting (drain rejects with AbortedError); the node stays cordoned. */
  signal?: AbortSignal;
}

export interface ClusterDriver {
  readonly clock: Clock;

  /** A fresh, self-contained snapshot (the caller may keep and mutate it). */
  snapshot(): Promise<ClusterSnapshot>;

  /**
   * Waits until `predicate` returns a value other than undefined/null/false for the
   * cluster's state, and resolves with that value; resolves with null on timeout.
   * The predicate is evaluated at once, then whenever the state may have changed (after
   * every event in the simulator; on watch events or at a short poll interval in a real
   * cluster). The snapshot passed to it is read-only and valid only during the call.
   */
  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions): Promise<T | null>;

  /**
   * Applies an RFC 6902 JSON patch to one object atomically. `test` operations are
   * preconditions: if one fails nothing is written and PreconditionFailedError is thrown.
   */
  patch(ref: ObjectRef, ops: Operation[]): Promise<KObject>;

  /** Creates an object; AlreadyExistsError when it exists. */
  create(obj: KObject): Promise<KObject>;

  /**
   * Deletes one object, only while it is at `resourceVersion` (DeleteOptions preconditions; null:
   * none): PreconditionFailedError when it changed since it was read, NotFoundError when it is
   * gone. A rollback deletes the osImage MachineConfig its run created (docs/apply.md "Rollback").
   */
  delete(ref: ObjectRef, opts: { resourceVersion: string | null }): Promise<void>;

  /**
   * bootcplan's own cordon (docs/safety.md rule 6; src/domain/cordons.ts): when the Node is
   * schedulable, sets spec.unschedulable=true and the annotation `bootcplan.dev/cordoned-by: by`
   * in one write (a merge patch with the resourceVersion read, so a cordon someone else set in
   * between is never taken for bootcplan's) and resolves 'cordoned'. A Node already
   * unschedulable is not written ('already-cordoned': the cordon is not bootcplan's).
   * `progress`: the node's progress entry (src/apply/ports/node-progress.ts), written in the same
   * patch when the cordon is written (the write-ahead record and the cordon are one write).
   */
  cordon(node: string, by: string, progress?: NodeProgress): Promise<CordonResult>;
  /**
   * Undoes bootcplan's own cordon only: when the Node carries `bootcplan.dev/cordoned-by: by`,
   * removes spec.unschedulable and the annotation in one write and resolves 'uncordoned'
   * ('mark-cleared' when the node had been made schedulable by someone else meanwhile: only the
   * stale mark goes). A Node without that mark (an administrator's cordon) is not written:
   * 'not-ours'. `progress`: the node's progress entry, written in the same patch when there is one.
   */
  uncordon(node: string, by: string, progress?: NodeProgress): Promise<UncordonResult>;
  /**
   * Evicts the node's pods through the eviction API (PodDisruptionBudgets respected,
   * DaemonSet pods skipped, emptyDir data deleted) and resolves when none is left.
   * The node must be cordoned. Rejects with DrainTimeoutError after `timeoutSeconds`, with
   * AbortedError when `signal` aborts (no eviction is sent after that).
   */
  drain(node: string, opts: DrainOptions): Promise<void>;

  /** Sets BootcNode `spec.desiredImageState` (Booted = apply the staged image and reboot). */
  setDesiredImageState(node: string, state: DesiredImageState): Promise<void>;

  /**
   * MachineConfigPool spec.paused or BootcNodePool spec.rollout.paused. Idempotent. bootcplan's
   * own pause carries the annotation `bootcplan.dev/paused-by: by`, written in the same patch as
   * the pause (only when it flips the switch: a pool paused already is not written) and removed
   * in the same patch as the unpause: a paused pool without it was paused by someone else (an
   * administrator), and the planner leaves it paused (docs/safety.md rule 6).
   */
  setPoolPaused(kind: PoolKind, name: string, paused: boolean, by: string): Promise<void>;

  /**
   * Takes the cluster lock (a coordination.k8s.io Lease in BOOTCPLAN_NAMESPACE). Succeeds
   * when there is no lock or the existing one expired: THIS driver (process) has read it
   * unchanged for its whole duration (client-go's observedTime rule, src/domain/lease-expiry.ts;
   * never renewedAt compared with the local clock). Otherwise throws LockHeldError naming the
   * holder, since when, the plan and the lock id. Writes carry a resourceVersion precondition.
   */
  acquireLock(req: { holder: string; planId: string; ttlSeconds: number }): Promise<LockRecord>;
  /**
   * Extends the lock (a write conditional on the resourceVersion last seen); throws
   * LockLostError when `lockId` no longer holds it, any other error when it could not tell
   * (the caller retries those until the lease would expire: src/apply/engine/lease.ts).
   */
  renewLock(lockId: string): Promise<LockRecord>;
  /** Deletes the lock if `lockId` holds it; returns false when it did not. */
  releaseLock(lockId: string): Promise<boolean>;
  /** The lock as it is; a read is an observation for the expiry rule above. */
  readLock(): Promise<LockRecord | null>;

  /**
   * Resume state (docs/design.md §7 "Apply is resumable"): the run record (a ConfigMap in
   * BOOTCPLAN_NAMESPACE) with the version to write it against, and every node's progress
   * entry (the Node annotation `bootcplan.dev/progress`, read with the nodes: no request per node).
   */
  readProgress(): Promise<ProgressState>;
  /**
   * Writes the run record if it is still at `version` (null: it must not exist yet) and
   * resolves with its new version; ProgressMovedError when someone else wrote it meanwhile.
   */
  writeProgress(p: ProgressRecord, version: string | null): Promise<string>;
  /**
   * Writes one node's progress entry (the Node annotation), conditional on the Node's
   * resourceVersion as last read (ConflictError when it moved: retry).
   */
  writeNodeProgress(node: string, p: NodeProgress): Promise<void>;
  /**
   * The rollout status object (docs/gitops.md "The rollout status"): the spec's own object, bootcplan.dev/v1alpha1
   * Rollout `name` in BOOTCPLAN_NAMESPACE, as Argo CD or Flux synced it; null when there is
   * none (or its CRD is not installed). rollout-report.ts reads it once per run.
   */
  readRollout(name: string): Promise<RolloutObject | null>;
  /**
   * Writes the Rollout object's status (its status subresource, a JSON merge patch: fields
   * not in `status`, such as lockObserved, stay as they are).
   */
  writeRolloutStatus(name: string, status: RolloutStatus): Promise<void>;
  /**
   * Writes only status.lockObserved (null removes it): what `apply --step` saw of a lock it
   * could not take, for the next run (src/domain/lease-expiry.ts judgeHeldLock).
   */
  writeRolloutLockObserved(name: string, seen: LockSighting | null): Promise<void>;
  /**
   * Records a Kubernetes Event (events.k8s.io/v1) about `e.regarding`, reported by
   * bootcplan.dev/apply; `uid`: the regarding object's uid when known (kubectl describe
   * matches on it). Events of cluster-scoped objects go to namespace `default`.
   */
  recordEvent(e: ClusterEventRecord, uid: string | null): Promise<void>;
}

/** What apply reads of the Rollout object. */
export interface RolloutObject {
  uid: string | null;
  generation: number;
  spec: unknown;
  /** status.conditions as they are (their lastTransitionTime carries over). */
  conditions: RolloutCondition[];
  /** status.lockObserved when it has the expected shape, else null. */
  lockObserved: LockSighting | null;
}

// ---------------------------------------------------------------------------------------
// Progress: what a rerun needs to continue (docs/design.md §7 "Apply is resumable"), and what a rollback
// reads back. The types live below the plan layer (src/cluster/progress.ts), so that the
// rollback planner can read them from a snapshot; they are re-exported here for the drivers.

export type {
  NodeStep,
  NodeProgress,
  PoolProgress,
  ProgressRecord,
  ProgressState,
  PoolOrigin,
  BootcOrigin,
  McoOrigin,
  RunChain,
  Hold,
  RollbackOf,
} from '../../cluster/progress.ts';
import type { NodeProgress, ProgressRecord, ProgressState } from '../../cluster/progress.ts';

// ---------------------------------------------------------------------------------------
// Errors a driver throws.

/**
 * A cluster failure (docs/design.md §3: exit 1). Each class says what to do about it in its `hint`, which
 * the CLI prints under the message when the applier does not turn the error into another one.
 */
export class DriverError extends BootcplanError {
  readonly exitCode = EXIT.error;
  constructor(message: string, hint = 'check the cluster (bootcplan status shows what the last apply did), then run the command again') {
    super(message, hint);
  }
}
/** A transient write conflict (HTTP 409): retrying the same request is safe. */
export class ConflictError extends DriverError {
  constructor(message: string) {
    super(
      message,
      'another client kept writing the object while bootcplan retried: `bootcplan status` shows where the apply stopped; run it again to continue',
    );
  }
}
/** A JSON-patch `test` failed: the object is not what the plan saw. */
export class PreconditionFailedError extends DriverError {
  readonly path: string;
  constructor(message: string, path: string) {
    super(message, 'the object changed since the plan read it: run `bootcplan plan` again, review it, and apply the new plan');
    this.path = path;
  }
}
export class NotFoundError extends DriverError {
  constructor(message: string) {
    super(message, 'the object was deleted while bootcplan worked (or its resource type is not installed): check it with `kubectl get`, then plan again');
  }
}
export class AlreadyExistsError extends DriverError {
  constructor(message: string) {
    super(message, 'another client created the object meanwhile: check who (`kubectl get -o yaml`), then plan again');
  }
}
export class DrainTimeoutError extends DriverError {
  constructor(message: string) {
    super(
      message,
      "a PodDisruptionBudget or a pod that cannot be evicted holds the node: check `kubectl get pdb -A` and the pods left on it, or raise the pool's drainTimeoutSeconds",
    );
  }
}
export class LockLostError extends DriverError {
  constructor(message: string, hint = 'another apply took the lock, or the Lease was deleted: `bootcplan status` shows who holds it now') {
    super(message, hint);
  }
}
/**
 * The run record moved since this apply last read or wrote it: another apply wrote it (the
 * lock was lost). The apply stops before its next step, as for a lost lock.
 */
export class ProgressMovedError extends LockLostError {
  constructor(message: string) {
    super(message, 'another apply wrote the run record: `bootcplan status` shows who holds the lock now and where each apply stopped');
  }
}
/** A wait or a drain ended by its AbortSignal: a signal between parts, never a command's error. */
export class AbortedError extends NamedError {
  constructor(message = 'aborted') {
    super(message);
  }
}

/** ISO 8601 (seconds precision) of a clock reading. */
export function isoOf(t: Seconds): string {
  return new Date(Math.round(t * 1000)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * ISO 8601 with milliseconds, for a time bootcplan counts from again (a wave's end, which its
 * soak counts from): a time cut to the second would make that wait up to a second short.
 */
export function isoMsOf(t: Seconds): string {
  return new Date(Math.round(t * 1000)).toISOString();
}
