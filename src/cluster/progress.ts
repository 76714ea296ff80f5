/**
 * What bootcplan keeps in a cluster about its applies (docs/design.md §7 "Apply is resumable";
 * docs/apply.md "Rollback"): the run record (ConfigMap `bootcplan-progress`, key `run.json`) and
 * each node's entry (Node annotation `bootcplan.dev/progress`). Types and pure codecs only: the
 * applier writes them (src/apply/engine/progress-book.ts), the drivers store them (src/kube/,
 * src/sim/), and the rollback planner (src/plan/rollback-planner.ts) reads them from a
 * snapshot, so they live below all three. The run record's size does not depend on the number
 * of nodes; a node's entry does not depend on the size of its pool.
 */
import type { KObject } from './types.ts';
import { isPlainObject } from '../base/schema.ts';

/** On a Node bootcplan updates: its progress entry, compact JSON (encodeNodeProgress). */
export const BOOTCPLAN_PROGRESS = 'bootcplan.dev/progress';

/**
 * An image pinned by digest (registry/repository@sha256:<64 hex>), the form the spec accepts
 * (src/rollout-spec/rollout-schema.ts DIGEST_REF_RE) and the form a node's `from` is kept in.
 */
export const DIGEST_REFERENCE = /^[a-z0-9][a-z0-9._\-/:]*[a-z0-9]@sha256:[0-9a-f]{64}$/;
/** A kept pullspec is at most this long (a Node annotation value is read whole). */
export const MAX_PULLSPEC = 512;

export const isDigestReference = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_PULLSPEC && DIGEST_REFERENCE.test(v);

/** Where a node is in its own update, written ahead of each disruptive step. */
export type NodeStep = 'cordon' | 'drain' | 'reboot' | 'booted' | 'done' | 'failed';
export const NODE_STEPS: readonly NodeStep[] = ['cordon', 'drain', 'reboot', 'booted', 'done', 'failed'];

export interface NodeProgress {
  /** The plan whose apply wrote the entry. */
  planId: string;
  pool: string;
  wave: number;
  step: NodeStep;
  /** The node was unschedulable before bootcplan touched it: it is left cordoned. */
  wasCordoned: boolean;
  /** ISO time of the reboot request. */
  rebootAt?: string;
  rebootKind?: 'soft' | 'hard';
  /**
   * The exact pullspec the node booted before bootcplan cordoned it (its BootcNode
   * status.booted.image, name@sha256:…), written in the cordon's write, ahead of the drain and
   * the reboot: the image a rollback may return it to, and no other (docs/safety.md).
   */
  from?: string;
}

/**
 * A bootc pool before the run (docs/apply.md "Rollback"): the BootcNodePool's spec.image.ref,
 * and the pullspec its scheduled nodes booted. bootc-operator gives every BootcNode of a pool the
 * same desiredImage (internal/controller syncBootcNodeSpec), so a pool whose nodes booted
 * different images has no single image to go back to: `mixed` lists them (at most 8).
 */
export interface BootcOrigin {
  kind: 'bootc';
  ref: string;
  image: string | null;
  digest: string | null;
  mixed: string[] | null;
}
/**
 * An MCO pool before the run: bootcplan's osImage MachineConfig (`osImageURL` null when the run
 * created it), the rendered config the pool ran, the one the run made the MCO render (set when
 * first seen), the image of the former, and when the run read all this (absent in records of an
 * earlier bootcplan). A node created after `readAt` joined the pool during the run: nothing says
 * it ever booted `image` (src/domain/rollback.ts joinedDuringRun).
 */
export interface McoOrigin {
  kind: 'mco';
  machineConfig: string;
  osImageURL: string | null;
  rendered: string;
  renderedTarget: string | null;
  image: string;
  readAt?: string;
}
export type PoolOrigin = BootcOrigin | McoOrigin;

export interface PoolProgress {
  /** Waves 1..wavesDone are finished (waves run in order: a cursor, not a list). */
  wavesDone: number;
  /** ISO time the last wave ended, with milliseconds (the soak counts from it; records of an earlier bootcplan have whole seconds). */
  lastWaveEnd?: string | null;
  done: boolean;
  /** `check`: the health check whose failure halted the pool (docs/apply.md "Health gates"). */
  halted?: { node: string | null; reason: string; check?: string } | null;
  /** Waves 1..gatesPassed passed their afterWave health gate (absent: none; a pool without afterWave checks never has it). */
  gatesPassed?: number;
  /**
   * MCO pools: bootcplan unpaused the pool for a wave and has not paused it again. Saved BEFORE
   * the unpause, so that an apply stopped by a signal, and any rerun, pauses the pool again
   * (src/apply/engine/interrupt.ts stopSafely, mco-pool.ts repauseLeftovers).
   */
  mcoUnpaused?: boolean;
  /**
   * bootc pools: node -> ISO time bootcplan first saw it staging, for the nodes whose BootcNode
   * gives no credible Staging time (src/apply/pools/staging-clock.ts). An entry goes when its node
   * passes the staging gate.
   */
  stagingSeen?: Record<string, string>;
  /** An apply of this pool was stopped by a signal here (cleared when a rerun continues the pool). */
  interrupted?: { at: string; wave: number | null; reason: string } | null;
  /** What the pool ran before the run (the first record of the run's chain saw it). */
  origin?: PoolOrigin | null;
}

/**
 * The rollout a record belongs to: one set of pool targets over one or more plan ids (an
 * `apply -f SPEC` that is run again plans again, and the new plan id continues the run).
 */
export interface RunChain {
  /** The first plan id of the chain. */
  id: string;
  /** Every plan id of the chain, oldest first (at most MAX_CHAIN: the oldest are dropped). */
  planIds: string[];
  /** pool -> its target digest (the image when the target has no digest). */
  targets: Record<string, string>;
}
export const MAX_CHAIN = 64;

/**
 * A pool held back for one target (docs/apply.md "Holds"): a later apply that targets it again
 * exits 5 without writing, until the spec targets another image or `apply --retry`.
 */
export interface Hold {
  pool: string;
  target: string;
  /** paused: the check said onFailure: pause, and apply --retry of the plan continues past its gate (src/apply/gates/holds.ts). */
  action: 'halted' | 'paused' | 'rolled-back';
  /** The health check that failed (null for a rollback a human planned). */
  check: string | null;
  observed: string;
  at: string;
  planId: string;
}
/** What a check on trial (mode: observe) would have said at its last gate: recorded, never acted on. */
export interface ObservingVerdict {
  check: string;
  pool: string | null;
  point: 'preflight' | 'afterWave' | 'afterNode' | 'batch';
  wave: number | null;
  node: string | null;
  result: 'passed' | 'failed';
  observed: string;
  at: string;
}
export const MAX_OBSERVING = 64;

/** The longest `observed` a hold or a rollback's trigger keeps (what a check saw; longer is cut). */
export const MAX_OBSERVED = 1024;
export const MAX_HOLDS = 16;

export type RollbackScope = 'run' | 'wave';
export const ROLLBACK_SCOPES: readonly RollbackScope[] = ['run', 'wave'];

export interface RollbackTrigger {
  kind: 'health-check' | 'manual';
  check: string | null;
  observed: string | null;
  at: string;
}

/** On a rollback's own run record: what it reverses. */
export interface RollbackOf {
  planId: string;
  scope: RollbackScope;
  pool: string | null;
  wave: number | null;
  trigger: RollbackTrigger;
  origins: Record<string, PoolOrigin>;
  /**
   * What an unfinished rollback is continued from (`plan --rollback` after it was stopped or
   * killed: docs/apply.md "Continuing a rollback"): the reversed run's start and plan ids (their
   * node entries say who the run updated), each pool's run target, the pools' order and the
   * wave of scope wave. Absent on a record that cannot be continued (then plan --rollback refuses).
   */
  startedAt?: string;
  run?: { id: string; planIds: string[] };
  targets?: Record<string, string>;
  order?: string[];
  scopeWave?: { planId: string; pool: string; wave: number } | null;
}

/** Where the run's spec came from, as the forward plan recorded it. */
export interface RunSpec {
  name: string;
  path: string;
  sha256: string;
  commit: string | null;
}

/**
 * A silence bootcplan holds on an Alertmanager for a node in flight (src/apply/gates/silences.ts
 * snapshot; docs/apply.md "Silences"): the ids Alertmanager answered, each silence's matchers as
 * text, and when they lapse unless extended. Written as they are created, extended and expired, so
 * `status` lists them; a crashed apply's stay listed until their end, as they stay in Alertmanager.
 */
export interface ActiveSilence {
  pool: string;
  node: string;
  ids: string[];
  matchers: string[];
  endsAt: string;
}
/** The nodes in flight are at most the pools' maxUnavailable: a record listing more is not bootcplan's. */
export const MAX_SILENCES = 1024;

/** The run record: one per cluster; its size does not depend on the number of nodes (the silences: of the nodes in flight only). */
export interface ProgressRecord {
  planId: string;
  startedAt: string;
  updatedAt: string;
  /** Every change of the plan is in the cluster (targets set). */
  changesApplied: boolean;
  pools: Record<string, PoolProgress>;
  done: boolean;
  /** The preflight health gate passed for this record (a resumed run does not repeat it). */
  preflightPassed?: boolean;
  run?: RunChain;
  spec?: RunSpec;
  /** Carried into every later run record (src/apply/gates/holds.ts). At most one per pool. */
  holds?: Hold[];
  /**
   * The last verdict of each check on trial (mode: observe) per pool (null: the preflight gate),
   * as it would have been given (docs/apply.md "Health gates"); at most MAX_OBSERVING.
   */
  observing?: ObservingVerdict[];
  /** Only on a rollback's own run record. */
  rollbackOf?: RollbackOf | null;
  /** The silences that exist for the nodes in flight (absent or empty: none). */
  silences?: ActiveSilence[];
}

/** What a driver's readProgress returns. */
export interface ProgressState {
  run: ProgressRecord | null;
  /** The run record's version (resourceVersion) for the next write; null when there is none. */
  version: string | null;
  /** Node name -> its progress entry (nodes without one are left out). */
  nodes: Record<string, NodeProgress>;
}

// ---------------------------------------------------------------------------------- node entries

/** The annotation's value: the entry's fields in a fixed order, absent optional fields left out. */
export function encodeNodeProgress(p: NodeProgress): string {
  const o: NodeProgress = { planId: p.planId, pool: p.pool, wave: p.wave, step: p.step, wasCordoned: p.wasCordoned };
  if (p.rebootAt !== undefined) o.rebootAt = p.rebootAt;
  if (p.rebootKind !== undefined) o.rebootKind = p.rebootKind;
  if (p.from !== undefined) o.from = p.from;
  return JSON.stringify(o);
}

/**
 * The entry an annotation value holds, or null when it is not one bootcplan wrote (not JSON,
 * a field missing or of another type, a `from` that is not a digest reference). A node without
 * a usable entry is treated as one bootcplan has not touched: never driven as in flight, never
 * rolled back; its cordon is still recognised by `bootcplan.dev/cordoned-by`.
 */
export function decodeNodeProgress(text: unknown): NodeProgress | null {
  if (typeof text !== 'string' || text.length > 4096) return null;
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(o)) return null;
  const step = NODE_STEPS.find((s) => s === o.step);
  if (
    typeof o.planId !== 'string' ||
    typeof o.pool !== 'string' ||
    typeof o.wave !== 'number' ||
    !Number.isSafeInteger(o.wave) ||
    !step ||
    typeof o.wasCordoned !== 'boolean'
  )
    return null;
  if (o.rebootAt !== undefined && typeof o.rebootAt !== 'string') return null;
  if (o.rebootKind !== undefined && o.rebootKind !== 'soft' && o.rebootKind !== 'hard') return null;
  if (o.from !== undefined && !(typeof o.from === 'string' && isDigestReference(o.from))) return null;
  const p: NodeProgress = { planId: o.planId, pool: o.pool, wave: o.wave, step, wasCordoned: o.wasCordoned };
  if (typeof o.rebootAt === 'string') p.rebootAt = o.rebootAt;
  if (o.rebootKind === 'soft' || o.rebootKind === 'hard') p.rebootKind = o.rebootKind;
  if (typeof o.from === 'string') p.from = o.from;
  return p;
}

/** The entry on a Node object, or null. */
export function nodeProgressOf(node: KObject | undefined): NodeProgress | null {
  return decodeNodeProgress(node?.metadata.annotations?.[BOOTCPLAN_PROGRESS]);
}

/** Every node's entry, by node name. */
export function nodeProgressOfAll(nodes: Iterable<KObject>): Record<string, NodeProgress> {
  const out: Record<string, NodeProgress> = {};
  for (const n of nodes) {
    const p = nodeProgressOf(n);
    if (p) out[n.metadata.name] = p;
  }
  return out;
}
