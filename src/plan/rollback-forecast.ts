/**
 * The way back, forecast in a forward plan (docs/apply.md "Rollback": "The way back in every
 * plan"): for each pool with a node to update, where a rollback of this run would take it, by which
 * lever, whether its nodes download the image again, or which refusal a rollback would meet. The
 * origin is the one the applier records before its first write (./rollback-origins.ts poolOrigin,
 * the same function on the same cluster), and the refusals are the rollback planner's rules
 * (src/domain/rollback.ts) as far as they can be told before the run. Explanatory: nothing acts on
 * it. Pure.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { nodeProgressOf } from '../cluster/progress.ts';
import { viewNode, type NodeIndex } from '../domain/nodes.ts';
import { bootcRollbackRole } from '../domain/rollback.ts';
import { poolOrigin, rollbackVia } from './rollback-origins.ts';
import { osImageMachineConfigName } from './pool.ts';
import type { PlanPool, PlanPoolRollback, RollbackRefusedBy } from './types.ts';

const short = (d: string | null) => (d && d.startsWith('sha256:') ? d.slice(0, 19) : (d ?? 'unknown'));
const list = (names: readonly string[]) => `${names.slice(0, 5).join(', ')}${names.length > 5 ? ` and ${names.length - 5} more` : ''}`;

/** What the forecast reads besides the pool: the cluster, indexed, and each bootc pool's members. */
interface ForecastContext {
  snapshot: ClusterSnapshot;
  idx: NodeIndex;
  bootcMembers: ReadonlyMap<string, readonly string[]>;
}

/** The pool's way back, or undefined when the plan updates none of its nodes (nothing to take back). */
export function forecastRollback(pool: PlanPool, ctx: ForecastContext): PlanPoolRollback | undefined {
  if (!pool.nodes.some((n) => n.wave !== null)) return undefined;
  const download = pool.backend === 'mco';
  const origin = poolOrigin(pool, ctx.snapshot, ctx.idx);
  const lever = pool.backend === 'bootc' ? `BootcNodePool/${pool.name} spec.image.ref` : `MachineConfig/${osImageMachineConfigName(pool.name)} spec.osImageURL`;
  const refused = (refusedBy: RollbackRefusedBy, why: string, via = lever): PlanPoolRollback => ({ available: false, to: null, via, download, why, refusedBy });
  if (!origin) {
    return refused(
      'rollback-origin-unknown',
      pool.backend === 'bootc'
        ? `BootcNodePool ${pool.name} has no spec.image.ref to go back to`
        : `MachineConfigPool ${pool.name} names no rendered config with an osImageURL: no image to go back to`,
    );
  }
  if (origin.kind === 'bootc') {
    const via = rollbackVia(pool.name, origin);
    if (origin.mixed) {
      return refused(
        'rollback-mixed-origins',
        `its nodes boot ${origin.mixed.length} different images now (${origin.mixed.map(short).join(', ')}): a BootcNodePool has one image for all its nodes, so no single image returns every node to the one it booted`,
        via,
      );
    }
    if (!origin.image || !origin.digest)
      return refused('rollback-origin-unknown', 'none of its nodes to update reports the digest it boots (BootcNode status.booted)', via);
    const unbooted = neverBootedOrigin(pool, origin.digest, ctx);
    if (unbooted.length) {
      return refused(
        'rollback-would-stage-unbooted',
        `${list(unbooted)} boot${unbooted.length === 1 ? 's' : ''} neither ${short(origin.digest)} nor the plan's image and never booted ${short(origin.digest)}: the pool's one image would stage an image they never ran`,
        via,
      );
    }
    return { available: true, to: origin.image, via, download: false, why: null };
  }
  return { available: true, to: origin.image, via: rollbackVia(pool.name, origin), download: true, why: null };
}

/**
 * The members of a bootc pool a rollback to the origin `digest` would send to an image they never booted:
 * the rollback planner's `would-stage-unbooted` (src/domain/rollback.ts bootcRollbackRole), for the
 * members the plan does not take to its image (those it takes go back to the origin they boot).
 */
function neverBootedOrigin(pool: PlanPool, digest: string, ctx: ForecastContext): string[] {
  const scheduled = new Set(pool.nodes.filter((n) => n.wave !== null).map((n) => n.name));
  const target = pool.targetDigest;
  const out: string[] = [];
  for (const name of ctx.bootcMembers.get(pool.name) ?? []) {
    const node = ctx.idx.nodes.get(name);
    if (!node || scheduled.has(name)) continue;
    const v = viewNode(node, ctx.idx);
    // Unknown (no status) or on the plan's image: a rollback of the run decides on these from their entries.
    if (!v.bootedDigest || v.bootedDigest === target) continue;
    const rollbackDigest: unknown = ctx.idx.bootcNodes.get(name)?.status?.rollback?.imageDigest;
    const role = bootcRollbackRole({
      entry: nodeProgressOf(node),
      chain: new Set(),
      wave: null,
      pool: pool.name,
      bootedDigest: v.bootedDigest,
      stagedDigest: v.stagedDigest,
      rollbackDigest: typeof rollbackDigest === 'string' ? rollbackDigest : null,
      rebootRequested: false,
      degraded: v.degraded,
      target: target ?? '',
      origin: digest,
    });
    if (role === 'would-stage-unbooted') out.push(name);
  }
  return out.sort();
}
