/**
 * The condition grammar of prometheus checks and its semantics table (docs/spec.md "Health
 * checks"): what parses and where what does not stops; every form on a vector, an empty vector
 * and a scalar; NaN never satisfies a comparison (`!=` included); onEmpty.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseCondition, evaluateCondition, conditionText, type ParsedCondition, type QueryResult } from '../../src/domain/health-condition.ts';

const s = suite('health condition');

const parsed = (t: string): ParsedCondition => {
  const r = parseCondition(t);
  assert.ok(r.ok, `${t}: ${!r.ok ? r.message : ''}`);
  return (r as { parsed: ParsedCondition }).parsed;
};

s('the seven forms parse, with any spacing, and print back', () => {
  const table: [string, ParsedCondition][] = [
    ['empty', { subject: 'empty' }],
    ['  not   empty ', { subject: 'not-empty' }],
    ['every sample < 0.01', { subject: 'every', op: '<', value: 0.01 }],
    ['any\tsample>=-1e3', { subject: 'any', op: '>=', value: -1000 }],
    ['value == 1', { subject: 'value', op: '==', value: 1 }],
    ['count != 3', { subject: 'count', op: '!=', value: 3 }],
    ['min<=.5', { subject: 'min', op: '<=', value: 0.5 }],
    ['max > +2', { subject: 'max', op: '>', value: 2 }],
    ['sum < 10.25', { subject: 'sum', op: '<', value: 10.25 }],
    ['avg < 1E-2', { subject: 'avg', op: '<', value: 0.01 }],
  ];
  for (const [text, want] of table) assert.equal(parsed(text), want, text);
  assert.is(conditionText(parsed('every sample<0.01')), 'every sample < 0.01');
  assert.is(conditionText(parsed('not empty')), 'not empty');
});

s('what does not parse says where (0-based offset) and why', () => {
  const bad: [string, number, RegExp][] = [
    ['', 0, /empty/],
    ['everysample < 1', 0, /unknown word "everysample"/],
    ['every < 1', 6, /expected "sample"/],
    ['not', 3, /expected "empty"/],
    ['notempty', 0, /unknown word/],
    ['max 1', 4, /expected a comparison/],
    ['max = 1', 4, /expected a comparison/],
    ['max <', 5, /number is missing/],
    ['max < 0x10', 6, /expected a number/],
    ['max < 1_0', 6, /expected a number/],
    ['max < Inf', 6, /expected a number/],
    ['max < 1 or min > 2', 8, /unexpected "or min > 2"/],
    ['MAX < 1', 0, /unknown word "MAX"/],
    ['max < 1e999', 6, /not a finite number/],
  ];
  for (const [text, offset, msg] of bad) {
    const r = parseCondition(text);
    assert.not.ok(r.ok, text);
    if (r.ok) continue;
    assert.is(r.offset, offset, text);
    assert.match(r.message, msg, text);
  }
  const or = parseCondition('max < 1 or min > 2');
  assert.match(!or.ok ? or.hint : '', /combine in PromQL/);
});

const vec = (...vs: number[]): QueryResult => ({ type: 'vector', samples: vs.map((v, i) => ({ metric: { __name__: 'm', i: String(i) }, value: v })) });
const EMPTY: QueryResult = { type: 'vector', samples: [] };
const scalar = (v: number): QueryResult => ({ type: 'scalar', value: v });
const ok = (r: QueryResult, c: string, onEmpty: 'fail' | 'pass' = 'fail') => evaluateCondition(r, parsed(c), onEmpty).pass;

s('the semantics table: vector, empty vector, scalar', () => {
  assert.equal([ok(vec(1), 'empty'), ok(EMPTY, 'empty'), ok(scalar(0), 'empty')], [false, true, false]);
  assert.equal([ok(vec(1), 'not empty'), ok(EMPTY, 'not empty'), ok(scalar(0), 'not empty')], [true, false, true]);
  assert.equal(
    [ok(vec(0.001, 0.002), 'every sample < 0.01'), ok(vec(0.001, 0.2), 'every sample < 0.01'), ok(scalar(0.001), 'every sample < 0.01')],
    [true, false, true],
  );
  assert.equal([ok(vec(0.5, 0.001), 'any sample < 0.01'), ok(vec(0.5, 0.2), 'any sample < 0.01')], [true, false]);
  assert.equal([ok(vec(1), 'value == 1'), ok(vec(1, 1), 'value == 1'), ok(scalar(1), 'value == 1')], [true, false, true]);
  assert.equal([ok(vec(1, 2, 3), 'count == 3'), ok(EMPTY, 'count == 0'), ok(scalar(7), 'count == 1')], [true, true, true]);
  assert.equal([ok(vec(1, 5), 'max < 5'), ok(vec(1, 5), 'min < 5'), ok(vec(1, 5), 'sum == 6'), ok(vec(1, 5), 'avg == 3')], [false, true, true, true]);
  for (const c of ['every sample < 1', 'any sample < 1', 'value < 1', 'max < 1', 'avg < 1']) {
    assert.equal([ok(EMPTY, c), ok(EMPTY, c, 'pass')], [false, true], c);
  }
  const many = evaluateCondition(vec(1, 1), parsed('value == 1'), 'fail');
  assert.match(many.observed, /expected one sample, got 2 \(aggregate in the query\)/);
  assert.match(evaluateCondition(EMPTY, parsed('max < 1'), 'fail').observed, /empty result \(onEmpty: fail\)/);
});

s('NaN satisfies no comparison, != included; an aggregate over a NaN is NaN; ±Inf compare as numbers', () => {
  for (const c of ['every sample != 0', 'every sample < 1', 'any sample != 0', 'value != 0', 'max != 0', 'min < 1', 'sum < 1', 'avg < 1']) {
    assert.not.ok(ok(vec(NaN), c), c);
    assert.not.ok(ok(scalar(NaN), c), c);
  }
  assert.not.ok(ok(vec(0.001, NaN), 'max < 1'));
  assert.not.ok(ok(vec(0.001, NaN), 'every sample < 1'));
  assert.ok(ok(vec(0.001, NaN), 'any sample < 1'));
  assert.ok(ok(vec(-Infinity), 'max < 0'));
  assert.not.ok(ok(vec(Infinity), 'every sample < 1e300'));
  assert.match(evaluateCondition(vec(NaN), parsed('max < 1'), 'fail').observed, /max NaN/);
});

s('failing observations name the first three offending series, sorted labels, then how many more', () => {
  const r = evaluateCondition(vec(0.5, 0.6, 0.7, 0.8, 0.001), parsed('every sample < 0.01'), 'fail');
  assert.not.ok(r.pass);
  assert.is(r.observed, '4 of 5 not < 0.01: m{i="0"}=0.5, m{i="1"}=0.6, m{i="2"}=0.7 ... and 1 more');
  const long = evaluateCondition({ type: 'vector', samples: [{ metric: { __name__: 'x', pod: 'p'.repeat(200) }, value: 1 }] }, parsed('empty'), 'fail');
  assert.ok(long.observed.length < 120, long.observed);
});

s.run();
