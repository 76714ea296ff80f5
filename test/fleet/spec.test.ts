/**
 * The Fleet spec (docs/fleets.md "The Fleet spec"): every error at once with file:line:column, expected and hint, as
 * the Rollout spec; each cluster's effective spec (shared spec, label overrides in file order,
 * the cluster's own overrides) validated as a Rollout spec, positions in the Fleet file.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseFleetSpec, effectiveSpecs } from '../../src/fleet/spec-load.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';
import { NEW } from '../support/cluster.ts';

const s = suite('fleet spec');
const OTHER = NEW.replace(/@sha256:.*/, '@sha256:' + 'b'.repeat(64));

const HEAD = `apiVersion: bootcplan.dev/v1alpha1
kind: Fleet
metadata:
  name: edge
spec:
  rollout:
    pools:
      - name: worker
        image: ${NEW}
        maxUnavailable: 1
    maintenanceWindows:
      - schedule: "0 22 * * *"
        duration: 4h
`;
const CLUSTERS = `  clusters:
    - name: east
      snapshot: east.yaml
      labels: {region: us, tier: prod}
    - name: west
      context: west-admin
      labels: {region: eu}
`;

const errs = (text: string): Diagnostic[] => parseFleetSpec(text, 'fleet.yaml').diagnostics.filter((d) => d.severity === 'error');
const at = (d: Diagnostic) => [d.code, d.path, d.line, d.column];

s('a valid Fleet loads, with no diagnostics', () => {
  const r = parseFleetSpec(HEAD + CLUSTERS + '  strategy:\n    canaries: [east]\n    maxConcurrency: "50%"\n', 'fleet.yaml');
  assert.equal(r.diagnostics, []);
  assert.is(r.fleet?.spec.clusters.length, 2);
});

s('every error at once, each with file:line:column, expected and hint', () => {
  const text =
    HEAD +
    `  clusters:
    - name: east
      snapshot: east.yaml
      context: east-admin
    - name: east
      snapshot: east2.yaml
    - name: north
      snapshots: n.yaml
  strategy:
    canaries: [esat]
    maxConcurrency: 0
    batchTimeoutAction: Abort
`;
  const ds = errs(text);
  const got = ds.map(at);
  assert.ok(
    got.some((g) => g[0] === 'cluster-source' && g[1] === 'spec.clusters[0].snapshot' && g[2] === 16),
    JSON.stringify(got),
  );
  assert.ok(
    got.some((g) => g[0] === 'duplicate-cluster' && g[1] === 'spec.clusters[1].name' && g[2] === 18 && g[3] === 13),
    JSON.stringify(got),
  );
  assert.ok(got.some((g) => g[0] === 'unknown-field' && g[1] === 'spec.clusters[2].snapshots' && g[2] === 21 && g[3] === 7));
  assert.ok(got.some((g) => g[0] === 'cluster-source' && g[1] === 'spec.clusters[2].name'));
  const canary = ds.find((d) => d.code === 'unknown-canary')!;
  assert.equal(at(canary), ['unknown-canary', 'spec.strategy.canaries[0]', 23, 16]);
  assert.is(canary.file, 'fleet.yaml');
  assert.ok(canary.expected && canary.hint);
  const zero = ds.find((d) => d.code === 'max-concurrency-zero')!;
  assert.equal([zero.line, zero.column], [24, 21]);
  assert.match(zero.hint!, /1/);
  assert.is(ds.find((d) => d.code === 'invalid-enum')?.hint, 'did you mean "abort"? (values are case-sensitive)');
  const unknown = ds.find((d) => d.code === 'unknown-field')!;
  assert.is(unknown.hint, 'did you mean "snapshot"?');
});

s('maxConcurrency is read like maxUnavailable: counts and "N%", nothing else', () => {
  const mc = (v: string) => errs(HEAD + CLUSTERS + `  strategy:\n    maxConcurrency: ${v}\n`).map((d) => d.code);
  for (const ok of ['1', '3', '"25%"', '"100%"', '2147483647']) assert.equal(mc(ok), [], ok);
  assert.equal(mc('"0%"'), ['max-concurrency-zero']);
  for (const bad of ['"3"', '1.5', '-1', '"101%"', '"ten"', '2147483648', 'true']) assert.equal(mc(bad), ['max-concurrency-invalid'], bad);
});

s('an override naming a pool that is not a shared pool is an error at its name', () => {
  const text =
    HEAD +
    CLUSTERS.replace(
      '      labels: {region: eu}\n',
      '      labels: {region: eu}\n      overrides:\n        pools:\n          - name: wrker\n            maxUnavailable: 2\n',
    ) +
    '  overrides:\n    - clusterSelector: {matchLabels: {region: us}}\n      pools:\n        - {name: infra, paused: true}\n';
  const ds = errs(text).filter((d) => d.code === 'unknown-pool-override');
  assert.equal(
    ds.map((d) => [d.path, d.line]),
    [
      ['spec.clusters[1].overrides.pools[0].name', 23],
      ['spec.overrides[0].pools[0].name', 28],
    ],
  );
  assert.match(ds[0].expected!, /worker/);
});

s('a Rollout spec given as a Fleet says so', () => {
  const ds = errs('apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata: {name: x}\nspec: {pools: []}\n');
  assert.ok(ds.some((d) => d.code === 'not-a-fleet' && /Rollout spec, not a Fleet/.test(d.message)));
});

s('effective spec: shared, then label overrides in file order, then the cluster; windows replaced, time zone filled', () => {
  const text =
    HEAD +
    `  clusters:
    - name: east
      snapshot: east.yaml
      labels: {region: us, tier: prod}
      overrides:
        pools:
          - {name: worker, maxUnavailable: 5}
    - name: west
      snapshot: west.yaml
      labels: {region: eu}
  overrides:
    - clusterSelector: {matchLabels: {region: us}}
      timezone: America/New_York
      pools:
        - {name: worker, maxUnavailable: 2, image: "${OTHER}"}
    - clusterSelector: {matchExpressions: [{key: tier, operator: In, values: [prod]}]}
      maintenanceWindows:
        - {schedule: "0 2 * * 6", duration: 6h}
      pools:
        - {name: worker, maxUnavailable: 3}
`;
  const r = parseFleetSpec(text, 'fleet.yaml');
  assert.equal(r.diagnostics, []);
  const [east, west] = effectiveSpecs(r.fleet!, r.map);
  assert.equal(east.spec.spec.pools, [{ name: 'worker', image: OTHER, maxUnavailable: 5 }]);
  assert.equal(east.spec.spec.maintenanceWindows, [{ schedule: '0 2 * * 6', duration: '6h', timezone: 'America/New_York' }]);
  assert.equal(west.spec.spec.pools, [{ name: 'worker', image: NEW, maxUnavailable: 1 }]);
  assert.equal(west.spec.spec.maintenanceWindows, [{ schedule: '0 22 * * *', duration: '4h' }]);
  assert.is(east.spec.kind, 'Rollout');
  // Positions: each field points at the line of the Fleet file it came from.
  assert.equal(east.map.values['spec.pools[0].maxUnavailable'], { line: 20, column: 44 });
  assert.equal(east.map.values['spec.pools[0].image']?.line, 28);
  assert.equal(east.map.values['spec.maintenanceWindows[0].timezone']?.line, 26);
  assert.equal(east.map.values['spec.maintenanceWindows[0].schedule']?.line, 31, 'the replaced windows point at the override');
  assert.equal(west.map.values['spec.maintenanceWindows[0].schedule']?.line, 12);
  assert.equal(west.map.values['spec.pools[0].maxUnavailable'], { line: 10, column: 25 });
  // The shared spec is not changed by planning one cluster.
  assert.equal(r.fleet!.spec.rollout.pools![0].maxUnavailable, 1);
});

s("an override that makes a cluster's spec invalid is an error at the override, naming the clusters", () => {
  const text =
    HEAD.replace('        maxUnavailable: 1\n', '        maxUnavailable: 1\n        soakSeconds: 60\n') +
    CLUSTERS +
    '  overrides:\n    - clusterSelector: {}\n      pools:\n        - {name: worker, rollout: slots}\n';
  const ds = errs(text);
  assert.is(ds.length, 1, JSON.stringify(ds));
  assert.is(ds[0].code, 'soak-with-slots');
  assert.is(ds[0].line, 11);
  assert.match(ds[0].message, /^clusters "east" and 1 more: soakSeconds 60/);
  const tz = errs(HEAD + CLUSTERS.replace('      labels: {region: eu}\n', '      labels: {region: eu}\n      overrides: {timezone: Mars/Olympus}\n'));
  assert.equal(
    tz.map((d) => [d.code, d.line]),
    [['timezone-invalid', 21]],
  );
});

s('a warning of the shared spec is reported once, not again for every cluster', () => {
  const text =
    HEAD.replace(
      '    maintenanceWindows:',
      '    managedBootImages:\n      machineManagers:\n        - {resource: machinesets, apiGroup: machine.openshift.io, selection: {mode: Partial, partial: {machineResourceSelector: {}}}}\n    maintenanceWindows:',
    ) + CLUSTERS;
  const ds = parseFleetSpec(text, 'fleet.yaml').diagnostics;
  assert.equal(
    ds.map((d) => [d.severity, d.code, d.path]),
    [['warning', 'selector-matches-everything', 'spec.rollout.managedBootImages.machineManagers[0].selection.partial.machineResourceSelector']],
  );
});

s.run();
