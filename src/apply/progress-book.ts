/**
 * The progress record of an apply (DESIGN §7 "Apply is resumable"): what a rerun needs to
 * continue. It is written ahead of every disruptive step; a rerun of the same plan reads
 * it back and resumes, and a rerun of another plan keeps what the stopped one knew about
 * the cordons it owns.
 */
import type { Plan, PlanPool } from '../plan/types.ts';
import { type ClusterDriver, type ProgressRecord, type NodeProgress, type PoolProgress, isoOf } from './driver.ts';

export class ProgressBook {
  private rec!: ProgressRecord;
  /** The record was this plan's already: this apply continues an earlier one. */
  resumed = false;

  constructor(private readonly driver: ClusterDriver, private readonly plan: Plan, private readonly pools: readonly PlanPool[]) {}

  /** The whole record (loaded by `load`). */
  get record(): ProgressRecord {
    return this.rec;
  }

  /** The entries of the nodes being updated, by node name. */
  get nodes(): Record<string, NodeProgress> {
    return this.rec.nodes;
  }

  async load(): Promise<void> {
    const old = await this.driver.readProgress();
    if (old && old.planId === this.plan.id) {
      this.rec = old;
      this.resumed = true;
      return;
    }
    const nodes: Record<string, NodeProgress> = {};
    // Another plan's apply stopped half-way: keep what it knew about cordons it owns.
    if (old && !old.done) for (const [k, v] of Object.entries(old.nodes)) if (v.step !== 'done') nodes[k] = v;
    this.rec = {
      planId: this.plan.id, startedAt: isoOf(this.driver.clock.now()), updatedAt: isoOf(this.driver.clock.now()), changesApplied: false,
      pools: Object.fromEntries(this.pools.map((p) => [p.name, { finishedWaves: [], lastWaveEnd: null, done: false, halted: null } satisfies PoolProgress])),
      nodes, done: false,
    };
  }

  async save(): Promise<void> {
    this.rec.updatedAt = isoOf(this.driver.clock.now());
    await this.driver.writeProgress(this.rec);
  }

  /**
   * Changes a node's entry of the progress record. Entries are replaced (frozen), never
   * changed in place: the record is written whole at every step of every node, and a
   * driver may then tell an entry it has seen by its identity.
   */
  setNode(name: string, change: Partial<NodeProgress>): void {
    const rec = this.rec.nodes[name];
    if (rec) this.rec.nodes[name] = Object.freeze({ ...rec, ...change });
  }

  /** A new entry for a node (frozen, like every entry: see setNode). */
  putNode(name: string, entry: NodeProgress): void {
    this.rec.nodes[name] = Object.freeze(entry);
  }

  /** Finished nodes leave the record (it stays small); `finishedWaves` keeps the history. */
  dropNode(name: string): void {
    delete this.rec.nodes[name];
  }

  /** An update of this pool that bootcplan started and has not finished. */
  drives(pool: string, name: string): boolean {
    const rec = this.rec.nodes[name];
    return !!rec && rec.pool === pool && rec.step !== 'done';
  }

  /** The node's update went past its cordon (an earlier run drained or rebooted it). */
  pastCordon(name: string): boolean {
    const rec = this.rec.nodes[name];
    return !!rec && rec.step !== 'cordon';
  }

  pool(name: string): PoolProgress {
    return (this.rec.pools[name] ??= { finishedWaves: [], lastWaveEnd: null, done: false, halted: null });
  }
}
