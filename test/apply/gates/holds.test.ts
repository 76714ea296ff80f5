/**
 * Holds (src/apply/gates/holds.ts; docs/apply.md "Holds"): a pool halted or paused by its check is held
 * for the run's image, and `--retry` lifts the hold. `onFailure: pause` records a paused hold, and
 * the --retry of the same plan goes on past the gate that paused it (its afterWave gate counts as
 * passed, the halt is cleared); a halt's --retry measures the gate again; the run record keeps
 * the paused action, and a record with an action it does not know is refused.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { SimHealthSource, parseFailCheck, type FailCheckRule } from '../../../src/sim/health.ts';
import { HealthCheckFailedError, HeldTargetError } from '../../../src/base/errors.ts';
import { describeHold } from '../../../src/apply/gates/holds.ts';
import { decodeRunRecord } from '../../../src/cluster/run-record.ts';
import type { SimCluster } from '../../../src/sim/cluster.ts';

const s = suite('holds: halt, pause and apply --retry');
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };
const failing = () => new SimHealthSource({ failChecks: ['slo@worker:wave=1'].map((t) => parseFailCheck(t) as FailCheckRule) });

function setup(onFailure: 'halt' | 'pause') {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2, soakSeconds: 30 }], {
    healthChecks: [{ name: 'slo', alerts: { matchers: ['severity="critical"'] }, when: ['afterWave'], intervalSeconds: 10, onFailure }],
  });
  const { plan, replan } = planWith(spec, snap, D);
  return { sim: newSim(snap, { durations: D }), plan, replan };
}
const runRecord = (sim: SimCluster) => sim.progress.read(sim.nodes.values()).run!;

s('pause: exit 5, the pool paused and held as paused; without --retry the plan is refused before writing', async () => {
  const { sim, plan, replan } = setup('pause');
  const r = await runApply(sim, plan, replan, { health: failing() });
  assert.instance(r.error, HealthCheckFailedError);
  assert.is(r.code, 5);
  assert.match(
    (r.error as HealthCheckFailedError).report.join('\n'),
    /apply PLANFILE --retry \(the same plan\) continues past this gate without measuring it again/,
  );
  assert.is(sim.get('BootcNodePool', 'worker')?.spec?.rollout?.paused, true);
  const rec = runRecord(sim);
  assert.equal(
    rec.holds?.map((h) => [h.pool, h.action, h.check]),
    [['worker', 'paused', 'slo']],
  );
  assert.match(describeHold(rec.holds![0]), /^pool worker: .* was paused at .* because health check slo failed/);
  const again = await runApply(sim, plan, replan, { health: failing() });
  assert.instance(again.error, HeldTargetError);
});

s('pause: --retry of the same plan goes on past the paused gate without measuring it, and finishes', async () => {
  const { sim, plan, replan } = setup('pause');
  await runApply(sim, plan, replan, { health: failing() });
  const r = await runApply(sim, plan, replan, { health: failing(), retry: true });
  assert.is(r.error, null, String(r.error));
  assert.equal(
    r.events.filter((e) => e.type === 'gate-start').map((e) => e.type === 'gate-start' && e.wave),
    [2, 3],
    'the gate after wave 1 is not measured again',
  );
  const cleared = r.events.find((e) => e.type === 'holds-cleared');
  assert.ok(cleared?.type === 'holds-cleared' && /worker goes on past the gate that paused it/.test(cleared.message));
  const pp = runRecord(sim).pools.worker;
  assert.equal([pp.done, pp.gatesPassed, pp.halted ?? null], [true, 3, null]);
  assert.equal(runRecord(sim).holds ?? [], []);
  assert.is(sim.cordons.length, 6);
});

s('halt: --retry measures the failed gate again first, and halts again while it fails', async () => {
  const { sim, plan, replan } = setup('halt');
  await runApply(sim, plan, replan, { health: failing() });
  assert.equal(runRecord(sim).holds?.[0].action, 'halted');
  const r = await runApply(sim, plan, replan, { health: failing(), retry: true });
  assert.instance(r.error, HealthCheckFailedError);
  const cleared = r.events.find((e) => e.type === 'holds-cleared');
  assert.ok(cleared?.type === 'holds-cleared' && !/goes on past/.test(cleared.message));
  assert.equal(
    r.events.filter((e) => e.type === 'gate-fail').map((e) => e.type === 'gate-fail' && e.wave),
    [1],
  );
  assert.is(sim.cordons.length, 2, 'no node of wave 2 started');
});

s('the run record keeps a paused hold and observing verdicts; a malformed one is refused', () => {
  const rec = {
    planId: 'a'.repeat(16),
    startedAt: '2026-12-07T10:00:00Z',
    updatedAt: '2026-12-07T10:00:00Z',
    changesApplied: true,
    done: false,
    pools: { worker: { wavesDone: 1, done: false } },
    holds: [{ pool: 'worker', target: NEW, action: 'paused', check: 'slo', observed: 'x', at: '2026-12-07T10:00:00Z', planId: 'a'.repeat(16) }],
    observing: [{ check: 'slo', pool: 'worker', point: 'afterWave', wave: 1, node: null, result: 'failed', observed: 'x', at: '2026-12-07T10:00:00Z' }],
  };
  const ok = decodeRunRecord(JSON.stringify(rec));
  assert.ok(typeof ok !== 'string', typeof ok === 'string' ? ok : '');
  const bad = (edit: (r: any) => void) => {
    const r = structuredClone(rec) as any;
    edit(r);
    const got = decodeRunRecord(JSON.stringify(r));
    return typeof got === 'string' ? got : 'accepted';
  };
  assert.match(
    bad((r) => (r.holds[0].action = 'snoozed')),
    /whose action is not halted, paused or rolled-back/,
  );
  assert.match(
    bad((r) => (r.observing[0].result = 'maybe')),
    /malformed observing verdict/,
  );
  assert.match(
    bad((r) => (r.observing = Array(65).fill(r.observing[0]))),
    /at most 64/,
  );
});

s.run();
