/** Helpers of the rollback suites: a run advanced wave by wave, and the rollback plan of its record. */
import { runApply, newSim } from './apply-harness.ts';
import { planRollback, rollbackInputOf, type RollbackInput } from '../src/plan/rollback-planner.ts';
import type { Plan } from '../src/plan/types.ts';
import type { ClusterSnapshot } from '../src/cluster/types.ts';
import type { SimCluster } from '../src/sim/cluster.ts';

/** apply --step until one wave ran (the first runs wait for staging, as a CronJob's would). */
export async function stepOnce(sim: ReturnType<typeof newSim>, plan: Parameters<typeof runApply>[1], replan: Parameters<typeof runApply>[2]): Promise<string | undefined> {
  for (let i = 0; i < 10; i++) {
    const r = await runApply(sim, plan, replan, { step: true });
    if (r.result?.outcome !== 'waiting') return r.result?.outcome ?? String(r.error);
    sim.advance(300);
  }
  return 'waiting';
}

/** The rollback plan of the cluster's run record, and its re-planner (as apply makes it). */
export async function rollbackOf(sim: SimCluster, scope: 'run' | 'wave' = 'run'): Promise<{ plan: Plan; input: RollbackInput; replan: (s: ClusterSnapshot) => Plan }> {
  const input = rollbackInputOf((await sim.driver().readProgress()).run, scope);
  if ('refused' in input) throw new Error(input.refused);
  const plan = planRollback(input, sim.snapshotCopy());
  return { plan, input, replan: (s) => planRollback(input, s, { ownPlanId: plan.id }) };
}

