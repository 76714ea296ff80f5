import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';

const s = suite('spec loader');
const D = 'quay.io/example/os@sha256:' + 'a'.repeat(64);

const HEAD = `apiVersion: bootcplan.dev/v1alpha1
kind: Rollout
metadata:
  name: prod
spec:
`;

function errs(text: string): Diagnostic[] {
  return parseRolloutSpec(text, 'b.yaml').diagnostics.filter((d) => d.severity === 'error');
}
function one(text: string, code: string): Diagnostic {
  const list = errs(text);
  const d = list.find((x) => x.code === code);
  assert.ok(d, `expected ${code}, got ${JSON.stringify(list.map((x) => x.code))}`);
  return d!;
}

s('a valid spec loads with no diagnostics, and every section is optional', () => {
  const r = parseRolloutSpec(
    HEAD +
      `  pools:\n    - name: worker\n      image: ${D}\n      maxUnavailable: "25%"\n      rebootPolicy: AllowSoftReboot\n      drainTimeoutSeconds: 600\n      soakSeconds: 0\n      paused: false\n      priority: 5\n  maintenanceWindows:\n    - schedule: "0 22 * * 1-5"\n      duration: 4h\n      timezone: Europe/Berlin\n`,
    'b.yaml',
  );
  assert.equal(r.diagnostics, []);
  assert.ok(r.spec);
  assert.equal(r.spec!.spec.pools![0].maxUnavailable, '25%');
  const empty = parseRolloutSpec(HEAD + '  {}\n', 'b.yaml');
  assert.equal(empty.diagnostics, []);
  const onlyBoot = parseRolloutSpec(HEAD + '  managedBootImages:\n    machineManagers: []\n', 'b.yaml');
  assert.equal(
    onlyBoot.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
});

s('unknown field: points at the key, suggests the near name', () => {
  const d = one(HEAD + `  pools:\n    - name: worker\n      image: ${D}\n      rebootPolcy: RebootOnly\n`, 'unknown-field');
  assert.equal([d.file, d.line, d.column], ['b.yaml', 9, 7]);
  assert.equal(d.path, 'spec.pools[0].rebootPolcy');
  assert.match(d.hint!, /rebootPolicy/);
  assert.match(d.expected!, /maxUnavailable/);
});

s('unknown top-level and metadata fields are errors too', () => {
  const list = errs(`apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: prod\n  nmespace: x\nspec: {}\nstatus: {}\n`);
  assert.equal(list.map((d) => d.path).sort(), ['metadata.nmespace', 'status']);
});

s('wrong apiVersion, kind, missing metadata.name', () => {
  const list = errs(`apiVersion: bootcplan.dev/v1\nkind: Rolout\nmetadata: {}\nspec: {}\n`);
  assert.equal(list.map((d) => d.code).sort(), ['invalid-enum', 'invalid-enum', 'required-field']);
  assert.ok(list.find((d) => d.path === 'kind')!.hint!.includes('Rollout'));
});

s('wrong types name the expected type', () => {
  const d = one(HEAD + `  pools:\n    - name: worker\n      image: ${D}\n      soakSeconds: "120"\n      paused: "no"\n`, 'wrong-type');
  assert.equal(d.path, 'spec.pools[0].soakSeconds');
  assert.match(d.expected!, /whole number/);
  assert.equal(errs(HEAD + `  pools: {worker: 1}\n`)[0].message, 'expected a list, got a mapping');
});

s('enums: rebootPolicy and CPMS strategy, case-sensitive with a hint', () => {
  const d = one(HEAD + `  pools:\n    - name: worker\n      image: ${D}\n      rebootPolicy: allowsoftreboot\n`, 'invalid-enum');
  assert.equal([d.line, d.column], [9, 21]);
  assert.match(d.hint!, /AllowSoftReboot/);
  const c = one(HEAD + `  controlPlaneMachineSet:\n    strategy: Recreate\n`, 'invalid-enum');
  assert.equal(c.path, 'spec.controlPlaneMachineSet.strategy');
  assert.match(c.expected!, /RollingUpdate/);
});

s('image must be digest-pinned unless allowTags', () => {
  const d = one(HEAD + `  pools:\n    - name: worker\n      image: quay.io/example/os:latest\n`, 'image-not-pinned');
  assert.match(d.hint!, /allowTags: true/);
  assert.equal(errs(HEAD + `  pools:\n    - name: worker\n      image: quay.io/example/os:43\n      allowTags: true\n`), []);
  one(HEAD + `  pools:\n    - name: worker\n      image: quay.io/example/os@sha256:abc\n`, 'image-digest-invalid');
  one(HEAD + `  pools:\n    - name: worker\n      image: os:latest\n      allowTags: true\n`, 'image-ref-invalid');
});

s('maxUnavailable: every malformed form is an error with the expected form', () => {
  const cases: [string, string][] = [
    ['0', 'max-unavailable-zero'],
    ['"0%"', 'max-unavailable-zero'],
    ['"60"', 'max-unavailable-invalid'],
    ['"40 %"', 'max-unavailable-invalid'],
    ['"50 percent"', 'max-unavailable-invalid'],
    ['-1', 'max-unavailable-invalid'],
    ['"150%"', 'max-unavailable-invalid'],
    ['1.5', 'max-unavailable-invalid'],
    ['true', 'max-unavailable-invalid'],
  ];
  for (const [v, code] of cases) {
    const d = one(HEAD + `  pools:\n    - name: worker\n      image: ${D}\n      maxUnavailable: ${v}\n`, code);
    assert.equal([d.line, d.column], [9, 23], v);
    assert.match(d.expected!, /integer >= 1.*N%/, v);
  }
  assert.match(one(HEAD + `  pools:\n    - name: w\n      image: ${D}\n      maxUnavailable: 0\n`, 'max-unavailable-zero').hint!, /paused: true/);
  for (const ok of ['1', '7', '"1%"', '"100%"', '"25%"']) {
    assert.equal(errs(HEAD + `  pools:\n    - name: worker\n      image: ${D}\n      maxUnavailable: ${ok}\n`), [], ok);
  }
});

s('duplicate pool names and negative durations', () => {
  const list = errs(
    HEAD + `  pools:\n    - name: worker\n      image: ${D}\n      drainTimeoutSeconds: -5\n    - name: worker\n      image: ${D}\n      soakSeconds: -1\n`,
  );
  assert.equal(list.map((d) => d.code).sort(), ['duplicate-pool', 'negative-value', 'negative-value']);
  const dup = list.find((d) => d.code === 'duplicate-pool')!;
  assert.equal([dup.line, dup.path], [10, 'spec.pools[1].name']);
});

s('maintenance windows: cron syntax, duration, IANA timezone', () => {
  const list = errs(
    HEAD +
      `  maintenanceWindows:\n    - schedule: "0 25 * * *"\n      duration: 4x\n      timezone: Mars/Base\n    - schedule: "0 22 * *"\n      duration: 0h\n`,
  );
  assert.equal(list.map((d) => `${d.code}@${d.line}`).sort(), [
    'cron-invalid@10',
    'cron-invalid@7',
    'duration-invalid@11',
    'duration-invalid@8',
    'timezone-invalid@9',
  ]);
  assert.match(list.find((d) => d.line === 10)!.message, /exactly 5/);
});

s('all errors are reported at once, sorted by position', () => {
  const list = errs(HEAD + `  pools:\n    - name: worker\n      image: nope\n      maxUnavailable: 0\n      bogus: 1\n`);
  assert.equal(list.length, 3);
  assert.equal(
    list.map((d) => d.line),
    [8, 9, 10],
  );
});

s('malformed YAML, binary input, several documents and non-mappings are clean errors', () => {
  const y = errs('apiVersion: x\n  kind: [\n');
  assert.equal(y[0].code, 'yaml-syntax');
  assert.ok(y[0].line! >= 1);
  const b = errs('\u0000\u0001ELF binary');
  assert.equal(b[0].code, 'not-text');
  assert.equal(errs(HEAD + '  {}\n---\n' + HEAD + '  {}\n')[0].code, 'multiple-documents');
  assert.equal(errs('')[0].code, 'empty-spec');
  assert.equal(errs('- a\n- b\n')[0].code, 'not-a-rollout');
  const dup = errs(HEAD + '  pools: []\n  pools: []\n');
  assert.equal(dup[0].code, 'duplicate-key');
  assert.equal(dup[0].line, 7);
});

s.run();
