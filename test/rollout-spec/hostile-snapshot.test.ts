/**
 * Snapshot files and specs are input (issue "Sealed plans and hostile input"): an alias bomb,
 * absurd nesting or an empty file ends in a clean, positioned error, within a small heap.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { ClusterBuilder, nodes } from '../support/cluster.ts';
import { ensureBuilt } from '../support/built.ts';

const s = suite('hostile snapshots and specs');

/** "Billion laughs" inside a Node's labels: each level references the one before ten times. */
function aliasBomb(levels: number, width = 10, pad = 0): string {
  const lines = ['apiVersion: v1', 'kind: List', 'items:', '- apiVersion: v1', '  kind: Node', '  metadata:', '    name: n1', '    labels:'];
  if (pad) lines.push(`      padding: "${'x'.repeat(pad)}"`);
  lines.push(`      a0: &a0 [${Array(width).fill('lol').join(',')}]`);
  for (let i = 1; i < levels; i++)
    lines.push(
      `      a${i}: &a${i} [${Array(width)
        .fill(`*a${i - 1}`)
        .join(',')}]`,
    );
  return lines.join('\n') + '\n';
}

const nodeWith = (labels: string) => `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":${labels}}}]}`;

s('an alias bomb is refused with the position of the first alias, not expanded', () => {
  const r = parseSnapshot(aliasBomb(9), 'bomb.yaml');
  assert.is(r.snapshot, null);
  assert.is(r.diagnostics.length, 1);
  const d = r.diagnostics[0];
  assert.is(d.code, 'yaml-alias-expansion');
  assert.is(d.file, 'bomb.yaml');
  assert.is(d.line, 10); // a1: &a1 [*a0, ...]
  assert.is(d.column, 16);
  assert.match(d.message, /aliases/);
  assert.ok(d.hint);
});

s('a few ordinary anchors and aliases are still read', () => {
  const text =
    'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n    labels: &l {zone: a}\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n2\n    labels: *l\n';
  const r = parseSnapshot(text, 'anchors.yaml');
  assert.equal(r.diagnostics, []);
  assert.equal(
    r.snapshot!.nodes.map((n) => n.metadata.labels),
    [{ zone: 'a' }, { zone: 'a' }],
  );
});

s('nesting deeper than any Kubernetes object is refused with a position (JSON and YAML, flow and block)', () => {
  const deepJson = parseSnapshot(nodeWith('['.repeat(200_000) + ']'.repeat(200_000)), 'deep.json');
  assert.is(deepJson.snapshot, null);
  assert.is(deepJson.diagnostics[0].code, 'snapshot-too-deep');
  assert.is(deepJson.diagnostics[0].line, 1);
  // Four levels ({ [ { {) lead to the labels; the 97th "[" of the labels is the 101st level.
  assert.is(deepJson.diagnostics[0].column, nodeWith('').length - 4 + 97);

  const deepFlow = parseSnapshot(
    'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n\n    x: ' + '['.repeat(50_000) + ']'.repeat(50_000) + '\n',
    'deep.yaml',
  );
  assert.is(deepFlow.diagnostics[0].code, 'snapshot-too-deep');
  assert.is(deepFlow.diagnostics[0].line, 8);

  const deepBlock = parseSnapshot('apiVersion: v1\nkind: List\nitems:\n- ' + '- '.repeat(30_000) + 'x\n', 'block.yaml');
  assert.is(deepBlock.snapshot, null);
  assert.is(deepBlock.diagnostics[0].code, 'snapshot-too-deep');

  // Deep but legal: 60 levels parse (managedFields of real objects nest about 15 deep).
  const ok = parseSnapshot(nodeWith(`{"a":${'['.repeat(55)}${']'.repeat(55)}}`), 'ok.json');
  assert.equal(ok.diagnostics, []);
});

s('an empty snapshot is "snapshot is empty", not an empty cluster', () => {
  for (const [text, file] of [
    ['', 'e.yaml'],
    ['\n# nothing here\n', 'c.yaml'],
    ['---\n---\n', 'd.yaml'],
    ['{"apiVersion":"v1","kind":"List","items":[]}', 'l.json'],
    ['apiVersion: v1\nkind: List\nitems: []\n', 'l.yaml'],
  ]) {
    const r = parseSnapshot(text, file);
    assert.is(r.snapshot, null, file);
    assert.is(r.diagnostics[0].code, 'snapshot-empty', file);
    assert.match(r.diagnostics[0].message, /snapshot is empty/);
    assert.is(r.diagnostics[0].file, file);
  }
  // A snapshot of a cluster with objects bootcplan does not read is not empty.
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 1));
  assert.ok(parseSnapshot(b.yaml(), 'c.yaml').snapshot);
});

s('a spec alias bomb and a deeply nested spec are clean errors', () => {
  const bomb = ['apiVersion: bootcplan.dev/v1alpha1', 'kind: Rollout', 'metadata:', '  name: x', 'x0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol,lol]'];
  for (let i = 1; i < 9; i++)
    bomb.push(
      `x${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(',')}]`,
    );
  const r = parseRolloutSpec(bomb.join('\n') + '\n', 'bootcplan.yaml');
  assert.is(r.spec, null);
  assert.ok(
    r.diagnostics.some((d) => d.code === 'yaml-alias-expansion' && d.line !== null),
    JSON.stringify(r.diagnostics[0]),
  );
  const deep = parseRolloutSpec(
    'apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: ' + '['.repeat(20_000) + ']'.repeat(20_000) + '\n',
    'bootcplan.yaml',
  );
  assert.is(deep.spec, null);
  assert.is(deep.diagnostics[0].code, 'yaml-too-deep');
  assert.is(deep.diagnostics[0].line, 4);
});

s('the CLI refuses a 63 KB alias bomb with a 300 MB heap: exit 1, positioned error, no "internal error"', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bootcplan-bomb-'));
  const file = join(dir, 'bomb.yaml');
  const text = aliasBomb(12, 10, 62_000);
  assert.ok(text.length > 62_000 && text.length < 64_000);
  writeFileSync(file, text);
  let out = '';
  let code = 0;
  try {
    execFileSync(process.execPath, ['--max-old-space-size=300', ensureBuilt(), 'plan', '-f', 'examples/rollout.yaml', '--cluster', file], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
  } catch (err) {
    const e = err as { status: number; stderr: string; signal: string | null };
    assert.is(e.signal, null, 'killed by the timeout');
    code = e.status;
    out = e.stderr;
  }
  assert.is(code, 1);
  assert.match(out, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:11:16`));
  assert.match(out, /aliases/);
  assert.not.match(out, /internal error|at .*\.ts:\d+/);
});

s.run();
