/**
 * Fuzzing the readers of untrusted text (issue "Sealed plans and hostile input"): whatever
 * the bytes, the spec loader and the snapshot reader return a result or clean diagnostics
 * that name the file and say where; they never throw.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { parseRolloutSpec } from '../src/spec/load.ts';
import { parseSnapshot } from '../src/cluster/snapshot.ts';
import type { Diagnostic } from '../src/base/diagnostics.ts';

const s = suite('fuzzing the input readers');
const SPEC = readFileSync('examples/rollout.yaml', 'utf8');
const SNAPSHOT = readFileSync('examples/cluster.yaml', 'utf8');
/** CI runs a fixed seed; `FUZZ_RUNS=20000 npx tsx test/run.ts test/fuzz-input.test.ts` explores with fresh seeds. */
const runs = (n: number) => (process.env.FUZZ_RUNS ? { numRuns: Number(process.env.FUZZ_RUNS) } : { numRuns: n, seed: 20261203 });

/** A diagnostic a user can act on: it names the file, says where, what and what was expected. */
function assertClean(ds: readonly Diagnostic[], file: string, text: string) {
  for (const d of ds) {
    const where = `${JSON.stringify(d)}\n--- input ---\n${text.slice(0, 400)}`;
    assert.ok(d.severity === 'error' || d.severity === 'warning', where);
    assert.match(d.code, /^[a-z0-9]+(-[a-z0-9]+)*$/, where);
    assert.ok(d.message && !/\n\s+at /.test(d.message), where);
    assert.is(d.file, file, where);
    assert.ok(d.line !== null || d.path !== null, `no position: ${where}`);
    if (d.line !== null) assert.ok(d.line >= 1 && d.column !== null && d.column >= 1, where);
  }
}

/** Text edits: insert, delete or replace a short run at a random place, a few times over. */
const edited = (base: string) =>
  fc.array(
    fc.record({
      at: fc.nat({ max: base.length }),
      cut: fc.nat({ max: 12 }),
      insert: fc.oneof(
        fc.string({ maxLength: 8 }),
        fc.constantFrom('&a ', '*a', '[', ']', '{', '}', ': ', '\n  ', '- ', '"', "'", '#', '\t', '\u0000', '%', '!!', '<<: *a', '---\n', '\ufeff', '\u202e'),
      ),
    }),
    { minLength: 1, maxLength: 5 },
  ).map((edits) => edits.reduce((t, e) => t.slice(0, Math.min(e.at, t.length)) + e.insert + t.slice(Math.min(e.at, t.length) + e.cut), base));

/** Any JSON-able value written as YAML or JSON, with or without the right top-level keys. */
const structured = fc.tuple(fc.jsonValue({ maxDepth: 6 }), fc.boolean(), fc.boolean()).map(([v, json, wrap]) => {
  const value = wrap ? { apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 'x' }, spec: v } : v;
  return json ? JSON.stringify(value) : stringify(value);
});

s('spec loader: edited examples, random structures and raw strings never throw', () => {
  fc.assert(
    fc.property(fc.oneof(edited(SPEC), structured, fc.string({ maxLength: 200 })), (text) => {
      const r = parseRolloutSpec(text, 'fuzz.yaml');
      assertClean(r.diagnostics, 'fuzz.yaml', text);
      assert.is(r.spec === null, r.diagnostics.some((d) => d.severity === 'error'), text.slice(0, 200));
    }),
    runs(400),
  );
});

s('snapshot reader: edited examples, random structures and raw strings never throw', () => {
  const kubeish = fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [v, { apiVersion: 'v1', kind: 'Node', metadata: v }] }));
  fc.assert(
    fc.property(fc.oneof(edited(SNAPSHOT), structured, kubeish, fc.string({ maxLength: 200 })), (text) => {
      const r = parseSnapshot(text, 'fuzz.yaml');
      assertClean(r.diagnostics, 'fuzz.yaml', text);
      assert.is(r.snapshot === null, r.diagnostics.length > 0, text.slice(0, 200));
    }),
    runs(250),
  );
});

s.run();
