/**
 * `scope: wave` and the other pools of the run (docs/apply.md "Rollback": scope wave and the other
 * pools of the run). The run set the image of every bootc pool before its first pool ran, so every
 * node of those pools stages it (src/apply/pools/bootc-pool.ts): a pool whose waves never started has
 * the failed image as its BootcNodePool's spec.image.ref and, on its nodes, staged, and an
 * unplanned reboot of one of them boots it. What the rollback does with each such pool:
 *
 * - no node of it boots the run's image (its waves never started): its image goes back to the
 *   origin like the failed pool's (bootcPoolRollback: no node is rebooted, bootc-operator hands
 *   every node the origin, which they boot already), and the nodes that staged the failed image
 *   before it could be taken back are named (`rollback-target-still-staged`: bootc-operator
 *   cannot unstage); the pool is held like every pool of the rollback;
 * - nodes of it boot the run's image (it rolled before the failed pool): scope wave keeps them
 *   there (the pool's one image would hand them the origin too), the pool is held for the run's
 *   image, and its nodes on it or with it staged are named (`rollback-scope-wave-kept`);
 * - a pool the run left on its origin, or an MCO pool whose nodes never moved to the run's config
 *   (the osImage MachineConfig is written when its pool starts): nothing of the run is there.
 *
 * A pool that cannot be taken back (mixed origins, a node that would stage an image it never
 * booted, its image moved since) does not refuse the rollback of the failed wave: it is kept and
 * held, saying why. Pure.
 */
import type { BootcOrigin, McoOrigin, PoolOrigin } from '../cluster/progress.ts';
import type { DiagnosticInput } from '../base/diagnostics.ts';
import { digestOf, viewNode, type NodeView } from '../domain/nodes.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG } from '../domain/labels.ts';
import { bootcPoolRollback } from './rollback-bootc-pool.ts';
import { listNames, originPath, shortDigest, type RolledPool, type RollbackPoolContext } from './rollback-pools.ts';

/** A pool of the run other than the failed wave's, under scope wave: its way back, or null (kept, or nothing of the run on it). */
export function otherPoolOfScopeWave(name: string, origin: PoolOrigin, target: string, ctx: RollbackPoolContext): RolledPool | null {
  return origin.kind === 'bootc' ? bootcOther(name, origin, target, ctx) : mcoOther(name, origin, ctx);
}

function bootcOther(name: string, origin: BootcOrigin, target: string, ctx: RollbackPoolContext): RolledPool | null {
  const bnp = ctx.snapshot.bootcNodePools.find((p) => p.metadata.name === name);
  if (!bnp) return null;
  const ref: unknown = bnp.spec?.image?.ref;
  const resolved: unknown = bnp.status?.targetDigest;
  const received = typeof ref === 'string' && (digestOf(ref) ?? resolved) === target;
  // Back on the origin already (a re-plan while the rollback runs, or a rollback continued): kept in the plan, as the failed pool is.
  const back = typeof ref === 'string' && ref === origin.image;
  const views = memberViews(ctx);
  const onTarget = views.filter((v) => v.bootedDigest === target || rebootRequested(ctx, v.name, target)).map((v) => v.name);
  const staged = views.filter((v) => v.stagedDigest === target && !onTarget.includes(v.name)).map((v) => v.name);
  if (!received && !back && !onTarget.length) return null;
  if (!onTarget.length && (received || back)) {
    // Planned on the side: a refusal here must not refuse the rollback of the failed wave.
    const found: DiagnosticInput[] = [];
    const leftovers: RollbackPoolContext['leftovers'] = [];
    const rolled = bootcPoolRollback(name, origin, target, { ...ctx, report: (d) => found.push(d), leftovers, excluded: [] });
    const refusals = found.filter((d) => (d.severity ?? 'error') === 'error');
    if (rolled && !refusals.length) {
      ctx.report({
        severity: 'warning',
        code: 'rollback-scope-wave-reverted',
        path: originPath(name),
        message: `pool ${name}: no wave of it started, and the run handed it ${shortDigest(target)} (its BootcNodePool's spec.image.ref, set before the first pool ran): its image goes back to ${origin.image ?? 'its origin'} without a reboot, and it is held, so that no node of it is handed the failed image (a node that staged it already is listed)`,
      });
      for (const d of found) ctx.report(d);
      ctx.leftovers.push(...leftovers);
      return rolled;
    }
    kept(name, [], staged, ctx, `its image cannot go back (${(refusals.length ? refusals.map((d) => d.message) : ['its origin is unknown']).join('; ')})`);
    return null;
  }
  kept(name, onTarget, staged, ctx, "scope wave keeps the nodes the run updated (the pool's one image would hand them the origin too)");
  return null;
}

function mcoOther(name: string, origin: McoOrigin, ctx: RollbackPoolContext): RolledPool | null {
  const mcp = ctx.snapshot.machineConfigPools.find((p) => p.metadata.name === name);
  const now: unknown = mcp?.spec?.configuration?.name;
  const renderedTarget = origin.renderedTarget ?? (typeof now === 'string' && now !== origin.rendered ? now : null);
  if (!renderedTarget) return null;
  const on = ctx.members.filter((m) => {
    const ann = ctx.idx.nodes.get(m)?.metadata.annotations ?? {};
    return ann[MCO_CURRENT_CONFIG] === renderedTarget || ann[MCO_DESIRED_CONFIG] === renderedTarget;
  });
  if (!on.length) return null;
  kept(name, on, [], ctx, 'scope wave keeps the nodes the run updated (an MCO pool goes back whole)');
  return null;
}

/** A pool left with the run's image: named (a warning), its nodes listed, and held (src/apply/gates/holds.ts holds every pool a rollback plan lists). */
function kept(name: string, onTarget: string[], staged: string[], ctx: RollbackPoolContext, why: string): void {
  const parts = [
    ...(onTarget.length ? [`${listNames(onTarget)} boot${onTarget.length === 1 ? 's' : ''} the run's image`] : []),
    ...(staged.length ? [`${listNames(staged)} ha${staged.length === 1 ? 's' : 've'} it staged (an unplanned reboot boots it)`] : []),
  ];
  ctx.report({
    severity: 'warning',
    code: 'rollback-scope-wave-kept',
    path: originPath(name),
    message: `pool ${name}: ${parts.length ? parts.join(', and ') : "it is handed the run's image"}: ${why}; the pool is held for the run's image (plan --rollback --scope run takes it back)`,
  });
  for (const node of onTarget) ctx.leftovers.push({ node, pool: name, what: 'kept-on-target' });
  for (const node of staged) ctx.leftovers.push({ node, pool: name, what: 'target-still-staged' });
}

function memberViews(ctx: RollbackPoolContext): NodeView[] {
  return ctx.members.flatMap((m) => {
    const n = ctx.idx.nodes.get(m);
    return n ? [viewNode(n, ctx.idx)] : [];
  });
}

/** Its reboot into the target was asked for (BootcNode desiredImageState Booted with the target, or Rebooting). */
function rebootRequested(ctx: RollbackPoolContext, node: string, target: string): boolean {
  const bn = ctx.idx.bootcNodes.get(node);
  const desired: unknown = bn?.spec?.desiredImage;
  return bn?.spec?.desiredImageState === 'Booted' && digestOf(typeof desired === 'string' ? desired : null) === target;
}
