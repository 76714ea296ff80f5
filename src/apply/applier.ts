/**
 * The applier: carries a Plan out through a ClusterDriver (DESIGN §7 "Pools and waves").
 * Driver-agnostic: `bootcplan apply` runs it against a real cluster, `bootcplan rehearse`
 * and the tests against the simulated one, with the same code.
 *
 * Order: MachineConfiguration steps (each `waitAfter` honoured) -> ControlPlaneMachineSet
 * -> the targets of every bootc pool (so all bootc nodes stage in parallel, once) -> pools
 * in ascending priority, each wave by wave.
 *
 * Safety rules, in the order they are checked:
 * - a plan with an error diagnostic is never applied (exit 6 for a control-plane
 *   replacement the spec does not allow, 1 otherwise);
 * - one apply at a time: a Lease held through the driver (exit 4 for the second one);
 * - before any write and before each wave, plan again from the cluster as it is now; if
 *   the remaining work differs from the saved plan, stop (exit 3) and list the difference;
 * - a node is cordoned only while the pool's unavailable count, with it, stays within
 *   maxUnavailable (nodes already out of service count; they need no extra budget);
 * - bootc waves may be regrouped (soft reboots together, once staging shows which nodes
 *   can soft-reboot) but never enlarged, and only among the saved plan's remaining nodes
 *   (composeBootcWave);
 * - a failed node (Degraded, or not back in time) halts the pool: it is paused, the
 *   remaining waves are left untouched (exit 5);
 * - progress is written ahead of every disruptive step, and a rerun reads the cluster's
 *   own state before acting, so an interrupted apply resumes where it stopped and never
 *   reboots a node twice (a node already on the target is never asked to reboot).
 */
import { setMaxListeners } from 'node:events';
import type { Operation } from 'fast-json-patch';
import type { Plan, PlanChange, PlanPool } from '../plan/types.ts';
import type { ClusterSnapshot, Condition, KObject } from '../cluster/types.ts';
import { indexSnapshot, viewNode, conditionOf, type NodeIndex, type NodeView } from '../domain/nodes.ts';
import { computeMembership } from '../domain/pools.ts';
import { InputError, PolicyBlockedError, RolloutHaltedError, StalePlanError, ClusterApiError, LockHeldError } from '../base/errors.ts';
import {
  type ClusterDriver, type LockRecord, type ProgressRecord, type NodeProgress, type PoolProgress,
  ConflictError, PreconditionFailedError, AlreadyExistsError, DrainTimeoutError, AbortedError, LockLostError, isoOf,
} from './driver.ts';
import type { ApplyEvent, ApplyEventType, EventSink } from './events.ts';
import { remainingWorkDifference } from './stale.ts';

export interface ApplyTimeouts {
  /** Lease duration; renewed every third of it. */
  lockTtlSeconds: number;
  /** Active staging longer than this halts the pool (DESIGN §7: 10 minutes). */
  stagingSeconds: number;
  /** From the reboot request until the node runs the target, Idle and Ready. */
  nodeSeconds: number;
  /** Waiting for budget or for a wave's node to be Ready before it can start. */
  budgetSeconds: number;
  /** Waiting for a change's `waitAfter` condition. */
  waitAfterSeconds: number;
  /** MCO pools: waiting for the MCO to start updating nodes after an unpause. */
  mcoStartSeconds: number;
}

export const DEFAULT_TIMEOUTS: ApplyTimeouts = {
  lockTtlSeconds: 300,
  stagingSeconds: 600,
  nodeSeconds: 1800,
  budgetSeconds: 1800,
  waitAfterSeconds: 900,
  mcoStartSeconds: 300,
};

export interface ApplyOptions {
  plan: Plan;
  /** Plans again from a snapshot with the spec the plan was made from. */
  replan: (snapshot: ClusterSnapshot) => Plan;
  driver: ClusterDriver;
  /** Who applies: recorded in the lock. */
  holder: string;
  /** Advance at most one wave, then stop (apply --step). */
  step?: boolean;
  onEvent?: EventSink;
  timeouts?: Partial<ApplyTimeouts>;
  /**
   * Policy gate evaluated before the first write and before each wave (maintenance
   * windows): a message stops the apply with PolicyBlockedError (exit 6).
   */
  policy?: (nowEpochSeconds: number, pool: PlanPool | null, wave: number | null) => string | null;
}

export type ApplyOutcome = 'done' | 'stepped' | 'nothing-to-do';

export interface ApplyResult {
  outcome: ApplyOutcome;
  planId: string;
  durationSeconds: number;
  wavesRun: number;
  /** Nodes the plan left out (blocked); they still need the target. */
  blocked: string[];
  resumed: boolean;
}

/** Throws when a plan must not be applied (DESIGN §6: a plan with any error). */
export function checkApplicable(plan: Plan): void {
  const errors = plan.diagnostics.filter((d) => d.severity === 'error');
  if (!errors.length) return;
  const policy = errors.find((d) => d.code === 'cpms-replacement-not-allowed');
  if (policy) {
    throw new PolicyBlockedError(`plan ${plan.id} replaces control-plane machines and the spec does not allow it: ${policy.message}`, policy.hint ?? 'set spec.controlPlaneMachineSet.allowReplacement: true, plan again, and review the plan');
  }
  throw new InputError(`plan ${plan.id} has ${errors.length} error${errors.length === 1 ? '' : 's'} and cannot be applied`, errors, 'fix the spec, plan again, and apply the new plan');
}

export async function apply(o: ApplyOptions): Promise<ApplyResult> {
  checkApplicable(o.plan);
  return new Applier(o).run();
}

// ---------------------------------------------------------------------------------------

interface NodeFailure { node: string; reason: string; conditions: Condition[] }
type NodeOutcome = { ok: true } | { ok: false; failure: NodeFailure };

const idxCache = new WeakMap<ClusterSnapshot, { idx: NodeIndex; members: Map<string, string[]> }>();
function indexOf(s: ClusterSnapshot) {
  let c = idxCache.get(s);
  if (!c) {
    const m = computeMembership(s);
    const members = new Map<string, string[]>();
    for (const [k, v] of m.mco) members.set(k, v);
    for (const [k, v] of m.bootc) members.set(k, v); // a bootc pool wins over the MCP of the same name
    c = { idx: indexSnapshot(s), members };
    idxCache.set(s, c);
  }
  return c;
}
function viewIn(s: ClusterSnapshot, name: string): NodeView | null {
  const { idx } = indexOf(s);
  const n = idx.nodes.get(name);
  return n ? viewNode(n, idx) : null;
}
function bootcNodeIn(s: ClusterSnapshot, name: string): KObject | undefined {
  return indexOf(s).idx.bootcNodes.get(name);
}

/**
 * The snapshot for a re-plan: the fingerprint (a hash over the whole cluster) is not
 * needed to compare remaining work, and is costly on big clusters.
 */
function withoutFingerprint(s: ClusterSnapshot): ClusterSnapshot {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(s)) if (k !== 'fingerprint') out[k] = (s as unknown as Record<string, unknown>)[k];
  out.fingerprint = 'sha256:replan';
  return out as unknown as ClusterSnapshot;
}

/** Nodes per staging watch (observe). */
const OBSERVE_GROUP = 32;

function atTarget(pool: PlanPool, v: NodeView): boolean {
  return pool.targetDigest ? v.bootedDigest === pool.targetDigest : v.bootedImage === pool.targetImage;
}
function pastStagingGate(pool: PlanPool, v: NodeView): boolean {
  return !!pool.targetDigest && v.stagedDigest === pool.targetDigest && v.stagedIdle && !v.degraded;
}

class Applier {
  private readonly plan: Plan;
  private readonly driver: ClusterDriver;
  private readonly timeouts: ApplyTimeouts;
  private readonly pools: PlanPool[];
  private t0 = 0;
  private lock: LockRecord | null = null;
  private lockLost: Error | null = null;
  private progress!: ProgressRecord;
  private resumed = false;
  private wavesRun = 0;
  /** Nodes whose update bootcplan is driving now (not reported as node-unavailable). */
  private inFlight = new Set<string>();
  private mcoPoolInFlight: string | null = null;

  constructor(private readonly o: ApplyOptions) {
    this.plan = o.plan;
    this.driver = o.driver;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...(o.timeouts ?? {}) };
    this.pools = [...o.plan.pools].sort((a, b) => a.priority - b.priority || a.name.localeCompare(b.name));
  }

  private get now() { return this.driver.clock.now(); }

  private emit(e: Omit<ApplyEvent, 't'>) {
    this.o.onEvent?.({ t: Math.round((this.now - this.t0) * 1000) / 1000, ...e });
  }

  async run(): Promise<ApplyResult> {
    this.t0 = this.now;
    this.lock = await this.driver.acquireLock({ holder: this.o.holder, planId: this.plan.id, ttlSeconds: this.timeouts.lockTtlSeconds });
    const stop = new AbortController();
    setMaxListeners(0, stop.signal); // one per staging watch (observe)
    void this.renewLoop(stop.signal);
    const observer = this.observe(stop.signal).catch(() => undefined);
    let released = false;
    try {
      const result = await this.body();
      stop.abort();
      await observer;
      released = await this.driver.releaseLock(this.lock.lockId);
      return result;
    } finally {
      stop.abort();
      if (!released) {
        try {
          await this.driver.releaseLock(this.lock.lockId);
        } catch {
          // a killed or disconnected process cannot release; the Lease expires
        }
      }
    }
  }

  private async renewLoop(signal: AbortSignal) {
    try {
      while (!signal.aborted) {
        await this.driver.clock.sleep(this.timeouts.lockTtlSeconds / 3, signal);
        this.lock = await this.driver.renewLock(this.lock!.lockId);
      }
    } catch (err) {
      if (!(err instanceof AbortedError)) this.lockLost = err as Error;
    }
  }

  private checkLock() {
    if (!this.lockLost) return;
    if (this.lockLost instanceof LockLostError) throw new LockHeldError('someone else (this apply lost its lock)', isoOf(this.now), this.lock?.lockId ?? '', null);
    throw this.lockLost;
  }

  // ----------------------------------------------------------------- progress

  private async loadProgress(): Promise<void> {
    const old = await this.driver.readProgress();
    if (old && old.planId === this.plan.id) {
      this.progress = old;
      this.resumed = true;
      return;
    }
    const nodes: Record<string, NodeProgress> = {};
    // Another plan's apply stopped half-way: keep what it knew about cordons it owns.
    if (old && !old.done) for (const [k, v] of Object.entries(old.nodes)) if (v.step !== 'done') nodes[k] = v;
    this.progress = {
      planId: this.plan.id, startedAt: isoOf(this.now), updatedAt: isoOf(this.now), changesApplied: false,
      pools: Object.fromEntries(this.pools.map((p) => [p.name, { finishedWaves: [], lastWaveEnd: null, done: false, halted: null } satisfies PoolProgress])),
      nodes, done: false,
    };
  }

  private async save() {
    this.progress.updatedAt = isoOf(this.now);
    await this.driver.writeProgress(this.progress);
  }

  /**
   * Changes a node's entry of the progress record. Entries are replaced (frozen), never
   * changed in place: the record is written whole at every step of every node, and a
   * driver may then tell an entry it has seen by its identity.
   */
  private setNodeProgress(name: string, change: Partial<NodeProgress>) {
    const rec = this.progress.nodes[name];
    if (rec) this.progress.nodes[name] = Object.freeze({ ...rec, ...change });
  }

  private poolProgress(name: string): PoolProgress {
    return (this.progress.pools[name] ??= { finishedWaves: [], lastWaveEnd: null, done: false, halted: null });
  }

  // ----------------------------------------------------------------- main flow

  private async body(): Promise<ApplyResult> {
    await this.loadProgress();
    const blocked = this.pools.flatMap((p) => p.nodes.filter((n) => n.wave === null).map((n) => `${p.name}/${n.name}`));
    const result = (outcome: ApplyOutcome): ApplyResult => ({
      outcome, planId: this.plan.id, durationSeconds: this.now - this.t0, wavesRun: this.wavesRun, blocked, resumed: this.resumed,
    });
    this.emit({ type: 'start', message: this.plan.id, resumed: this.resumed });
    if (this.progress.done) {
      this.emit({ type: 'done', message: 'this plan was applied already' });
      return result('nothing-to-do');
    }
    const { fresh } = await this.checkStale();
    this.checkPolicy(null, null);

    if (!this.progress.changesApplied) {
      const pre = this.plan.changes.filter((c) => !this.isMcoPoolChange(c)).sort((a, b) => a.order - b.order);
      const rank = (c: PlanChange) => (c.kind === 'MachineConfiguration' ? 0 : c.kind === 'ControlPlaneMachineSet' ? 1 : c.pool ? 3 : 2);
      pre.sort((a, b) => rank(a) - rank(b) || a.order - b.order);
      for (const c of pre) await this.applyChange(c, fresh);
      this.progress.changesApplied = true;
      await this.save();
    }

    for (const pool of this.pools) {
      const pp = this.poolProgress(pool.name);
      if (pp.done) continue;
      const r = pool.backend === 'bootc' ? await this.runBootcPool(pool) : await this.runMcoPool(pool);
      if (r === 'stepped') {
        this.emit({ type: 'step-end', pool: pool.name, message: 'advanced one wave; run apply again to continue (bootcplan status shows what is left)' });
        await this.save();
        return result('stepped');
      }
      pp.done = true;
      await this.save();
      this.emit({ type: 'pool-done', pool: pool.name });
    }
    this.progress.done = true;
    await this.save();
    this.emit({ type: 'done', message: blocked.length ? `${blocked.length} blocked node(s) were left as they are: ${blocked.join(', ')}` : undefined });
    return result('done');
  }

  private isMcoPoolChange(c: PlanChange): boolean {
    return !!c.pool && this.pools.some((p) => p.name === c.pool && p.backend === 'mco');
  }

  /** Plans again from the cluster as it is and compares the remaining work (exit 3). */
  private async checkStale(): Promise<{ fresh: Plan }> {
    this.checkLock();
    const { fresh, diff } = await this.peek((s) => {
      const fresh = this.o.replan(withoutFingerprint(s));
      return { fresh, diff: remainingWorkDifference(this.plan, fresh, s) };
    });
    if (diff.length) throw new StalePlanError(`the cluster changed since plan ${this.plan.id} was made`, diff);
    return { fresh };
  }

  private checkPolicy(pool: PlanPool | null, wave: number | null) {
    const msg = this.o.policy?.(this.now, pool, wave);
    if (msg) throw new PolicyBlockedError(msg, 'apply again when the next maintenance window opens (a CronJob with --step does this)');
  }

  /** Retries transient conflicts (HTTP 409) a few times, at once. */
  private async retry<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof ConflictError) || attempt >= 8) throw err;
      }
    }
  }

  private async applyChange(c: PlanChange, fresh: Plan, opts: { dropPaused?: boolean } = {}) {
    const f = fresh.changes.find((x) => x.address === c.address);
    const effective = (x: PlanChange) => (opts.dropPaused ? x.patch.filter((op) => op.path !== '/spec/paused') : x.patch);
    if (c.action === 'noop' || !f || f.action === 'noop' || (f.action === 'update' && effective(f).length === 0)) return; // in the cluster already
    this.checkLock();
    try {
      if (c.action === 'create') {
        try {
          await this.retry(() => this.driver.create(c.object as KObject));
        } catch (err) {
          if (!(err instanceof AlreadyExistsError)) throw err;
          throw new PreconditionFailedError(`${c.address} exists already`, '');
        }
      } else {
        const ops: Operation[] = effective(c);
        if (ops.length) await this.retry(() => this.driver.patch({ apiVersion: c.apiVersion, kind: c.kind, name: c.name, namespace: c.namespace }, ops));
      }
    } catch (err) {
      if (err instanceof PreconditionFailedError) {
        const diff = await this.peek((s) => remainingWorkDifference(this.plan, this.o.replan(withoutFingerprint(s)), s));
        throw new StalePlanError(`${c.address} changed since plan ${this.plan.id} was made (${err.message})`, diff.length ? diff : [`~ ${c.address}: ${err.message}`]);
      }
      throw err;
    }
    this.emit({ type: 'change', address: c.address, pool: c.pool ?? undefined, message: c.description ?? c.reason });
    if (c.waitAfter) {
      this.emit({ type: 'wait', address: c.address, message: c.waitAfter.description });
      const ok = await this.driver.waitFor((s) => {
        if (c.waitAfter!.kind === 'skew-enforcement-not-automatic') return s.machineConfiguration?.status?.bootImageSkewEnforcementStatus?.mode !== 'Automatic';
        return true;
      }, { timeoutSeconds: this.timeouts.waitAfterSeconds, description: c.waitAfter.description });
      if (!ok) throw new ClusterApiError(`timed out after ${this.timeouts.waitAfterSeconds}s waiting until ${c.waitAfter.description}`, 'check the machine-config ClusterOperator, then run apply again: it continues from here');
    }
  }

  /** Reads the cluster without waiting (the predicate is evaluated at once). */
  private async peek<T>(fn: (s: ClusterSnapshot) => T): Promise<T> {
    const r = await this.driver.waitFor((s) => ({ v: fn(s) }), { timeoutSeconds: 0, description: 'read' });
    return r!.v;
  }

  // ----------------------------------------------------------------- waves, shared

  /** Soak and gates before wave `k`; returns the fresh re-plan, or null when --step must stop here. */
  private async beforeWave(pool: PlanPool, k: number): Promise<Plan | null> {
    if (this.o.step && this.wavesRun >= 1) return null;
    const pp = this.poolProgress(pool.name);
    if (pp.finishedWaves.length && pool.soakSeconds > 0 && pp.lastWaveEnd) {
      const until = Date.parse(pp.lastWaveEnd) / 1000 + pool.soakSeconds;
      if (until > this.now) {
        this.emit({ type: 'soak', pool: pool.name, wave: k - 1, seconds: Math.round(until - this.now) });
        await this.driver.clock.sleep(until - this.now);
      }
    }
    const { fresh } = await this.checkStale();
    this.checkPolicy(pool, k);
    return fresh;
  }

  private async afterWave(pool: PlanPool, k: number) {
    const pp = this.poolProgress(pool.name);
    if (!pp.finishedWaves.includes(k)) pp.finishedWaves.push(k);
    pp.lastWaveEnd = isoOf(this.now);
    this.wavesRun++;
    await this.save();
    this.emit({ type: 'wave-end', pool: pool.name, wave: k, waves: pool.waves.length });
  }

  private async halt(pool: PlanPool, failures: NodeFailure[], extra?: string): Promise<never> {
    try {
      if (pool.backend === 'mco') await this.retry(() => this.driver.setPoolPaused('MachineConfigPool', pool.name, true));
      else await this.retry(() => this.driver.setPoolPaused('BootcNodePool', pool.name, true));
    } catch {
      // reported below; the pool may already be paused
    }
    const first = failures[0];
    const reason = extra ?? (first ? `node ${first.node} failed: ${first.reason}` : 'halted');
    this.poolProgress(pool.name).halted = { node: first?.node ?? null, reason };
    for (const f of failures) this.setNodeProgress(f.node, { step: 'failed' });
    await this.save();
    for (const f of failures) this.emit({ type: 'node-failed', pool: pool.name, node: f.node, message: f.reason, conditions: f.conditions });
    this.emit({ type: 'halt', pool: pool.name, node: first?.node, message: reason });
    const finished = this.poolProgress(pool.name).finishedWaves;
    const left = pool.waves.map((_, i) => i + 1).filter((w) => !finished.includes(w));
    const report: string[] = [];
    for (const f of failures) {
      report.push(`node ${f.node}: ${f.reason}`);
      for (const c of f.conditions) report.push(`  ${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}${c.message ? `: ${c.message}` : ''}`);
    }
    report.push(`pool ${pool.name} is paused; ${left.length ? `waves ${left.join(', ')} of ${pool.waves.length} were not finished` : 'all its waves had run'}; other pools were not started`);
    report.push('fix the node(s), then run apply again: it resumes with the unfinished wave');
    throw new RolloutHaltedError(`pool ${pool.name}: ${reason}`, report);
  }

  // ----------------------------------------------------------------- bootc pools

  private async runBootcPool(pool: PlanPool): Promise<'done' | 'stepped'> {
    const pp = this.poolProgress(pool.name);
    if (pool.waves.length) this.emit({ type: 'pool-start', pool: pool.name, waves: pool.waves.length, message: `${pool.waves.flat().length} node(s), maxUnavailable ${pool.maxUnavailable.resolved}` });
    for (let k = 1; k <= pool.waves.length; k++) {
      if (pp.finishedWaves.includes(k)) continue;
      let fresh = await this.beforeWave(pool, k);
      if (!fresh) return 'stepped';
      let names = this.composeBootcWave(pool, k, fresh);
      if (pool.rebootPolicy === 'AllowSoftReboot' && names.length && (await this.peek((s) => names.some((n) => this.stillStaging(s, pool, n))))) {
        // This wave waits for staging anyway, and whether a node soft-reboots is known
        // only once it has staged: let the pool's nodes (all staging in parallel since the
        // targets were set) finish staging, for at most the staging limit, then compose the
        // wave again from a plan of the cluster as it is then. No halt here: the staging
        // gate below judges the nodes the wave really takes.
        const all = pool.waves.flat();
        await this.driver.waitFor((s) => all.every((n) => !this.stillStaging(s, pool, n)), { timeoutSeconds: this.timeouts.stagingSeconds, description: `nodes of pool ${pool.name} staged` });
        fresh = (await this.checkStale()).fresh;
        names = this.composeBootcWave(pool, k, fresh);
      }
      if (!names.length) {
        // Every node the saved plan left for this wave is done already (earlier waves
        // were composed differently, or someone else updated them).
        pp.finishedWaves.push(k);
        await this.save();
        continue;
      }
      this.emit({ type: 'wave-start', pool: pool.name, wave: k, waves: pool.waves.length, nodes: names });
      await this.stagingGate(pool, names);
      const failures = await this.runBootcWave(pool, k, names);
      if (failures.length) await this.halt(pool, failures);
      await this.afterWave(pool, k);
    }
    return 'done';
  }

  /** A node of the wave that has not passed the staging gate yet (and is not mid-update). */
  private stillStaging(s: ClusterSnapshot, pool: PlanPool, name: string): boolean {
    const v = viewIn(s, name);
    if (!v || atTarget(pool, v) || pastStagingGate(pool, v) || v.degraded) return false;
    const rec = this.progress.nodes[name];
    return !(rec && rec.step !== 'cordon');
  }

  /**
   * The nodes of bootc wave `k` (DESIGN §7; README "apply"). The saved plan grouped the
   * nodes by what was known when it was made, but a node's reboot kind is known only once
   * it has staged (BootcNode `status.staged.softRebootCapable`), and a wave lasts as long
   * as its slowest node: soft reboots save time only in waves of their own. So:
   * - the nodes still to do are the saved plan's scheduled nodes that are not on the
   *   target now; checkStale has just refused any other difference, so the set of nodes and
   *   their targets is the saved plan's, only the grouping may change;
   * - when the staging state of those nodes (staged, predicted reboot kind) differs between
   *   the saved plan and the fresh plan made before this wave, they are taken in the fresh
   *   plan's order (staged first, soft reboots first, then zones round-robin:
   *   src/domain/waves.ts); otherwise in the saved plan's order, which gives the saved
   *   plan's wave k unchanged;
   * - nodes an interrupted apply left in flight (a progress record in this pool) come
   *   first, so a rerun finishes them (and uncordons them) before anything else, and a
   *   node already rebooted is never asked again (runBootcNode reads its state first);
   * - wave k takes as many nodes as the saved plan's wave k, the last wave all that are
   *   left: the number of waves stays the plan's and a wave is never larger than the plan
   *   made it (at most the budget); the budget is enforced again at each cordon
   *   (runBootcWave) whatever the composition.
   */
  private composeBootcWave(pool: PlanPool, k: number, fresh: Plan): string[] {
    const scheduled = pool.waves.flat();
    const fp = fresh.pools.find((p) => p.name === pool.name);
    if (!fp) return pool.waves[k - 1];
    const freshNodes = new Map(fp.nodes.map((n) => [n.name, n]));
    const savedNodes = new Map(pool.nodes.map((n) => [n.name, n]));
    const inFlight = new Set(scheduled.filter((n) => {
      const rec = this.progress.nodes[n];
      return !!rec && rec.pool === pool.name && rec.step !== 'done';
    }));
    // Not in the fresh plan: on the target now (anything else made the plan stale).
    const remaining = scheduled.filter((n) => freshNodes.has(n) || inFlight.has(n));
    const changed = remaining.some((n) => {
      const f = freshNodes.get(n);
      const s = savedNodes.get(n);
      return !!f && !!s && (f.staged !== s.staged || f.reboot !== s.reboot);
    });
    const rank = new Map<string, number>();
    if (changed) fp.waves.flat().forEach((n) => rank.set(n, rank.size));
    const base = rank.size;
    scheduled.forEach((n, i) => { if (!rank.has(n)) rank.set(n, base + i); });
    const byRank = (a: string, b: string) => rank.get(a)! - rank.get(b)!;
    const others = remaining.filter((n) => !inFlight.has(n)).sort(byRank);
    const last = k === pool.waves.length;
    const room = last ? others.length : Math.max(0, pool.waves[k - 1].length - inFlight.size);
    return [...inFlight, ...others.slice(0, room)].sort(byRank);
  }

  /** DESIGN §7: a node starts only once its staged digest is the target, Idle=False/Staged, Degraded=False. */
  private async stagingGate(pool: PlanPool, names: string[]) {
    const gateStart = this.now;
    const limit = this.timeouts.stagingSeconds;
    for (;;) {
      const state = await this.peek((s) => {
        const waiting: { node: string; since: number; staging: boolean }[] = [];
        const failed: NodeFailure[] = [];
        for (const name of names) {
          const v = viewIn(s, name);
          if (!v || atTarget(pool, v) || pastStagingGate(pool, v)) continue;
          if (this.progress.nodes[name] && this.progress.nodes[name].step !== 'cordon') continue; // resumed mid-update
          if (v.degraded) { failed.push({ node: name, reason: 'Degraded while staging', conditions: v.conditions }); continue; }
          const idle = conditionOf(bootcNodeIn(s, name), 'Idle');
          const staging = idle?.status === 'False' && idle.reason === 'Staging';
          const since = staging && idle?.lastTransitionTime ? Math.min(Date.parse(idle.lastTransitionTime) / 1000, this.now) : gateStart;
          waiting.push({ node: name, since: Math.max(since, Math.min(gateStart, since)), staging });
        }
        return { waiting, failed };
      });
      if (state.failed.length) await this.halt(pool, state.failed);
      if (!state.waiting.length) return;
      const overdue = state.waiting.filter((w) => this.now - w.since > limit);
      if (overdue.length) {
        const views = await this.peek((s) => overdue.map((w) => ({ node: w.node, v: viewIn(s, w.node) })));
        await this.halt(pool, views.map(({ node, v }) => ({ node, reason: `staging active for more than ${Math.round(limit / 60)}m`, conditions: v?.conditions ?? [] })),
          `staging active for more than ${Math.round(limit / 60)} minutes on ${overdue.map((w) => w.node).join(', ')}`);
      }
      const deadline = Math.min(...state.waiting.map((w) => w.since + limit));
      await this.driver.waitFor((s) => names.every((name) => {
        const v = viewIn(s, name);
        return !v || atTarget(pool, v) || pastStagingGate(pool, v) || v.degraded || (this.progress.nodes[name] && this.progress.nodes[name].step !== 'cordon');
      }), { timeoutSeconds: Math.max(0, deadline - this.now) + 0.001, description: `nodes of pool ${pool.name} staged` });
    }
  }

  /** Budgeted start of the wave's nodes; returns the failures (empty when all succeeded). */
  private async runBootcWave(pool: PlanPool, k: number, names: string[]): Promise<NodeFailure[]> {
    const budget = pool.controlPlane ? 1 : pool.maxUnavailable.resolved;
    const pending = [...names];
    const running = new Map<string, Promise<void>>();
    const failures: NodeFailure[] = [];
    const fatal: { err?: unknown; set?: boolean } = {};
    let waitingSince: number | null = null;
    for (;;) {
      if (fatal.set) throw fatal.err;
      this.checkLock();
      let started = 0;
      if (!failures.length && pending.length) {
        // Decide synchronously on one consistent view; no time passes until the cordons.
        const d = await this.peek((s) => {
          this.noticeAvailability(s, pool, (m) => !!this.progress.nodes[m] && this.progress.nodes[m].pool === pool.name && this.progress.nodes[m].step !== 'done');
          const members = indexOf(s).members.get(pool.name) ?? [];
          let unavailable = 0;
          for (const m of members) if (viewIn(s, m)?.unavailable) unavailable++;
          const start: { name: string; v: NodeView }[] = [];
          const done: string[] = [];
          const gone: string[] = [];
          const failed: NodeFailure[] = [];
          for (const name of pending) {
            const v = viewIn(s, name);
            const rec = this.progress.nodes[name];
            if (!v) { gone.push(name); continue; }
            const ours = !!rec && !rec.wasCordoned && rec.step !== 'done';
            if (atTarget(pool, v) && (!ours || !v.cordoned)) { done.push(name); continue; }
            if (v.degraded) { failed.push({ node: name, reason: 'Degraded', conditions: v.conditions }); break; }
            // Out of service already (cordoned by someone, or an update of ours in flight):
            // it uses budget now, so taking it needs none. Otherwise it must fit the budget.
            const needsBudget = v.unavailable === null;
            if (!v.ready && !ours) continue;
            if (needsBudget && unavailable + 1 > budget) continue;
            if (needsBudget) unavailable++;
            start.push({ name, v });
          }
          return { start, done, gone, failed };
        });
        for (const name of [...d.done, ...d.gone]) {
          pending.splice(pending.indexOf(name), 1);
          if (this.progress.nodes[name]) { delete this.progress.nodes[name]; await this.save(); }
        }
        if (d.failed.length) {
          failures.push(...d.failed);
          for (const f of d.failed) pending.splice(pending.indexOf(f.node), 1);
        } else {
          // One write-ahead record for every node started in this round, then the cordons:
          // a wave of k nodes costs one progress write here, not k.
          const fresh = d.start.map(({ name, v }) => this.recordCordonAhead(pool, name, k, v));
          if (d.start.length) await this.save();
          for (const [i, { name, v }] of d.start.entries()) {
            pending.splice(pending.indexOf(name), 1);
            started++;
            await this.cordonNow(pool, k, name, v, fresh[i]);
            const p = this.runBootcNode(pool, k, name).then(
              (r) => { if (!r.ok) failures.push(r.failure); },
              (err) => { if (!fatal.set) { fatal.set = true; fatal.err = err; } },
            ).finally(() => running.delete(name));
            running.set(name, p);
          }
        }
      }
      if (fatal.set) throw fatal.err;
      if (!running.size && (!pending.length || failures.length)) break;
      if (!pending.length || failures.length) {
        await Promise.race(running.values());
        continue;
      }
      // Nodes wait for budget or readiness: wake up when a node of ours finishes or the
      // pool's availability changes.
      if (started) waitingSince = null;
      waitingSince ??= this.now;
      const remaining = waitingSince + this.timeouts.budgetSeconds - this.now;
      if (remaining <= 0) {
        const views = await this.peek((s) => pending.map((n) => ({ node: n, v: viewIn(s, n) })));
        failures.push(...views.map(({ node, v }) => ({
          node, reason: v && !v.ready ? `not Ready for ${Math.round(this.timeouts.budgetSeconds / 60)}m` : `no maxUnavailable budget for ${Math.round(this.timeouts.budgetSeconds / 60)}m (other nodes of the pool are out of service)`,
          conditions: v?.conditions ?? [],
        })));
        pending.length = 0;
        continue;
      }
      const signature = await this.peek((s) => this.availabilitySignature(s, pool));
      const ac = new AbortController();
      const changed = this.driver.waitFor((s) => this.availabilitySignature(s, pool) !== signature, { timeoutSeconds: remaining, signal: ac.signal, description: `budget in pool ${pool.name}` })
        .then(() => undefined, (err) => { if (!(err instanceof AbortedError) && !fatal.set) { fatal.set = true; fatal.err = err; } });
      await Promise.race([changed, ...running.values()]);
      ac.abort();
      await changed;
    }
    return failures;
  }

  private availabilitySignature(s: ClusterSnapshot, pool: PlanPool): string {
    const members = indexOf(s).members.get(pool.name) ?? [];
    let sig = '';
    for (const m of members) {
      const v = viewIn(s, m);
      sig += v ? (v.unavailable ? (v.ready ? 'u' : 'n') : 'a') : '-';
    }
    return sig;
  }

  /**
   * The write-ahead record of a cordon (saved by the caller before any cordon of the round;
   * the budget was checked just before, on the same view). Returns whether the node's entry is new.
   */
  private recordCordonAhead(pool: PlanPool, name: string, k: number, v: NodeView): boolean {
    const old = this.progress.nodes[name];
    const fresh = !old || old.step === 'done';
    if (fresh) this.progress.nodes[name] = Object.freeze({ pool: pool.name, wave: k, step: 'cordon', wasCordoned: v.cordoned });
    else if (old.step === 'failed') this.setNodeProgress(name, { step: 'cordon' });
    this.inFlight.add(name);
    return fresh;
  }

  private async cordonNow(pool: PlanPool, k: number, name: string, v: NodeView, fresh: boolean) {
    if (!v.cordoned) {
      await this.retry(() => this.driver.cordon(name));
      this.emit({ type: 'cordon', pool: pool.name, node: name, wave: k });
    } else if (fresh) {
      this.emit({ type: 'cordon', pool: pool.name, node: name, wave: k, message: 'already cordoned by an administrator; it stays cordoned' });
    }
  }

  private async runBootcNode(pool: PlanPool, k: number, name: string): Promise<NodeOutcome> {
    this.inFlight.add(name);
    try {
      const fail = (reason: string, conditions: Condition[]): NodeOutcome => ({ ok: false, failure: { node: name, reason, conditions } });
      const rec = this.progress.nodes[name];
      const state = await this.peek((s) => ({ v: viewIn(s, name), bn: bootcNodeIn(s, name) }));
      const v = state.v;
      if (!v) return fail('the Node was deleted during its update', []);
      if (!atTarget(pool, v)) {
        const dis = state.bn?.spec?.desiredImageState;
        const rebooting = dis === 'Booted' || conditionOf(state.bn, 'Idle')?.reason === 'Rebooting';
        if (!rebooting) {
          if (rec.step === 'cordon' || rec.step === 'drain') {
            this.setNodeProgress(name, { step: 'drain' }); // saved with the next step: a rerun drains again, which is harmless
            try {
              await this.driver.drain(name, { timeoutSeconds: pool.drainTimeoutSeconds });
            } catch (err) {
              if (err instanceof DrainTimeoutError) return fail(err.message, v.conditions);
              throw err;
            }
            this.emit({ type: 'drain-done', pool: pool.name, node: name, wave: k });
          }
          const bn = await this.peek((s) => bootcNodeIn(s, name)?.status?.staged?.softRebootCapable === true);
          const kind: 'soft' | 'hard' = pool.rebootPolicy === 'AllowSoftReboot' && bn ? 'soft' : 'hard';
          this.setNodeProgress(name, { step: 'reboot', rebootKind: kind, rebootAt: isoOf(this.now) });
          await this.save();
          await this.retry(() => this.driver.setDesiredImageState(name, 'Booted'));
          this.emit({ type: 'reboot', pool: pool.name, node: name, wave: k, kind });
        }
        const r = await this.driver.waitFor((s) => {
          const x = viewIn(s, name);
          if (!x) return { gone: true as const, conditions: [] as Condition[] };
          if (x.degraded) return { failed: true as const, conditions: x.conditions as Condition[] };
          const idle = conditionOf(bootcNodeIn(s, name), 'Idle');
          if (atTarget(pool, x) && idle?.status === 'True' && x.ready) return { ok: true as const };
          return null;
        }, { timeoutSeconds: this.timeouts.nodeSeconds, description: `${name} booted into the target` });
        if (!r) {
          const x = await this.peek((s) => viewIn(s, name));
          return fail(`not back on the target within ${Math.round(this.timeouts.nodeSeconds / 60)}m`, x?.conditions ?? []);
        }
        if ('gone' in r) return fail('the Node was deleted during its update', []);
        if ('failed' in r) return fail('Degraded after the reboot', r.conditions ?? []);
        this.emit({ type: 'booted', pool: pool.name, node: name, wave: k });
      }
      this.setNodeProgress(name, { step: 'booted' });
      const cordoned = await this.peek((s) => viewIn(s, name)?.cordoned ?? false);
      if (!rec.wasCordoned && cordoned) {
        await this.retry(() => this.driver.uncordon(name));
        this.emit({ type: 'uncordon', pool: pool.name, node: name, wave: k });
      }
      // Finished nodes leave the record (it stays small); `finishedWaves` keeps the history.
      delete this.progress.nodes[name];
      await this.save();
      return { ok: true };
    } finally {
      this.inFlight.delete(name);
    }
  }

  // ----------------------------------------------------------------- MCO pools

  private async runMcoPool(pool: PlanPool): Promise<'done' | 'stepped'> {
    const pp = this.poolProgress(pool.name);
    const changes = this.plan.changes.filter((c) => c.pool === pool.name).sort((a, b) => a.order - b.order);
    const hasWaves = pool.waves.length > 0 && pp.finishedWaves.length < pool.waves.length;
    if (changes.some((c) => c.action !== 'noop')) {
      if (this.o.step && this.wavesRun >= 1) return 'stepped';
      const { fresh } = await this.checkStale();
      this.checkPolicy(pool, null);
      // maxUnavailable first; pause while the new MachineConfig renders, so that the MCO
      // starts only when the first wave does.
      for (const c of changes.filter((x) => x.kind === 'MachineConfigPool')) await this.applyChange(c, fresh, { dropPaused: hasWaves });
      if (hasWaves) await this.retry(() => this.driver.setPoolPaused('MachineConfigPool', pool.name, true));
      for (const c of changes.filter((x) => x.kind !== 'MachineConfigPool')) await this.applyChange(c, fresh);
    }
    if (!pool.waves.length) return 'done';
    this.emit({ type: 'pool-start', pool: pool.name, waves: pool.waves.length, message: `${pool.waves.flat().length} node(s), maxUnavailable ${pool.maxUnavailable.resolved}; the MCO moves the nodes` });
    for (let k = 1; k <= pool.waves.length; k++) {
      if (pp.finishedWaves.includes(k)) continue;
      if (!(await this.beforeWave(pool, k))) return 'stepped';
      this.emit({ type: 'wave-start', pool: pool.name, wave: k, waves: pool.waves.length, nodes: pool.waves[k - 1] });
      await this.runMcoWave(pool, k);
      await this.afterWave(pool, k);
    }
    // bootcplan paused the pool between waves; leave it as the spec wants it.
    if (!pool.paused) await this.retry(() => this.driver.setPoolPaused('MachineConfigPool', pool.name, false));
    return 'done';
  }

  private mcoTarget(s: ClusterSnapshot, pool: string): string | null {
    const mcp = s.machineConfigPools.find((p) => p.metadata.name === pool);
    return mcp?.spec?.configuration?.name ?? mcp?.status?.configuration?.name ?? null;
  }

  private async runMcoWave(pool: PlanPool, k: number) {
    const scheduled = new Set(pool.nodes.filter((n) => n.wave !== null).map((n) => n.name));
    const state = (s: ClusterSnapshot) => {
      this.trackMco(s, pool, k);
      const members = indexOf(s).members.get(pool.name) ?? [];
      const inFlight: string[] = [];
      const failed: NodeFailure[] = [];
      let remaining = 0;
      for (const m of members) {
        const v = viewIn(s, m);
        if (!v) continue;
        if (v.degraded && (v.updating || scheduled.has(m))) failed.push({ node: m, reason: 'Degraded during its update', conditions: v.conditions });
        else if (v.updating) inFlight.push(m);
        else if (scheduled.has(m) && !atTarget(pool, v)) remaining++;
      }
      return { inFlight, failed, remaining };
    };
    const before = await this.peek(state);
    if (before.failed.length) await this.halt(pool, before.failed);
    const want = Math.min(pool.waves[k - 1].length, before.remaining + before.inFlight.length);
    this.mcoPoolInFlight = pool.name;
    try {
      let picked = before.inFlight;
      if (before.inFlight.length < want) {
        await this.retry(() => this.driver.setPoolPaused('MachineConfigPool', pool.name, false));
        const got = await this.driver.waitFor((s) => {
          const st = state(s);
          return st.failed.length || st.inFlight.length >= want || (st.remaining === 0 && st.inFlight.length === 0) ? st : null;
        }, { timeoutSeconds: this.timeouts.mcoStartSeconds, description: `the MCO starts updating pool ${pool.name}` });
        // Paused again at once: the MCO finishes the nodes it started and takes no more.
        await this.retry(() => this.driver.setPoolPaused('MachineConfigPool', pool.name, true));
        const st = got ?? (await this.peek(state));
        if (st.failed.length) await this.halt(pool, st.failed);
        if (!st.inFlight.length && st.remaining) await this.halt(pool, [], `the MCO did not start updating pool ${pool.name} within ${Math.round(this.timeouts.mcoStartSeconds / 60)}m after it was unpaused`);
        picked = st.inFlight;
      }
      // The wave is over when each node it took runs the target, is Ready and schedulable.
      const done = await this.driver.waitFor((s) => {
        const st = state(s);
        if (st.failed.length) return st;
        return picked.every((n) => {
          const v = viewIn(s, n);
          return !v || (atTarget(pool, v) && v.ready && !v.cordoned);
        }) ? st : null;
      }, { timeoutSeconds: this.timeouts.nodeSeconds, description: `wave ${k} of pool ${pool.name}` });
      if (!done) {
        const views = await this.peek((s) => picked.map((n) => ({ node: n, v: viewIn(s, n) })));
        await this.halt(pool, views.filter(({ v }) => !v || !atTarget(pool, v) || !v.ready).map(({ node, v }) => ({ node, reason: `not updated within ${Math.round(this.timeouts.nodeSeconds / 60)}m`, conditions: v?.conditions ?? [] })));
      } else if (done.failed.length) await this.halt(pool, done.failed);
    } finally {
      this.mcoPoolInFlight = null;
    }
  }

  // ----------------------------------------------------------------- observation

  /**
   * Reports staging while it runs: `stage-start` and `staged` for every scheduled node of
   * the bootc pools. Looks only at nodes still staging, so it costs nothing afterwards.
   * The nodes are watched in groups of OBSERVE_GROUP, each with a wait of its own: a node's
   * change then costs a look at its group rather than at every node still staging (on a
   * big pool, thousands of nodes finish staging one after the other).
   */
  private async observe(signal: AbortSignal) {
    const watched: [string, PlanPool][] = [];
    for (const p of this.pools) if (p.backend === 'bootc') for (const n of p.nodes) if (n.wave !== null && !n.staged) watched.push([n.name, p]);
    const staging = new Set<string>();
    const groups: Promise<void>[] = [];
    for (let i = 0; i < watched.length; i += OBSERVE_GROUP) groups.push(this.observeGroup(watched.slice(i, i + OBSERVE_GROUP), staging, signal));
    await Promise.all(groups);
  }

  private async observeGroup(nodes: [string, PlanPool][], staging: Set<string>, signal: AbortSignal) {
    const watch = new Map(nodes);
    while (watch.size && !signal.aborted) {
      const changes = await this.driver.waitFor((s) => {
        const out: { node: string; pool: PlanPool; type: 'stage-start' | 'staged' | 'drop' }[] = [];
        for (const [name, pool] of watch) {
          // BootcNode only (cheaper than a full node view: this runs on every change while staging).
          const bn = bootcNodeIn(s, name);
          const idle = conditionOf(bn, 'Idle');
          if (!bn || conditionOf(bn, 'Degraded')?.status === 'True' || bn.status?.booted?.imageDigest === pool.targetDigest) { out.push({ node: name, pool, type: 'drop' }); continue; }
          if (bn.status?.staged?.imageDigest === pool.targetDigest && idle?.status === 'False' && idle.reason === 'Staged') { out.push({ node: name, pool, type: 'staged' }); continue; }
          if (!staging.has(name) && idle?.status === 'False' && idle.reason === 'Staging') out.push({ node: name, pool, type: 'stage-start' });
        }
        return out.length ? out : null;
      }, { timeoutSeconds: 7 * 24 * 3600, signal, description: 'staging' }).catch((err) => {
        if (err instanceof AbortedError) return null;
        throw err;
      });
      if (!changes) continue;
      for (const c of changes) {
        if (c.type === 'stage-start') { staging.add(c.node); this.emit({ type: 'stage-start', pool: c.pool.name, node: c.node }); continue; }
        watch.delete(c.node);
        if (c.type === 'staged') {
          if (!staging.has(c.node)) this.emit({ type: 'stage-start', pool: c.pool.name, node: c.node });
          this.emit({ type: 'staged', pool: c.pool.name, node: c.node });
        }
      }
    }
  }

  private mcoPhase = new Map<string, number>();

  /** The MCO moves the nodes of MCO pools: report its steps as bootcplan sees them. */
  private trackMco(s: ClusterSnapshot, pool: PlanPool, k: number) {
    const target = this.mcoTarget(s, pool.name);
    const order = ['', 'cordon', 'drain-done', 'reboot', 'booted', 'uncordon'] as const;
    this.noticeAvailability(s, pool, (m) => (indexOf(s).idx.nodes.get(m)?.metadata.annotations ?? {})['machineconfiguration.openshift.io/desiredConfig'] === target);
    if (!target) return;
    for (const m of indexOf(s).members.get(pool.name) ?? []) {
      const n = indexOf(s).idx.nodes.get(m)!;
      const ann = n.metadata.annotations ?? {};
      if (ann['machineconfiguration.openshift.io/desiredConfig'] !== target) continue;
      const v = viewIn(s, m)!;
      const state = ann['machineconfiguration.openshift.io/state'];
      const phase = atTarget(pool, v) ? (v.ready ? (v.cordoned ? 4 : 5) : 3)
        : state === 'Rebooting' || !v.ready ? 3
        : ann['machineconfiguration.openshift.io/lastAppliedDrain'] === `drain-${target}` ? 2
        : v.cordoned ? 1 : 0;
      const before = this.mcoPhase.get(m) ?? (atTarget(pool, v) && phase === 5 ? 5 : 0);
      if (phase <= before) continue;
      this.mcoPhase.set(m, phase);
      for (let i = before + 1; i <= phase; i++) {
        this.emit({ type: order[i] as ApplyEventType, pool: pool.name, node: m, wave: k, ...(order[i] === 'reboot' ? { kind: 'hard' as const } : {}) });
      }
    }
  }

  /** node -> was it out of service when last looked at (nodes bootcplan does not drive). */
  private lastAvailability = new Map<string, boolean>();

  /** Emits node-unavailable / node-available for pool nodes that changed on their own. */
  private noticeAvailability(s: ClusterSnapshot, pool: PlanPool, driven: (name: string) => boolean) {
    for (const m of indexOf(s).members.get(pool.name) ?? []) {
      const v = viewIn(s, m);
      if (!v) continue;
      const un = v.unavailable !== null;
      const before = this.lastAvailability.get(m);
      this.lastAvailability.set(m, un);
      if (driven(m) || this.inFlight.has(m)) continue;
      if (before !== undefined && before !== un) this.emit({ type: un ? 'node-unavailable' : 'node-available', pool: pool.name, node: m, message: un ? v.unavailable! : undefined, conditions: un ? v.conditions : undefined });
    }
  }
}
