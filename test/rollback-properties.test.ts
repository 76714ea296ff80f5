/**
 * Properties of a rollback (docs/safety.md "Rollback") on random clusters (fast-check, fixed
 * seed): one or two bootc pools and an MCO pool of random sizes and budgets, nodes out of
 * service on their own, soft reboots, a run stopped after a random number of waves (and reboots
 * that fail at random), then `plan --rollback` and its apply. Whatever happens:
 * - a rollback never has more nodes of a pool out of service than its maxUnavailable;
 * - it never touches a node the run did not update (cordons and reboots only of nodes whose
 *   entry of the run is past its cordon, or, in an MCO pool, on the config the run rendered);
 * - it never sends a node to an image the node did not boot before the run (its `from`);
 * - no node reboots more than twice in the run and its rollback.
 * A rollback plan may legitimately refuse (an error: a node that would stage an image it never
 * booted, one whose update failed half-way) and a rollback may halt for lack of budget; then it
 * has still done nothing the properties forbid.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, type TestNode } from './builders.ts';
import { planWith, runApply, newSim } from './apply-harness.ts';
import { rollbackOf } from './rollback-harness.ts';
import { seeded } from './seeds.ts';
import { nodeProgressOf } from '../src/cluster/progress.ts';
import { digestOf } from '../src/domain/nodes.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG } from '../src/domain/labels.ts';
import type { SimCluster } from '../src/sim/cluster.ts';

const t = suite('rollback properties');
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const D = { stage: 120, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

interface PoolShape { n: number; budget: number; cordoned: number; soft: boolean }
interface Shape { pools: PoolShape[]; mco: PoolShape | null; steps: number; failRate: number; seed: number }

const poolArb = fc.record({ n: fc.integer({ min: 1, max: 10 }), budget: fc.integer({ min: 1, max: 4 }), cordoned: fc.integer({ min: 0, max: 2 }), soft: fc.boolean() });
const shapeArb: fc.Arbitrary<Shape> = fc.record({
  pools: fc.array(poolArb, { minLength: 1, maxLength: 2 }),
  mco: fc.option(poolArb, { nil: null }),
  steps: fc.integer({ min: 1, max: 6 }),
  failRate: fc.constantFrom(0, 0, 0.15),
  seed: fc.integer({ min: 1, max: 1e6 }),
});

function build(sh: Shape) {
  const b = new ClusterBuilder();
  const pools: Record<string, unknown>[] = [];
  const names = ['worker', 'infra'];
  sh.pools.forEach((p, k) => {
    const ns: TestNode[] = Array.from({ length: p.n }, (_, i) => ({ name: `${names[k][0]}-${String(i).padStart(2, '0')}`, zone: ZONES[i % 3], cordoned: i < p.cordoned }));
    b.bootcPool(names[k], ns, { maxUnavailable: p.budget });
    pools.push({ name: names[k], image: NEW, maxUnavailable: p.budget, rebootPolicy: p.soft ? 'AllowSoftReboot' : 'RebootOnly' });
  });
  if (sh.mco) {
    b.mcoPool('edge', Array.from({ length: sh.mco.n }, (_, i) => ({ name: `e-${String(i).padStart(2, '0')}`, zone: ZONES[i % 3] })), { maxUnavailable: sh.mco.budget });
    pools.push({ name: 'edge', image: NEW, maxUnavailable: sh.mco.budget });
  }
  const snap = b.snapshot();
  return { snap, ...planWith(specYaml(pools), snap, D) };
}

/** Who the run updated, and what each booted before (bootc: its entry's from; MCO: the pre-run image). */
function updatedByRun(sim: SimCluster, chain: Set<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, node] of sim.nodes) {
    const e = nodeProgressOf(node);
    if (e && chain.has(e.planId) && e.step !== 'cordon' && e.from) out.set(name, e.from);
    const ann = node.metadata.annotations ?? {};
    const mcp = sim.get('MachineConfigPool', 'edge');
    const rendered = mcp?.spec?.configuration?.name;
    if (name.startsWith('e-') && rendered && rendered !== 'rendered-edge-0001' && (ann[MCO_CURRENT_CONFIG] === rendered || ann[MCO_DESIRED_CONFIG] === rendered)) out.set(name, OLD);
  }
  return out;
}

function bootedDigest(sim: SimCluster, name: string): string | null {
  const bn = sim.get('BootcNode', name);
  if (bn) return bn.status?.booted?.imageDigest ?? null;
  const cfg = sim.get('Node', name)?.metadata.annotations?.[MCO_CURRENT_CONFIG];
  return digestOf(sim.get('MachineConfig', cfg ?? '')?.spec?.osImageURL);
}

async function check(sh: Shape): Promise<void> {
  const { snap, plan, replan } = build(sh);
  const sim = newSim(snap, { durations: D, softRebootCapable: () => sh.pools.some((p) => p.soft), ...(sh.failRate ? { faults: { seed: sh.seed, rebootFailRate: sh.failRate } } : {}) });
  for (let i = 0, stepped = 0; i < 40 && stepped < sh.steps; i++) {
    const r = await runApply(sim, plan, replan, { step: true });
    if (r.code !== 0 || r.result?.outcome === 'done' || r.result?.outcome === 'nothing-to-do') break;
    if (r.result?.outcome === 'waiting') sim.advance(60);
    else stepped++;
  }
  const rec = (await sim.driver().readProgress()).run;
  if (!rec?.run) return; // the run wrote nothing (a halt before its first wave)
  const updated = updatedByRun(sim, new Set(rec.run.planIds));
  let rb;
  try {
    rb = await rollbackOf(sim);
  } catch {
    return; // refused (no origin kept for any pool)
  }
  if (rb.plan.summary.errors) return; // a refusal is a legitimate outcome: nothing was written
  for (const p of rb.plan.pools) for (const n of p.nodes) assert.ok(updated.has(n.name), `${n.name} is in the rollback plan and was not updated by the run`);
  const cordons = sim.cordons.length;
  const reboots = sim.reboots.length;
  const r = await runApply(sim, rb.plan, rb.replan);
  assert.ok(r.code === 0 || r.code === 5, `rollback ended with exit ${r.code}: ${(r.error as Error)?.message}`);
  for (const c of sim.cordons.slice(cordons)) {
    assert.ok(updated.has(c.node), `the rollback cordoned ${c.node}, which the run did not update`);
    if (!c.wasUnavailable && c.budget !== null) assert.ok(c.unavailableAfter <= c.budget, `${c.node}: ${c.unavailableAfter} of pool ${c.pool} out of service, budget ${c.budget}`);
  }
  for (const x of sim.reboots.slice(reboots)) assert.ok(updated.has(x.node), `the rollback rebooted ${x.node}, which the run did not update`);
  // Whatever the rollback got to (a halt leaves nodes on the run's image): every node updated by
  // the run boots the run's image or the one it booted before, never a third.
  for (const [name, from] of updated) {
    const now = bootedDigest(sim, name);
    assert.ok(now === digestOf(from) || now === NEW_DIGEST, `${name} boots ${now}: neither the run's image nor the one it booted before (${from})`);
  }
  if (!sh.failRate) for (const [n, k] of sim.rebootCounts()) assert.ok(k <= 2, `${n} rebooted ${k} times`);
  if (r.code === 0) for (const p of rb.plan.pools) for (const n of p.nodes) if (n.wave !== null) assert.is(bootedDigest(sim, n.name), n.to, `${n.name} is not back`);
}

t('a rollback stays within the budget, touches only nodes the run updated, and returns each to the image it booted', async () => {
  await fc.assert(fc.asyncProperty(shapeArb, check), seeded(2612, 40));
});

t.run();
