/**
 * One pool of the spec -> its PlanPool and its change drafts, in three steps: the members and
 * the maxUnavailable budget (src/plan/pool-members.ts), the node scheduling into waves
 * (src/plan/pool-schedule.ts), and the change drafts for the BootcNodePool, MachineConfigPool
 * and OS-image MachineConfig (src/plan/pool-changes.ts). The rules are in src/domain/
 * (nodes, pools, budget, waves; docs/design.md §7 "Pools and waves"). Pure.
 */
import type { PoolSpec } from '../rollout-spec/types.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import { defaultPriority } from '../domain/pools.ts';
import { MCO_ROLE_LABEL } from '../domain/labels.ts';
import { isLabelValue } from '../domain/kube-names.ts';
import type { DraftChange } from './changes.ts';
import type { PlanPool } from './types.ts';
import { poolMembers, type PoolMembers, type PoolPlanContext } from './pool-members.ts';
import { scheduleNodes } from './pool-schedule.ts';
import { poolChanges } from './pool-changes.ts';
import { drainPolicyOf, drainTimeoutOf } from './drain.ts';

export type { PoolPlanContext } from './pool-members.ts';
export { osImageMachineConfigName } from './pool-changes.ts';

export interface PlannedPool {
  plan: PlanPool;
  drafts: DraftChange[];
}

export function planPool(p: PoolSpec, path: string, ctx: PoolPlanContext): PlannedPool | null {
  const pool = poolMembers(p, path, ctx);
  if (!pool) return null;
  const { nodes, waves } = scheduleNodes(pool, ctx.report, ctx.selfNode, ctx.bootcOperator, ctx.drain);
  const drafts = poolChanges(pool, ctx.snapshot);
  if (drafts.some((d) => d.action === 'create' && d.kind === 'MachineConfig') && !isLabelValue(p.name)) {
    // The MachineConfig carries the pool's name as its role label: the API server refuses a
    // label value over 63 characters (k8s.io/apimachinery IsValidLabelValue).
    ctx.report({
      code: 'pool-name-not-a-label-value',
      path: joinPath(path, 'name'),
      message: `pool ${p.name}: bootcplan's MachineConfig for this MCO pool would carry the label ${MCO_ROLE_LABEL}: ${p.name}, and a label value has at most 63 characters (letters, digits, "-", "_", ".")`,
      expected: 'an MCO pool whose name is a label value (at most 63 characters)',
      hint: "the MCO selects a pool's MachineConfigs by this role label too; roll this pool through a BootcNodePool, or give it a shorter name",
    });
  }
  const { backend, targetDigest, controlPlane, paused, rebootPolicy, budget, members, pending, unavailableNow, waveSize } = pool;
  const plan: PlanPool = {
    name: p.name,
    backend,
    targetImage: p.image,
    targetDigest,
    controlPlane,
    priority: p.priority ?? defaultPriority(p.name, controlPlane),
    paused,
    rebootPolicy,
    drainTimeoutSeconds: drainTimeoutOf(p) ?? null,
    soakSeconds: p.soakSeconds ?? 0,
    maxUnavailable: budget,
    nodeCount: members.length,
    upToDate: members.length - pending.length,
    unavailableNow: unavailableNow.map((n) => n.name),
    waveSize,
    nodes,
    waves,
    estimatedSeconds: 0,
  };
  if (rolloutOf(pool, ctx.report) === 'slots') plan.rollout = 'slots';
  const drain = drainPolicyOf(p);
  if (drain) plan.drain = drain;
  if (p.stagingTimeoutSeconds !== undefined) plan.stagingTimeoutSeconds = p.stagingTimeoutSeconds;
  const reboot = pool.bnp?.spec?.rollout?.rebootTimeoutSeconds;
  if (typeof reboot === 'number' && reboot > 0) plan.rebootTimeoutSeconds = reboot;
  return { plan, drafts };
}

/**
 * `rollout: slots` (docs/spec.md "Slots"): bootc pools only. An MCO-only pool is rolled by the MCO's node
 * controller, which refills its own slots (maxUnavailable) and admits nodes itself: bootcplan
 * could not check windows, staleness or a failed node before each admission, so slots are
 * refused there with a plan error (docs/spec.md "Slots"). The admission order and batches are the
 * waves' (same order, same eligibility and blocking rules).
 */
function rolloutOf(pool: PoolMembers, report: (d: DiagnosticInput) => void): 'waves' | 'slots' {
  if (pool.spec.rollout !== 'slots') return 'waves';
  if (pool.backend === 'bootc') return 'slots';
  report({
    code: 'slots-mco-pool',
    path: joinPath(pool.path, 'rollout'),
    message: `pool ${pool.spec.name} is an MCO pool (no BootcNodePool): the MCO admits its nodes itself, refilling maxUnavailable as nodes finish, so bootcplan cannot check maintenance windows, staleness and failed nodes before each admission`,
    expected: 'rollout: waves (or no rollout) for a MachineConfigPool without a BootcNodePool',
    hint: 'remove rollout: slots from this pool; bootcplan rolls MCO pools in waves, pausing the pool between them',
  });
  return 'waves';
}
