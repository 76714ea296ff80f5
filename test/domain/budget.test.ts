import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseMaxUnavailable, resolveMaxUnavailable } from '../../src/domain/budget.ts';
import { waveSizeFor } from '../../src/domain/waves.ts';

const s = suite('maxUnavailable arithmetic');

const resolve = (raw: unknown, nodes: number) => {
  const r = parseMaxUnavailable(raw);
  if (!r.ok) throw new Error(r.message);
  return resolveMaxUnavailable(r.value, nodes).resolved;
};

s('an integer is taken as is, whatever the pool size', () => {
  assert.is(resolve(1, 9), 1);
  assert.is(resolve(3, 9), 3);
  assert.is(resolve(20, 9), 20);
});

s('a percentage is floor(percent x nodes) with a minimum of 1 (MCO rule)', () => {
  const table: [string, number, number][] = [
    ['25%', 9, 2],
    ['25%', 10, 2],
    ['40%', 9, 3],
    ['10%', 9, 1],
    ['1%', 50, 1],
    ['50%', 3, 1],
    ['100%', 7, 7],
    ['33%', 3, 1],
    ['34%', 3, 1],
    ['67%', 3, 2],
    ['10%', 10000, 1000],
    ['1%', 0, 1],
  ];
  for (const [pct, nodes, want] of table) assert.is(resolve(pct, nodes), want, `${pct} of ${nodes}`);
});

s('the rule is recorded for the plan', () => {
  const r = parseMaxUnavailable('25%');
  assert.ok(r.ok);
  if (r.ok) assert.equal(resolveMaxUnavailable(r.value, 9), { value: '25%', resolved: 2, rule: 'floor(percent x nodes), minimum 1' });
});

s('errors: zero (with the paused hint), malformed strings, negatives, fractions', () => {
  const bad: [unknown, string][] = [
    [0, 'max-unavailable-zero'],
    ['0%', 'max-unavailable-zero'],
    ['60', 'max-unavailable-invalid'],
    ['40 %', 'max-unavailable-invalid'],
    ['50 percent', 'max-unavailable-invalid'],
    [-2, 'max-unavailable-invalid'],
    [2.5, 'max-unavailable-invalid'],
    ['101%', 'max-unavailable-invalid'],
    [null, 'max-unavailable-invalid'],
  ];
  for (const [v, code] of bad) {
    const r = parseMaxUnavailable(v);
    assert.is(r.ok, false, String(v));
    if (!r.ok) assert.is(r.code, code, String(v));
  }
  const zero = parseMaxUnavailable(0);
  if (!zero.ok) assert.match(zero.hint!, /paused: true/);
  const sixty = parseMaxUnavailable('60');
  if (!sixty.ok) assert.match(sixty.hint!, /"60%"/);
});

s('wave size: budget minus nodes already unavailable; control plane one at a time', () => {
  assert.is(waveSizeFor(3, 0, false), 3);
  assert.is(waveSizeFor(3, 1, false), 2);
  assert.is(waveSizeFor(3, 3, false), 0);
  assert.is(waveSizeFor(3, 5, false), 0);
  assert.is(waveSizeFor(3, 0, true), 1);
  assert.is(waveSizeFor(1, 1, true), 0);
});

s.run();
