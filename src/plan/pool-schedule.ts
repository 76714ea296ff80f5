/**
 * A pool's pending nodes into waves (docs/design.md §7 "Pools and waves"): each node judged once (what
 * holds it back, whether it staged the target, its predicted reboot), the schedulable ones
 * ordered (bootc: bootcplan's order; MCO-only: the MCO's, predicted) and cut into waves of the
 * pool's wave size, then the PlanNode entries in rollout order. The second step of
 * src/plan/pool.ts. Pure.
 */
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import type { NodeView } from '../domain/nodes.ts';
import { orderNodesForRollout, orderNodesLikeMco, planWaves, selfLast } from '../domain/waves.ts';
import type { PlanNode, RebootKind, BlockedBy } from './types.ts';
import type { PoolMembers } from './pool-members.ts';
import type { BootcOperatorAbilities } from '../domain/bootc-daemon.ts';
import { budgetWaves, reportMcoBudgetWaits, type DrainContext } from './drain.ts';

/** A pending node of the pool, judged once: what holds it back, whether it staged the target, its reboot. */
interface JudgedNode {
  view: NodeView;
  blockedBy: BlockedBy | null;
  staged: boolean;
  reboot: RebootKind;
}

export function scheduleNodes(
  pool: PoolMembers,
  report: (d: DiagnosticInput) => void,
  selfNode: string | null,
  operator: BootcOperatorAbilities,
  drain: DrainContext | null,
): { nodes: PlanNode[]; waves: string[][] } {
  const judged = judgeNodes(pool, operator);
  reportNoSoftReboots(pool, operator, report);
  const waves = planPoolWaves(pool, judged, selfNode, drain, report);
  const nodes = planNodes(pool, judged, waves, selfNode);
  reportUnscheduled(pool, nodes, report);
  return { nodes, waves };
}

/** Each pending node judged once: what blocks it, whether it is staged, its reboot. */
function judgeNodes(pool: PoolMembers, operator: BootcOperatorAbilities): JudgedNode[] {
  const { backend, targetDigest, paused, rebootPolicy, waveSize, pending } = pool;
  const isStaged = (n: NodeView) => backend === 'bootc' && !!targetDigest && n.stagedDigest === targetDigest;

  const predictReboot = (n: NodeView): RebootKind => {
    if (backend === 'mco') return 'hard';
    if (rebootPolicy !== 'AllowSoftReboot') return 'hard';
    // The daemon reboots every node fully unless it can soft-reboot at all (src/domain/bootc-daemon.ts).
    if (!operator.softReboot) return 'hard';
    // bootc: a soft reboot is possible only when the staged deployment says so
    // (BootcNode status.staged.softRebootCapable); before staging it cannot be known.
    if (!isStaged(n)) return 'unknown';
    return n.stagedSoftRebootCapable ? 'soft' : 'hard';
  };

  const blockedOf = (n: NodeView): BlockedBy | null => {
    const held = pool.blocked.get(n.name);
    if (held) return held;
    if (n.unavailable) return n.unavailable;
    if (paused) return 'pool-paused';
    if (waveSize < 1) return 'no-budget';
    return null;
  };

  return pending.map((n) => ({ view: n, blockedBy: blockedOf(n), staged: isStaged(n), reboot: predictReboot(n) }));
}

/**
 * `rebootPolicy: AllowSoftReboot` on a bootc pool whose operator performs no soft reboots: a
 * note that every node is planned (and estimated) as a full reboot, naming the nodes whose staged
 * entry says it could soft-reboot.
 */
function reportNoSoftReboots(pool: PoolMembers, operator: BootcOperatorAbilities, report: (d: DiagnosticInput) => void): void {
  if (operator.softReboot || pool.backend !== 'bootc' || pool.rebootPolicy !== 'AllowSoftReboot' || !pool.pending.length) return;
  const capable = pool.pending.filter((n) => n.stagedSoftRebootCapable).map((n) => n.name);
  const shown = capable.length > 10 ? `${capable.slice(0, 10).join(', ')} and ${capable.length - 10} more` : capable.join(', ');
  report({
    severity: 'warning',
    code: 'soft-reboot-not-performed',
    path: joinPath(pool.path, 'rebootPolicy'),
    message: `pool ${pool.spec.name}: rebootPolicy AllowSoftReboot, but the bootc-operator daemon does not perform soft reboots (it always runs a full \`systemctl reboot\`): its ${pool.pending.length} node(s) to update are planned and estimated as hard reboots${capable.length ? `, including ${capable.length} whose staged image reports softRebootCapable (${shown})` : ''}`,
    hint: 'nothing to change: the policy takes effect once the installed bootc-operator performs soft reboots; plan again then',
  });
}

/**
 * The names of the schedulable nodes in rollout order, in waves of the pool's wave size; a bootc
 * pool's waves spread over the PodDisruptionBudgets of the snapshot's workloads (src/plan/drain.ts).
 */
function planPoolWaves(
  pool: PoolMembers,
  judged: readonly JudgedNode[],
  selfNode: string | null,
  drain: DrainContext | null,
  report: (d: DiagnosticInput) => void,
): string[][] {
  const { backend, waveSize } = pool;
  // What the orderings read of a node (not a copy of the whole view: pools have thousands).
  const schedulable = [];
  for (const j of judged) {
    if (j.blockedBy === null)
      schedulable.push({ name: j.view.name, zone: j.view.zone, createdAt: j.view.createdAt, staged: j.staged, softReboot: j.reboot === 'soft' });
  }
  // bootc pools: bootcplan picks the nodes (staged first, soft reboots together, zones
  // round-robin), the node running bootcplan itself last. MCO-only pools: the MCO's node
  // controller picks them, so the plan predicts its order (src/domain/waves.ts orderNodesLikeMco).
  const ordered = backend === 'bootc' ? selfLast(orderNodesForRollout(schedulable), selfNode, (n) => n.name) : orderNodesLikeMco(schedulable);
  // The MCO's node controller takes the first candidates of its order whatever their pods: only
  // bootcplan's own pools can be spread over the budgets.
  if (drain && backend === 'bootc' && waveSize >= 1 && ordered.length) {
    const names = ordered.map((n) => n.name);
    const last = selfNode !== null && names.includes(selfNode) ? selfNode : null;
    return budgetWaves(names, waveSize, drain, last, { pool: pool.spec.name, path: pool.path }, report);
  }
  const waves =
    waveSize >= 1 && ordered.length
      ? planWaves(
          ordered.map((n) => n.name),
          waveSize,
        )
      : [];
  if (drain && backend === 'mco') reportMcoBudgetWaits(waves, drain, { pool: pool.spec.name, path: pool.path }, report);
  return waves;
}

/** The PlanNode entries: scheduled nodes in rollout order (wave, then position in the wave), the others last by name. */
function planNodes(pool: PoolMembers, judged: readonly JudgedNode[], waves: readonly string[][], selfNode: string | null): PlanNode[] {
  const { spec: p, backend, targetDigest } = pool;
  const waveOf = new Map<string, number>();
  waves.forEach((w, i) => w.forEach((name) => waveOf.set(name, i + 1)));

  const byName = new Map<string, PlanNode>();
  const unscheduled: PlanNode[] = [];
  for (const { view: n, blockedBy, staged, reboot } of judged) {
    const out: PlanNode = {
      name: n.name,
      zone: n.zone,
      from: n.bootedDigest ?? n.bootedImage,
      to: targetDigest ?? p.image,
      reboot,
      wave: waveOf.get(n.name) ?? null,
      staged,
      blockedBy,
    };
    if (blockedBy && n.conditions.length) out.conditions = n.conditions;
    if (backend === 'bootc' && out.wave !== null && n.name === selfNode) out.runsBootcplan = true;
    if (out.wave === null) unscheduled.push(out);
    else byName.set(n.name, out);
  }
  const nodes: PlanNode[] = [];
  for (const w of waves) {
    for (const name of w) {
      const n = byName.get(name);
      if (n) nodes.push(n); // every node of a wave was given its entry above
    }
  }
  unscheduled.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const n of unscheduled) nodes.push(n);
  return nodes;
}

/** The warnings about pending nodes left out: out of service, or no budget left for any. */
function reportUnscheduled(pool: PoolMembers, nodes: readonly PlanNode[], report: (d: DiagnosticInput) => void) {
  const { spec: p, path, paused, waveSize, pending, unavailableNow, budget } = pool;
  const blocked = nodes.filter((n) => n.blockedBy && n.blockedBy !== 'pool-paused' && n.blockedBy !== 'no-budget' && !pool.blocked.has(n.name));
  if (blocked.length) {
    report({
      severity: 'warning',
      code: 'nodes-blocked',
      path: joinPath(path, 'name'),
      message: `${blocked.length} node(s) of pool ${p.name} need the new image but are out of service and are not scheduled: ${blocked.map((n) => `${n.name} (${n.blockedBy})`).join(', ')}`,
      hint: 'they use up maxUnavailable budget; bring them back (or uncordon them) and plan again',
    });
  }
  if (waveSize < 1 && pending.length && !paused) {
    report({
      severity: 'warning',
      code: 'budget-exhausted',
      path: joinPath(path, 'maxUnavailable'),
      message: `${unavailableNow.length} node(s) of pool ${p.name} are already out of service, which uses up maxUnavailable ${budget.resolved}: no node can be scheduled`,
      hint: 'bring the unavailable nodes back, or raise maxUnavailable',
    });
  }
}
