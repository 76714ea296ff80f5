/** Helpers of the rollback suites: a run advanced wave by wave, and the rollback plan of its record. */
import fc from 'fast-check';
import { runApply, newSim, planWith } from './apply.ts';
import { ClusterBuilder, specYaml, NEW, OLD, type TestNode } from './cluster.ts';
import { nodeProgressOf } from '../../src/cluster/progress.ts';
import { digestOf } from '../../src/domain/nodes.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG } from '../../src/domain/labels.ts';
import { planRollback, rollbackInputOf, type RollbackInput } from '../../src/plan/rollback-planner.ts';
import type { Plan } from '../../src/plan/types.ts';
import type { ClusterSnapshot } from '../../src/cluster/types.ts';
import type { SimCluster } from '../../src/sim/cluster.ts';
import { nodeObject, mcoAnnotations } from '../../src/sim/node-objects.ts';
import { isoOf } from '../../src/apply/ports/driver.ts';

/** apply --step until one wave ran (the first runs wait for staging, as a CronJob's would). */
export async function stepOnce(
  sim: ReturnType<typeof newSim>,
  plan: Parameters<typeof runApply>[1],
  replan: Parameters<typeof runApply>[2],
): Promise<string | undefined> {
  for (let i = 0; i < 10; i++) {
    const r = await runApply(sim, plan, replan, { step: true });
    if (r.result?.outcome !== 'waiting') return r.result?.outcome ?? String(r.error);
    sim.advance(300);
  }
  return 'waiting';
}

/** The rollback plan of the cluster's run record, and its re-planner (as apply makes it). */
export async function rollbackOf(
  sim: SimCluster,
  scope: 'run' | 'wave' = 'run',
): Promise<{ plan: Plan; input: RollbackInput; replan: (s: ClusterSnapshot) => Plan }> {
  const input = rollbackInputOf((await sim.driver().readProgress()).run, scope);
  if ('refused' in input) throw new Error(input.refused);
  const plan = planRollback(input, sim.snapshotCopy());
  return { plan, input, replan: (s) => planRollback(input, s, { ownPlanId: plan.id }) };
}

// ------------------------------------------------ random clusters (test/rollback-properties*.test.ts)

export const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
export const D = { stage: 120, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

export interface PoolShape {
  n: number;
  budget: number;
  cordoned: number;
  soft: boolean;
}
export interface Shape {
  pools: PoolShape[];
  mco: PoolShape | null;
  steps: number;
  failRate: number;
  seed: number;
}

export const poolArb = fc.record({
  n: fc.integer({ min: 1, max: 10 }),
  budget: fc.integer({ min: 1, max: 4 }),
  cordoned: fc.integer({ min: 0, max: 2 }),
  soft: fc.boolean(),
});
export const shapeArb: fc.Arbitrary<Shape> = fc.record({
  pools: fc.array(poolArb, { minLength: 1, maxLength: 2 }),
  mco: fc.option(poolArb, { nil: null }),
  steps: fc.integer({ min: 1, max: 6 }),
  failRate: fc.constantFrom(0, 0, 0.15),
  seed: fc.integer({ min: 1, max: 1e6 }),
});

export function build(sh: Shape) {
  const b = new ClusterBuilder();
  const pools: Record<string, unknown>[] = [];
  const names = ['worker', 'infra'];
  sh.pools.forEach((p, k) => {
    const ns: TestNode[] = Array.from({ length: p.n }, (_, i) => ({
      name: `${names[k][0]}-${String(i).padStart(2, '0')}`,
      zone: ZONES[i % 3],
      cordoned: i < p.cordoned,
    }));
    b.bootcPool(names[k], ns, { maxUnavailable: p.budget });
    pools.push({ name: names[k], image: NEW, maxUnavailable: p.budget, rebootPolicy: p.soft ? 'AllowSoftReboot' : 'RebootOnly' });
  });
  if (sh.mco) {
    b.mcoPool(
      'edge',
      Array.from({ length: sh.mco.n }, (_, i) => ({ name: `e-${String(i).padStart(2, '0')}`, zone: ZONES[i % 3] })),
      { maxUnavailable: sh.mco.budget },
    );
    pools.push({ name: 'edge', image: NEW, maxUnavailable: sh.mco.budget });
  }
  const snap = b.snapshot();
  return { snap, ...planWith(specYaml(pools), snap, D) };
}

/**
 * Who the run updated, and what each booted before (bootc: its entry's from; MCO: the pre-run
 * image). An MCO node counts only when it was a member of the pool at the run's start (e-NN,
 * as build() names them) and is on the config the run rendered: a node that joined during the
 * run (j-NN, runForward's `join`) is on that config too but never booted the pre-run image, so
 * it is not "updated" here, whatever the rollback planner thinks of it.
 */
export function updatedByRun(sim: SimCluster, chain: Set<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, node] of sim.nodes) {
    const e = nodeProgressOf(node);
    if (e && chain.has(e.planId) && e.step !== 'cordon' && e.from) out.set(name, e.from);
    const ann = node.metadata.annotations ?? {};
    const mcp = sim.get('MachineConfigPool', 'edge');
    const rendered = mcp?.spec?.configuration?.name;
    if (
      name.startsWith('e-') &&
      rendered &&
      rendered !== 'rendered-edge-0001' &&
      (ann[MCO_CURRENT_CONFIG] === rendered || ann[MCO_DESIRED_CONFIG] === rendered)
    )
      out.set(name, OLD);
  }
  return out;
}

export function bootedDigest(sim: SimCluster, name: string): string | null {
  const bn = sim.get('BootcNode', name);
  if (bn) return bn.status?.booted?.imageDigest ?? null;
  const cfg = sim.get('Node', name)?.metadata.annotations?.[MCO_CURRENT_CONFIG];
  return digestOf(sim.get('MachineConfig', cfg ?? '')?.spec?.osImageURL);
}

/** The node runForward's `join` adds to the MCO pool during the run. */
export const JOINED = 'j-00';

/**
 * A random cluster's run, advanced `sh.steps` waves (apply --step, as the CronJob does). With
 * `join`, a new machine joins the MCO pool after the first wave: created then, on the pool's
 * config of that moment (the MCO serves a new node the pool's config).
 */
export async function runForward(sh: Shape, opts: { join?: boolean } = {}): Promise<SimCluster> {
  const { snap, plan, replan } = build(sh);
  const sim = newSim(snap, {
    durations: D,
    softRebootCapable: () => sh.pools.some((p) => p.soft),
    ...(sh.failRate ? { faults: { seed: sh.seed, rebootFailRate: sh.failRate } } : {}),
  });
  for (let i = 0, stepped = 0; i < 40 && stepped < sh.steps; i++) {
    const r = await runApply(sim, plan, replan, { step: true });
    if (r.code !== 0 || r.result?.outcome === 'done' || r.result?.outcome === 'nothing-to-do') break;
    if (r.result?.outcome === 'waiting') sim.advance(60);
    else stepped++;
    if (opts.join && sh.mco && stepped === 1 && !sim.get('Node', JOINED)) joinEdge(sim);
  }
  return sim;
}

function joinEdge(sim: SimCluster): void {
  sim.advance(60);
  const rendered = sim.get('MachineConfigPool', 'edge')?.spec?.configuration?.name;
  if (!rendered) return;
  const node = nodeObject({ name: JOINED, role: 'edge', zone: ZONES[1], annotations: mcoAnnotations(rendered), createdAt: isoOf(sim.now) });
  sim.mutate(({ add }) => add(node));
}
