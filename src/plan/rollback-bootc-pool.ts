/**
 * A bootc pool of a rollback plan (docs/apply.md "Rollback"): each member's role (goes back, in
 * flight, or refused or left behind by src/domain/rollback.ts), the refusals and leftovers, and
 * the one change that sends the nodes back, the BootcNodePool's spec.image.ref to the origin
 * (guarded by a test of the run's target). Its nodes are scheduled as every rollback pool's
 * (rollback-pools.ts). Pure.
 */
import type { BootcNodePoolObject } from '../cluster/kinds.ts';
import type { BootcOrigin, NodeProgress } from '../cluster/progress.ts';
import { nodeProgressOf } from '../cluster/progress.ts';
import { conditionOf, digestOf, viewNode, type NodeView } from '../domain/nodes.ts';
import { orderNodesForRollout } from '../domain/waves.ts';
import { BOOTCPLAN_CORDONED_BY } from '../domain/labels.ts';
import { bootcRollbackRole, type BootcRollbackRole } from '../domain/rollback.ts';
import type { DraftChange } from './changes.ts';
import { rollbackVia } from './rollback-origins.ts';
import type { RebootKind } from './types.ts';
import { liveSettings, listNames, originPath, planPool, scheduleBack, shortDigest, type RolledPool, type RollbackPoolContext } from './rollback-pools.ts';

/** A bootc pool: its members' roles, refusals, leftovers; null when it has nothing to roll back. */
export function bootcPoolRollback(name: string, origin: BootcOrigin, target: string, ctx: RollbackPoolContext): RolledPool | null {
  const bnp = ctx.snapshot.bootcNodePools.find((p) => p.metadata.name === name);
  if (!bnp) return null;
  if (origin.mixed) {
    ctx.report({
      code: 'rollback-mixed-origins',
      path: originPath(name),
      message: `pool ${name} started the run from ${origin.mixed.length} different images (${origin.mixed.map(shortDigest).join(', ')}): a BootcNodePool has one image for all its nodes (bootc-operator syncBootcNodeSpec), so no single image returns every node to the one it booted`,
      hint: 'roll these nodes back by hand, or roll forward to a fixed image; onFailure: halt is the setting for such a pool',
    });
    return null;
  }
  if (!origin.image || !origin.digest) return null;
  const roles = new Map<BootcRollbackRole, NodeView[]>();
  for (const m of ctx.members) {
    const node = ctx.idx.nodes.get(m);
    if (!node) continue;
    const v = viewNode(node, ctx.idx);
    const role = bootcRole(v, nodeProgressOf(node), name, target, origin.digest, ctx);
    roles.set(role, [...(roles.get(role) ?? []), v]);
  }
  // A pool the run touched stays in the plan when none of its nodes is left to go back (a
  // re-plan while the rollback runs, or only its image to put back): its image is part of the way back.
  // A node still on the origin under the run's cordon goes too: the applier undoes that cordon
  // without a reboot (bootc-node.ts runBootcNode: it is on the image already); its role, and
  // what it lists, stay as they are.
  const uncordonOnly = [...(roles.get('untouched') ?? []), ...(roles.get('target-still-staged') ?? [])].filter((v) => runCordon(ctx, v, name));
  const back = [...(roles.get('rollback') ?? []), ...(roles.get('degraded') ?? []), ...uncordonOnly];
  refuseBootc(name, origin, roles, ctx);
  const change = bootcPoolChange(bnp, name, origin, target, ctx);
  const ours = (v: NodeView) => ownEntry(ctx, v) || runCordon(ctx, v, name);
  const settings = liveSettings({ kind: 'BootcNodePool', obj: bnp }, name, ctx, ours);
  const staged = (v: NodeView) => v.stagedDigest === origin.digest;
  const reboot = (v: NodeView): RebootKind =>
    settings.rebootPolicy !== 'AllowSoftReboot' ? 'hard' : !staged(v) ? 'unknown' : v.stagedSoftRebootCapable ? 'soft' : 'hard';
  const { nodes, waves } = scheduleBack(
    name,
    back,
    settings,
    ctx,
    origin.digest,
    (vs) => orderNodesForRollout(vs.map((v) => ({ name: v.name, zone: v.zone, staged: staged(v), softReboot: staged(v) && reboot(v) === 'soft' }))),
    reboot,
    staged,
    ours,
  );
  const pool = planPool(name, 'bootc', origin.image, settings, nodes, waves);
  pool.rollback = { available: true, to: origin.image, via: rollbackVia(name, origin), download: false, why: null };
  return { pool, changes: change ? [change] : [] };
}

function bootcRole(v: NodeView, entry: NodeProgress | null, pool: string, target: string, origin: string, ctx: RollbackPoolContext): BootcRollbackRole {
  const bn = ctx.idx.bootcNodes.get(v.name);
  const desired: unknown = bn?.spec?.desiredImage;
  const rebootRequested =
    conditionOf(bn, 'Idle')?.reason === 'Rebooting' ||
    (bn?.spec?.desiredImageState === 'Booted' && digestOf(typeof desired === 'string' ? desired : null) === target);
  const onTarget = v.bootedDigest === target || rebootRequested;
  // The rollback's own nodes in flight (a re-plan while it runs, or a rollback continued after a
  // stop or a kill): the plan that took them saw their `from`; their entry now records the
  // target they go back from. One already back on the origin is still in flight (cordoned,
  // its entry not done): the applier uncordons it without a reboot (bootc-node.ts runBootcNode).
  if (entry && ctx.own.has(entry.planId) && entry.pool === pool && entry.step !== 'done' && (onTarget || v.bootedDigest === origin))
    return v.degraded ? 'degraded' : 'rollback';
  return bootcRollbackRole({
    entry,
    chain: ctx.chain,
    wave: ctx.scopeWave,
    pool,
    bootedDigest: v.bootedDigest,
    stagedDigest: v.stagedDigest,
    rollbackDigest: typeof bn?.status?.rollback?.imageDigest === 'string' ? bn.status.rollback.imageDigest : null,
    rebootRequested,
    degraded: v.degraded,
    target,
    origin,
  });
}

/** The refusals (errors) and what stays behind (warnings, leftovers) of a bootc pool. */
function refuseBootc(name: string, origin: BootcOrigin, roles: Map<BootcRollbackRole, NodeView[]>, ctx: RollbackPoolContext): void {
  const names = (r: BootcRollbackRole) => (roles.get(r) ?? []).map((v) => v.name);
  const differs = names('origin-differs');
  if (differs.length) {
    ctx.report({
      code: 'rollback-origin-differs',
      path: originPath(name),
      message: `pool ${name}: ${listNames(differs)} booted another image than the pool's origin ${shortDigest(origin.digest)} before this run updated them (their progress entry's from, or none recorded): the pool's one image would send them to an image they never booted`,
      hint: 'roll these nodes back by hand (bootc rollback on each), or roll forward to a fixed image',
    });
  }
  const unbooted = names('would-stage-unbooted');
  if (unbooted.length) {
    ctx.report({
      code: 'rollback-would-stage-unbooted',
      path: originPath(name),
      message: `pool ${name}: ${listNames(unbooted)} boot${unbooted.length === 1 ? 's' : ''} neither the run's image nor ${shortDigest(origin.digest)}, and never booted ${shortDigest(origin.digest)}: the pool's image is one reference for all its nodes, and they would stage an image they never ran`,
      hint: 'these nodes were not updated by this run; move them to another pool, or roll forward instead',
    });
  }
  for (const [what, code, words] of [
    [
      'target-still-staged',
      'rollback-target-still-staged',
      "boot the origin but staged the run's image before the first wave: bootc-operator cannot unstage it, so an unplanned reboot would boot it (remove it with `ostree admin undeploy` of the staged entry, or let the next rollout stage over it)",
    ],
    ['stages-origin', 'rollback-stages-origin', 'will stage the origin, which they booted before, and are not rebooted by this rollback'],
  ] as const) {
    const ns = names(what);
    if (!ns.length) continue;
    ctx.report({ severity: 'warning', code, path: originPath(name), message: `pool ${name}: ${listNames(ns)} ${words}` });
    for (const n of ns) ctx.leftovers.push({ node: n, pool: name, what });
  }
}

/** spec.image.ref back to the origin, guarded by a test of the run's target; null when it is there already. */
function bootcPoolChange(bnp: BootcNodePoolObject, name: string, origin: BootcOrigin, target: string, ctx: RollbackPoolContext): DraftChange | null {
  const ref: unknown = bnp.spec?.image?.ref;
  const address = `BootcNodePool/${name}`;
  const base = {
    address,
    apiVersion: bnp.apiVersion,
    kind: 'BootcNodePool',
    namespace: null,
    name,
    reason: 'pool-image-rollback' as const,
    pool: name,
    before: { spec: { image: { ref } } },
    after: { spec: { image: { ref: origin.image } } },
  };
  if (ref === origin.image) return { ...base, action: 'noop', patch: [], risk: 'none', description: `BootcNodePool ${name} is back on ${origin.image}` };
  const resolved: unknown = bnp.status?.targetDigest;
  if (typeof ref !== 'string' || (digestOf(ref) ?? resolved) !== target) {
    ctx.report({
      code: 'rollback-pool-moved',
      path: originPath(name),
      message: `BootcNodePool ${name} spec.image.ref is ${typeof ref === 'string' ? ref : 'not set'}, neither the run's image ${shortDigest(target)} nor the origin ${origin.image}: someone changed it since the run`,
      hint: 'plan the spec again instead; a rollback only reverses what the run did',
    });
    return null;
  }
  return {
    ...base,
    action: 'update',
    risk: 'disruptive',
    patch: [
      { op: 'test', path: '/spec/image/ref', value: ref },
      { op: 'replace', path: '/spec/image/ref', value: origin.image },
    ],
    description: `BootcNodePool ${name}: back to ${origin.image}; every node of the pool is handed it, and the nodes that boot it already do nothing`,
  };
}

/**
 * The run's own cordon is still on the node: its entry is the run's (a plan of its chain), in this
 * pool, at step `cordon` (the run was stopped or killed between its cordon and its uncordon; the
 * entry reads `cordon` through the drain and the reboot: src/apply/pools/bootc-node.ts), within the
 * scope, and the Node is unschedulable with bootcplan's mark of that plan (src/domain/cordons.ts).
 * The rollback undoes that cordon (bootc-node.ts uncordonOurs), so the node is in flight for it,
 * not out of service on its own: it takes no budget and is not left to a human.
 */
function runCordon(ctx: RollbackPoolContext, v: NodeView, pool: string): boolean {
  const node = ctx.idx.nodes.get(v.name);
  const e = nodeProgressOf(node);
  if (!e || !ctx.chain.has(e.planId) || e.pool !== pool || e.step !== 'cordon' || e.wasCordoned) return false;
  if (ctx.scopeWave && (e.planId !== ctx.scopeWave.planId || e.wave !== ctx.scopeWave.wave || pool !== ctx.scopeWave.pool)) return false;
  return v.cordoned && node?.metadata.annotations?.[BOOTCPLAN_CORDONED_BY] === e.planId;
}

/** The node's entry is this rollback's and in flight. */
function ownEntry(ctx: RollbackPoolContext, v: NodeView): boolean {
  const e = nodeProgressOf(ctx.idx.nodes.get(v.name));
  return !!e && ctx.own.has(e.planId) && e.step !== 'done';
}
