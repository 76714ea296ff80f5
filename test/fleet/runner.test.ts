/**
 * The fleet runner (src/fleet/runner.ts) on hand-made fleet plans, scripted clusters and a
 * virtual clock: batch order, canary halts, soak, batch timeouts and their action, waiting for a
 * maintenance window, resume from the fleet progress records, the exit code; and fast-check
 * properties of any fleet: no batch starts before the previous one finished or timed out, a
 * failed canary means no other cluster was started, never more than maxConcurrency in flight.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { runFleet } from '../../src/fleet/runner.ts';
import { worstExitCode, type FleetRunResult } from '../../src/fleet/run-result.ts';
import type { FleetEvent } from '../../src/fleet/run-events.ts';
import type { FleetProgressRecord } from '../../src/fleet/record.ts';
import { InputError } from '../../src/base/errors.ts';
import { StepClock, FakeFleet, fleetPlanOf, type FleetShape, type Script, T0 } from '../support/fleet-runner.ts';
import { seeded } from '../support/seeds.ts';

const s = suite('fleet-runner');

async function runShape(shape: FleetShape, scripts: Record<string, Script>, prepare?: (f: FakeFleet) => void, signal?: AbortSignal) {
  const clock = new StepClock();
  const fake = new FakeFleet(clock, scripts);
  prepare?.(fake);
  const events: FleetEvent[] = [];
  const plan = fleetPlanOf(shape);
  const result = await runFleet({ plan, clock, open: fake.open, onEvent: (e) => events.push(e), signal });
  return { result, fake, events, clock, plan };
}

const outcomeOf = (r: FleetRunResult, name: string) => r.clusters.find((c) => c.name === name)!.outcome;

s('a canary, then batches of maxConcurrency, one after another; every cluster recorded done in itself', async () => {
  const { result, fake, events } = await runShape(
    { canaries: ['c'], batches: [['a', 'b'], ['d']] },
    {
      c: { kind: 'done', seconds: 100 },
      a: { kind: 'done', seconds: 50 },
      b: { kind: 'done', seconds: 200 },
      d: { kind: 'done', seconds: 10 },
    },
  );
  assert.is(result.exitCode, 0);
  assert.is(result.halted, null);
  const start = Object.fromEntries(fake.log.map((l) => [l.cluster, l.start - T0]));
  assert.equal(start, { c: 0, a: 100, b: 100, d: 300 });
  assert.is(result.durationSeconds, 310);
  assert.equal(
    result.batches.map((b) => [b.startedAt, b.finishedAt, b.status]),
    [
      [0, 100, 'done'],
      [100, 300, 'done'],
      [300, 310, 'done'],
    ],
  );
  for (const n of ['a', 'b', 'c', 'd']) {
    assert.is(fake.records.get(n)!.outcome, 'done');
    assert.is(fake.records.get(n)!.fleetPlanId, 'fleet-1');
  }
  assert.equal(
    events.filter((e) => e.type === 'fleet-batch-start').map((e) => e.type === 'fleet-batch-start' && e.kind),
    ['canary', 'batch', 'batch'],
  );
  assert.is(events.at(-1)!.type, 'fleet-done');
});

s('a failed canary stops the fleet: no other cluster is opened, no record written there, exit of the canary', async () => {
  for (const exit of [1, 3, 4, 5, 6] as const) {
    const { result, fake, events } = await runShape(
      { canaries: ['c1', 'c2'], batches: [['a', 'b']] },
      { c1: { kind: 'done', seconds: 10 }, c2: { kind: 'fail', seconds: 30, exit } },
    );
    assert.is(result.exitCode, exit, `exit ${exit}`);
    assert.equal(fake.opened, ['c1', 'c2']);
    assert.equal([...fake.records.keys()].sort(), ['c1', 'c2']);
    assert.is(result.halted?.reason, 'canary-failed');
    assert.is(result.halted?.cluster, 'c2');
    assert.is(outcomeOf(result, 'a'), 'not-started');
    assert.is(fake.records.get('c2')!.outcome, 'failed');
    assert.is(fake.records.get('c2')!.exitCode, exit);
    assert.ok(events.some((e) => e.type === 'fleet-halted' && e.reason === 'canary-failed'));
  }
});

s('a failed non-canary cluster: abort lets its batch finish and starts no later batch; continue goes on; the worst exit wins', async () => {
  const scripts: Record<string, Script> = {
    a: { kind: 'fail', seconds: 10, exit: 3 },
    b: { kind: 'done', seconds: 100 },
    d: { kind: 'fail', seconds: 5, exit: 5 },
  };
  const abort = await runShape({ canaries: [], batches: [['a', 'b'], ['d']], batchTimeoutAction: 'abort' }, scripts);
  assert.is(outcomeOf(abort.result, 'b'), 'done');
  assert.is(outcomeOf(abort.result, 'd'), 'not-started');
  assert.is(abort.result.halted?.reason, 'cluster-failed');
  assert.is(abort.result.exitCode, 3);
  const go = await runShape({ canaries: [], batches: [['a', 'b'], ['d']], batchTimeoutAction: 'continue' }, scripts);
  assert.is(outcomeOf(go.result, 'd'), 'failed');
  assert.is(go.result.halted, null);
  assert.is(go.result.exitCode, 5, 'halted 5 is worse than stale 3');
});

s('batch timeout, abort: the unfinished cluster is stopped at its safe point, recorded timed-out, no later batch (exit 5)', async () => {
  const { result, fake, events } = await runShape(
    { canaries: [], batches: [['a', 'b'], ['d']], batchTimeoutSeconds: 300, batchTimeoutAction: 'abort' },
    { a: { kind: 'done', seconds: 100 }, b: { kind: 'done', seconds: 1000 } },
  );
  assert.is(outcomeOf(result, 'a'), 'done');
  assert.is(outcomeOf(result, 'b'), 'timed-out');
  assert.is(outcomeOf(result, 'd'), 'not-started');
  assert.is(fake.log.find((l) => l.cluster === 'b')!.end! - T0, 300);
  assert.is(fake.log.find((l) => l.cluster === 'b')!.outcome, 'stopped');
  assert.is(fake.records.get('b')!.outcome, 'timed-out');
  assert.is(result.halted?.reason, 'batch-timeout');
  assert.is(result.exitCode, 5);
  assert.ok(events.some((e) => e.type === 'fleet-batch-timeout' && e.clusters.join() === 'b' && e.action === 'abort'));
});

s('batch timeout, continue: the timed-out cluster is stopped and recorded, the next batch runs', async () => {
  const { result, fake } = await runShape(
    { canaries: [], batches: [['a', 'b'], ['d']], batchTimeoutSeconds: 300, batchTimeoutAction: 'continue' },
    { a: { kind: 'done', seconds: 100 }, b: { kind: 'done', seconds: 1000 }, d: { kind: 'done', seconds: 10 } },
  );
  assert.is(outcomeOf(result, 'b'), 'timed-out');
  assert.is(outcomeOf(result, 'd'), 'done');
  assert.is(fake.log.find((l) => l.cluster === 'd')!.start - T0, 300);
  assert.is(result.halted, null);
  assert.is(result.exitCode, 5);
});

s('a timed-out canary stops the fleet even with continue', async () => {
  const { result, fake } = await runShape(
    { canaries: ['c'], batches: [['a']], batchTimeoutSeconds: 60, batchTimeoutAction: 'continue' },
    { c: { kind: 'done', seconds: 600 } },
  );
  assert.is(result.halted?.reason, 'canary-failed');
  assert.equal(fake.opened, ['c']);
});

s('outside its maintenance window a cluster is not failed: it waits, is applied when the window opens, and its batch waits for it', async () => {
  const { result, fake, events } = await runShape(
    { canaries: ['c'], batches: [['a']] },
    { c: { kind: 'window', closedSeconds: 3600, seconds: 100 }, a: { kind: 'done', seconds: 10 } },
  );
  assert.is(result.exitCode, 0);
  assert.is(fake.log.find((l) => l.cluster === 'c')!.start - T0, 3600);
  assert.is(fake.log.find((l) => l.cluster === 'a')!.start - T0, 3700);
  assert.is(result.clusters.find((c) => c.name === 'c')!.waitedSeconds, 3600);
  assert.ok(events.some((e) => e.type === 'fleet-cluster-waiting' && e.cluster === 'c'));
  assert.ok(fake.recordWrites.includes('c:waiting'));
});

s('waiting for a window counts against the batch timeout', async () => {
  const { result } = await runShape({ canaries: [], batches: [['a']], batchTimeoutSeconds: 600 }, { a: { kind: 'window', closedSeconds: 3600, seconds: 100 } });
  assert.is(outcomeOf(result, 'a'), 'timed-out');
  assert.is(result.exitCode, 5);
});

s('batchSoakSeconds between batches, not after the last', async () => {
  const { result, fake, events } = await runShape(
    { canaries: ['c'], batches: [['a']], batchSoakSeconds: 900 },
    { c: { kind: 'done', seconds: 100 }, a: { kind: 'done', seconds: 10 } },
  );
  assert.is(fake.log.find((l) => l.cluster === 'a')!.start - T0, 1000);
  assert.is(result.durationSeconds, 1010);
  assert.equal(events.filter((e) => e.type === 'fleet-soak').length, 1);
});

s('a rerun skips the clusters this fleet plan finished, applies the others, and soaks only what is left', async () => {
  // (A canary is never skipped on its record: the first batch here is a plain one.)
  const shape: FleetShape = { canaries: [], batches: [['c'], ['a'], ['b']], maxConcurrency: 1, batchSoakSeconds: 900 };
  const { result, fake } = await runShape(shape, {}, (f) => {
    const rec = (cluster: string, batch: number, fleetPlanId: string, finishedAt: string) =>
      f.records.set(cluster, {
        fleetPlanId,
        fleet: 'fleet',
        cluster,
        batch,
        planId: `plan-${cluster}`,
        outcome: 'done',
        exitCode: 0,
        message: null,
        startedAt: finishedAt,
        updatedAt: finishedAt,
        finishedAt,
      });
    rec('c', 1, 'fleet-1', new Date((T0 - 600) * 1000).toISOString());
    rec('a', 2, 'another-fleet-plan', new Date((T0 - 600) * 1000).toISOString());
  });
  assert.is(outcomeOf(result, 'c'), 'already-done');
  assert.equal(
    fake.log.map((l) => [l.cluster, l.start - T0]),
    [
      ['a', 300],
      ['b', 1260],
    ],
    'c finished 600 s ago: 300 s of soak left',
  );
  assert.is(result.exitCode, 0);
});

const doneRecord = (cluster: string, o: Partial<FleetProgressRecord> = {}): FleetProgressRecord => {
  const at = new Date((T0 - 600) * 1000).toISOString();
  return {
    fleetPlanId: 'fleet-1',
    fleet: 'fleet',
    cluster,
    batch: 1,
    planId: `plan-${cluster}`,
    outcome: 'done',
    exitCode: 0,
    message: null,
    startedAt: at,
    updatedAt: at,
    finishedAt: at,
    ...o,
  };
};

s(
  "F2: a record counts only with its own cluster, plan id and fleet name: a copied or hand-made one (this fleet plan's id, done) does not skip the cluster",
  async () => {
    const shape: FleetShape = { canaries: [], batches: [['a', 'b', 'd', 'e']] };
    const { result, fake } = await runShape(shape, {}, (f) => {
      f.records.set('a', doneRecord('not-a'));
      f.records.set('b', doneRecord('b', { planId: 'ffffffffffffffff' }));
      f.records.set('d', doneRecord('d', { fleet: 'whatever' }));
      f.records.set('e', doneRecord('e'));
    });
    assert.equal(
      ['a', 'b', 'd', 'e'].map((n) => outcomeOf(result, n)),
      ['done', 'done', 'done', 'already-done'],
    );
    assert.equal(fake.log.map((l) => l.cluster).sort(), ['a', 'b', 'd']);
  },
);

s("F2: a canary is never skipped on its record: its own apply runs; when it answers nothing-to-do the soak counts from the record's time", async () => {
  const shape: FleetShape = { canaries: ['c'], batches: [['a']], batchSoakSeconds: 900 };
  const { result, fake } = await runShape(shape, { c: { kind: 'nothing-to-do' } }, (f) => f.records.set('c', doneRecord('c')));
  assert.is(outcomeOf(result, 'c'), 'nothing-to-do');
  assert.equal(
    fake.log.map((l) => [l.cluster, l.start - T0]),
    [
      ['c', 0],
      ['a', 300],
    ],
    'finished 600 s ago: 300 s of soak left',
  );
});

s(
  'F5: a record finished in the future counts as finished now (no soak configured: the next batch starts at once); an unparseable time is ignored',
  async () => {
    const future = new Date((T0 + 30 * 86400) * 1000).toISOString();
    const shape: FleetShape = { canaries: [], batches: [['c'], ['a']], batchSoakSeconds: 0 };
    const { result, fake } = await runShape(shape, {}, (f) =>
      f.records.set('c', doneRecord('c', { startedAt: future, updatedAt: future, finishedAt: future })),
    );
    assert.is(outcomeOf(result, 'c'), 'already-done');
    assert.equal(
      fake.log.map((l) => [l.cluster, l.start - T0]),
      [['a', 0]],
    );
    assert.ok(result.clusters.find((c) => c.name === 'c')!.finishedAt! <= 0, 'not in the future');
    const soaked = await runShape({ ...shape, batchSoakSeconds: 100 }, {}, (f) => f.records.set('c', doneRecord('c', { finishedAt: 'not a time' })));
    assert.is(outcomeOf(soaked.result, 'c'), 'already-done');
    assert.equal(
      soaked.fake.log.map((l) => [l.cluster, l.start - T0]),
      [['a', 100]],
      'an unknown time soaks from the start of this run',
    );
  },
);

s('a cluster that cannot be opened is a per-cluster failure (exit 1), not a crash', async () => {
  const { result } = await runShape({ canaries: [], batches: [['a', 'b']], batchTimeoutAction: 'continue' }, {}, (f) => f.unopenable.add('a'));
  assert.is(outcomeOf(result, 'a'), 'failed');
  assert.match(result.clusters[0].message ?? '', /not in the kubeconfig/);
  assert.is(outcomeOf(result, 'b'), 'done');
  assert.is(result.exitCode, 1);
});

s('clusters in no batch: an unplanned one makes the fleet exit 1, an unchanged one does not', async () => {
  const { result, fake } = await runShape({ canaries: [], batches: [['a']], unplanned: ['x'], unchanged: ['y'] }, {});
  assert.is(outcomeOf(result, 'x'), 'unplanned');
  assert.is(outcomeOf(result, 'y'), 'unchanged');
  assert.not.ok(fake.opened.includes('x') || fake.opened.includes('y'));
  assert.is(result.exitCode, 1);
});

s('a canary with no plan refuses the whole fleet before any cluster is opened', async () => {
  const plan = fleetPlanOf({ canaries: ['c'], batches: [['a']] });
  Object.assign(plan.clusters[0], { batch: null, plan: null, error: { code: 'unreachable', message: 'c is unreachable' } });
  plan.batches.shift();
  const fake = new FakeFleet(new StepClock(), {});
  try {
    await runFleet({ plan, clock: fake.clock, open: fake.open });
    assert.unreachable('should refuse');
  } catch (err) {
    assert.instance(err, InputError);
    assert.match((err as Error).message, /canary cluster "c"/);
  }
  assert.equal(fake.opened, []);
});

s('a stop request stops the clusters in flight at a safe point and starts nothing more (exit 130 for SIGINT)', async () => {
  const ac = new AbortController();
  const clock = new StepClock();
  const fake = new FakeFleet(clock, { a: { kind: 'done', seconds: 1000 } });
  const plan = fleetPlanOf({ canaries: [], batches: [['a'], ['b']] });
  const run = runFleet({
    plan,
    clock,
    open: fake.open,
    signal: ac.signal,
    onEvent: (e) => {
      if (e.type === 'fleet-cluster-start') void clock.sleep(10).then(() => ac.abort('SIGINT'));
    },
  });
  const result = await run;
  assert.is(outcomeOf(result, 'a'), 'interrupted');
  assert.is(outcomeOf(result, 'b'), 'not-started');
  assert.is(result.exitCode, 130);
  assert.is(fake.records.get('a')!.outcome, 'interrupted');
});

s('a stop request while clusters are being opened: no apply starts, nothing later either', async () => {
  const ac = new AbortController();
  const { result, fake } = await runShape(
    { canaries: [], batches: [['a', 'b'], ['d']], maxConcurrency: 1 },
    {},
    (f) => {
      f.onOpen = () => ac.abort('SIGTERM');
    },
    ac.signal,
  );
  assert.equal(fake.log, [], 'no apply was called');
  assert.equal(fake.opened, ['a']);
  assert.equal(
    result.clusters.map((c) => c.outcome),
    ['interrupted', 'interrupted', 'not-started'],
  );
  assert.is(result.exitCode, 143);
});

s('worstExitCode: signal > 1 > 6 > 5 > 4 > 3 > 2 > 0', () => {
  assert.is(worstExitCode([0, 3, 4]), 4);
  assert.is(worstExitCode([5, 6, 4]), 6);
  assert.is(worstExitCode([6, 1]), 1);
  assert.is(worstExitCode([1, 143]), 143);
  assert.is(worstExitCode([3, 42]), 1);
  assert.is(worstExitCode([]), 0);
});

// ------------------------------------------------------------------ properties

const scriptArb: fc.Arbitrary<Script> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('done' as const), seconds: fc.integer({ min: 1, max: 600 }) }), weight: 5 },
  {
    arbitrary: fc.record({
      kind: fc.constant('fail' as const),
      seconds: fc.integer({ min: 1, max: 600 }),
      exit: fc.constantFrom(1 as const, 3 as const, 4 as const, 5 as const, 6 as const),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('window' as const), closedSeconds: fc.integer({ min: 1, max: 900 }), seconds: fc.integer({ min: 1, max: 600 }) }),
    weight: 1,
  },
);

const fleetArb = fc
  .record({
    canaries: fc.integer({ min: 0, max: 2 }),
    others: fc.integer({ min: 0, max: 8 }),
    maxConcurrency: fc.integer({ min: 1, max: 3 }),
    /** Batches as the planner cuts them (= maxConcurrency), or larger (a hand-edited plan would be refused by its id; the runner still holds the limit). */
    batchSize: fc.integer({ min: 1, max: 4 }),
    batchSoakSeconds: fc.constantFrom(0, 0, 120),
    batchTimeoutSeconds: fc.option(fc.integer({ min: 60, max: 1200 }), { nil: null }),
    batchTimeoutAction: fc.constantFrom('abort' as const, 'continue' as const),
  })
  .chain((f) =>
    fc.record({
      f: fc.constant(f),
      scripts: fc.array(scriptArb, { minLength: f.canaries + f.others, maxLength: f.canaries + f.others }),
    }),
  );

s(
  'properties: batches in order (each after the previous finished or timed out, plus soak), a failed canary starts nothing else, maxConcurrency in flight',
  async () => {
    await fc.assert(
      fc.asyncProperty(fleetArb, async ({ f, scripts }) => {
        const canaries = Array.from({ length: f.canaries }, (_, i) => `canary-${i}`);
        const others = Array.from({ length: f.others }, (_, i) => `c-${i}`);
        const batches: string[][] = [];
        for (let i = 0; i < others.length; i += f.batchSize) batches.push(others.slice(i, i + f.batchSize));
        const names = [...canaries, ...others];
        const byName = Object.fromEntries(names.map((n, i) => [n, scripts[i]]));
        const { result, fake, plan } = await runShape({ ...f, canaries, batches }, byName);
        // in flight
        assert.ok(fake.maxInFlight <= f.maxConcurrency);
        // batch order: every apply of batch k starts after every apply of batch k-1 ended, plus the soak
        const ran = plan.batches.map((b) => fake.log.filter((l) => b.clusters.includes(l.cluster)));
        for (let k = 1; k < ran.length; k++) {
          if (!ran[k].length) continue;
          const prevEnd = Math.max(...ran[k - 1].map((l) => l.end ?? Infinity), T0);
          for (const l of ran[k]) assert.ok(l.start >= prevEnd + f.batchSoakSeconds, `batch ${k + 1} started before batch ${k} ended`);
          for (const l of ran[k - 1]) assert.ok(l.end !== null);
        }
        // a failed canary: nothing else was opened
        const failedCanary = canaries.find((c) => ['failed', 'timed-out'].includes(outcomeOf(result, c)));
        if (failedCanary) {
          const upTo = canaries.slice(0, canaries.indexOf(failedCanary) + 1);
          assert.equal([...new Set(fake.opened)].sort(), [...upTo].sort());
          assert.equal([...fake.records.keys()].sort(), [...upTo].sort());
          assert.is(result.halted?.reason, 'canary-failed');
        }
        // after a halt no later batch started
        if (result.halted)
          for (const b of plan.batches.filter((x) => x.index > result.halted!.batch))
            for (const c of b.clusters) assert.is(outcomeOf(result, c), 'not-started');
        // the exit code is the worst cluster's
        assert.is(result.exitCode, worstExitCode(result.clusters.map((c) => c.exitCode)));
        if (result.clusters.every((c) => ['done', 'nothing-to-do', 'unchanged'].includes(c.outcome))) assert.is(result.exitCode, 0);
      }),
      seeded(3103, 150),
    );
  },
);

s.run();
