/**
 * An MCO pool of a rollback plan (docs/apply.md "Rollback"): the nodes on the run's rendered
 * config go back, the whole pool at once (the MCO moves every node off a config it no longer
 * targets), by bootcplan's osImage MachineConfig put back as it was before the run. Its nodes
 * are scheduled as every rollback pool's (rollback-pools.ts). Pure.
 */
import type { McoOrigin } from '../cluster/progress.ts';
import { digestOf, viewNode, type NodeView } from '../domain/nodes.ts';
import { orderNodesLikeMco } from '../domain/waves.ts';
import { inMcoRollback, joinedDuringRun } from '../domain/rollback.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG } from '../domain/labels.ts';
import type { DraftChange } from './changes.ts';
import { rollbackVia } from './rollback-origins.ts';
import { listNames, liveSettings, originPath, planPool, scheduleBack, shortDigest, type RolledPool, type RollbackPoolContext } from './rollback-pools.ts';

/**
 * An MCO pool: the nodes on the run's rendered config go back (the whole pool: no waves of one
 * run). `target` is the run's image for the pool (its run record's targets: digest or reference).
 */
export function mcoPoolRollback(name: string, origin: McoOrigin, target: string, ctx: RollbackPoolContext): RolledPool | null {
  const mcp = ctx.snapshot.machineConfigPools.find((p) => p.metadata.name === name);
  if (!mcp) return null;
  const now: unknown = mcp.spec?.configuration?.name;
  const renderedTarget = origin.renderedTarget ?? (typeof now === 'string' && now !== origin.rendered ? now : null);
  const back: NodeView[] = [];
  for (const m of ctx.members) {
    const node = ctx.idx.nodes.get(m);
    const ann = node?.metadata.annotations ?? {};
    if (node && renderedTarget && inMcoRollback(ann[MCO_CURRENT_CONFIG], ann[MCO_DESIRED_CONFIG], renderedTarget)) back.push(viewNode(node, ctx.idx));
  }
  joinedWarning(name, origin, back, ctx);
  if (ctx.widened && back.length) {
    ctx.report({
      severity: 'warning',
      code: 'rollback-scope-widened-mco',
      path: originPath(name),
      message: `pool ${name} is an MCO pool: the MCO moves every node off a config it no longer targets, so its rollback takes all ${back.length} node(s) on ${renderedTarget}, all updated by this run (scope wave acts as run here)`,
    });
  }
  const change = mcoChange(name, origin, target, ctx);
  // Nodes the MCO moves back to the pre-run config already (the rollback put the MachineConfig
  // back, then was stopped or killed): the rollback's own in flight, out of service for it, not
  // against it; their wave lets the MCO finish them and leaves the pool as the spec wants it.
  const movingBack = (v: NodeView) => {
    const ann = ctx.idx.nodes.get(v.name)?.metadata.annotations ?? {};
    return ann[MCO_DESIRED_CONFIG] === origin.rendered && ann[MCO_CURRENT_CONFIG] !== origin.rendered;
  };
  const settings = liveSettings({ kind: 'MachineConfigPool', obj: mcp }, name, ctx, movingBack);
  const to = digestOf(origin.image) ?? origin.image;
  const byName = new Map(back.map((v) => [v.name, v]));
  const { nodes, waves } = scheduleBack(
    name,
    back,
    settings,
    ctx,
    to,
    (vs) => orderNodesLikeMco(vs.map((v) => ({ name: v.name, zone: v.zone, createdAt: byName.get(v.name)!.createdAt }))),
    () => 'hard',
    () => false,
    movingBack,
  );
  const pool = planPool(name, 'mco', origin.image, settings, nodes, waves);
  pool.rollback = { available: true, to: origin.image, via: rollbackVia(name, origin), download: true, why: null };
  return { pool, changes: change ? [change] : [] };
}

/**
 * The nodes going back that joined the pool during the run (src/domain/rollback.ts
 * joinedDuringRun): the MCO moves every node of the pool to the config it targets, so they go to
 * the origin image too, which they may never have booted. Named, so that the reviewer knows
 * before applying (docs/safety.md "Rollback").
 */
function joinedWarning(name: string, origin: McoOrigin, back: readonly NodeView[], ctx: RollbackPoolContext): void {
  const since = origin.readAt ?? ctx.runStartedAt;
  const joined = back.filter((v) => joinedDuringRun(v.createdAt, since)).map((v) => v.name);
  if (!joined.length) return;
  ctx.report({
    severity: 'warning',
    code: 'rollback-mco-joined-during-run',
    path: originPath(name),
    message: `pool ${name}: ${listNames(joined)} joined the pool during the run (created after ${since}) and run the config the run rendered: they may never have booted ${origin.image}, the pool's image before the run; the MCO moves every node of the pool off a config it no longer targets, so this rollback moves them to that image all the same`,
    hint: 'review them before applying: the MCO gives every node of a pool the same config, so no rollback of this pool can leave them out',
  });
}

/**
 * bootcplan's osImage MachineConfig back as it was: deleted when the run created it (the pre-run
 * set of MachineConfigs, so the MCO renders the pre-run config), else its osImageURL back. Then
 * the pool must render the pre-run config again (`waitAfter`). Only while it still carries the
 * run's image (docs/apply.md "MCO pools"): one pointed elsewhere since is refused, as a bootc
 * pool's moved image is (rollback-bootc-pool.ts bootcPoolChange).
 */
function mcoChange(name: string, origin: McoOrigin, target: string, ctx: RollbackPoolContext): DraftChange | null {
  const mc = ctx.snapshot.machineConfigs.find((m) => m.metadata.name === origin.machineConfig);
  const url: unknown = mc?.spec?.osImageURL;
  const waitAfter = {
    kind: 'pool-rendered' as const,
    pool: name,
    rendered: origin.rendered,
    description: `MachineConfigPool ${name} renders ${origin.rendered} again`,
  };
  const base = {
    address: `MachineConfig/${origin.machineConfig}`,
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    namespace: null,
    name: origin.machineConfig,
    reason: 'pool-os-image-rollback' as const,
    pool: name,
    before: { spec: { osImageURL: url ?? null } },
    waitAfter,
  };
  const back = origin.osImageURL === null ? !mc : url === origin.osImageURL;
  if (back)
    return {
      ...base,
      action: 'noop',
      patch: [],
      after: { spec: { osImageURL: origin.osImageURL } },
      risk: 'none',
      description: `MachineConfig ${origin.machineConfig} is as before the run`,
    };
  if (typeof url !== 'string') {
    ctx.report({
      code: 'rollback-pool-moved',
      path: originPath(name),
      message: `MachineConfig ${origin.machineConfig} has no osImageURL: it is not the one the run wrote`,
      hint: 'plan the spec again instead; a rollback only reverses what the run did',
    });
    return null;
  }
  if (!sameImage(url, target)) {
    ctx.report({
      code: 'rollback-pool-moved',
      path: originPath(name),
      message: `MachineConfig ${origin.machineConfig} spec.osImageURL is ${url}, neither the run's image ${shortDigest(target)} nor the origin ${origin.osImageURL ?? '(none: the run created it)'}: someone changed it since the run`,
      hint: 'plan the spec again instead; a rollback only reverses what the run did',
    });
    return null;
  }
  const test = { op: 'test' as const, path: '/spec/osImageURL', value: url };
  if (origin.osImageURL === null) {
    return {
      ...base,
      action: 'delete',
      patch: [test],
      after: null,
      risk: 'disruptive',
      description: `MachineConfig ${origin.machineConfig} deleted: the run created it; pool ${name} renders ${origin.rendered} again`,
    };
  }
  return {
    ...base,
    action: 'update',
    patch: [test, { op: 'replace', path: '/spec/osImageURL', value: origin.osImageURL }],
    after: { spec: { osImageURL: origin.osImageURL } },
    risk: 'disruptive',
    description: `MachineConfig ${origin.machineConfig}: osImageURL back to ${origin.osImageURL}`,
  };
}

/**
 * The MachineConfig's osImageURL is the run's target: by digest where both name one (a run
 * record's target is the pool's targetDigest when resolved), else verbatim.
 */
function sameImage(url: string, target: string): boolean {
  return url === target || (digestOf(url) ?? url) === (digestOf(target) ?? target);
}
