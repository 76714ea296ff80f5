import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { ClusterBuilder, nodes } from '../support/cluster.ts';

const s = suite('snapshot reader');

s('the example: a List in YAML with every kind the planner reads', () => {
  const r = parseSnapshot(readFileSync('examples/cluster.yaml', 'utf8'), 'examples/cluster.yaml');
  assert.equal(r.diagnostics, []);
  const snap = r.snapshot!;
  assert.is(snap.nodes.length, 15);
  assert.is(snap.bootcNodes.length, 12);
  assert.equal(
    snap.bootcNodePools.map((p) => p.metadata.name),
    ['infra', 'worker'],
  );
  assert.equal(
    snap.machineConfigPools.map((p) => p.metadata.name),
    ['infra', 'master', 'worker'],
  );
  for (const k of ['machineConfiguration', 'controlPlaneMachineSet', 'bootImagesConfigMap', 'featureGate', 'infrastructure', 'clusterVersion'] as const)
    assert.ok(snap[k], k);
  assert.match(snap.fingerprint, /^sha256:[0-9a-f]{64}$/);
});

s('JSON List, multi-document YAML and single objects give the same snapshot', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3));
  const json = parseSnapshot(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: b.objects }), 'c.json').snapshot!;
  const yamlList = parseSnapshot(b.yaml(), 'c.yaml').snapshot!;
  const { stringify } = require_yaml();
  const multi = parseSnapshot(b.objects.map((o) => stringify(o)).join('---\n'), 'c.yaml').snapshot!;
  assert.is(json.fingerprint, yamlList.fingerprint);
  assert.is(json.fingerprint, multi.fingerprint);
  assert.is(multi.nodes.length, 3);
});

s('unknown kinds are ignored; missing kinds mean not installed', () => {
  const r = parseSnapshot(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'x' } },
        { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
      ],
    }),
    'c.json',
  );
  assert.equal(r.diagnostics, []);
  assert.is(r.snapshot!.nodes.length, 0);
  assert.is(r.snapshot!.bootcNodePools.length, 0);
  assert.is(r.snapshot!.machineConfiguration, null);
});

s('volatile fields (resourceVersion, heartbeats) do not change the fingerprint; real changes do', () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 2));
  const base = parseSnapshot(JSON.stringify({ kind: 'List', apiVersion: 'v1', items: b.objects }), 'a').snapshot!.fingerprint;
  const noisy = structuredClone(b.objects);
  noisy.forEach((o, i) => (o.metadata.resourceVersion = String(1000 + i)));
  assert.is(parseSnapshot(JSON.stringify({ kind: 'List', apiVersion: 'v1', items: noisy }), 'a').snapshot!.fingerprint, base);
  const changed = structuredClone(b.objects);
  changed.find((o) => o.kind === 'Node')!.spec!.unschedulable = true;
  assert.is.not(parseSnapshot(JSON.stringify({ kind: 'List', apiVersion: 'v1', items: changed }), 'a').snapshot!.fingerprint, base);
});

s("a BootcNode's booted entry turning incompatible (rpm-ostree layering) changes the fingerprint; a wrong type is a shape problem", () => {
  const b = new ClusterBuilder().bootcPool('worker', nodes('w', 2));
  const fp = (items: unknown[]) => parseSnapshot(JSON.stringify({ kind: 'List', apiVersion: 'v1', items }), 'a').snapshot!.fingerprint;
  const base = fp(b.objects);
  const layered = structuredClone(b.objects);
  const bn = layered.find((o) => o.kind === 'BootcNode')! as any;
  bn.status.booted.incompatible = true;
  assert.is.not(fp(layered), base);
  bn.status.booted.incompatible = 'yes';
  const bad = parseSnapshot(JSON.stringify({ kind: 'List', apiVersion: 'v1', items: layered }), 'a');
  assert.ok(
    bad.diagnostics.some((d) => /incompatible/.test(d.path ?? '') || /incompatible/.test(d.message)),
    JSON.stringify(bad.diagnostics),
  );
});

s('bad snapshots: JSON syntax with line:column, objects without kind or name, binary', () => {
  const j = parseSnapshot('{\n  "kind": "List",\n  "items": [ }\n', 'bad.json');
  assert.is(j.snapshot, null);
  assert.is(j.diagnostics[0].code, 'json-syntax');
  assert.is(j.diagnostics[0].line, 3);
  const y = parseSnapshot(
    'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Node\n    metadata: {}\n  - kind: Node\n    metadata: {name: n}\n',
    'bad.yaml',
  );
  assert.is(y.snapshot, null);
  assert.equal(
    y.diagnostics.map((d) => [d.code, d.line, d.path]),
    [
      ['snapshot-invalid', 4, 'items[0]'],
      ['snapshot-invalid', 7, 'items[1]'],
    ],
  );
  assert.match(y.diagnostics[1].message, /apiVersion/);
  assert.is(parseSnapshot('\u0000\u0000', 'x').diagnostics[0].code, 'not-text');
  assert.is(parseSnapshot('- 1\n- 2\n', 'x').diagnostics[0].code, 'snapshot-invalid');
  assert.is(parseSnapshot('a: [\n', 'x').diagnostics[0].code, 'yaml-syntax');
});

import * as yamlLib from 'yaml';
function require_yaml() {
  return yamlLib;
}

s.run();
