import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { PolicyBlockedError } from '../../../src/base/errors.ts';
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

s.run();
