/**
 * Observation: what the applier reports without driving it. Staging of the bootc pools'
 * nodes (`stage-start`, `staged`), which bootc-operator runs in parallel once the targets
 * are set, and pool nodes that go out of service or come back on their own
 * (`node-unavailable`, `node-available`).
 */
import type { PlanPool } from '../../plan/types.ts';
import type { ClusterSnapshot } from '../../cluster/types.ts';
import { conditionOf } from '../../domain/nodes.ts';
import { cancelledByCaller } from '../engine/interrupt.ts';
import type { PoolContext } from './context.ts';
import { bootcNodeIn, membersOf, viewIn } from '../ports/views.ts';

/** Nodes per staging watch (observeStaging). */
const OBSERVE_GROUP = 32;

/**
 * Reports staging while it runs: `stage-start` and `staged` for every scheduled node of
 * the bootc pools. Looks only at nodes still staging, so it costs nothing afterwards.
 * The nodes are watched in groups of OBSERVE_GROUP, each with a wait of its own: a node's
 * change then costs a look at its group rather than at every node still staging (on a
 * big pool, thousands of nodes finish staging one after the other).
 */
export async function observeStaging(ctx: PoolContext, signal: AbortSignal) {
  const watched: [string, PlanPool][] = [];
  for (const p of ctx.pools) if (p.backend === 'bootc') for (const n of p.nodes) if (n.wave !== null && !n.staged) watched.push([n.name, p]);
  const staging = new Set<string>();
  const groups: Promise<void>[] = [];
  for (let i = 0; i < watched.length; i += OBSERVE_GROUP) groups.push(observeGroup(ctx, watched.slice(i, i + OBSERVE_GROUP), staging, signal));
  await Promise.all(groups);
}

async function observeGroup(ctx: PoolContext, nodes: [string, PlanPool][], staging: Set<string>, signal: AbortSignal) {
  const watch = new Map(nodes);
  while (watch.size && !signal.aborted) {
    const changes = await ctx.driver
      .waitFor(
        (s) => {
          const out: { node: string; pool: PlanPool; type: 'stage-start' | 'staged' | 'drop' }[] = [];
          for (const [name, pool] of watch) {
            // BootcNode only (cheaper than a full node view: this runs on every change while staging).
            const bn = bootcNodeIn(s, name);
            const idle = conditionOf(bn, 'Idle');
            if (!bn || conditionOf(bn, 'Degraded')?.status === 'True' || bn.status?.booted?.imageDigest === pool.targetDigest) {
              out.push({ node: name, pool, type: 'drop' });
              continue;
            }
            if (bn.status?.staged?.imageDigest === pool.targetDigest && idle?.status === 'False' && idle.reason === 'Staged') {
              out.push({ node: name, pool, type: 'staged' });
              continue;
            }
            if (!staging.has(name) && idle?.status === 'False' && idle.reason === 'Staging') out.push({ node: name, pool, type: 'stage-start' });
          }
          return out.length ? out : null;
        },
        { timeoutSeconds: 7 * 24 * 3600, signal, description: 'staging' },
      )
      .catch((err) => {
        // Ended by the apply's own end (`signal`): done. A stop of the apply ends this loop too:
        // waiting again would be refused at once, over and over (src/apply/engine/interrupt.ts).
        if (cancelledByCaller(err, signal)) return null;
        throw err;
      });
    if (!changes) continue;
    for (const c of changes) {
      if (c.type === 'stage-start') {
        staging.add(c.node);
        ctx.emit({ type: 'stage-start', pool: c.pool.name, node: c.node });
        continue;
      }
      watch.delete(c.node);
      if (c.type === 'staged') {
        if (!staging.has(c.node)) ctx.emit({ type: 'stage-start', pool: c.pool.name, node: c.node });
        ctx.emit({ type: 'staged', pool: c.pool.name, node: c.node });
      }
    }
  }
}

/**
 * Emits node-unavailable / node-available for pool nodes that changed on their own; the
 * nodes bootcplan drives (`driven`, or in flight) are not reported.
 */
export function noticeAvailability(ctx: PoolContext, s: ClusterSnapshot, pool: PlanPool, driven: (name: string) => boolean) {
  for (const m of membersOf(s, pool.name)) {
    const v = viewIn(s, m);
    if (!v) continue;
    const un = v.unavailable !== null;
    const before = ctx.lastAvailability.get(m);
    ctx.lastAvailability.set(m, un);
    if (driven(m) || ctx.inFlight.has(m)) continue;
    if (before === undefined || before === un) continue;
    if (v.unavailable !== null) ctx.emit({ type: 'node-unavailable', pool: pool.name, node: m, message: v.unavailable, conditions: v.conditions });
    else ctx.emit({ type: 'node-available', pool: pool.name, node: m });
  }
}
