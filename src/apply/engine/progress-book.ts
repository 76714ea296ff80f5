/**
 * The progress of an apply (docs/design.md §7 "Apply is resumable"): what a rerun needs to continue.
 * Two parts, neither growing with the number of nodes:
 * - each node's entry lives on its Node (annotation `bootcplan.dev/progress`,
 *   src/apply/ports/node-progress.ts), written with the cordon (ahead of the drain and the reboot
 *   request, which the BootcNode itself records: views.ts rebootRequested) and marked done with
 *   the uncordon, in the same writes (the driver's `cordon`/`uncordon`);
 * - the run record (plan id, per pool the wave cursor, soak time, done, halted; changes
 *   applied; done) is written only when it changed, against the version last read or written:
 *   a write that finds it moved means another apply wrote it, and this one stops (exit 4).
 * A rerun of the same plan reads both back and resumes; a rerun of another plan keeps the
 * entries of nodes still in flight (their cordons are bootcplan's to undo). A finished node's
 * entry is marked `done` (in the uncordon's write), never removed: `status` counts them, and a
 * node marked done is never driven again.
 */
import type { Plan, PlanPool } from '../../plan/types.ts';
import { LockHeldError } from '../../base/errors.ts';
import { retry } from './retry.ts';
import { type ClusterDriver, type ProgressRecord, type NodeProgress, type PoolProgress, ProgressMovedError, isoOf } from '../ports/driver.ts';
import { poolOrigins } from '../../plan/rollback-origins.ts';
import { newRunFields, rollbackRunFields } from './run-chain.ts';
import { peek } from '../ports/views.ts';

const newPool = (): PoolProgress => ({ wavesDone: 0, lastWaveEnd: null, done: false, halted: null });

/** A halt reason may list nodes: the run record keeps at most this much of it. */
const MAX_REASON = 500;

export class ProgressBook {
  private rec!: ProgressRecord;
  private version: string | null = null;
  /** The run record as last written (or read): save() writes only when it differs. */
  private written = '';
  /** The save in progress: saves are serialized (see save). */
  private saving: Promise<void> = Promise.resolve();
  /** Entries of nodes in flight (step other than done), by node name. */
  private entries: Record<string, NodeProgress> = {};
  /** The run record was this plan's already: this apply continues an earlier one. */
  resumed = false;
  /** Another plan's run record this apply replaces (read at load), or null. */
  previous: ProgressRecord | null = null;

  constructor(
    private readonly driver: ClusterDriver,
    private readonly plan: Plan,
    private readonly pools: readonly PlanPool[],
  ) {}

  /** `load` ran: the record is there. */
  get loaded(): boolean {
    return this.rec !== undefined;
  }

  /** The run record (loaded by `load`). */
  get record(): ProgressRecord {
    return this.rec;
  }

  /** The entries of the nodes in flight, by node name. */
  get nodes(): Record<string, NodeProgress> {
    return this.entries;
  }

  async load(): Promise<void> {
    const st = await this.driver.readProgress();
    this.version = st.version;
    // Nodes still in flight, whichever plan's apply left them (their cordons are bootcplan's).
    for (const [name, e] of Object.entries(st.nodes)) if (e.step !== 'done') this.entries[name] = Object.freeze(e);
    if (st.run && st.run.planId === this.plan.id) {
      this.rec = st.run;
      this.resumed = true;
      this.written = JSON.stringify(st.run);
      return;
    }
    this.previous = st.run;
    const now = isoOf(this.driver.clock.now());
    if (this.plan.rollback) {
      this.rec = {
        planId: this.plan.id,
        startedAt: now,
        updatedAt: now,
        changesApplied: false,
        pools: Object.fromEntries(this.pools.map((p) => [p.name, newPool()])),
        done: false,
        ...rollbackRunFields(st.run, this.plan, this.plan.rollback),
      };
      return;
    }
    const { origins: kept, ...run } = newRunFields(st.run, this.plan);
    this.rec = {
      planId: this.plan.id,
      startedAt: now,
      updatedAt: now,
      changesApplied: false,
      pools: Object.fromEntries(this.pools.map((p) => [p.name, { ...newPool(), ...(kept[p.name] ? { origin: kept[p.name] } : {}) }])),
      done: false,
      ...run,
    };
  }

  /**
   * What each pool of a new run runs now, before the run writes anything (the way back:
   * docs/apply.md "Rollback"), for the pools the run it continues did not record; read from the
   * driver's current view (no request of its own). An MCO pool's origin keeps when it was read:
   * a node created later joined the pool during the run (docs/safety.md "Rollback"). The caller
   * saves the record before its first write.
   */
  async recordOrigins(): Promise<void> {
    if (this.resumed || this.plan.rollback) return;
    const missing = this.pools.filter((p) => !this.rec.pools[p.name]?.origin);
    if (!missing.length) return;
    const readAt = isoOf(this.driver.clock.now());
    const origins = await peek(this.driver, (s) => poolOrigins(this.plan, s));
    for (const p of missing) {
      const o = origins[p.name];
      if (o) this.pool(p.name).origin = o.kind === 'mco' ? { ...o, readAt } : o;
    }
  }

  /**
   * Writes the run record when it changed. Saves run one after another: the slot runner's
   * nodes finish concurrently, and two writes against the same resourceVersion would make the
   * second look like another apply's (ProgressMovedError).
   */
  save(): Promise<void> {
    const next = this.saving.then(() => this.saveNow());
    this.saving = next.catch(() => undefined);
    return next;
  }

  private async saveNow(): Promise<void> {
    for (const p of Object.values(this.rec.pools))
      if (p.halted && p.halted.reason.length > MAX_REASON) p.halted.reason = p.halted.reason.slice(0, MAX_REASON - 3) + '...';
    const { updatedAt: _, ...rest } = this.rec;
    const body = JSON.stringify(rest);
    if (body === this.written) return;
    this.rec.updatedAt = isoOf(this.driver.clock.now());
    try {
      this.version = await this.driver.writeProgress(this.rec, this.version);
    } catch (err) {
      if (err instanceof ProgressMovedError) {
        throw new LockHeldError(
          'another apply, which wrote the progress record meanwhile (this apply lost its lock)',
          isoOf(this.driver.clock.now()),
          'unknown',
          null,
        );
      }
      throw err;
    }
    this.written = body;
  }

  /** Changes a node's entry in memory (entries are replaced, never changed in place); `writeNode` writes it. */
  setNode(name: string, change: Partial<NodeProgress>): void {
    const rec = this.entries[name];
    if (rec) this.entries[name] = Object.freeze({ ...rec, ...change });
  }

  /** A new entry for a node, in memory. */
  putNode(name: string, entry: Omit<NodeProgress, 'planId'>): void {
    this.entries[name] = Object.freeze({ planId: this.plan.id, ...entry });
  }

  /** The node is no longer in flight (its entry was marked done on the Node, or never written). */
  dropNode(name: string): void {
    delete this.entries[name];
  }

  /** Writes the node's entry, as it is in memory, to its Node. */
  async writeNode(name: string): Promise<void> {
    const e = this.entries[name];
    if (e) await retry(() => this.driver.writeNodeProgress(name, e));
  }

  /** The node's entry marked done (to write with its uncordon, or alone); undefined without an entry. */
  doneEntry(name: string): NodeProgress | undefined {
    const e = this.entries[name];
    return e ? { ...e, planId: this.plan.id, step: 'done' } : undefined;
  }

  /** Marks the node's entry done on the Node (when no uncordon carried it) and drops it. */
  async finishNode(name: string): Promise<void> {
    const done = this.doneEntry(name);
    if (done) await retry(() => this.driver.writeNodeProgress(name, done));
    this.dropNode(name);
  }

  /** An update of this pool that bootcplan started and has not finished. */
  drives(pool: string, name: string): boolean {
    const rec = this.entries[name];
    return !!rec && rec.pool === pool && rec.step !== 'done';
  }

  /** The node's update went past its cordon (an earlier run drained or rebooted it). */
  pastCordon(name: string): boolean {
    const rec = this.entries[name];
    return !!rec && rec.step !== 'cordon';
  }

  /** When the run record says bootcplan first saw `node` of `pool` staging (epoch seconds), or null. */
  stagingSeen(pool: string, node: string): number | null {
    const m = this.rec.pools[pool]?.stagingSeen;
    const t = m && Object.hasOwn(m, node) ? Date.parse(m[node]) / 1000 : NaN;
    return Number.isFinite(t) ? t : null;
  }

  /** Records, in memory, that `node` of `pool` was first seen staging at `at` (src/apply/pools/staging-clock.ts). */
  seeStaging(pool: string, node: string, at: number): void {
    (this.pool(pool).stagingSeen ??= {})[node] = isoOf(at);
  }

  /** The node passed the staging gate: its first sight is no longer needed. */
  forgetStaging(pool: string, node: string): void {
    const p = this.rec.pools[pool];
    if (!p?.stagingSeen || !Object.hasOwn(p.stagingSeen, node)) return;
    delete p.stagingSeen[node];
    if (!Object.keys(p.stagingSeen).length) delete p.stagingSeen;
  }

  pool(name: string): PoolProgress {
    return (this.rec.pools[name] ??= newPool());
  }

  /** Wave `k` of the pool finished (in this run or an earlier one). */
  waveDone(pool: string, k: number): boolean {
    return this.pool(pool).wavesDone >= k;
  }

  /** Records wave `k` finished (waves finish in order). */
  finishWave(pool: string, k: number): void {
    const p = this.pool(pool);
    p.wavesDone = Math.max(p.wavesDone, k);
  }
}
