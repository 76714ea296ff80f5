import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { OutsideWindowError, PolicyBlockedError } from '../../../src/base/errors.ts';
import { windowPolicy } from '../../../src/apply/ports/policy.ts';

const s = suite('apply inside maintenance windows (virtual clock)');

// The simulator's clock starts on Monday 2026-09-14 08:00:00 UTC.
const D = { stage: 600, drain: 60, reboot: 300, softReboot: 60, ready: 30 };

function setup(window: { schedule: string; duration: string; timezone?: string }) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 9)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3 }], { maintenanceWindows: [window] }), snap, D);
  const sim = newSim(snap, { durations: D });
  return { plan, replan, sim, policy: windowPolicy([window], plan) };
}

s('inside a window long enough: every wave runs', async () => {
  const { plan, replan, sim, policy } = setup({ schedule: '0 8 * * 1-5', duration: '1h', timezone: 'UTC' });
  const r = await runApply(sim, plan, replan, { policy });
  assert.is(r.code, 0, String(r.error));
  assert.is(sim.reboots.length, 9);
});

s('outside every window: exit 6 naming the next window, and nothing is written', async () => {
  const { plan, replan, sim, policy } = setup({ schedule: '0 22 * * 1-5', duration: '4h', timezone: 'Europe/Berlin' });
  const r = await runApply(sim, plan, replan, { policy });
  assert.is(r.code, 6);
  assert.instance(r.error, PolicyBlockedError);
  assert.match((r.error as Error).message, /outside the maintenance windows; the next window opens at 2026-09-14T20:00:00Z/);
  assert.equal(
    sim.writes.filter((w) => !/lock|lease|progress/i.test(`${w.op} ${w.target}`)),
    [],
    'no object, node or pool was touched',
  );
  assert.is(sim.reboots.length, 0);
});

s('a wave that would overrun the window does not start: exit 6 after the waves that fit', async () => {
  // 20 minutes: staging (not held to windows) takes 600 s, wave 1 (390 s) fits, wave 2 does not.
  const { plan, replan, sim, policy } = setup({ schedule: '0 8 * * 1-5', duration: '20m', timezone: 'UTC' });
  const r = await runApply(sim, plan, replan, { policy });
  assert.is(r.code, 6, String(r.error));
  assert.match((r.error as Error).message, /the next wave needs about 7 min but the window closes at 2026-09-14T08:20:00Z/);
  assert.is(sim.reboots.length, 3, 'the first wave completed');
  const cordoned = sim.view().nodes.filter((n) => n.spec?.unschedulable);
  assert.equal(cordoned, [], 'no node left cordoned');
});

// docs/apply.md "Maintenance windows inside a wave": nodes already started may finish past the
// window's end; no node is cordoned after it closes; the apply then stops with exit 6.
const START = Date.parse('2026-09-14T08:00:00Z') / 1000;
const CLOSES = Date.parse('2026-09-14T08:20:00Z') / 1000;
const cordonsAfter = (events: readonly { type: string; t: number }[], at: number) =>
  events.filter((e) => e.type === 'cordon' && START + e.t > at).map((e) => (e as { node?: string }).node);

s('staging that ends after the window closed: no node of the wave is cordoned, exit 6 names the next window', async () => {
  // The plan estimates staging at 300 s (the wave fits the 20-minute window); the nodes take 1500 s.
  const window = { schedule: '0 8 * * 1-5', duration: '20m', timezone: 'UTC' };
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).snapshot();
  const spec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3, stagingTimeoutSeconds: 3600 }], { maintenanceWindows: [window] });
  const { plan, replan } = planWith(spec, snap, { ...D, stage: 300 });
  const sim = newSim(snap, { durations: { ...D, stage: 1500 } });
  const r = await runApply(sim, plan, replan, { policy: windowPolicy([window], plan) });
  assert.is(r.code, 6, String(r.error));
  assert.instance(r.error, OutsideWindowError);
  assert.equal((r.error as OutsideWindowError).nextWindow, { start: '2026-09-15T08:00:00.000Z', timezone: 'UTC' });
  assert.equal(cordonsAfter(r.events, CLOSES), [], 'no node cordoned after the window closed');
  assert.is(sim.reboots.length, 0);
  assert.equal(
    sim.view().nodes.filter((n) => n.spec?.unschedulable),
    [],
    'no node left cordoned',
  );
});

s('a node waiting for budget when the window closes is not started; the node in flight finishes past the end', async () => {
  // Wave 1 (2 nodes, maxUnavailable 2) starts at 08:10; a node of wave 2 goes NotReady on its own, so
  // one node of wave 1 starts and the other waits for budget. The reboot takes 900 s, not the
  // planned 300 s: the started node is back at about 08:26, after the window closed at 08:20.
  const window = { schedule: '0 8 * * 1-5', duration: '20m', timezone: 'UTC' };
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 4)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }], { maintenanceWindows: [window] }), snap, D);
  const [wave1, wave2] = plan.pools[0].waves;
  const sim = newSim(snap, { durations: { ...D, reboot: 900 } });
  let injected = false;
  const r = await runApply(sim, plan, replan, {
    policy: windowPolicy([window], plan),
    onEventHook: (e) => {
      if (e.type !== 'wave-start' || injected) return;
      injected = true;
      sim.mutate((o) => {
        const c = o.nodes.get(wave2[0])!.status!.conditions!.find((x: { type: string }) => x.type === 'Ready');
        c!.status = 'False';
        c!.reason = 'KubeletNotReady';
      });
    },
  });
  assert.is(r.code, 6, String(r.error));
  assert.instance(r.error, OutsideWindowError);
  assert.equal((r.error as OutsideWindowError).nextWindow, { start: '2026-09-15T08:00:00.000Z', timezone: 'UTC' });
  assert.equal(cordonsAfter(r.events, CLOSES), [], 'no node cordoned after the window closed');
  const rebooted = sim.reboots.map((x) => (x as { node?: string }).node ?? x);
  assert.is(rebooted.length, 1, `one node of wave 1 (${wave1.join(', ')}) rebooted: ${JSON.stringify(rebooted)}`);
  const back = r.events.filter((e) => e.type === 'uncordon').map((e) => START + e.t);
  assert.is(back.length, 1);
  assert.ok(back[0] > CLOSES, 'the node in flight finished past the window end');
  assert.equal(
    sim.view().nodes.filter((n) => n.spec?.unschedulable),
    [],
    'no node left cordoned',
  );
});

s.run();
