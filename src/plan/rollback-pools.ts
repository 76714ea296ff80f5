/**
 * What the rollback of any pool shares (docs/apply.md "Rollback"): what planning one pool reads
 * (RollbackPoolContext), the pool's settings as bootcplan wrote them to it, its nodes going back
 * in waves of the budget left now, and its PlanPool. The bootc pools' rules are in
 * rollback-bootc-pool.ts, the MCO pools' in rollback-mco-pool.ts; the budget and waves are the
 * forward planner's (src/domain/budget.ts, waves.ts). Pure.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { BootcNodePoolObject, MachineConfigPoolObject } from '../cluster/kinds.ts';
import { nodeProgressOf } from '../cluster/progress.ts';
import type { DiagnosticInput } from '../base/diagnostics.ts';
import { digestOf, viewNode, type NodeIndex, type NodeView } from '../domain/nodes.ts';
import { isControlPlanePool } from '../domain/pools.ts';
import { parseMaxUnavailable, resolveMaxUnavailable, type ResolvedBudget } from '../domain/budget.ts';
import { controlPlaneBudget } from '../domain/control-plane.ts';
import { planWaves, waveSizeFor } from '../domain/waves.ts';
import type { DraftChange } from './changes.ts';
import type { PlanNode, PlanPool, PlanRollback, RebootKind } from './types.ts';

/** What planning one pool's rollback reads, and where its findings go. */
export interface RollbackPoolContext {
  snapshot: ClusterSnapshot;
  idx: NodeIndex;
  members: readonly string[];
  chain: ReadonlySet<string>;
  /**
   * The plan ids whose entries are this rollback's nodes in flight: its own on a re-plan, and
   * those of the unfinished rollback it continues.
   */
  own: ReadonlySet<string>;
  scopeWave: PlanRollback['source']['scopeWave'];
  /** The start of the run's record (an MCO origin without readAt: an earlier bootcplan's record). */
  runStartedAt: string;
  widened: boolean;
  report: (d: DiagnosticInput) => void;
  leftovers: PlanRollback['leftovers'];
  excluded: PlanRollback['excluded'];
}

/** A pool of the rollback plan and the change that sends its nodes back (none when it is there already). */
export interface RolledPool {
  pool: PlanPool;
  changes: DraftChange[];
}

/** Where a pool's findings point: its origin in the plan's rollback section. */
export const originPath = (pool: string) => `rollback.source.origins.${pool}`;
/** The first ten names, then how many more. */
export const listNames = (names: readonly string[]) => `${names.slice(0, 10).join(', ')}${names.length > 10 ? ` and ${names.length - 10} more` : ''}`;
/** A digest as a message shows it: sha256: and 12 hex digits. */
export const shortDigest = (d: string | null) => (d && d.startsWith('sha256:') ? d.slice(0, 19) : (d ?? 'unknown'));

/** A pool's settings as the cluster has them now, and its members out of service. */
interface LiveSettings {
  budget: ResolvedBudget;
  controlPlane: boolean;
  drainTimeoutSeconds: number | null;
  rebootPolicy: 'RebootOnly' | 'AllowSoftReboot';
  unavailableNow: string[];
  nodeCount: number;
}

/** The pool's settings as bootcplan wrote them to it (budget, drain timeout, reboot policy). */
export function liveSettings(
  pool: { kind: 'BootcNodePool'; obj: BootcNodePoolObject } | { kind: 'MachineConfigPool'; obj: MachineConfigPoolObject },
  name: string,
  ctx: RollbackPoolContext,
  ownInFlight: (v: NodeView) => boolean,
): LiveSettings {
  const bootc = pool.kind === 'BootcNodePool';
  const bnp = pool.kind === 'BootcNodePool' ? pool.obj : undefined;
  const mcp = pool.kind === 'MachineConfigPool' ? pool.obj : undefined;
  const raw: unknown = bnp ? bnp.spec?.rollout?.maxUnavailable : mcp?.spec?.maxUnavailable;
  const parsed = parseMaxUnavailable(raw ?? 1);
  const views = ctx.members.flatMap((m) => {
    const n = ctx.idx.nodes.get(m);
    return n ? [viewNode(n, ctx.idx)] : [];
  });
  const controlPlane = isControlPlanePool(
    name,
    mcp,
    bnp,
    views.map((v) => v.labels),
  );
  let budget = resolveMaxUnavailable(parsed.ok ? parsed.value : { kind: 'count', value: 1 }, views.length);
  budget.rule = `as ${pool.kind} ${name} has it (${bootc ? 'spec.rollout.maxUnavailable' : 'spec.maxUnavailable'}): ${budget.rule}`;
  if (controlPlane) budget = controlPlaneBudget(budget).budget;
  const drain: unknown = bnp?.spec?.rollout?.drainTimeoutSeconds;
  const policy: unknown = bnp?.spec?.disruption?.rebootPolicy;
  // The rollback's own nodes in flight are out of service for it, not against it.
  return {
    budget,
    controlPlane,
    drainTimeoutSeconds: typeof drain === 'number' ? drain : null,
    rebootPolicy: policy === 'AllowSoftReboot' ? 'AllowSoftReboot' : 'RebootOnly',
    unavailableNow: views.filter((v) => v.unavailable !== null && !ownInFlight(v)).map((v) => v.name),
    nodeCount: views.length,
  };
}

/** The nodes going back, as plan nodes in waves; the ones out of service now are listed, not taken. */
export function scheduleBack<T extends { name: string }>(
  name: string,
  back: NodeView[],
  s: LiveSettings,
  ctx: RollbackPoolContext,
  to: string,
  order: (vs: NodeView[]) => T[],
  reboot: (v: NodeView) => RebootKind,
  staged: (v: NodeView) => boolean,
  ownInFlight: (v: NodeView) => boolean,
): { nodes: PlanNode[]; waves: string[][] } {
  const blocked = (v: NodeView) => (v.degraded ? 'degraded' : v.unavailable !== null && !ownInFlight(v) ? v.unavailable : null);
  const ready = back.filter((v) => blocked(v) === null);
  // Nodes out of service now that use up the budget leave no node behind: waves of one, each
  // cordon waiting until the budget allows it (the applier checks it at every cordon, and
  // halts, saying why, when it never does). A rollback that schedules fewer nodes than it lists
  // would end "done" with nodes still on the run's image.
  const size = rollbackWaveSize(s);
  const waves = ready.length
    ? planWaves(
        order(ready).map((x) => x.name),
        size,
      )
    : [];
  const waveOf = new Map<string, number>();
  waves.forEach((w, i) => w.forEach((n) => waveOf.set(n, i + 1)));
  const nodes: PlanNode[] = back.map((v) => {
    const why = blocked(v);
    const n: PlanNode = {
      name: v.name,
      zone: v.zone,
      from: ownFrom(ctx, v) ?? v.bootedDigest ?? v.bootedImage,
      to,
      reboot: reboot(v),
      wave: why ? null : (waveOf.get(v.name) ?? null),
      staged: staged(v),
      blockedBy: why ?? (waveOf.has(v.name) ? null : 'no-budget'),
    };
    if (why) {
      n.conditions = v.conditions;
      ctx.excluded.push({ node: v.name, pool: name, why });
    }
    return n;
  });
  const rank = new Map(waves.flat().map((n, i) => [n, i]));
  nodes.sort((a, b) => (rank.get(a.name) ?? Infinity) - (rank.get(b.name) ?? Infinity) || (a.name < b.name ? -1 : 1));
  const out = back.filter((v) => blocked(v) !== null);
  if (out.length)
    ctx.report({
      severity: 'warning',
      code: 'rollback-nodes-excluded',
      path: originPath(name),
      message: `pool ${name}: ${listNames(out.map((v) => `${v.name} (${blocked(v)})`))} ${out.length === 1 ? 'was' : 'were'} updated by this run and ${out.length === 1 ? 'is' : 'are'} out of service now: left as they are for a human to look at`,
    });
  return { nodes, waves };
}

/** The budget left now (the control plane: one), and never less than one node. */
function rollbackWaveSize(s: LiveSettings): number {
  return Math.max(1, waveSizeFor(s.budget.resolved, s.unavailableNow.length, s.controlPlane));
}

/**
 * What a node in flight of this rollback goes back from: the image its entry recorded at the
 * rollback's cordon, not the one it boots now. A node that rebooted onto its origin while the
 * rollback was stopped or killed stays in the plan (cordoned: the applier uncordons it without a
 * reboot) under the same `from`, so the plan made before and the one made now agree.
 */
function ownFrom(ctx: RollbackPoolContext, v: NodeView): string | null {
  const e = nodeProgressOf(ctx.idx.nodes.get(v.name));
  return e && ctx.own.has(e.planId) && e.step !== 'done' && e.from ? digestOf(e.from) : null;
}

export function planPool(name: string, backend: 'bootc' | 'mco', image: string, s: LiveSettings, nodes: PlanNode[], waves: string[][]): PlanPool {
  return {
    name,
    backend,
    targetImage: image,
    targetDigest: digestOf(image),
    controlPlane: s.controlPlane,
    priority: 0,
    paused: false,
    rebootPolicy: s.rebootPolicy,
    drainTimeoutSeconds: s.drainTimeoutSeconds,
    soakSeconds: 0,
    maxUnavailable: s.budget,
    nodeCount: s.nodeCount,
    upToDate: s.nodeCount - nodes.length,
    unavailableNow: s.unavailableNow,
    waveSize: rollbackWaveSize(s),
    nodes,
    waves,
    estimatedSeconds: 0,
  };
}
