/**
 * Resume from per-node progress (docs/apply.md "Resume"): node state lives on the Nodes
 * (`bootcplan.dev/progress`), the run record holds only per-pool cursors. Properties on the
 * simulator (fast-check):
 * - an apply killed at any point (after any of its writes landed, or at any of its events),
 *   possibly several times, and run again each time, finishes with every scheduled node
 *   rebooted exactly once, every node's entry marked done, no cordon of bootcplan's left;
 * - the run record's size does not depend on the number of nodes, and one node step
 *   writes a node entry of bounded size.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, type TestNode } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import type { SimCluster, SimDriver } from '../../../src/sim/cluster.ts';
import { nodeProgressOf } from '../../../src/apply/ports/node-progress.ts';
import { BOOTCPLAN_CORDONED_BY } from '../../../src/domain/labels.ts';
import { ProgressBook } from '../../../src/apply/engine/progress-book.ts';
import { DEFAULT_DURATIONS } from '../../../src/domain/timing.ts';
import { seeded } from '../../support/seeds.ts';

const s = suite('progress: resume from per-node state');
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];

/** Kills the apply process right after its `at`-th write landed (the write is in the cluster, the answer never read). */
function killAfterWrite(sim: SimCluster, at: number): { restore: () => void } {
  const record = sim.record.bind(sim);
  let count = 0;
  sim.record = (session: SimDriver, op: string, target: string) => {
    record(session, op, target);
    if (++count === at && typeof session.kill === 'function') session.kill();
  };
  return {
    restore: () => {
      sim.record = record;
    },
  };
}

s('killed after any write or at any event, several times, each rerun resumes from the nodes: every node rebooted once, all entries done', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 30 }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 0, max: 2 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.array(fc.record({ kind: fc.constantFrom('write', 'event'), at: fc.integer({ min: 1, max: 400 }) }), { minLength: 1, maxLength: 3 }),
      async (n, budget, cordonedWanted, stagedFraction, kills) => {
        const cordoned = Math.min(cordonedWanted, n - 1);
        const snap = newSnap(n, cordoned, Math.round(stagedFraction * n));
        const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: budget, soakSeconds: 30 }]), snap);
        const sim = newSim(snap);
        let last = null as Awaited<ReturnType<typeof runApply>> | null;
        for (const k of kills) {
          let events = 0;
          const hook = k.kind === 'write' ? killAfterWrite(sim, k.at) : null;
          last = await runApply(sim, plan, replan, {
            lockTimeoutSeconds: 400,
            onEventHook: (_e, d) => {
              if (k.kind === 'event' && ++events === k.at) d.kill();
            },
          });
          hook?.restore();
          if (last.code === 0) break;
          assert.is((last.error as Error).name, 'KilledError', String((last.error as Error)?.stack ?? last.error));
        }
        // A rerun takes the dead apply's lock once it has seen the Lease unchanged for its TTL (300 s).
        if (last!.code !== 0) last = await runApply(sim, plan, replan, { lockTimeoutSeconds: 400 });
        assert.is(last!.code, 0, `final run: ${(last!.error as Error)?.stack ?? String(last!.error)}`);

        const scheduled = plan.pools[0].nodes.filter((x) => x.wave !== null).map((x) => x.name);
        const counts = sim.rebootCounts();
        for (const name of scheduled) {
          assert.is(counts.get(name), 1, `${name} rebooted ${counts.get(name) ?? 0} times`);
          assert.is(sim.get('BootcNode', name)!.status!.booted!.imageDigest, NEW_DIGEST, name);
          const e = nodeProgressOf(sim.get('Node', name));
          assert.ok(e && e.step === 'done' && e.planId === plan.id, `${name}: entry ${JSON.stringify(e)}`);
        }
        assert.is(counts.size, scheduled.length, 'no other node rebooted');
        for (const node of sim.nodes.values()) {
          const i = Number(node.metadata.name.slice(2));
          assert.is(node.spec?.unschedulable === true, i < cordoned, `${node.metadata.name}: cordon as before`);
          assert.is(node.metadata.annotations?.[BOOTCPLAN_CORDONED_BY], undefined, `${node.metadata.name}: no cordon mark left`);
        }
        const st = await sim.driver().readProgress();
        assert.ok(st.run?.done, 'the run record says done');
        assert.is(st.run!.pools.worker.wavesDone, plan.pools[0].waves.length);
      },
    ),
    seeded(3104, 80),
  );
});

s(
  'killed right after a reboot request: the rerun knows it from the BootcNode (no entry of its own) and lets the wave go on while the node reboots',
  async () => {
    // Reboots take longer than the staging limit: a rerun that took the rebooting node for
    // one that never started staging would halt the pool at the staging gate.
    const snap = newSnap(4, 0, 4);
    const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 0 }]), snap);
    const sim = newSim(snap, { durations: { ...DEFAULT_DURATIONS, reboot: 1500 } });
    const timeouts = { stagingSeconds: 120, nodeSeconds: 3600 };
    const record = sim.record.bind(sim);
    sim.record = (session: SimDriver, op: string, target: string) => {
      record(session, op, target);
      if (op === 'desiredImageState' && target.endsWith('=Booted')) session.kill();
    };
    const first = await runApply(sim, plan, replan, { timeouts });
    sim.record = record;
    assert.is((first.error as Error).name, 'KilledError');
    const asked = Object.values(Object.fromEntries([...sim.nodes.values()].map((n) => [n.metadata.name, nodeProgressOf(n)]))).filter((e) => e);
    assert.ok(asked.length >= 1 && asked.every((e) => e!.step === 'cordon'), `the Node entries still say cordon: ${JSON.stringify(asked)}`);
    const second = await runApply(sim, plan, replan, { timeouts, lockTimeoutSeconds: 400 });
    assert.is(second.code, 0, String((second.error as Error)?.stack ?? second.error));
    for (const name of plan.pools[0].waves.flat()) assert.is(sim.rebootCounts().get(name), 1, `${name} rebooted once`);
    const e = nodeProgressOf(sim.get('Node', plan.pools[0].waves[0][0]));
    assert.is(e?.step, 'done');
  },
);

function newSnap(n: number, cordoned: number, staged: number) {
  const ns: TestNode[] = Array.from({ length: n }, (_, i) => ({
    name: `w-${String(i).padStart(3, '0')}`,
    zone: ZONES[i % 3],
    cordoned: i < cordoned,
    staged: i >= n - staged,
  }));
  return new ClusterBuilder().bootcPool('worker', ns).snapshot();
}

s('the run record does not grow with the nodes; a node step writes a bounded entry', async () => {
  const figures: { n: number; largestRun: number; largestNode: number; runWrites: number }[] = [];
  for (const n of [10, 100, 1000]) {
    const snap = newSnap(n, 0, n);
    const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: Math.max(1, n / 10), soakSeconds: 0 }]), snap);
    const sim = newSim(snap);
    const r = await runApply(sim, plan, replan);
    assert.is(r.code, 0, String((r.error as Error)?.stack ?? r.error));
    const w = sim.progress.writes;
    figures.push({ n, largestRun: w.largestRun, largestNode: w.largestNodeEntry, runWrites: w.runWrites });
    assert.ok(w.nodeWrites <= 2 * n, `${w.nodeWrites} node entry writes for ${n} nodes (cordon, uncordon: the reboot request is recorded by the BootcNode)`);
  }
  const [small, , large] = figures;
  assert.ok(
    large.largestRun <= small.largestRun + 8,
    `run record: ${small.largestRun} bytes at 10 nodes, ${large.largestRun} at 1,000 (only the wave cursor's digits may grow)`,
  );
  assert.ok(large.largestNode <= small.largestNode + 8, `node entry: ${small.largestNode} bytes at 10 nodes, ${large.largestNode} at 1,000`);
  assert.ok(large.largestNode < 300, `a node entry is small: ${large.largestNode} bytes`);
});

s('saves made at once (slot nodes finishing together) are written one after the other: no false "another apply wrote it"', async () => {
  const snap = newSnap(6, 0, 6);
  const { plan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }]), snap);
  const sim = newSim(snap);
  const book = new ProgressBook(sim.driver(), plan, plan.pools);
  await book.load();
  book.record.changesApplied = true;
  const first = book.save();
  book.finishWave('worker', 1);
  const second = book.save();
  await Promise.all([first, second]);
  const run = sim.progress.read(sim.nodes.values()).run!;
  assert.is(run.changesApplied, true);
  assert.is(run.pools.worker.wavesDone, 1, "the second save is written too, against the first one's version");
});

s.run();
