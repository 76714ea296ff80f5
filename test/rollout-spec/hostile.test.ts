/**
 * The spec is input (issue "Sealed plans and hostile input"): numbers beyond what the API
 * stores, and keys that name Object.prototype members, are errors with positions.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';

const s = suite('spec loader under attack');
const D = 'quay.io/example/os@sha256:' + 'a'.repeat(64);
const HEAD = 'apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: prod\nspec:\n';
const pool = (extra: string) => HEAD + `  pools:\n    - name: worker\n      image: ${D}\n${extra}`;

function errors(text: string): Diagnostic[] {
  return parseRolloutSpec(text, 'b.yaml').diagnostics.filter((d) => d.severity === 'error');
}

s('maxUnavailable beyond int32 (the API type of MachineConfigPool spec.maxUnavailable) is an error, not 1e+26', () => {
  for (const v of ['99999999999999999999999999', '2147483648', '1e10']) {
    const ds = errors(pool(`      maxUnavailable: ${v}\n`));
    assert.is(ds.length, 1, v);
    assert.is(ds[0].code, 'max-unavailable-invalid', v);
    assert.is(ds[0].path, 'spec.pools[0].maxUnavailable');
    assert.equal([ds[0].line, ds[0].column], [9, 23]);
    assert.match(ds[0].message, /2147483647/);
  }
  assert.equal(errors(pool('      maxUnavailable: 2147483647\n')), []);
  assert.is(errors(pool('      maxUnavailable: "99999999999999999999%"\n'))[0].code, 'max-unavailable-invalid');
});

s('durations are bounded: soak and drain timeouts fit int32 seconds, a window at most 7 days', () => {
  for (const f of ['soakSeconds', 'drainTimeoutSeconds']) {
    const ds = errors(pool(`      ${f}: 100000000000000000000\n`));
    assert.is(ds.length, 1, f);
    assert.is(ds[0].code, 'out-of-range', f);
    assert.is(ds[0].path, `spec.pools[0].${f}`);
    assert.match(ds[0].message, /maximum of 2147483647/);
    assert.equal(errors(pool(`      ${f}: 2147483647\n`)), [], f);
  }
  const w = errors(HEAD + '  maintenanceWindows:\n    - schedule: "0 22 * * 1-5"\n      duration: 99999999999h\n');
  assert.is(w.length, 1);
  assert.is(w[0].code, 'duration-invalid');
  assert.equal([w[0].line, w[0].column], [8, 17]);
  assert.equal(errors(HEAD + '  maintenanceWindows:\n    - schedule: "0 22 * * 1-5"\n      duration: 168h\n'), []);
});

s('keys that name Object.prototype members are unknown fields, never looked up on the prototype', () => {
  for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
    const top = errors(HEAD.replace('spec:\n', `${key}: 1\nspec:\n`) + '  pools: []\n');
    assert.is(top.length, 1, key);
    assert.is(top[0].code, 'unknown-field', key);
    assert.is(top[0].path, key);
    assert.equal([top[0].line, top[0].column], [5, 1], key);
    const inPool = errors(pool(`      ${key}: {}\n`));
    assert.is(inPool[0]?.code, 'unknown-field', key);
    assert.is(inPool[0].path, `spec.pools[0].${key}`);
  }
});

s.run();
