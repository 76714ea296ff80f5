/**
 * `onFailure: rollback` at once (docs/apply.md "Rollback"), in the simulator with the simulated
 * health source: a check that fails after wave 1 makes the same apply plan the way back and run
 * it under its lock; the wave-1 nodes boot their previous image again, no node of a later wave
 * is touched, no node reboots more than twice, and the pool is held for the run's image.
 * Properties (fast-check, fixed seed): after the failed gate no forward node starts (every
 * cordon after `gate-fail` is the rollback's), and the rollback stays within the budget and
 * touches only the nodes the run updated.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, NEW_DIGEST, OLD, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { seeded } from '../../support/seeds.ts';
import { SimHealthSource, parseFailCheck, type FailCheckRule } from '../../../src/sim/health.ts';
import { RolledBackError, HeldTargetError, HealthCheckFailedError } from '../../../src/base/errors.ts';
import { nodeProgressOf } from '../../../src/cluster/progress.ts';
import { rehearse } from '../../../src/sim/rehearse.ts';
import { rehearsalReport, renderRehearsalText } from '../../../src/render/rehearsal.ts';
import { renderHtml } from '../../../src/render/html/report.ts';

const t = suite('rollback: onFailure rollback at once');
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 30, ready: 30 };
const rules = (...x: string[]): FailCheckRule[] => x.map((r) => parseFailCheck(r) as FailCheckRule);

function setup(o: { count?: number; max?: number; scope?: 'run' | 'wave'; onFailure?: 'rollback' | 'halt'; mixed?: boolean } = {}) {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', o.count ?? 6));
  if (o.mixed) {
    const bn = b.object('BootcNode', 'w-05');
    bn.status.booted = { ...bn.status.booted, image: NEW.replace(/@.*/, '@sha256:' + 'c'.repeat(64)), imageDigest: 'sha256:' + 'c'.repeat(64) };
  }
  const snap = b.snapshot();
  const onFailure = o.onFailure ?? 'rollback';
  const check = {
    name: 'alerts',
    alerts: { matchers: ['severity="critical"'] },
    intervalSeconds: 10,
    successes: 1,
    onFailure,
    ...(onFailure === 'rollback' ? { scope: o.scope ?? 'run' } : {}),
  };
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: o.max ?? 2, soakSeconds: 0 }], { healthChecks: [check] }), snap, D);
  return { sim: newSim(snap, { durations: D }), plan, replan };
}

t('a check fails after wave 1: the wave-1 nodes go back to the image they booted, under the same lock; exit 5, held', async () => {
  const { sim, plan, replan } = setup();
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules('alerts@worker:wave=1') }) });
  assert.instance(r.error, RolledBackError, String((r.error as Error)?.stack ?? r.error));
  assert.is(r.code, 5);
  assert.match(
    (r.error as Error).message,
    /^rolled back 2 node\(s\) of worker to the image each booted before: health check alerts failed: rehearsal: --fail-check alerts@worker:wave=1$/,
  );
  const wave1 = nodes('w', 6)
    .map((n) => n.name)
    .filter((n) => sim.rebootCounts().get(n));
  assert.is(wave1.length, 2, 'only the wave-1 nodes were ever rebooted');
  for (const n of wave1) {
    const bn = sim.get('BootcNode', n)!;
    assert.is(bn.status?.booted?.image, OLD, `${n} boots its previous image`);
    assert.is(bn.status?.rollback?.imageDigest, NEW_DIGEST);
    assert.is(sim.rebootCounts().get(n), 2, `${n}: once forward, once back`);
    assert.is(nodeProgressOf(sim.get('Node', n))?.step, 'done');
  }
  for (const [n, k] of sim.rebootCounts()) assert.ok(k <= 2, `${n} rebooted ${k} times`);
  const fail = r.events.findIndex((e) => e.type === 'gate-fail');
  const start = r.events.findIndex((e) => e.type === 'rollback-start');
  assert.ok(fail >= 0 && start > fail, 'the rollback starts after the failed gate');
  for (const e of r.events.slice(fail)) if (e.type === 'cordon') assert.is(e.rollback, true, `${e.node}: a cordon after the failed gate is the rollback's`);
  assert.equal(sim.writes.filter((w) => w.op === 'lock').length, 1, 'one lock for the run and its rollback');
  const rec = (await sim.driver().readProgress()).run!;
  assert.is(rec.rollbackOf?.trigger.check, 'alerts');
  assert.equal(
    rec.holds?.map((h) => [h.pool, h.target, h.action]),
    [['worker', NEW_DIGEST, 'rolled-back']],
  );
  // The CronJob runs the plan again: held, exit 5, nothing written.
  const writes = sim.writes.length;
  const again = await runApply(sim, plan, replan, { step: true, health: new SimHealthSource() });
  assert.instance(again.error, HeldTargetError);
  assert.equal(
    sim.writes.slice(writes).map((w) => w.op),
    ['lock', 'unlock'],
  );
});

t('scope wave takes back only the wave where the check failed; a check that halts holds the pool too', async () => {
  const { sim, plan, replan } = setup({ scope: 'wave' });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules('alerts@worker:wave=2') }) });
  assert.instance(r.error, RolledBackError, String(r.error));
  const back = nodes('w', 6)
    .map((n) => n.name)
    .filter((n) => sim.rebootCounts().get(n) === 2);
  assert.is(back.length, 2, 'the two nodes of wave 2 went back');
  for (const n of back) assert.is(sim.get('BootcNode', n)!.status?.booted?.image, OLD);
  const stayed = nodes('w', 6)
    .map((n) => n.name)
    .filter((n) => sim.rebootCounts().get(n) === 1);
  assert.is(stayed.length, 2, 'wave 1 stays on the new image (staged the origin, not rebooted)');
  for (const n of stayed) assert.is(sim.get('BootcNode', n)!.status?.booted?.imageDigest, NEW_DIGEST);

  const h = setup({ onFailure: 'halt' });
  const halted = await runApply(h.sim, h.plan, h.replan, { health: new SimHealthSource({ failChecks: rules('alerts@worker:wave=1') }) });
  assert.instance(halted.error, HealthCheckFailedError);
  const rec = (await h.sim.driver().readProgress()).run!;
  assert.equal(
    rec.holds?.map((x) => [x.pool, x.action, x.check]),
    [['worker', 'halted', 'alerts']],
  );
  assert.instance((await runApply(h.sim, h.plan, h.replan, { health: new SimHealthSource() })).error, HeldTargetError);
  const retried = await runApply(h.sim, h.plan, h.replan, { retry: true, health: new SimHealthSource() });
  assert.is(retried.error, null, String(retried.error));
});

/** Two bootc pools of one run, `first` rolled before `second`; the check fails after wave 2 of `failed`, scope wave. */
async function twoPools(first: string, second: string, failed: string, infraMco = false) {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 4));
  const snap = (infraMco ? b.mcoPool('infra', nodes('i', 3)) : b.bootcPool('infra', nodes('i', 3))).snapshot();
  const check = { name: 'alerts', alerts: { matchers: ['severity="critical"'] }, intervalSeconds: 10, successes: 1, onFailure: 'rollback', scope: 'wave' };
  const pool = (name: string, priority: number) => ({ name, image: NEW, maxUnavailable: 1, soakSeconds: 0, priority });
  const { plan, replan } = planWith(specYaml([pool(first, 1), pool(second, 2)], { healthChecks: [check] }), snap, D);
  assert.equal(
    plan.pools.map((p) => p.name),
    [first, second],
  );
  const sim = newSim(snap, { durations: D });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules(`alerts@${failed}:wave=2`) }) });
  assert.instance(r.error, RolledBackError, String(r.error));
  const rec = (await sim.driver().readProgress()).run!;
  const err = r.error as RolledBackError;
  return { sim, plan, replan, rec, err, text: [err.message, ...err.report].join('\n') };
}

t('scope wave: a pool of the run that never started on the failed image gets its image back, is held, and its nodes are named', async () => {
  const { sim, plan, replan, rec, text } = await twoPools('worker', 'infra', 'worker');
  const infra = nodes('i', 3).map((n) => n.name);
  for (const n of infra) {
    assert.not.ok(sim.rebootCounts().get(n), `${n} was rebooted`);
    assert.is(sim.get('BootcNode', n)!.status?.booted?.image, OLD, `${n} boots its image`);
  }
  // The pool's image is the origin again: no node of it is handed the failed image any more.
  assert.is(sim.get('BootcNodePool', 'infra')!.spec?.image?.ref, OLD);
  for (const n of infra) assert.is.not(sim.get('BootcNode', n)!.spec?.desiredImage, NEW, `${n} still handed the failed image`);
  assert.equal(
    (rec.holds ?? []).map((h) => [h.pool, h.target]).sort(),
    [
      ['infra', NEW_DIGEST],
      ['worker', NEW_DIGEST],
    ],
    'both pools held for the image',
  );
  // The nodes that staged the failed image before it could be taken back are named (an unplanned reboot boots it).
  const staged = infra.filter((n) => sim.get('BootcNode', n)!.status?.staged?.imageDigest === NEW_DIGEST);
  assert.ok(staged.length > 0, 'staging ran on every node of the run first');
  for (const n of staged) assert.match(text, new RegExp(`pool infra: [^\\n]*${n}`), `${n} named`);
  assert.match(text, /the pools worker, infra are held for this run's image/);
  // A new plan of the image for infra alone is held too.
  const again = await runApply(sim, plan, replan, { health: new SimHealthSource() });
  assert.instance(again.error, HeldTargetError);
  assert.match((again.error as Error).message, /pools worker, infra are held back/);
});

t('scope wave: a pool of the run that finished on the failed image keeps it (scope wave), is held, and its nodes are named', async () => {
  const { sim, rec, text } = await twoPools('infra', 'worker', 'worker');
  const infra = nodes('i', 3).map((n) => n.name);
  for (const n of infra) assert.is(sim.get('BootcNode', n)!.status?.booted?.imageDigest, NEW_DIGEST, `${n} kept the run's image`);
  assert.is(sim.get('BootcNodePool', 'infra')!.spec?.image?.ref, NEW, 'its nodes the run updated are not handed the origin');
  assert.equal((rec.holds ?? []).map((h) => h.pool).sort(), ['infra', 'worker']);
  assert.match(text, new RegExp(`pool infra: ${infra.join(', ')} boot the run's image`));
  assert.match(text, /the pools worker, infra are held for this run's image/);
});

t('scope wave: an MCO pool that finished on the failed image is kept, held and named; one that never started has nothing of the run', async () => {
  const { sim, rec, text } = await twoPools('infra', 'worker', 'worker', true);
  for (const n of nodes('i', 3)) assert.is(sim.rebootCounts().get(n.name), 1, `${n.name}: updated once, not rolled back`);
  assert.equal((rec.holds ?? []).map((h) => h.pool).sort(), ['infra', 'worker']);
  assert.match(text, /pool infra: i-00, i-01, i-02 boot the run's image: scope wave keeps the nodes the run updated \(an MCO pool goes back whole\)/);
  const later = await twoPools('worker', 'infra', 'worker', true);
  assert.not.match(later.text, /pool infra/);
  assert.equal(
    (later.rec.holds ?? []).map((h) => h.pool),
    ['worker'],
  );
});

t('a rollback the planner refuses (the pool started from two images) halts instead, saying why; no node goes back', async () => {
  const { sim, plan, replan } = setup({ mixed: true });
  const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules('alerts@worker:wave=1') }) });
  assert.instance(r.error, HealthCheckFailedError);
  assert.match((r.error as Error).message, /rollback refused: pool worker started the run from 2 different images .*; no node was rolled back/);
  for (const [n, k] of sim.rebootCounts()) assert.is(k, 1, `${n} was not rolled back`);
  assert.is(sim.get('BootcNodePool', 'worker')!.spec?.rollout?.paused, true);
});

t('a rollback stopped half-way (SIGTERM) leaves the pool held: the next run of the plan does not roll forward', async () => {
  const { sim, plan, replan } = setup();
  const stop = new AbortController();
  const r = await runApply(sim, plan, replan, {
    signal: stop.signal,
    health: new SimHealthSource({ failChecks: rules('alerts@worker:wave=1') }),
    onEventHook: (e) => {
      if (e.type === 'reboot' && e.rollback) stop.abort('SIGTERM');
    },
  });
  assert.is(r.code, 143, String(r.error));
  const rec = (await sim.driver().readProgress()).run!;
  assert.ok(rec.rollbackOf && !rec.done, "the rollback's own record, unfinished");
  assert.equal(
    rec.holds?.map((h) => [h.pool, h.action]),
    [['worker', 'halted']],
  );
  const cordons = sim.cordons.length;
  const again = await runApply(sim, plan, replan, { step: true, health: new SimHealthSource() });
  assert.instance(again.error, HeldTargetError);
  assert.is(sim.cordons.length, cordons, 'nothing rolled forward');
});

t('rehearsed with --fail-check: the rollback on the timeline (its own lanes, a rule where it starts), its figures in the text', async () => {
  const { plan, replan } = setup();
  const snapshot = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot, durations: D, health: { failChecks: rules('alerts@worker:wave=1') } });
  assert.instance(error, RolledBackError);
  assert.equal([rehearsal.rollback?.nodes, rehearsal.rollback?.waves, rehearsal.maxRebootsPerNode], [2, 1, 2]);
  assert.equal(
    rehearsal.pools.map((p) => [p.name, !!p.rollback, p.waves.length]),
    [
      ['worker', false, 1],
      ['worker', true, 1],
    ],
  );
  const report = rehearsalReport(rehearsal, error);
  assert.match(
    renderRehearsalText(report, { color: false }),
    /Rollback at \d+m\d*s? \(health check alerts failed: rehearsal: --fail-check alerts@worker:wave=1\): 2 nodes in 1 wave/,
  );
  const html = renderHtml(plan, { rehearsal: report });
  assert.match(html, /pool worker \(rollback\)/);
  assert.match(html, /<line class="rollback-rule"/);
});

t('property: after a failed gate no forward node starts; the rollback stays within the budget and takes only nodes the run updated', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        count: fc.integer({ min: 2, max: 12 }),
        max: fc.integer({ min: 1, max: 4 }),
        wave: fc.integer({ min: 1, max: 6 }),
        scope: fc.constantFrom('run' as const, 'wave' as const),
      }),
      async (o) => {
        const { sim, plan, replan } = setup(o);
        const waves = plan.pools[0].waves.length;
        const r = await runApply(sim, plan, replan, { health: new SimHealthSource({ failChecks: rules(`alerts@worker:wave=${Math.min(o.wave, waves)}`) }) });
        assert.ok(r.error instanceof RolledBackError, `${o.count}/${o.max}/${o.wave}: ${String(r.error)}`);
        const fail = r.events.findIndex((e) => e.type === 'gate-fail');
        const updated = new Set(
          r.events
            .slice(0, fail)
            .filter((e) => e.type === 'reboot')
            .map((e) => (e as { node: string }).node),
        );
        for (const e of r.events.slice(fail)) {
          if (e.type !== 'cordon') continue;
          assert.is(e.rollback, true, `${e.node}: a forward cordon after the failed gate`);
          assert.ok(updated.has(e.node), `${e.node}: the rollback took a node the run had not updated`);
        }
        for (const c of sim.cordons) if (!c.wasUnavailable) assert.ok(c.unavailableAfter <= o.max, `${c.node}: ${c.unavailableAfter} out, budget ${o.max}`);
        for (const [n, k] of sim.rebootCounts()) assert.ok(k <= 2, `${n} rebooted ${k} times`);
      },
    ),
    seeded(2613, 25),
  );
});

t.run();
