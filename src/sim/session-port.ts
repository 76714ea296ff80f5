/**
 * What the simulated cluster and its driver sessions know of each other (docs/design.md §1
 * `src/sim`), below both: a session (driver.ts) and the parts it goes through (cordons.ts,
 * lease.ts, waits.ts) read the cluster as a SimClusterPort and are known to it as a SimSession,
 * so neither file imports the other, not even for types.
 */
import type { Operation } from 'fast-json-patch';
import type { ClusterSnapshot, KObject } from '../cluster/types.ts';
import type { NodeObject, ViewOf } from '../cluster/kinds.ts';
import type { PhaseDurations } from '../plan/types.ts';
import type { DesiredImageState, LockRecord, NodeProgress, ObjectRef, PoolKind, WaitOptions } from '../apply/ports/driver.ts';
import type { LeaseObserver } from '../domain/lease-expiry.ts';
import { NamedError } from '../base/errors.ts';
import type { SimRollouts } from './rollouts.ts';
import type { SimProgress } from './progress-store.ts';

/** A pending call of a killed session fails with this (`kill -9` of the apply process). */
export class KilledError extends NamedError {
  constructor() {
    super('the apply process was killed');
  }
}

/** One apply process as the cluster's parts know it: its name, and its memory of the lock Lease. */
export interface SimSession {
  readonly name: string;
  readonly leaseObserver: LeaseObserver;
}

/** A cordon as the rehearsal's peak reads it: the pool's unavailability and budget at that instant. */
export interface CordonRecord {
  t: number;
  node: string;
  pool: string | null;
  session: string;
  unavailableAfter: number;
  budget: number | null;
  wasUnavailable: boolean;
}

/** The lock Lease as a session takes, renews, releases and reads it (lease.ts). */
export interface SimLockPort {
  readAs(session: SimSession): LockRecord | null;
  acquire(session: SimSession, req: { holder: string; planId: string; ttlSeconds: number }): LockRecord;
  renew(session: SimSession, lockId: string): LockRecord;
  release(session: SimSession, lockId: string): boolean;
}

/** What a session and its cordons read and write of the simulated cluster (cluster.ts implements it). */
export interface SimClusterPort {
  readonly now: number;
  readonly start: number;
  readonly nodes: ReadonlyMap<string, NodeObject>;
  readonly cordons: CordonRecord[];
  readonly rollouts: SimRollouts;
  readonly progress: SimProgress;
  readonly lock: SimLockPort;
  get<K extends string>(kind: K, name: string, namespace?: string | null): ViewOf<K> | undefined;
  changed(o: KObject | undefined): void;
  touch(node: string): void;
  durationsOf(node: string): PhaseDurations;
  isUnavailable(node: string): boolean;
  countUnavailable(poolKey: string): number;
  budgetOf(poolKey: string): number | null;
  poolKeyOf(node: string): string | null;
  snapshotCopy(): ClusterSnapshot;
  sleep(seconds: number, signal: AbortSignal | undefined, session: SimSession | null): Promise<void>;
  waitFor<T>(predicate: (s: ClusterSnapshot) => T | null | undefined | false, opts: WaitOptions, session: SimSession | null): Promise<T | null>;
  killSession(s: SimSession): void;
  maybeConflict(session: SimSession, what: string): void;
  record(session: Pick<SimSession, 'name'>, op: string, target: string): void;
  patchObject(ref: ObjectRef, ops: Operation[]): KObject;
  createObject(obj: KObject): KObject;
  deleteObject(obj: KObject): void;
  setDesiredImageState(session: SimSession, node: string, state: DesiredImageState): void;
  setPoolPaused(session: SimSession, kind: PoolKind, name: string, paused: boolean, by: string): void;
  writeNodeProgress(session: SimSession, node: string, p: NodeProgress): void;
}
