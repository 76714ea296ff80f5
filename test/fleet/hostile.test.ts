/**
 * Fleet files and fleet plan files are input (docs/fleets.md; docs/safety.md "Security model"): a
 * crafted file ends in diagnostics with positions (InputError, exit 1), never in a crash or a
 * prototype lookup.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseFleetSpec } from '../../src/fleet/spec-load.ts';
import { parseFleetPlanFile } from '../../src/fleet/plan-file.ts';
import { renderFleetText } from '../../src/fleet/plan-text.ts';
import { FleetBuilder } from '../support/fleet.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';

const s = suite('fleet input under attack');
const errs = (text: string): Diagnostic[] => parseFleetSpec(text, 'f.yaml').diagnostics.filter((d) => d.severity === 'error');
const HEAD = 'apiVersion: bootcplan.dev/v1alpha1\nkind: Fleet\nmetadata:\n  name: f\nspec:\n  rollout: {}\n';

s('Fleet: prototype keys are unknown fields, everywhere', () => {
  for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const ds = errs(HEAD + `  clusters:\n    - name: a\n      snapshot: a.yaml\n      ${key}: 1\n  strategy:\n    ${key}: {}\n`);
    assert.equal(
      ds.map((d) => [d.code, d.path]),
      [
        ['unknown-field', `spec.clusters[0].${key}`],
        ['unknown-field', `spec.strategy.${key}`],
      ],
      key,
    );
  }
  const canary = errs(HEAD + '  clusters:\n    - {name: a, snapshot: a.yaml}\n  strategy:\n    canaries: [constructor, toString]\n');
  assert.equal(
    canary.map((d) => d.code),
    ['unknown-canary', 'unknown-canary'],
  );
});

s('Fleet: alias bombs, deep nesting, binary, several documents, a list: one diagnostic each', () => {
  const bomb =
    'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n';
  assert.is(errs(bomb)[0].code, 'yaml-alias-expansion');
  assert.is(errs('['.repeat(5000) + ']'.repeat(5000))[0].code, 'yaml-too-deep');
  assert.is(errs('kind: Fleet\u0000')[0].code, 'not-text');
  assert.is(errs(HEAD + '---\n' + HEAD)[0].code, 'multiple-documents');
  assert.is(errs('- a\n- b\n')[0].code, 'not-a-fleet');
  assert.is(errs('')[0].code, 'empty-spec');
});

s('Fleet: numbers beyond int32, names that are not names, empty clusters', () => {
  const ds = errs(HEAD + '  clusters: []\n  strategy:\n    batchSoakSeconds: 99999999999999999999\n    batchTimeoutSeconds: 0\n');
  assert.equal(ds.map((d) => d.code).sort(), ['out-of-range', 'out-of-range', 'too-few-items']);
  const names = errs(HEAD + '  clusters:\n    - {name: "../etc", snapshot: a.yaml}\n    - {name: "' + 'a'.repeat(64) + '", snapshot: b.yaml}\n');
  assert.equal(
    names.map((d) => d.code),
    ['invalid-format', 'too-long'],
  );
});

const saved = () =>
  JSON.parse(
    JSON.stringify(
      new FleetBuilder()
        .cluster('a')
        .cluster('b')
        .strategy({ canaries: ['a'] })
        .plan(),
    ),
  );
const read = (doc: unknown) => parseFleetPlanFile(typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2), 'fp.json');

s('fleet plan file: a well-formed one reads back; a Rollout plan or garbage is refused with a position', () => {
  assert.ok(read(saved()).fleetPlan);
  assert.is(read(saved().clusters[0].plan).diagnostics[0].message, 'this is a plan of one cluster, not a fleet plan');
  assert.is(read('{"kind": "FleetPlan",').diagnostics[0].code, 'json-syntax');
  assert.is(read('\u0000').diagnostics[0].code, 'not-text');
  assert.is(read('['.repeat(100000) + ']'.repeat(100000)).diagnostics[0].code, 'yaml-too-deep');
  assert.is(read({ ...saved(), formatVersion: '9.9' }).diagnostics[0].code, 'plan-format-unsupported');
});

s('fleet plan file: wrong types anywhere are diagnostics with file:line:column, never a crash in a renderer', () => {
  const fp = saved();
  fp.summary.nodes = 'many';
  fp.clusters[1].plan.pools[0].nodes = {};
  fp.clusters[0].error = { code: 'rm -rf', message: 1 };
  fp.batches[0].clusters = 'a';
  const r = read(fp);
  assert.is(r.fleetPlan, null);
  const paths = r.diagnostics.map((d) => d.path);
  for (const p of ['summary.nodes', 'clusters[1].plan.pools[0].nodes', 'clusters[0].error.code', 'clusters[0].error.message', 'batches[0].clusters'])
    assert.ok(paths.includes(p), `${p} in ${paths.join(', ')}`);
  for (const d of r.diagnostics) {
    assert.is(d.file, 'fp.json');
    assert.ok(d.line! > 1, d.path!);
    assert.ok(d.hint);
  }
});

s('fleet plan file: batches and clusters must agree (names known and once, batch numbers, cluster plans for that cluster)', () => {
  const cases: [(fp: any) => void, RegExp][] = [
    [(fp) => fp.batches[1].clusters.push('ghost'), /names "ghost", which is not a cluster/],
    [(fp) => fp.batches[1].clusters.push('a'), /cluster "a" is in batches 1 and 2/],
    [
      (fp) => {
        fp.batches[0].index = 7;
      },
      /batch 1 says it is batch 7/,
    ],
    [
      (fp) => {
        fp.clusters[1].batch = 1;
      },
      /cluster "b" says batch 1, the batches say 2/,
    ],
    [
      (fp) => {
        fp.clusters[1].plan.spec.fleetCluster = 'a';
      },
      /the plan of cluster "b" was made for cluster "a"/,
    ],
    [
      (fp) => {
        fp.clusters[1].name = 'a';
      },
      /cluster "a" is listed twice/,
    ],
    [
      (fp) => {
        fp.batches[0].clusters = ['a', 'b'];
        fp.batches.pop();
      },
      /a canary batch holds exactly one cluster/,
    ],
  ];
  for (const [edit, message] of cases) {
    const fp = saved();
    edit(fp);
    const r = read(fp);
    assert.is(r.fleetPlan, null, String(message));
    assert.ok(
      r.diagnostics.some((d) => d.code === 'fleet-plan-inconsistent' && message.test(d.message)),
      `${message}: ${JSON.stringify(r.diagnostics.map((d) => d.message))}`,
    );
  }
});

s('fleet plan text: hostile strings are shown escaped', () => {
  const fp = saved();
  fp.clusters[0].name = 'a\u001b[31m\u202e';
  const text = renderFleetText(fp);
  assert.not.match(text, /\u001b\[31m/);
  assert.not.match(text, /\u202e/);
});

s('fleet plan file: an overriddenBy of the wrong shape is a diagnostic; a fleet plan without it (older) still reads', () => {
  const fp = saved();
  fp.clusters[0].overriddenBy = [{ field: 'pools.worker.image', shared: { x: 1 }, value: 'a', by: { path: 'p', selector: null } }];
  assert.equal(
    read(fp).diagnostics.map((d) => [d.code, d.path]),
    [['wrong-type', 'clusters[0].overriddenBy[0].shared']],
  );
  fp.clusters[0].overriddenBy = 'all fine';
  assert.equal(
    read(fp).diagnostics.map((d) => [d.code, d.path]),
    [['wrong-type', 'clusters[0].overriddenBy']],
  );
  const old = saved();
  for (const c of old.clusters) delete c.overriddenBy;
  assert.ok(read(old).fleetPlan);
});

s.run();
