import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { diffValues, changeDiff, yamlDiff } from '../../src/render/diff.ts';
import { maskSecrets } from '../../src/base/secret-mask.ts';
import { foldNames, foldNumbers, groupNodes, describeGroup, formatDuration, toAscii } from '../../src/render/format.ts';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { planFileText } from '../../src/plan/saved/writer.ts';
import type { Plan, PlanChange } from '../../src/plan/types.ts';
import { demoPlan } from '../support/render.ts';

const s = suite('render-diff');

const wide = (n: number, changed: number[] = []) => ({
  spec: Object.fromEntries(Array.from({ length: n }, (_, i) => [`field${String(i).padStart(3, '0')}`, changed.includes(i) ? `new-${i}` : `value-${i}`])),
});

s('a little context and "# (N unchanged fields hidden)"', () => {
  const r = diffValues(wide(40), wide(40, [20]));
  const text = r.lines.map((l) => `${l.kind} ${l.text}`);
  assert.equal(text, [
    '  spec:',
    '#   # (19 unchanged fields hidden)',
    '    field019: value-19',
    '-   field020: value-20',
    '+   field020: new-20',
    '    field021: value-21',
    '#   # (18 unchanged fields hidden)',
  ]);
  assert.is(r.hiddenFields, 37);
  assert.is(r.gaveUp, false);
});

s('--full shows every field', () => {
  const r = diffValues(wide(40), wide(40, [20]), { full: true });
  assert.is(r.lines.length, 42);
  assert.is(r.hiddenFields, 0);
  assert.ok(!r.lines.some((l) => l.kind === '#'));
  assert.equal(yamlDiff(wide(3), wide(3, [1]), { full: true }).length, 5);
});

s('jsdiff gives up past maxEditLength: the diff says so and shows the JSON patch', () => {
  const before = { spec: { lines: Array.from({ length: 300 }, (_, i) => `old-${i}`) }, keep: 'x' };
  const after = { spec: { lines: Array.from({ length: 300 }, (_, i) => `new-${i}`) }, keep: 'x' };
  const change: PlanChange = {
    address: 'ConfigMap/ns/x',
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'ns',
    name: 'x',
    action: 'update',
    reason: 'pool-image',
    patch: [
      { op: 'test', path: '/spec/lines', value: before.spec.lines },
      { op: 'replace', path: '/spec/lines', value: after.spec.lines },
    ],
    before,
    after,
    risk: 'none',
    order: 1,
  };
  const r = changeDiff(change, { maxEditLength: 50 });
  assert.is(r.gaveUp, true);
  assert.match(r.lines[0].text, /diff gave up: more than 50 lines differ \(jsdiff maxEditLength\); the JSON patch instead/);
  assert.is(r.lines[1].kind, '-');
  assert.match(r.lines[1].text, /^\/spec\/lines: \["old-0"/);
  assert.is(r.lines[2].kind, '+');
  assert.match(r.lines[2].text, /^\/spec\/lines: \["new-0"/);
  // The same change under the default cap diffs normally.
  assert.is(changeDiff(change).gaveUp, false);
  // Long values are cut in the middle.
  assert.ok(r.lines.every((l) => l.text.length < 500));
});

s('secrets are masked everywhere while a change stays visible', () => {
  const plan = structuredClone(demoPlan()) as Plan;
  const OLD = 'eyJhdXRocyI6eyJxdWF5LmlvIjp7ImF1dGgiOiJPTERTRUNSRVQifX19';
  const NEW = 'eyJhdXRocyI6eyJxdWF5LmlvIjp7ImF1dGgiOiJORVdTRUNSRVQifX19';
  plan.changes.push({
    address: 'Secret/openshift-config/pull-secret',
    apiVersion: 'v1',
    kind: 'Secret',
    namespace: 'openshift-config',
    name: 'pull-secret',
    action: 'update',
    reason: 'pool-image',
    risk: 'none',
    order: 99,
    patch: [
      { op: 'test', path: '/data/.dockerconfigjson', value: OLD },
      { op: 'replace', path: '/data/.dockerconfigjson', value: NEW },
    ],
    before: { data: { '.dockerconfigjson': OLD }, stringData: { token: 'OLDTOKEN' } },
    after: { data: { '.dockerconfigjson': NEW }, stringData: { token: 'NEWTOKEN' } },
  });
  plan.changes.push({
    address: 'BootcNodePool/worker2',
    apiVersion: 'node.bootc.dev/v1alpha1',
    kind: 'BootcNodePool',
    namespace: null,
    name: 'worker2',
    action: 'update',
    reason: 'pool-image',
    risk: 'none',
    order: 100,
    patch: [
      { op: 'test', path: '/spec/pullSecretHash', value: 'HASHOLD' },
      { op: 'replace', path: '/spec/pullSecretHash', value: 'HASHNEW' },
    ],
    before: { spec: { pullSecretHash: 'HASHOLD' } },
    after: { spec: { pullSecretHash: 'HASHNEW' } },
  });
  const outputs = {
    text: renderText(plan),
    markdown: renderMarkdown(plan),
    html: renderHtml(plan),
    json: planFileText(plan),
    full: renderText(plan, { full: true }),
  };
  for (const [name, out] of Object.entries(outputs)) {
    for (const secret of [OLD, NEW, 'OLDTOKEN', 'NEWTOKEN', 'HASHOLD', 'HASHNEW', 'T0xEU0VDUkVU']) {
      assert.not.ok(out.includes(secret), `${name} leaks ${secret}`);
    }
    assert.match(out, /sensitive value, sha256 [0-9a-f]{8}/, name);
  }
  const lines = outputs.text.split('\n');
  const minus = lines.find((l) => /^\s+- +\.dockerconfigjson: /.test(l));
  const plus = lines.find((l) => /^\s+\+ +\.dockerconfigjson: /.test(l));
  assert.ok(minus && plus, 'the pull-secret change shows as - and + lines');
  assert.is.not(minus!.replace('-', ''), plus!.replace('+', ''), 'old and new fingerprints differ');
  // The JSON patch is masked by path too.
  const json = JSON.parse(outputs.json) as Plan;
  const ops = json.changes.find((c) => c.kind === 'Secret')!.patch as { value?: unknown }[];
  assert.ok(ops.every((o) => typeof o.value === 'string' && (o.value as string).startsWith('(sensitive value')));
});

s('maskSecrets: Secret objects, nested stringData, patch paths through sensitive keys', () => {
  const m = maskSecrets({
    kind: 'Secret',
    data: { a: 'x' },
    stringData: { b: 'y' },
    metadata: { name: 'n' },
    ops: [
      { op: 'add', path: '/spec/pullSecretHash', value: 'h' },
      { op: 'add', path: '/spec/other', value: 'ok' },
    ],
  }) as any;
  assert.match(m.data.a, /^\(sensitive value/);
  assert.match(m.stringData.b, /^\(sensitive value/);
  assert.is(m.metadata.name, 'n');
  assert.match(m.ops[0].value, /^\(sensitive value/);
  assert.is(m.ops[1].value, 'ok');
});

s('node groups: identical changes grouped, names and waves folded', () => {
  const A = 'sha256:' + 'a'.repeat(64);
  const B = 'sha256:' + 'b'.repeat(64);
  const nodes = Array.from({ length: 9 }, (_, i) => ({
    name: `w-${i + 1}`,
    from: A,
    to: B,
    reboot: 'soft',
    wave: Math.floor(i / 3) + 1 + (i === 8 ? 1 : 0),
    staged: true,
    blockedBy: null,
  }));
  nodes.push({ name: 'w-10', from: A, to: B, reboot: 'hard', wave: 1, staged: true, blockedBy: null });
  const groups = groupNodes('worker', nodes);
  assert.is(groups.length, 2);
  assert.is(describeGroup(groups[0]), '9 nodes in worker: sha256:aaaaaaaa… -> sha256:bbbbbbbb…, soft reboot, staged, waves 1-4');
  assert.is(foldNames(groups[0].names), 'w-1..w-9');
  assert.is(foldNames(['w-1', 'w-2', 'w-4', 'x', 'w-6', 'w-7', 'w-8']), 'w-1, w-2, w-4, x, w-6..w-8');
  assert.is(foldNumbers([5, 1, 2, 3, 7, 8]), '1-3, 5, 7-8');
  assert.is(toAscii(describeGroup(groups[1])), '1 node in worker: sha256:aaaaaaaa... -> sha256:bbbbbbbb..., hard reboot, staged, wave 1');
});

s('durations: hours below two days, then days', () => {
  assert.is(formatDuration(5400), '1h30m');
  assert.is(formatDuration(90), '1m30s');
  assert.is(formatDuration(0), '0s');
  assert.is(formatDuration(30 * 3600), '30h');
  assert.is(formatDuration(2 * 86400 + 3 * 3600 + 60), '2d3h1m');
});

s.run();
