/**
 * One check at one gate (docs/apply.md "Health gates"): the reducer of measurements, and its
 * invariants as properties over random measurement sequences and limits (fixed seed): passed only
 * after `successes` passes in a row, never with an error or a failure among them; no more than
 * failureLimit + 1 failures counted; a verdict by the deadline; the same input, the same verdict.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { seeded } from '../support/seeds.ts';
import {
  startCheck,
  reduceMeasurement,
  nextMeasurementAt,
  timeoutVerdict,
  observation,
  minGateSeconds,
  type CheckLimits,
  type Measurement,
  type Verdict,
  type MeasurementOutcome,
} from '../../src/domain/health-verdict.ts';

const s = suite('health verdict');
const m = (outcome: MeasurementOutcome, observed = outcome): Measurement => ({
  outcome,
  observed,
  ...(outcome === 'error' ? { error: 'unreachable' as const } : {}),
});

/** Runs a whole gate for one check on a sequence of outcomes (repeating the last one), as the applier does with a clock. */
function runGate(outcomes: MeasurementOutcome[], limits: CheckLimits): { verdict: Verdict; at: number; seen: MeasurementOutcome[]; failures: number } {
  let state = startCheck(0);
  const seen: MeasurementOutcome[] = [];
  for (;;) {
    const at = nextMeasurementAt(state, limits);
    if (at === null) return { verdict: timeoutVerdict(state, limits), at: limits.timeoutSeconds, seen, failures: state.failures };
    const o = outcomes[Math.min(seen.length, outcomes.length - 1)];
    seen.push(o);
    const r = reduceMeasurement(state, m(o), limits);
    state = r.state;
    if (r.verdict.state !== 'running') return { verdict: r.verdict, at, seen, failures: state.failures };
  }
}

const L = (x: Partial<CheckLimits> = {}): CheckLimits => ({ intervalSeconds: 30, successes: 1, failureLimit: 0, timeoutSeconds: 600, ...x });

s('pass after successes in a row; an inconclusive resets the run; a failure or an error beyond the limit fails', () => {
  assert.equal(runGate(['pass'], L()).verdict.state, 'passed');
  const two = runGate(['pass', 'inconclusive', 'pass', 'pass'], L({ successes: 2 }));
  assert.equal([two.verdict.state, two.at], ['passed', 90]);
  const err = runGate(['error'], L());
  assert.equal(err.verdict.state === 'failed' && err.verdict.reason, 'error');
  const cond = runGate(['pass', 'fail'], L({ successes: 3 }));
  assert.equal(cond.verdict.state === 'failed' && [cond.verdict.reason, cond.at], ['condition', 30]);
  const blip = runGate(['error', 'pass'], L({ failureLimit: 1 }));
  assert.equal(blip.verdict.state, 'passed', 'failureLimit: 1 tolerates one blip');
  const limited = runGate(['fail', 'pass', 'fail', 'pass'], L({ failureLimit: 1, successes: 2 }));
  assert.ok(limited.verdict.state === 'failed' && /2 failed measurements, 1 tolerated/.test(limited.verdict.message));
});

s('no verdict by the deadline is a failure that says how far it got and what it saw last', () => {
  const r = runGate(['pass', 'inconclusive'], L({ successes: 2, intervalSeconds: 10, timeoutSeconds: 45 }));
  assert.equal(r.seen.length, 5, 'measurements at 0, 10, 20, 30, 40 s; the next would start after 45 s');
  assert.ok(r.verdict.state === 'failed');
  if (r.verdict.state === 'failed') {
    assert.is(r.verdict.reason, 'timeout');
    assert.is(r.verdict.message, 'no verdict in 45 s: 0 of 2 successes in a row; last: inconclusive (inconclusive)');
  }
  assert.is(minGateSeconds({ intervalSeconds: 30, successes: 3 }), 60);
});

s('observations are one printable line of at most 300 characters', () => {
  assert.is(observation('a\nb\u001b[31mc\u202e'), 'a b [31mc');
  assert.is(observation('x'.repeat(400)).length, 300);
});

const limitsArb = fc.record({
  intervalSeconds: fc.integer({ min: 1, max: 60 }),
  successes: fc.integer({ min: 1, max: 5 }),
  failureLimit: fc.integer({ min: 0, max: 4 }),
  timeoutSeconds: fc.integer({ min: 1, max: 900 }),
});
const outcomesArb = fc.array(fc.constantFrom<MeasurementOutcome>('pass', 'fail', 'inconclusive', 'error'), { minLength: 1, maxLength: 40 });

s('properties: passed only after `successes` passes in a row; failures counted never exceed failureLimit + 1; a verdict by the deadline; deterministic', () => {
  fc.assert(
    fc.property(outcomesArb, limitsArb, (outcomes, limits) => {
      const r = runGate(outcomes, limits);
      if (r.verdict.state === 'passed') {
        const tail = r.seen.slice(-limits.successes);
        assert.is(tail.length, limits.successes);
        assert.ok(
          tail.every((o) => o === 'pass'),
          'never passed with an error, a failure or an inconclusive among the last `successes`',
        );
      }
      assert.ok(r.failures <= limits.failureLimit + 1);
      if (r.verdict.state === 'failed' && r.verdict.reason !== 'timeout') assert.is(r.failures, limits.failureLimit + 1);
      assert.ok(r.at <= limits.timeoutSeconds, 'decided no later than the deadline');
      assert.ok(r.verdict.state !== 'running');
      assert.equal(runGate(outcomes, limits), r);
    }),
    seeded(260_501, 2000),
  );
});

s('property: an error never helps; a source that only errs never passes', () => {
  fc.assert(
    fc.property(limitsArb, fc.integer({ min: 1, max: 40 }), (limits, n) => {
      const r = runGate(Array(n).fill('error'), limits);
      assert.is(r.verdict.state, 'failed');
    }),
    seeded(260_502, 500),
  );
});

s.run();
