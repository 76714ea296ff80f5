/**
 * Health gates in the applier, on the simulated cluster (docs/apply.md "Health gates"): the
 * preflight gate before any write; afterWave gates after the soak, the last wave of each pool
 * included; afterNode gates holding the pool's next start; a failure halts (no further node
 * starts, the nodes in flight finish, the pool paused, exit 5, HealthCheckFailed); apply --step
 * and a resumed run re-run exactly the gate that is due; a stop ends a gate within 2 s; an
 * unanswering source fails the check, never passes it.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { SimHealthSource, parseFailCheck, type FailCheckRule } from '../../../src/sim/health.ts';
import { HealthCheckFailedError, InterruptedError, InputError } from '../../../src/base/errors.ts';
import type { HealthSource, Measurement } from '../../../src/apply/ports/health.ts';
import type { ApplyEvent } from '../../../src/apply/ports/events.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';

const s = suite('health gates in the applier');
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

const rules = (...t: string[]): FailCheckRule[] => t.map((x) => parseFailCheck(x) as FailCheckRule);
const check = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  alerts: { matchers: ['severity="critical"'] },
  intervalSeconds: 10,
  successes: 2,
  ...extra,
});

function setup(
  o: {
    count?: number;
    checks?: Record<string, unknown>[];
    poolChecks?: Record<string, unknown>[];
    soak?: number;
    max?: number;
    mco?: boolean;
    staged?: boolean;
  } = {},
) {
  const b = new ClusterBuilder();
  const ns = nodes('w', o.count ?? 4, undefined, o.staged ? { staged: true } : {});
  const snap = (o.mco ? b.mcoPool('worker', ns) : b.bootcPool('worker', ns)).snapshot();
  const pool: Record<string, unknown> = { name: 'worker', image: NEW, maxUnavailable: o.max ?? 2, soakSeconds: o.soak ?? 60 };
  if (o.poolChecks) pool.healthChecks = o.poolChecks;
  const { plan, replan } = planWith(specYaml([pool], { healthChecks: o.checks ?? [check('alerts')] }), snap, D);
  return { sim: newSim(snap, { durations: D }), plan, replan, snap };
}

const runRecord = (sim: SimCluster) => sim.progress.read(sim.nodes.values()).run!;
const types = (events: ApplyEvent[]) =>
  events
    .filter((e) => e.type !== 'gate-measure')
    .map((e) =>
      e.type === 'gate-start' || e.type === 'gate-pass' || e.type === 'gate-fail'
        ? `${e.type}:${e.point}${e.wave !== null ? `/${e.wave}` : ''}${e.node ? `/${e.node}` : ''}`
        : e.type,
    );
const after = (events: ApplyEvent[], i: number, type: string) => events.slice(i + 1).filter((e) => e.type === type);

s('a plan with checks and no health source is refused before the lock', async () => {
  const { sim, plan, replan } = setup();
  const r = await runApply(sim, plan, replan);
  assert.instance(r.error, InputError);
  assert.match((r.error as Error).message, /has health checks and no health source/);
  assert.is(sim.lock.leaseOf(), null);
  assert.equal(sim.writes, []);
});

s('the preflight gate runs before any write; its failure writes nothing and exits 5', async () => {
  const { sim, plan, replan } = setup();
  const source = new SimHealthSource({ failChecks: rules('alerts@preflight') });
  const r = await runApply(sim, plan, replan, { health: source });
  assert.instance(r.error, HealthCheckFailedError);
  assert.is(r.code, 5);
  assert.match((r.error as Error).message, /^preflight: health check alerts failed before the first write: rehearsal: --fail-check alerts@preflight$/);
  assert.equal((r.error as HealthCheckFailedError).report[0], 'nothing was written: the cluster was not healthy before the rollout started');
  assert.equal(
    sim.writes.filter((w) => w.op !== 'lock' && w.op !== 'unlock'),
    [],
    'no object, no progress record written',
  );
  assert.equal(sim.cordons, []);
  assert.equal(types(r.events).slice(0, 3), ['start', 'gate-start:preflight', 'gate-fail:preflight']);
});

s('afterWave gates run after the soak, the last wave included; a pool is done only after its last gate', async () => {
  const { sim, plan, replan } = setup({ count: 4, soak: 60 });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource() });
  assert.is(r.error, null, String(r.error));
  const t = types(r.events).filter((x) => /^(gate-|wave-|soak|pool-done)/.test(x));
  assert.equal(t, [
    'gate-start:preflight',
    'gate-pass:preflight',
    'wave-start',
    'wave-end',
    'soak',
    'gate-start:afterWave/1',
    'gate-pass:afterWave/1',
    'wave-start',
    'wave-end',
    'soak',
    'gate-start:afterWave/2',
    'gate-pass:afterWave/2',
    'pool-done',
  ]);
  const soakEnd = r.events.find((e) => e.type === 'soak' && e.wave === 2)!;
  const gate2 = r.events.find((e) => e.type === 'gate-start' && e.wave === 2)!;
  assert.is(gate2.t - soakEnd.t, 60, 'the last gate waits for the soak');
  const pass = r.events.find((e) => e.type === 'gate-pass' && e.wave === 2)!;
  assert.is(pass.type === 'gate-pass' && pass.seconds, 10, 'two passes 10 s apart');
  assert.ok(
    r.result!.durationSeconds >= plan.summary.estimatedSeconds - 1,
    `${r.result!.durationSeconds} s against the estimate ${plan.summary.estimatedSeconds} s`,
  );
});

s('a failed afterWave gate: no node of the next wave starts, the pool is paused, the record and the error name the check', async () => {
  const { sim, plan, replan } = setup({ count: 6 });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules('alerts@worker:wave=1') }) });
  assert.instance(r.error, HealthCheckFailedError);
  assert.is(r.code, 5);
  const err = r.error as HealthCheckFailedError;
  assert.is(err.message, 'health check alerts failed after wave 1/3 of pool worker: rehearsal: --fail-check alerts@worker:wave=1');
  assert.equal([err.check, err.observed], ['alerts', 'rehearsal: --fail-check alerts@worker:wave=1']);
  const fail = r.events.findIndex((e) => e.type === 'gate-fail');
  assert.equal(after(r.events, fail, 'cordon'), [], 'no cordon after the failed gate');
  assert.equal(sim.cordons.length, 2, 'only wave 1 was cordoned');
  assert.is(sim.get('BootcNodePool', 'worker')?.spec?.rollout?.paused, true);
  const pp = runRecord(sim).pools.worker;
  assert.equal([pp.wavesDone, pp.gatesPassed ?? 0, pp.halted?.check], [1, 0, 'alerts']);
  const halt = r.events.find((e) => e.type === 'halt')!;
  assert.ok(halt.type === 'halt' && halt.check === 'alerts');
});

s('afterNode: a failing gate stops further starts, the node in flight finishes, no further node is cordoned', async () => {
  const { sim, plan, replan } = setup({ count: 6, max: 2, checks: [check('node-ok', { when: ['afterNode'] })] });
  const [first] = plan.pools[0].waves[0];
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules(`node-ok@node=${first}`) }) });
  assert.instance(r.error, HealthCheckFailedError);
  const fail = r.events.findIndex((e) => e.type === 'gate-fail');
  assert.equal(after(r.events, fail, 'cordon'), []);
  const wave1 = plan.pools[0].waves[0];
  assert.equal(sim.cordons.map((c) => c.node).sort(), [...wave1].sort(), 'the second node of the wave was in flight and finished; no more');
  assert.equal(
    r.events
      .filter((e) => e.type === 'booted')
      .map((e) => (e as { node: string }).node)
      .sort(),
    [...wave1].sort(),
  );
  assert.match((r.error as Error).message, new RegExp(`failed after node ${first} of pool worker`));
});

s("afterNode in waves: while a node's gate runs, no other node of its wave starts, even when budget frees up", async () => {
  const { sim, plan, replan } = setup({ count: 4, max: 2, staged: true, checks: [check('slow', { when: ['afterNode'], successes: 5, intervalSeconds: 60 })] });
  const [a, b] = plan.pools[0].waves[0];
  const other = plan.pools[0].waves[1][0];
  // Someone cordons a node of wave 2 as wave 1 starts: the budget lets one node of wave 1 start;
  // it is uncordoned 5 s after that node is back, while its gate runs (4 min).
  const r = await runApply(sim, plan, replan, {
    health: new SimHealthSource(),
    onEventHook: (e) => {
      if (e.type === 'wave-start' && e.wave === 1) sim.adminCordon(other, true);
      if (e.type === 'booted' && e.node === a) sim.after(5, () => sim.adminCordon(other, false));
    },
  });
  const pass = r.events.find((e) => e.type === 'gate-pass' && e.node === a)!;
  const cordonB = r.events.find((e) => e.type === 'cordon' && e.node === b)!;
  assert.ok(pass && cordonB, types(r.events).join(' '));
  assert.ok(cordonB.t >= pass.t, `${b} cordoned at ${cordonB.t} s, during ${a}'s gate (passed at ${pass.t} s)`);
});

s('afterNode in slots: admission waits for the gate of the node that came back; a failure admits nobody after it', async () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 4, undefined, { staged: true })).snapshot();
  const spec = () =>
    planWith(
      specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1, rollout: 'slots' }], {
        healthChecks: [check('n', { when: ['afterNode'], successes: 3, intervalSeconds: 30 })],
      }),
      b,
      D,
    );
  const { plan, replan } = spec();
  const order = plan.pools[0].waves.flat();
  const sim = newSim(b, { durations: D });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource() });
  assert.is(r.error, null, String(r.error));
  for (let i = 1; i < order.length; i++) {
    const pass = r.events.find((e) => e.type === 'gate-pass' && e.node === order[i - 1])!;
    const next = r.events.find((e) => e.type === 'cordon' && e.node === order[i])!;
    assert.ok(next.t >= pass.t, `${order[i]} admitted at ${next.t} s, before ${order[i - 1]}'s gate passed at ${pass.t} s`);
  }
  const sim2 = newSim(b, { durations: D });
  const r2 = await runApply(sim2, plan, replan, { health: new SimHealthSource({ failChecks: rules(`n@node=${order[1]}`) }) });
  assert.instance(r2.error, HealthCheckFailedError);
  assert.equal(
    sim2.cordons.map((c) => c.node),
    order.slice(0, 2),
  );
});

s('apply --step: the gate after wave k belongs to the run that starts wave k+1; a resumed run re-runs exactly the due gate, never the preflight', async () => {
  const { sim, plan, replan } = setup({ count: 4, soak: 0, staged: true });
  const one = await runApply(sim, plan, replan, { step: true, health: new SimHealthSource() });
  assert.equal(one.result?.outcome, 'stepped');
  assert.equal(
    types(one.events).filter((x) => x.startsWith('gate-start')),
    ['gate-start:preflight'],
  );
  // The second run is stopped in the middle of the gate after wave 1.
  const stop = new AbortController();
  const two = await runApply(sim, plan, replan, {
    step: true,
    signal: stop.signal,
    health: new SimHealthSource(),
    onEventHook: (e) => {
      if (e.type === 'gate-start') sim.after(5, () => stop.abort('SIGTERM'));
    },
  });
  assert.instance(two.error, InterruptedError);
  assert.equal(
    types(two.events).filter((x) => x.startsWith('gate-')),
    ['gate-start:afterWave/1'],
  );
  const three = await runApply(sim, plan, replan, { step: true, health: new SimHealthSource() });
  assert.equal(three.result?.outcome, 'stepped');
  assert.equal(
    types(three.events).filter((x) => x.startsWith('gate-')),
    ['gate-start:afterWave/1', 'gate-pass:afterWave/1'],
    'the same gate again, then wave 2',
  );
  assert.ok(three.events.some((e) => e.type === 'wave-start' && e.wave === 2));
  const four = await runApply(sim, plan, replan, { step: true, health: new SimHealthSource() });
  assert.equal(
    types(four.events).filter((x) => x.startsWith('gate-')),
    ['gate-start:afterWave/2', 'gate-pass:afterWave/2'],
    "the last wave's gate in a run of its own",
  );
  assert.equal(four.result?.outcome, 'done');
  assert.is(runRecord(sim).pools.worker.gatesPassed, 2);
});

/** A source that never answers and ignores its signal. */
const silent: HealthSource = { measure: () => new Promise<Measurement>(() => undefined) };

s('a stop ends a gate within 2 s, even when the source ignores the signal; nothing is left waiting', async () => {
  const { sim, plan, replan } = setup({ checks: [check('alerts', { intervalSeconds: 30, successes: 10, timeoutSeconds: 600 })] });
  const stop = new AbortController();
  let stoppedAt = -1;
  const r = await runApply(sim, plan, replan, {
    signal: stop.signal,
    health: silent,
    onEventHook: (e) => {
      if (e.type === 'gate-start')
        sim.after(3, () => {
          stoppedAt = sim.now;
          stop.abort('SIGTERM');
        });
    },
  });
  assert.instance(r.error, InterruptedError);
  assert.ok(stoppedAt > 0 && sim.now - stoppedAt <= 2, `ended ${sim.now - stoppedAt} s after the stop`);
  assert.is(sim.openWaits(r.driver), 0);
  assert.is(sim.lock.leaseOf(), null);
});

s('a source that does not answer fails the check (timeout), never passes it', async () => {
  const { sim, plan, replan } = setup({ checks: [check('alerts', { requestTimeoutSeconds: 5, intervalSeconds: 10, successes: 1, failureLimit: 1 })] });
  const r = await runApply(sim, plan, replan, { health: silent });
  assert.instance(r.error, HealthCheckFailedError);
  const m = r.events.filter((e) => e.type === 'gate-measure');
  assert.equal(
    m.map((e) => e.type === 'gate-measure' && [e.outcome, e.observed]),
    [
      ['error', 'no answer within 5 s'],
      ['error', 'no answer within 5 s'],
    ],
  );
  const fail = r.events.find((e) => e.type === 'gate-fail')!;
  assert.ok(fail.type === 'gate-fail' && fail.reason === 'error');
});

s('an inconclusive source delays until the timeout, then fails with what it saw last', async () => {
  const unsure: HealthSource = { measure: async () => ({ outcome: 'inconclusive', observed: 'heartbeat Watchdog not firing' }) };
  const { sim, plan, replan } = setup({ checks: [check('alerts', { intervalSeconds: 10, successes: 1, timeoutSeconds: 45 })] });
  const r = await runApply(sim, plan, replan, { health: unsure });
  const fail = r.events.find((e) => e.type === 'gate-fail')!;
  assert.ok(fail.type === 'gate-fail');
  if (fail.type === 'gate-fail') {
    assert.equal([fail.reason, fail.seconds], ['timeout', 45]);
    assert.match(fail.observed, /no verdict in 45 s: 0 of 1 successes in a row; last: inconclusive \(heartbeat Watchdog not firing\)/);
  }
});

s('MCO pools: the afterWave gate stops the next unpause; afterNode gates run as the MCO brings each node back', async () => {
  const { sim, plan, replan } = setup({ mco: true, count: 4, checks: [check('a'), check('n', { when: ['afterNode'], successes: 1 })] });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules('a@wave=1') }) });
  assert.instance(r.error, HealthCheckFailedError);
  assert.is(r.events.filter((e) => e.type === 'gate-pass' && e.point === 'afterNode').length, 2, 'each node of wave 1');
  const fail = r.events.findIndex((e) => e.type === 'gate-fail');
  assert.equal(after(r.events, fail, 'wave-start'), []);
  assert.is(sim.get('MachineConfigPool', 'worker')?.spec?.paused, true);
  assert.is(runRecord(sim).pools.worker.mcoUnpaused, undefined);
});

s('slots pools: afterNode gates hold admission; the afterWave checks run once, when the pool is done', async () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 5)).snapshot();
  const { plan, replan } = planWith(
    specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, rollout: 'slots' }], {
      healthChecks: [check('a'), check('n', { when: ['afterNode'], successes: 1 })],
    }),
    b,
    D,
  );
  const sim = newSim(b, { durations: D });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource() });
  assert.is(r.error, null, String(r.error));
  assert.equal(
    types(r.events).filter((x) => x.startsWith('gate-start:afterWave')),
    ['gate-start:afterWave/3'],
  );
  assert.is(r.events.filter((e) => e.type === 'gate-pass' && e.point === 'afterNode').length, 5);
  assert.is(Math.max(...sim.peakUnavailable.values()), 2);
});

s(
  'mode observe: a failing check on trial never halts; its verdict is a gate-observe event and in the run record; the enforcing checks decide the gate',
  async () => {
    const { sim, plan, replan } = setup({ checks: [check('alerts'), check('trial', { mode: 'observe' })] });
    const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules('trial@worker:wave=1') }) });
    assert.is(r.error, null, String(r.error));
    assert.is(sim.cordons.length, 4, 'the rollout went on');
    const seen = r.events.filter((e) => e.type === 'gate-observe');
    assert.equal(
      seen.map((e) => e.type === 'gate-observe' && [e.point, e.wave, e.check, e.mode, e.result, e.reason ?? null, e.onFailure]),
      [
        ['preflight', null, 'trial', 'observe', 'passed', null, 'halt'],
        ['afterWave', 1, 'trial', 'observe', 'failed', 'condition', 'halt'],
        ['afterWave', 2, 'trial', 'observe', 'passed', null, 'halt'],
      ],
    );
    assert.equal(
      r.events.filter((e) => e.type === 'gate-pass').map((e) => e.type === 'gate-pass' && e.checks),
      [['alerts'], ['alerts'], ['alerts']],
    );
    assert.not.ok(r.events.some((e) => e.type === 'gate-fail' || e.type === 'halt'));
    assert.equal(
      runRecord(sim).observing?.map((v) => [v.check, v.pool, v.point, v.wave, v.result]),
      [
        ['trial', null, 'preflight', null, 'passed'],
        ['trial', 'worker', 'afterWave', 2, 'passed'],
      ],
      'the last verdict per check and pool',
    );
  },
);

s('mode observe: an enforcing failure still halts; a trial check without a verdict yet is not reported', async () => {
  const { sim, plan, replan } = setup({ checks: [check('alerts', { successes: 1 }), check('trial', { mode: 'observe', successes: 3 })] });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules('alerts@worker:wave=1') }) });
  assert.instance(r.error, HealthCheckFailedError);
  assert.is((r.error as HealthCheckFailedError).check, 'alerts');
  const i = r.events.findIndex((e) => e.type === 'gate-fail');
  assert.equal(
    r.events
      .slice(
        r.events.findIndex((e) => e.type === 'gate-start' && e.wave === 1),
        i,
      )
      .filter((e) => e.type === 'gate-observe'),
    [],
    'trial needs 3 passes 10 s apart, the enforcing check failed at once',
  );
});

s("mode observe: the gate waits for the trial check's verdict, a timeout included, and then passes", async () => {
  const source: HealthSource = {
    measure: async (c) => (c.name === 'trial' ? { outcome: 'inconclusive', observed: 'no data yet' } : { outcome: 'pass', observed: 'ok' }),
  };
  const { sim, plan, replan } = setup({ checks: [check('alerts', { successes: 1 }), check('trial', { mode: 'observe', successes: 1, timeoutSeconds: 45 })] });
  const r = await runApply(sim, plan, replan, { health: source });
  assert.is(r.error, null, String(r.error));
  const pass = r.events.find((e) => e.type === 'gate-pass' && e.point === 'preflight');
  assert.ok(pass?.type === 'gate-pass' && pass.seconds === 45, 'as long as the enforced check would have taken');
  const v = r.events.find((e) => e.type === 'gate-observe' && e.point === 'preflight');
  assert.ok(v?.type === 'gate-observe');
  if (v?.type === 'gate-observe') {
    assert.equal([v.result, v.reason], ['failed', 'timeout']);
    assert.match(v.observed, /no verdict in 45 s/);
  }
});

s('a gate of observing checks only passes with no enforcing check named', async () => {
  const { sim, plan, replan } = setup({ checks: [check('trial', { mode: 'observe' })] });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules('trial@preflight') }) });
  assert.is(r.error, null, String(r.error));
  const pre = r.events.filter((e) => (e.type === 'gate-pass' || e.type === 'gate-observe') && e.point === 'preflight');
  assert.equal(
    pre.map((e) => (e.type === 'gate-pass' ? `pass ${e.checks.join(',')}` : e.type === 'gate-observe' ? `observe ${e.result}` : '')),
    ['observe failed', 'pass '],
  );
});

s.run();
