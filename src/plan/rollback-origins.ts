/**
 * What each pool of a plan runs before the plan's apply writes anything (src/cluster/progress.ts
 * PoolOrigin): the way back a rollback takes (docs/apply.md "Rollback"). Read once, from the
 * cluster as it is before the run's first write, and kept in the run record. Pure.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import type { PoolOrigin } from '../cluster/progress.ts';
import { indexSnapshot, viewNode, type NodeIndex } from '../domain/nodes.ts';
import { bootedPullspec, originImage } from '../domain/rollback.ts';
import { osImageMachineConfigName } from './pool.ts';
import type { Plan, PlanPool } from './types.ts';

/** The origin of every pool of `plan` that the cluster has, by pool name. */
export function poolOrigins(plan: Plan, snapshot: ClusterSnapshot): Record<string, PoolOrigin> {
  const out: Record<string, PoolOrigin> = {};
  for (const pool of plan.pools) {
    const o = poolOrigin(pool, snapshot);
    if (o) out[pool.name] = o;
  }
  return out;
}

/** One pool's origin, or null when the cluster has no pool image / rendered config to go back to. */
export function poolOrigin(pool: PlanPool, snapshot: ClusterSnapshot, idx?: NodeIndex): PoolOrigin | null {
  return pool.backend === 'bootc' ? bootcOrigin(pool, snapshot, idx) : mcoOrigin(pool, snapshot);
}

/** The lever a rollback pulls, in words (PlanPoolRollback.via): the pool's image, or bootcplan's MachineConfig. */
export function rollbackVia(pool: string, origin: PoolOrigin): string {
  if (origin.kind === 'bootc') return `BootcNodePool/${pool} spec.image.ref`;
  return origin.osImageURL === null
    ? `MachineConfig/${origin.machineConfig} deleted (${origin.rendered} again)`
    : `MachineConfig/${origin.machineConfig} spec.osImageURL (${origin.rendered} again)`;
}

/** The pool's spec.image.ref, and the image its scheduled nodes boot (one digest, or `mixed`). */
function bootcOrigin(pool: PlanPool, snapshot: ClusterSnapshot, given?: NodeIndex): PoolOrigin | null {
  const bnp = snapshot.bootcNodePools.find((p) => p.metadata.name === pool.name);
  const ref: unknown = bnp?.spec?.image?.ref;
  if (typeof ref !== 'string' || !ref) return null;
  // The planner passes the index it built (10,000 nodes: two maps of 10,000 entries each time).
  const idx = given ?? indexSnapshot(snapshot);
  const pullspecs = pool.nodes
    .filter((n) => n.wave !== null)
    .map((n) => {
      const node = idx.nodes.get(n.name);
      if (!node) return null;
      const v = viewNode(node, idx);
      return bootedPullspec(v.bootedImage, v.bootedDigest);
    });
  return { kind: 'bootc', ref, ...originImage(pullspecs) };
}

/** bootcplan's osImage MachineConfig as it is (null: absent), the pool's rendered config and its image. */
function mcoOrigin(pool: PlanPool, snapshot: ClusterSnapshot): PoolOrigin | null {
  const mcp = snapshot.machineConfigPools.find((p) => p.metadata.name === pool.name);
  const rendered: unknown = mcp?.spec?.configuration?.name ?? mcp?.status?.configuration?.name;
  if (typeof rendered !== 'string' || !rendered) return null;
  const image: unknown = snapshot.machineConfigs.find((m) => m.metadata.name === rendered)?.spec?.osImageURL;
  if (typeof image !== 'string' || !image) return null;
  const machineConfig = osImageMachineConfigName(pool.name);
  const mc = snapshot.machineConfigs.find((m) => m.metadata.name === machineConfig);
  const osImageURL: unknown = mc?.spec?.osImageURL;
  return {
    kind: 'mco',
    machineConfig,
    osImageURL: mc ? (typeof osImageURL === 'string' && osImageURL ? osImageURL : null) : null,
    rendered,
    renderedTarget: null,
    image,
  };
}
