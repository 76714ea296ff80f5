/**
 * One pool of a rollback plan (docs/apply.md "Rollback"): the nodes that go back, in waves of
 * the pool's own budget, the one change that sends them back, and what the rollback refuses or
 * reports. The rules are src/domain/rollback.ts; the budget and waves are the forward
 * planner's (src/domain/budget.ts, waves.ts). Pure.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { BootcNodePoolObject, MachineConfigPoolObject } from '../cluster/kinds.ts';
import type { BootcOrigin, McoOrigin, NodeProgress } from '../cluster/progress.ts';
import { nodeProgressOf } from '../cluster/progress.ts';
import type { DiagnosticInput } from '../base/diagnostics.ts';
import { conditionOf, digestOf, viewNode, type NodeIndex, type NodeView } from '../domain/nodes.ts';
import { isControlPlanePool } from '../domain/pools.ts';
import { parseMaxUnavailable, resolveMaxUnavailable, type ResolvedBudget } from '../domain/budget.ts';
import { controlPlaneBudget } from '../domain/control-plane.ts';
import { orderNodesForRollout, orderNodesLikeMco, planWaves, waveSizeFor } from '../domain/waves.ts';
import { bootcRollbackRole, inMcoRollback, type BootcRollbackRole } from '../domain/rollback.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG } from '../domain/labels.ts';
import type { DraftChange } from './changes.ts';
import { rollbackVia } from './rollback-origins.ts';
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
  widened: boolean;
  report: (d: DiagnosticInput) => void;
  leftovers: PlanRollback['leftovers'];
  excluded: PlanRollback['excluded'];
}

export interface RolledPool { pool: PlanPool; changes: DraftChange[] }

const path = (pool: string) => `rollback.source.origins.${pool}`;
const list = (names: readonly string[]) => `${names.slice(0, 10).join(', ')}${names.length > 10 ? ` and ${names.length - 10} more` : ''}`;
const short = (d: string | null) => (d && d.startsWith('sha256:') ? d.slice(0, 19) : d ?? 'unknown');

// ------------------------------------------------------------------------------------ bootc

/** A bootc pool: its members' roles, refusals, leftovers; null when it has nothing to roll back. */
export function bootcPoolRollback(name: string, origin: BootcOrigin, target: string, ctx: RollbackPoolContext): RolledPool | null {
  const bnp = ctx.snapshot.bootcNodePools.find((p) => p.metadata.name === name);
  if (!bnp) return null;
  if (origin.mixed) {
    ctx.report({
      code: 'rollback-mixed-origins', path: path(name),
      message: `pool ${name} started the run from ${origin.mixed.length} different images (${origin.mixed.map(short).join(', ')}): a BootcNodePool has one image for all its nodes (bootc-operator syncBootcNodeSpec), so no single image returns every node to the one it booted`,
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
  const back = [...(roles.get('rollback') ?? []), ...(roles.get('degraded') ?? [])];
  refuseBootc(name, origin, roles, ctx);
  const change = bootcPoolChange(bnp, name, origin, target, ctx);
  const ours = (v: NodeView) => ownEntry(ctx, v);
  const settings = liveSettings({ kind: 'BootcNodePool', obj: bnp }, name, ctx, ours);
  const staged = (v: NodeView) => v.stagedDigest === origin.digest;
  const reboot = (v: NodeView): RebootKind => (settings.rebootPolicy !== 'AllowSoftReboot' ? 'hard' : !staged(v) ? 'unknown' : v.stagedSoftRebootCapable ? 'soft' : 'hard');
  const { nodes, waves } = scheduleBack(name, back, settings, ctx, origin.digest, (vs) => orderNodesForRollout(vs.map((v) => ({ name: v.name, zone: v.zone, staged: staged(v), softReboot: staged(v) && reboot(v) === 'soft' }))), reboot, staged, ours);
  const pool = planPool(name, 'bootc', origin.image, settings, nodes, waves);
  pool.rollback = { available: true, to: origin.image, via: rollbackVia(name, origin), download: false, why: null };
  return { pool, changes: change ? [change] : [] };
}

function bootcRole(v: NodeView, entry: NodeProgress | null, pool: string, target: string, origin: string, ctx: RollbackPoolContext): BootcRollbackRole {
  const bn = ctx.idx.bootcNodes.get(v.name);
  const desired: unknown = bn?.spec?.desiredImage;
  const rebootRequested = conditionOf(bn, 'Idle')?.reason === 'Rebooting' || (bn?.spec?.desiredImageState === 'Booted' && digestOf(typeof desired === 'string' ? desired : null) === target);
  const onTarget = v.bootedDigest === target || rebootRequested;
  // The rollback's own nodes in flight (a re-plan while it runs, or a rollback continued after a
  // stop or a kill): the plan that took them saw their `from`; their entry now records the
  // target they go back from. One already back on the origin is still in flight (cordoned,
  // its entry not done): the applier uncordons it without a reboot (bootc-node.ts runBootcNode).
  if (entry && ctx.own.has(entry.planId) && entry.pool === pool && entry.step !== 'done' && (onTarget || v.bootedDigest === origin)) return v.degraded ? 'degraded' : 'rollback';
  return bootcRollbackRole({
    entry, chain: ctx.chain, wave: ctx.scopeWave, pool, bootedDigest: v.bootedDigest, stagedDigest: v.stagedDigest,
    rollbackDigest: typeof bn?.status?.rollback?.imageDigest === 'string' ? bn.status.rollback.imageDigest : null,
    rebootRequested, degraded: v.degraded, target, origin,
  });
}

/** The refusals (errors) and what stays behind (warnings, leftovers) of a bootc pool. */
function refuseBootc(name: string, origin: BootcOrigin, roles: Map<BootcRollbackRole, NodeView[]>, ctx: RollbackPoolContext): void {
  const names = (r: BootcRollbackRole) => (roles.get(r) ?? []).map((v) => v.name);
  const differs = names('origin-differs');
  if (differs.length) {
    ctx.report({
      code: 'rollback-origin-differs', path: path(name),
      message: `pool ${name}: ${list(differs)} booted another image than the pool's origin ${short(origin.digest)} before this run updated them (their progress entry's from, or none recorded): the pool's one image would send them to an image they never booted`,
      hint: 'roll these nodes back by hand (bootc rollback on each), or roll forward to a fixed image',
    });
  }
  const unbooted = names('would-stage-unbooted');
  if (unbooted.length) {
    ctx.report({
      code: 'rollback-would-stage-unbooted', path: path(name),
      message: `pool ${name}: ${list(unbooted)} boot${unbooted.length === 1 ? 's' : ''} neither the run's image nor ${short(origin.digest)}, and never booted ${short(origin.digest)}: the pool's image is one reference for all its nodes, and they would stage an image they never ran`,
      hint: 'these nodes were not updated by this run; move them to another pool, or roll forward instead',
    });
  }
  for (const [what, code, words] of [['target-still-staged', 'rollback-target-still-staged', 'boot the origin but staged the run\'s image before the first wave: bootc-operator cannot unstage it, so an unplanned reboot would boot it (remove it with `ostree admin undeploy` of the staged entry, or let the next rollout stage over it)'], ['stages-origin', 'rollback-stages-origin', 'will stage the origin, which they booted before, and are not rebooted by this rollback']] as const) {
    const ns = names(what);
    if (!ns.length) continue;
    ctx.report({ severity: 'warning', code, path: path(name), message: `pool ${name}: ${list(ns)} ${words}` });
    for (const n of ns) ctx.leftovers.push({ node: n, pool: name, what });
  }
}

/** spec.image.ref back to the origin, guarded by a test of the run's target; null when it is there already. */
function bootcPoolChange(bnp: BootcNodePoolObject, name: string, origin: BootcOrigin, target: string, ctx: RollbackPoolContext): DraftChange | null {
  const ref: unknown = bnp.spec?.image?.ref;
  const address = `BootcNodePool/${name}`;
  const base = { address, apiVersion: bnp.apiVersion, kind: 'BootcNodePool', namespace: null, name, reason: 'pool-image-rollback' as const, pool: name, before: { spec: { image: { ref } } }, after: { spec: { image: { ref: origin.image } } } };
  if (ref === origin.image) return { ...base, action: 'noop', patch: [], risk: 'none', description: `BootcNodePool ${name} is back on ${origin.image}` };
  const resolved: unknown = bnp.status?.targetDigest;
  if (typeof ref !== 'string' || (digestOf(ref) ?? resolved) !== target) {
    ctx.report({ code: 'rollback-pool-moved', path: path(name), message: `BootcNodePool ${name} spec.image.ref is ${typeof ref === 'string' ? ref : 'not set'}, neither the run's image ${short(target)} nor the origin ${origin.image}: someone changed it since the run`, hint: 'plan the spec again instead; a rollback only reverses what the run did' });
    return null;
  }
  return {
    ...base, action: 'update', risk: 'disruptive',
    patch: [{ op: 'test', path: '/spec/image/ref', value: ref }, { op: 'replace', path: '/spec/image/ref', value: origin.image }],
    description: `BootcNodePool ${name}: back to ${origin.image}; every node of the pool is handed it, and the nodes that boot it already do nothing`,
  };
}

// ------------------------------------------------------------------------------------ MCO

/** An MCO pool: the nodes on the run's rendered config go back (the whole pool: no waves of one run). */
export function mcoPoolRollback(name: string, origin: McoOrigin, ctx: RollbackPoolContext): RolledPool | null {
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
  if (ctx.widened && back.length) {
    ctx.report({ severity: 'warning', code: 'rollback-scope-widened-mco', path: path(name), message: `pool ${name} is an MCO pool: the MCO moves every node off a config it no longer targets, so its rollback takes all ${back.length} node(s) on ${renderedTarget}, all updated by this run (scope wave acts as run here)` });
  }
  const change = mcoChange(name, origin, ctx);
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
  const { nodes, waves } = scheduleBack(name, back, settings, ctx, to, (vs) => orderNodesLikeMco(vs.map((v) => ({ name: v.name, zone: v.zone, createdAt: byName.get(v.name)!.createdAt }))), () => 'hard', () => false, movingBack);
  const pool = planPool(name, 'mco', origin.image, settings, nodes, waves);
  pool.rollback = { available: true, to: origin.image, via: rollbackVia(name, origin), download: true, why: null };
  return { pool, changes: change ? [change] : [] };
}

/**
 * bootcplan's osImage MachineConfig back as it was: deleted when the run created it (the pre-run
 * set of MachineConfigs, so the MCO renders the pre-run config), else its osImageURL back. Then
 * the pool must render the pre-run config again (`waitAfter`).
 */
function mcoChange(name: string, origin: McoOrigin, ctx: RollbackPoolContext): DraftChange | null {
  const mc = ctx.snapshot.machineConfigs.find((m) => m.metadata.name === origin.machineConfig);
  const url: unknown = mc?.spec?.osImageURL;
  const waitAfter = { kind: 'pool-rendered' as const, pool: name, rendered: origin.rendered, description: `MachineConfigPool ${name} renders ${origin.rendered} again` };
  const base = {
    address: `MachineConfig/${origin.machineConfig}`, apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', namespace: null, name: origin.machineConfig,
    reason: 'pool-os-image-rollback' as const, pool: name, before: { spec: { osImageURL: url ?? null } }, waitAfter,
  };
  const back = origin.osImageURL === null ? !mc : url === origin.osImageURL;
  if (back) return { ...base, action: 'noop', patch: [], after: { spec: { osImageURL: origin.osImageURL } }, risk: 'none', description: `MachineConfig ${origin.machineConfig} is as before the run` };
  if (typeof url !== 'string') {
    ctx.report({ code: 'rollback-pool-moved', path: path(name), message: `MachineConfig ${origin.machineConfig} has no osImageURL: it is not the one the run wrote`, hint: 'plan the spec again instead; a rollback only reverses what the run did' });
    return null;
  }
  const test = { op: 'test' as const, path: '/spec/osImageURL', value: url };
  if (origin.osImageURL === null) {
    return { ...base, action: 'delete', patch: [test], after: null, risk: 'disruptive', description: `MachineConfig ${origin.machineConfig} deleted: the run created it; pool ${name} renders ${origin.rendered} again` };
  }
  return { ...base, action: 'update', patch: [test, { op: 'replace', path: '/spec/osImageURL', value: origin.osImageURL }], after: { spec: { osImageURL: origin.osImageURL } }, risk: 'disruptive', description: `MachineConfig ${origin.machineConfig}: osImageURL back to ${origin.osImageURL}` };
}

// ------------------------------------------------------------------------------------ shared

interface LiveSettings { budget: ResolvedBudget; controlPlane: boolean; drainTimeoutSeconds: number | null; rebootPolicy: 'RebootOnly' | 'AllowSoftReboot'; unavailableNow: string[]; nodeCount: number }

/** The pool's settings as bootcplan wrote them to it (budget, drain timeout, reboot policy). */
function liveSettings(pool: { kind: 'BootcNodePool'; obj: BootcNodePoolObject } | { kind: 'MachineConfigPool'; obj: MachineConfigPoolObject }, name: string, ctx: RollbackPoolContext, ownInFlight: (v: NodeView) => boolean): LiveSettings {
  const bootc = pool.kind === 'BootcNodePool';
  const bnp = pool.kind === 'BootcNodePool' ? pool.obj : undefined;
  const mcp = pool.kind === 'MachineConfigPool' ? pool.obj : undefined;
  const raw: unknown = bnp ? bnp.spec?.rollout?.maxUnavailable : mcp?.spec?.maxUnavailable;
  const parsed = parseMaxUnavailable(raw ?? 1);
  const views = ctx.members.flatMap((m) => { const n = ctx.idx.nodes.get(m); return n ? [viewNode(n, ctx.idx)] : []; });
  const controlPlane = isControlPlanePool(name, mcp, bnp, views.map((v) => v.labels));
  let budget = resolveMaxUnavailable(parsed.ok ? parsed.value : { kind: 'count', value: 1 }, views.length);
  budget.rule = `as ${pool.kind} ${name} has it (${bootc ? 'spec.rollout.maxUnavailable' : 'spec.maxUnavailable'}): ${budget.rule}`;
  if (controlPlane) budget = controlPlaneBudget(budget).budget;
  const drain: unknown = bnp?.spec?.rollout?.drainTimeoutSeconds;
  const policy: unknown = bnp?.spec?.disruption?.rebootPolicy;
  // The rollback's own nodes in flight are out of service for it, not against it.
  return {
    budget, controlPlane, drainTimeoutSeconds: typeof drain === 'number' ? drain : null, rebootPolicy: policy === 'AllowSoftReboot' ? 'AllowSoftReboot' : 'RebootOnly',
    unavailableNow: views.filter((v) => v.unavailable !== null && !ownInFlight(v)).map((v) => v.name), nodeCount: views.length,
  };
}

/** The nodes going back, as plan nodes in waves; the ones out of service now are listed, not taken. */
function scheduleBack<T extends { name: string }>(
  name: string, back: NodeView[], s: LiveSettings, ctx: RollbackPoolContext, to: string,
  order: (vs: NodeView[]) => T[], reboot: (v: NodeView) => RebootKind, staged: (v: NodeView) => boolean, ownInFlight: (v: NodeView) => boolean,
): { nodes: PlanNode[]; waves: string[][] } {
  const blocked = (v: NodeView) => (v.degraded ? 'degraded' : v.unavailable !== null && !ownInFlight(v) ? v.unavailable : null);
  const ready = back.filter((v) => blocked(v) === null);
  // Nodes out of service now that use up the budget leave no node behind: waves of one, each
  // cordon waiting until the budget allows it (the applier checks it at every cordon, and
  // halts, saying why, when it never does). A rollback that schedules fewer nodes than it lists
  // would end "done" with nodes still on the run's image.
  const size = rollbackWaveSize(s);
  const waves = ready.length ? planWaves(order(ready).map((x) => x.name), size) : [];
  const waveOf = new Map<string, number>();
  waves.forEach((w, i) => w.forEach((n) => waveOf.set(n, i + 1)));
  const nodes: PlanNode[] = back.map((v) => {
    const why = blocked(v);
    const n: PlanNode = { name: v.name, zone: v.zone, from: ownFrom(ctx, v) ?? v.bootedDigest ?? v.bootedImage, to, reboot: reboot(v), wave: why ? null : waveOf.get(v.name) ?? null, staged: staged(v), blockedBy: why ?? (waveOf.has(v.name) ? null : 'no-budget') };
    if (why) {
      n.conditions = v.conditions;
      ctx.excluded.push({ node: v.name, pool: name, why });
    }
    return n;
  });
  const rank = new Map(waves.flat().map((n, i) => [n, i]));
  nodes.sort((a, b) => (rank.get(a.name) ?? Infinity) - (rank.get(b.name) ?? Infinity) || (a.name < b.name ? -1 : 1));
  const out = back.filter((v) => blocked(v) !== null);
  if (out.length) ctx.report({ severity: 'warning', code: 'rollback-nodes-excluded', path: path(name), message: `pool ${name}: ${list(out.map((v) => `${v.name} (${blocked(v)})`))} ${out.length === 1 ? 'was' : 'were'} updated by this run and ${out.length === 1 ? 'is' : 'are'} out of service now: left as they are for a human to look at` });
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

/** The node's entry is this rollback's and in flight. */
function ownEntry(ctx: RollbackPoolContext, v: NodeView): boolean {
  const e = nodeProgressOf(ctx.idx.nodes.get(v.name));
  return !!e && ctx.own.has(e.planId) && e.step !== 'done';
}

function planPool(name: string, backend: 'bootc' | 'mco', image: string, s: LiveSettings, nodes: PlanNode[], waves: string[][]): PlanPool {
  return {
    name, backend, targetImage: image, targetDigest: digestOf(image), controlPlane: s.controlPlane, priority: 0, paused: false,
    rebootPolicy: s.rebootPolicy, drainTimeoutSeconds: s.drainTimeoutSeconds, soakSeconds: 0, maxUnavailable: s.budget,
    nodeCount: s.nodeCount, upToDate: s.nodeCount - nodes.length, unavailableNow: s.unavailableNow,
    waveSize: rollbackWaveSize(s), nodes, waves, estimatedSeconds: 0,
  };
}
