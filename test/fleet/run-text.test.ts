/**
 * The fleet's progress lines (src/fleet/run-text.ts): a cluster's failed check and, for a check on
 * trial (mode: observe), the verdict it would have given, said as observe and never as a failure.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fleetEventLine } from '../../src/fleet/run-text.ts';
import type { FleetEvent } from '../../src/fleet/run-events.ts';
import type { ApplyEvent } from '../../src/apply/ports/events.ts';

const s = suite('fleet progress lines');
const of = (event: ApplyEvent) => fleetEventLine({ t: 90, type: 'fleet-cluster-event', cluster: 'east', event } as FleetEvent);
const where = { t: 80, point: 'afterWave', pool: 'worker', wave: 1 } as const;

s('an observing check that would have failed gets a line saying observe; one that would have passed gets none', () => {
  const line = of({
    ...where,
    type: 'gate-observe',
    check: 'slo',
    mode: 'observe',
    result: 'failed',
    reason: 'condition',
    observed: 'ratio 0.02',
    onFailure: 'halt',
    seconds: 10,
  });
  assert.match(line ?? '', /east: observing slo \(mode: observe, not enforced\) would have failed \(afterWave worker wave 1\): ratio 0\.02$/);
  assert.not.match(line ?? '', /health check slo failed/);
  assert.is(of({ ...where, type: 'gate-observe', check: 'slo', mode: 'observe', result: 'passed', observed: 'ok', onFailure: 'halt', seconds: 10 }), null);
  assert.match(
    of({ ...where, type: 'gate-fail', check: 'alerts', reason: 'condition', observed: '1 alert', onFailure: 'halt', seconds: 10 }) ?? '',
    /east: health check alerts failed \(afterWave worker wave 1\): 1 alert$/,
  );
});

s.run();
