/**
 * A stop at ANY await point (docs/apply.md "Stopping"; docs/design.md §7), as a fast-check property:
 * the apply's driver and clock are wrapped so that the stop fires when the k-th awaited call
 * starts (k drawn over the whole run), in waves and in slots, on a bootc pool and an MCO pool,
 * for each kind of stop (SIGTERM, SIGINT, the fleet runner's batch timeout, a lost lock: the
 * Lease taken over). The simulated API server answers like a real one (every call turns the
 * event loop: test/support/stop-drivers.ts), so a loop that spins on a stop starves the clean-up and
 * the watchdog kills the suite instead of letting it hang. Then:
 * - the apply ends within 2 s of the stop, in virtual time and in real time;
 * - it leaves no wait or sleep open in the cluster (every timer and watch it started is gone);
 * - a stop request releases the lock; a lost lock leaves the new holder's Lease alone;
 * - an MCO pool bootcplan unpaused during the run is paused again, unless its rollout finished;
 * - the outcome is the stop's (exit 143 / 130; the batch timeout 143 to the runner, which records
 *   timed-out; a lost lock 4, also when the Lease was taken before this apply took it), or done
 *   when the stop came after the last step;
 * - a rerun finishes the plan from the saved progress, each node rebooted once.
 *
 * STOP_RUNS=N runs it N times (the suite's fixed seed, test/support/seeds.ts; docs/apply.md records a run of thousands).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, newSim } from '../../support/apply.ts';
import { apply } from '../../../src/apply/applier.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';
import type { SimDriver } from '../../../src/sim/driver.ts';
import { exitCodeOf, InterruptedError, LockHeldError, LockNotHeldError } from '../../../src/base/errors.ts';
import { stoppingAt, withLatency } from '../../support/stop-drivers.ts';
import { starvationWatchdog } from '../../support/starvation-watchdog.ts';
import { seeded } from '../../support/seeds.ts';

const s = suite('stopping at any await point');

const RUNS = process.env.STOP_RUNS ? Number(process.env.STOP_RUNS) : 40;
const SEED = 20261204;

type StopKind = 'SIGTERM' | 'SIGINT' | 'batch-timeout' | 'lost-lock';
interface Shape {
  bootc: number;
  bootcBudget: number;
  slots: boolean;
  mco: number;
  mcoBudget: number;
}

const shapeArb: fc.Arbitrary<Shape> = fc.record({
  bootc: fc.integer({ min: 2, max: 5 }),
  bootcBudget: fc.integer({ min: 1, max: 2 }),
  slots: fc.boolean(),
  mco: fc.integer({ min: 2, max: 4 }),
  mcoBudget: fc.integer({ min: 1, max: 2 }),
});

function build(sh: Shape) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', sh.bootc)).mcoPool('infra', nodes('i', sh.mco)).snapshot();
  return {
    snap,
    ...planWith(
      specYaml([
        { name: 'worker', image: NEW, maxUnavailable: sh.bootcBudget, ...(sh.slots ? { rollout: 'slots' } : { soakSeconds: 30 }) },
        { name: 'infra', image: NEW, maxUnavailable: sh.mcoBudget, soakSeconds: 30 },
      ]),
      snap,
    ),
  };
}

/** One apply through the answering, counting driver; `k`: the call at which `fire` runs (0: never). */
async function runOnce(sim: SimCluster, built: ReturnType<typeof build>, raw: SimDriver, k: number, fire: () => void, signal?: AbortSignal) {
  const { driver, count } = stoppingAt(
    withLatency(raw, (w) => sim.hold(w)),
    k,
    fire,
  );
  try {
    const result = await apply({ plan: built.plan, replan: built.replan, driver, holder: `test@${raw.name}`, signal });
    return { result, error: null as unknown, calls: count() };
  } catch (error) {
    return { result: null, error, calls: count() };
  }
}

/** Awaited calls of an apply that nobody stops, per shape (the simulator is deterministic). */
const codeOf = (err: unknown) => (err === null ? 0 : exitCodeOf(err));
const callsOf = new Map<string, number>();
async function totalCalls(sh: Shape): Promise<number> {
  const key = JSON.stringify(sh);
  if (!callsOf.has(key)) {
    const built = build(sh);
    const sim = newSim(built.snap);
    const r = await runOnce(sim, built, sim.driver('count'), 0, () => {});
    assert.is(codeOf(r.error), 0, `an apply nobody stops: ${(r.error as Error)?.stack ?? String(r.error)}`);
    callsOf.set(key, r.calls);
  }
  return callsOf.get(key)!;
}

s('a stop at any await point: ends within 2 s, nothing left open, lock released, MCO pools paused again, resumable', async () => {
  const stopWatchdog = starvationWatchdog('the stop-at-any-await-point property');
  const stats = { runs: 0, stopped: 0, done: 0 };
  try {
    await fc.assert(
      fc.asyncProperty(
        shapeArb,
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        fc.constantFrom<StopKind>('SIGTERM', 'SIGINT', 'batch-timeout', 'lost-lock'),
        async (sh, at, kind) => {
          const k = 1 + Math.floor(at * (await totalCalls(sh)));
          const built = build(sh);
          const sim = newSim(built.snap);
          const raw = sim.driver('apply');
          const stop = new AbortController();
          const fired = { virtual: -1, real: -1 };
          const fire = () => {
            fired.virtual = sim.now;
            fired.real = performance.now();
            if (kind !== 'lost-lock') return stop.abort(kind);
            // Another apply takes the Lease over (after `bootcplan unlock`).
            void (async () => {
              const thief = sim.driver('thief');
              const cur = await thief.readLock();
              if (cur) await thief.releaseLock(cur.lockId);
              await thief.acquireLock({ holder: 'cronjob@cluster', planId: 'other', ttlSeconds: 300 });
            })();
          };
          const r = await runOnce(sim, built, raw, k, fire, stop.signal);
          stats.runs++;
          const code = codeOf(r.error);
          const took = { virtual: sim.now - fired.virtual, real: performance.now() - fired.real };
          const why = `k=${k} ${kind} ${JSON.stringify(sh)}: exit ${code} ${(r.error as Error)?.message ?? ''}`;
          assert.ok(fired.virtual >= 0, `the stop never fired: ${why}`);
          assert.ok(took.virtual <= 2, `ended ${took.virtual} s (virtual) after the stop: ${why}`);
          assert.ok(took.real < 2000, `ended ${Math.round(took.real)} ms after the stop: ${why}`);
          assert.is(sim.openWaits(raw), 0, `waits left open: ${why}`);
          if (r.error === null) stats.done++;
          else {
            stats.stopped++;
            // Taken over before this apply took it: the lock is held by another (exit 4 as well).
            if (kind === 'lost-lock') assert.ok(r.error instanceof LockNotHeldError || r.error instanceof LockHeldError, why);
            else {
              assert.instance(r.error, InterruptedError, why);
              assert.is(code, kind === 'SIGINT' ? 130 : 143, why);
            }
          }
          if (kind === 'lost-lock') assert.is(sim.lock.leaseOf()?.holder, 'cronjob@cluster', `the new holder's Lease: ${why}`);
          else assert.is(sim.lock.leaseOf(), null, `lock released: ${why}`);
          const run = sim.progress.read(sim.nodes.values()).run;
          const unpaused = sim.writes.some((w) => w.session === raw.name && w.op === 'unpause' && w.target.includes('infra'));
          if (unpaused && !run?.pools.infra?.done) assert.is(sim.get('MachineConfigPool', 'infra')!.spec!.paused, true, `MCO pool paused again: ${why}`);
          // The saved progress lets a rerun finish, each node rebooted once.
          if (kind === 'lost-lock') {
            const thief = sim.driver('thief');
            await thief.releaseLock((await thief.readLock())!.lockId);
          }
          const again = await runOnce(sim, built, sim.driver('rerun'), 0, () => {});
          assert.is(codeOf(again.error), 0, `rerun: ${why}: ${(again.error as Error)?.stack ?? String(again.error)}`);
          for (const [node, n] of sim.rebootCounts()) assert.is(n, 1, `${node} rebooted ${n} times: ${why}`);
          assert.is(sim.rebootCounts().size, sh.bootc + sh.mco, why);
        },
      ),
      { ...seeded(SEED, RUNS), includeErrorInReport: true },
    );
  } finally {
    await stopWatchdog();
  }
  if (process.env.STOP_RUNS) console.log(`\n  stop property: ${stats.runs} runs, ${stats.stopped} stopped, ${stats.done} done before the stop took effect`);
});

s.run();
