/**
 * spec.maxUnavailable, spec.spread and spec.onPoolFailure (docs/apply.md "Pools in parallel"):
 * the static rules, each a diagnostic at the spec's line and column with the field, what is
 * expected and a hint.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { concurrencyFields } from '../../src/rollout-spec/concurrency-schema.ts';

const s = suite('concurrency schema');
const D = 'quay.io/example/os@sha256:' + 'a'.repeat(64);
const HEAD = 'apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: prod\nspec:\n';
const POOL = `  pools:\n    - name: worker\n      image: ${D}\n`;
const load = (section: string) => parseRolloutSpec(HEAD + section + POOL, 's.yaml');
const errs = (section: string) => load(section).diagnostics.filter((d) => d.severity === 'error');

s('the spec has the three fields', () => {
  assert.equal(Object.keys(concurrencyFields), ['maxUnavailable', 'spread', 'onPoolFailure']);
});

s('the three fields load and reach the spec', () => {
  const r = load('  maxUnavailable: 25%\n  spread: {key: topology.kubernetes.io/zone, maxPerValue: 1}\n  onPoolFailure: haltPool\n');
  assert.equal(r.diagnostics, []);
  assert.equal(r.spec?.spec.maxUnavailable, '25%');
  assert.equal(r.spec?.spec.spread, { key: 'topology.kubernetes.io/zone', maxPerValue: 1 });
  assert.equal(r.spec?.spec.onPoolFailure, 'haltPool');
});

s('maxPerValue 0 or less: an error at the value, with the minimum', () => {
  for (const v of ['0', '-2']) {
    const ds = errs(`  spread:\n    key: zone\n    maxPerValue: ${v}\n`);
    assert.is(ds.length, 1, v);
    assert.is(ds[0].path, 'spec.spread.maxPerValue');
    assert.is(ds[0].line, 8);
    assert.is(ds[0].column, 18);
    assert.match(ds[0].expected ?? '', />= 1/);
    assert.match(ds[0].hint ?? '', /paused/);
  }
});

s('a wrong onPoolFailure names the two values, near misses get a hint', () => {
  const ds = errs('  onPoolFailure: haltall\n');
  assert.is(ds.length, 1);
  assert.is(ds[0].path, 'spec.onPoolFailure');
  assert.is(ds[0].line, 6);
  assert.match(ds[0].expected ?? '', /haltAll/);
  assert.match(ds[0].hint ?? '', /haltAll/);
});

s('an unknown field in spread is rejected with a did-you-mean', () => {
  const ds = errs('  spread: {key: zone, maxPerValue: 1, maxPervalue: 2}\n');
  assert.is(ds.length, 1);
  assert.is(ds[0].path, 'spec.spread.maxPervalue');
  assert.match(ds[0].hint ?? '', /maxPerValue/);
});

s('a cluster budget of 0 or 0% is refused as a pool budget is', () => {
  for (const v of ['0', '"0%"']) {
    const ds = errs(`  maxUnavailable: ${v}\n`);
    assert.equal(
      ds.map((d) => [d.code, d.path, d.line]),
      [['max-unavailable-zero', 'spec.maxUnavailable', 6]],
      v,
    );
  }
});

s('spread without maxPerValue: the missing field', () => {
  const ds = errs('  spread: {key: zone}\n');
  assert.is(ds.length, 1);
  assert.match(ds[0].message + ds[0].path, /maxPerValue/);
});

s.run();
