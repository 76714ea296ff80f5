/**
 * Skew enforcement ordering: while status.bootImageSkewEnforcementStatus.mode is Automatic the
 * API server rejects an empty list and any MAPI machinesets entry whose mode is not All
 * (types_machineconfiguration.go object-level CEL rules).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { plan, fullPlan, MS, CP, codes } from '../support/bootimages.ts';
import { automaticRuleViolation, AUTOMATIC_RULES } from '../../src/domain/bootimages.ts';

const s = suite('bootimages: skew enforcement ordering');
const AUTO = { mode: 'Automatic', automatic: { ocpVersion: '4.19.0' } };
const MANUAL_STATUS = { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.19.0' } };
const MANUAL = { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } };
const sel = { machineResourceSelector: { matchLabels: { 'boot-images': 'managed' } } };

// The object rules on their own (rules 2 and 3), accepted and rejected lists.
const RULES: [string, unknown[] | undefined, string | null][] = [
  ['absent list', undefined, null],
  ['machinesets All', [MS('All')], null],
  ['machinesets All + CPMS None', [MS('All'), CP('None')], null],
  ['CPMS only (no MAPI machinesets entry)', [CP('None')], null],
  ['empty list', [], AUTOMATIC_RULES.notEmpty],
  ['machinesets None', [MS('None')], AUTOMATIC_RULES.machineSetsAll],
  ['machinesets Partial', [MS('Partial', sel)], AUTOMATIC_RULES.machineSetsAll],
];
for (const [name, list, msg] of RULES) {
  s(`Automatic-status rule on ${name}: ${msg ? 'rejected' : 'accepted'}`, () => {
    assert.equal(automaticRuleViolation(list as any)?.message ?? null, msg);
  });
}

// status mode x desired managers x skew choice -> outcome
interface Case {
  name: string;
  status: unknown;
  managers: unknown[];
  skew?: unknown;
  observedSkew?: unknown;
  expect: string;
}
const CASES: Case[] = [
  { name: 'Automatic, opt-out None, skew Manual', status: AUTO, managers: [MS('None')], skew: MANUAL, expect: 'two-steps' },
  { name: 'Automatic, opt-out Partial, skew None', status: AUTO, managers: [MS('Partial', sel)], skew: { mode: 'None' }, expect: 'two-steps' },
  { name: 'Automatic, opt-out [] (explicit None), skew None', status: AUTO, managers: [], skew: { mode: 'None' }, expect: 'two-steps' },
  { name: 'Automatic, opt-out None, no skew choice', status: AUTO, managers: [MS('None')], expect: 'skew-enforcement-choice-required' },
  { name: 'Automatic, opt-out Partial, no skew choice', status: AUTO, managers: [MS('Partial', sel)], expect: 'skew-enforcement-choice-required' },
  { name: 'Automatic, managers All, no skew choice', status: AUTO, managers: [MS('All'), CP('All')], expect: 'one-step' },
  { name: 'Automatic, CPMS only, no skew choice', status: AUTO, managers: [CP('None')], expect: 'one-step' },
  {
    name: 'Automatic, spec skew already Manual but status not synced',
    status: AUTO,
    managers: [MS('None')],
    skew: MANUAL,
    observedSkew: MANUAL,
    expect: 'skew-enforcement-status-pending',
  },
  { name: 'Manual status, opt-out None, no skew choice', status: MANUAL_STATUS, managers: [MS('None')], expect: 'one-step' },
  { name: 'None status, opt-out Partial, no skew choice', status: { mode: 'None' }, managers: [MS('Partial', sel)], expect: 'one-step' },
  { name: 'Manual status, opt-out None, skew None', status: MANUAL_STATUS, managers: [MS('None')], skew: { mode: 'None' }, expect: 'one-step' },
];
for (const c of CASES) {
  s(`${c.name}: ${c.expect}`, () => {
    const spec: Record<string, unknown> = { managedBootImages: { machineManagers: c.managers } };
    if (c.skew) spec.bootImageSkewEnforcement = c.skew;
    const r = plan(spec, { skewStatus: c.status, machineManagers: [MS('All')], specSkew: c.observedSkew });
    const errs = codes(r.diagnostics, 'error');
    const updates = r.changes.filter((x) => x.action === 'update');
    if (c.expect === 'two-steps') {
      assert.equal(errs, []);
      assert.equal(
        updates.map((x) => x.reason),
        ['boot-image-skew-enforcement', 'managed-boot-images'],
      );
      assert.equal(updates[0].waitAfter?.kind, 'skew-enforcement-not-automatic');
      assert.ok(!updates[1].waitAfter);
    } else if (c.expect === 'one-step') {
      assert.equal(errs, []);
      assert.ok(updates.every((x) => !x.waitAfter));
      assert.equal(updates.at(-1)!.reason, 'managed-boot-images');
    } else {
      assert.equal(errs, [c.expect]);
    }
  });
}

s('the plan error explains both choices and points at the offending mode', () => {
  const r = plan({ managedBootImages: { machineManagers: [CP('None'), MS('None')] } }, { skewStatus: AUTO, machineManagers: [MS('All')] });
  const d = r.diagnostics.find((x) => x.code === 'skew-enforcement-choice-required')!;
  assert.equal(d.path, 'spec.managedBootImages.machineManagers[1].selection.mode');
  assert.ok(d.line && d.column);
  assert.ok(d.message.includes(AUTOMATIC_RULES.machineSetsAll));
  assert.match(d.hint!, /mode: Manual/);
  assert.match(d.hint!, /mode: None/);
  assert.match(d.hint!, /ocpVersion/);
});

s('two steps in the whole plan: orders 1 and 2, the wait on the first, before any pool change', () => {
  const p = fullPlan(
    { managedBootImages: { machineManagers: [MS('None')] }, bootImageSkewEnforcement: MANUAL },
    { skewStatus: AUTO, machineManagers: [MS('All')] },
  );
  assert.equal(
    p.changes.slice(0, 2).map((c) => [c.order, c.reason]),
    [
      [1, 'boot-image-skew-enforcement'],
      [2, 'managed-boot-images'],
    ],
  );
  assert.match(p.changes[0].waitAfter!.description, /no longer Automatic/);
  assert.equal(p.summary.errors, 0);
});

s('migration under Automatic without a skew choice: a plan error at spec.bootImageSkewEnforcement', () => {
  const r = plan({}, { skewStatus: AUTO, machineManagers: [] });
  const d = r.diagnostics.find((x) => x.code === 'skew-enforcement-choice-required')!;
  assert.equal(d.path, 'spec.bootImageSkewEnforcement');
});

s('rule 4: a status without MAPI All rejects every write while Automatic', () => {
  const r = plan({ bootImageSkewEnforcement: { mode: 'None' } }, { skewStatus: AUTO, machineManagers: [MS('All')], statusManagers: [MS('None')] });
  assert.equal(codes(r.diagnostics, 'error'), ['skew-enforcement-status-invalid']);
  assert.ok(r.diagnostics[0].message.includes(AUTOMATIC_RULES.statusAll));
  // no write, no error
  assert.equal(codes(plan({}, { skewStatus: AUTO, machineManagers: [MS('All')], statusManagers: [MS('None')] }).diagnostics), []);
});

s('the skew change replaces the whole union (no stale manual next to mode None), with a test first', () => {
  const r = plan({ bootImageSkewEnforcement: { mode: 'None' } }, { specSkew: MANUAL });
  assert.equal(r.changes[0].patch, [
    { op: 'test', path: '/spec/bootImageSkewEnforcement', value: MANUAL },
    { op: 'replace', path: '/spec/bootImageSkewEnforcement', value: { mode: 'None' } },
  ]);
  const add = plan({ bootImageSkewEnforcement: MANUAL }, {});
  assert.equal(add.changes[0].patch, [{ op: 'add', path: '/spec/bootImageSkewEnforcement', value: MANUAL }]);
  assert.equal(plan({ bootImageSkewEnforcement: MANUAL }, { specSkew: MANUAL }).changes[0].action, 'noop');
});

s.run();
