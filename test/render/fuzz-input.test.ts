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
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { parsePlanFile } from '../../src/plan/saved/reader.ts';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';
import { seeded } from '../support/seeds.ts';

const s = suite('fuzzing the input readers');
const SPEC = readFileSync('examples/rollout.yaml', 'utf8');
const SNAPSHOT = readFileSync('examples/cluster.yaml', 'utf8');
// CI runs a fixed seed; `FC_SEED=fresh FC_RUNS=20000 npx tsx test/run.ts test/render/fuzz-input.test.ts`
// explores (test/support/seeds.ts).

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
    if (d.severity === 'error') assert.ok(d.expected || d.hint, `says neither what was expected nor what to do: ${where}`);
  }
}

/** Text edits: insert, delete or replace a short run at a random place, a few times over. */
const edited = (base: string) =>
  fc
    .array(
      fc.record({
        at: fc.nat({ max: base.length }),
        cut: fc.nat({ max: 12 }),
        insert: fc.oneof(
          fc.string({ maxLength: 8 }),
          fc.constantFrom('&a ', '*a', '[', ']', '{', '}', ': ', '\n  ', '- ', '"', "'", '#', '\t', '\u0000', '%', '!!', '<<: *a', '---\n', '\ufeff', '\u202e'),
        ),
      }),
      { minLength: 1, maxLength: 5 },
    )
    .map((edits) => edits.reduce((t, e) => t.slice(0, Math.min(e.at, t.length)) + e.insert + t.slice(Math.min(e.at, t.length) + e.cut), base));

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
      assert.is(
        r.spec === null,
        r.diagnostics.some((d) => d.severity === 'error'),
        text.slice(0, 200),
      );
    }),
    seeded(20261203, 400),
  );
});

s('snapshot reader: edited examples, random structures and raw strings never throw', () => {
  const kubeish = fc
    .jsonValue({ maxDepth: 5 })
    .map((v) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [v, { apiVersion: 'v1', kind: 'Node', metadata: v }] }));
  fc.assert(
    fc.property(fc.oneof(edited(SNAPSHOT), structured, kubeish, fc.string({ maxLength: 200 })), (text) => {
      const r = parseSnapshot(text, 'fuzz.yaml');
      assertClean(r.diagnostics, 'fuzz.yaml', text);
      assert.is(r.snapshot === null, r.diagnostics.length > 0, text.slice(0, 200));
    }),
    seeded(20261203, 250),
  );
});

const PLAN = readFileSync('plans/demo.json', 'utf8');

/** Every path (as keys) of a JSON value, to replace one value somewhere in a plan. */
function pathsOf(v: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...prefix, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) pathsOf(x, [...prefix, k], out);
  return out;
}

/** The demo plan with one to three values replaced by anything JSON can hold, or a key dropped. */
const mutatedPlan = (() => {
  const base = JSON.parse(PLAN);
  const paths = pathsOf(base).filter((p) => p.length > 0);
  const edit = fc.record({
    at: fc.nat({ max: paths.length - 1 }),
    drop: fc.boolean(),
    value: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom('<base href=//evil>', '\u001b[2J', '@everyone', -1, 1e308, '', [], {}, null)),
  });
  return fc.array(edit, { minLength: 1, maxLength: 3 }).map((edits) => {
    const plan = JSON.parse(PLAN);
    for (const e of edits) {
      const path = paths[e.at];
      let parent: any = plan;
      for (const k of path.slice(0, -1)) parent = parent?.[k];
      if (parent === null || typeof parent !== 'object') continue;
      const last = path[path.length - 1];
      if (e.drop && !Array.isArray(parent)) delete parent[last];
      else parent[last] = e.value;
    }
    return JSON.stringify(plan, null, 1);
  });
})();

s('plan-file reader: altered plans, edited text and random structures end in a plan every renderer can render, or clean diagnostics', () => {
  fc.assert(
    fc.property(fc.oneof(mutatedPlan, edited(PLAN), structured, fc.string({ maxLength: 200 })), (text) => {
      const r = parsePlanFile(text, 'fuzz.json');
      assertClean(r.diagnostics, 'fuzz.json', text);
      assert.is(r.plan === null, r.diagnostics.length > 0, text.slice(0, 200));
      if (r.plan) {
        renderText(r.plan, { color: false, ascii: true });
        renderMarkdown(r.plan, {});
        renderHtml(r.plan, {});
      }
    }),
    seeded(20261203, 300),
  );
});

s.run();
