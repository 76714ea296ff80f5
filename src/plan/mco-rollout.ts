/**
 * Planning a pool while the MCO rolls a config (docs/safety.md rule 5; docs/design.md §7 "Sharing the
 * cluster"): the pool's nodes that sit in a MachineConfigPool with a rendered config not yet
 * rolled out (src/domain/mco-rollout.ts) are held back (`mco-updating`), and the plan has an
 * error at the spec's pool entry naming the rendered config and the MachineConfigPool.
 *
 * An error, not a warning: the applier plans again before its first write and before each
 * wave, and a new error stops it (exit 3), so a rollout the MCO starts mid-apply stops
 * bootcplan before it reboots another node; a warning would leave the saved waves running.
 * The rollout is normal and temporary, so the hint says to wait for it and plan again.
 * bootcplan's own rollout of an MCO-only pool (the rendered config carries the spec's
 * image) is not blocked, so a re-plan in the middle of one of its waves stays clean. Pure.
 */
import type { PoolSpec } from '../rollout-spec/types.ts';
import { type DiagnosticInput, joinPath } from '../base/diagnostics.ts';
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { NodeIndex, NodeView } from '../domain/nodes.ts';
import type { Membership } from '../domain/pools.ts';
import { pendingMcoRollout, rollsTarget, type McoRollout } from '../domain/mco-rollout.ts';
import type { Backend, BlockedBy } from './types.ts';

interface RolloutPool {
  spec: PoolSpec;
  /** Field path of the pool in the spec, e.g. `spec.pools[0]`. */
  path: string;
  backend: Backend;
  /** Members not on the target yet. */
  pending: NodeView[];
}

interface RolloutContext {
  snapshot: ClusterSnapshot;
  idx: NodeIndex;
  membership: Membership;
  report: (d: DiagnosticInput) => void;
}

/** The pending nodes an MCO rollout holds back (node -> `mco-updating`); reports one error per MachineConfigPool. */
export function mcoRolloutBlocks(pool: RolloutPool, ctx: RolloutContext): Map<string, BlockedBy> {
  const held = new Map<string, BlockedBy>();
  // The MachineConfigPools the MCO is rolling (a handful of pools; usually none): only their
  // members are looked up, not every node of the cluster.
  const rolling = new Map<string, McoRollout>();
  const seen = new Set<string>();
  for (const mcp of ctx.snapshot.machineConfigPools) {
    const mcpName = mcp.metadata.name;
    if (seen.has(mcpName)) continue; // the first pool of a name, as a lookup by name finds it
    seen.add(mcpName);
    let r = pendingMcoRollout(mcp, ctx.idx.machineConfigs);
    // bootcplan's own waves of an MCO-only pool: the MCO rolls the spec's image.
    if (r && pool.backend === 'mco' && mcpName === pool.spec.name && rollsTarget(r, pool.spec.image)) r = null;
    if (r) rolling.set(mcpName, r);
  }
  if (!rolling.size) return held;
  const mcpOf = new Map<string, string>();
  for (const [mcp, names] of ctx.membership.mco) if (rolling.has(mcp)) for (const n of names) mcpOf.set(n, mcp);
  const byPool = new Map<string, { rollout: McoRollout; nodes: string[] }>();
  for (const n of pool.pending) {
    const mcpName = mcpOf.get(n.name);
    const rollout = mcpName ? rolling.get(mcpName) : undefined;
    if (!mcpName || !rollout) continue;
    held.set(n.name, 'mco-updating');
    const entry = byPool.get(mcpName) ?? { rollout, nodes: [] };
    entry.nodes.push(n.name);
    byPool.set(mcpName, entry);
  }
  for (const { rollout, nodes } of byPool.values()) report(pool, rollout, nodes.sort(), ctx);
  return held;
}

function report(pool: RolloutPool, r: McoRollout, nodes: string[], ctx: RolloutContext) {
  const paused = ctx.snapshot.machineConfigPools.find((p) => p.metadata.name === r.pool)?.spec?.paused === true;
  const what =
    r.rendered && r.rendered !== r.rolledOut
      ? `has rendered config ${r.rendered} and not rolled it out (status.configuration.name is ${r.rolledOut}${r.updating ? ', Updating=True' : ''}${paused ? '; the pool is paused' : ''})`
      : `is Updating=True to rendered config ${r.rendered ?? 'unknown'}`;
  ctx.report({
    code: 'mco-rollout-in-progress',
    path: joinPath(pool.path, 'name'),
    message: `MachineConfigPool ${r.pool} ${what}: the Machine Config Operator is updating (or about to update) its nodes, and bootcplan does not reboot nodes while it does. ${nodes.length} node(s) of pool ${pool.spec.name} that need the new image are not scheduled: ${nodes.join(', ')}`,
    expected: `MachineConfigPool ${r.pool} with its rendered config rolled out (spec.configuration.name == status.configuration.name, Updated=True)`,
    hint: paused
      ? `the rollout waits for MachineConfigPool ${r.pool} to be unpaused; let the administrator who paused it finish it (\`oc wait mcp/${r.pool} --for=condition=Updated\`), then plan again`
      : `wait until the MCO has rolled it out (\`oc wait mcp/${r.pool} --for=condition=Updated\`), then plan again; an MCO rollout is normal and temporary`,
  });
}
