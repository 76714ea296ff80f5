/**
 * The fleet progress record (ConfigMap `bootcplan-fleet`, key `fleet.json`) through the simulated
 * driver, and the record parser both drivers read it with (src/apply/fleet-record.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder } from './builders.ts';
import { newSim } from './apply-harness.ts';
import type { FleetProgressRecord } from '../src/apply/driver.ts';
import { fleetProgressOf } from '../src/apply/fleet-record.ts';
import { BOOTCPLAN_NAMESPACE, FLEET_PROGRESS_NAME } from '../src/cluster/types.ts';

const s = suite('fleet-progress');

const record: FleetProgressRecord = {
  fleetPlanId: 'f1', fleet: 'edge', cluster: 'east', batch: 2, planId: 'p1', outcome: 'done', exitCode: 0, message: null,
  startedAt: '2026-03-02T10:00:00Z', updatedAt: '2026-03-02T10:30:00Z', finishedAt: '2026-03-02T10:30:00Z',
};

s('the simulated driver keeps the record in ConfigMap bootcplan-fleet, key fleet.json, and reads it back', async () => {
  const sim = newSim(new ClusterBuilder().bootcPool('worker', [{ name: 'w-1' }]).snapshot());
  const d = sim.driver('fleet');
  assert.is(await d.readFleetProgress(), null);
  await d.writeFleetProgress({ ...record, outcome: 'running', finishedAt: null, exitCode: null });
  await d.writeFleetProgress(record);
  assert.equal(await d.readFleetProgress(), record);
  const cm = sim.get('ConfigMap', FLEET_PROGRESS_NAME, BOOTCPLAN_NAMESPACE)!;
  assert.is(cm.data!['fleet-plan-id'], 'f1');
  assert.equal(JSON.parse(cm.data!['fleet.json']), record);
});

s('a record of another shape is refused with the field that is wrong', () => {
  assert.equal(fleetProgressOf(JSON.stringify(record)), record);
  assert.is(fleetProgressOf('{'), 'fleet.json is not valid JSON');
  assert.is(fleetProgressOf('[]'), 'fleet.json is not a JSON object');
  assert.is(fleetProgressOf(JSON.stringify({ ...record, fleetPlanId: 7 })), 'fleet.json has no string fleetPlanId');
  assert.is(fleetProgressOf(JSON.stringify({ ...record, batch: 0 })), 'fleet.json has no batch number');
  assert.is(fleetProgressOf(JSON.stringify({ ...record, outcome: 'finished' })), 'fleet.json has an unknown outcome');
  assert.is(fleetProgressOf(JSON.stringify({ ...record, exitCode: '0' })), 'fleet.json has an exitCode that is not an integer');
});

s.run();
