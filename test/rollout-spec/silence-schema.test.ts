/**
 * spec.silences and a pool's (docs/spec.md "Silences"): the templates checked as Alertmanager reads
 * matchers, with file:line:column at the character where they go wrong; the endpoint rules of the
 * health checks; the TTL bounds; matchers required unless the section is off; the planner's
 * defaults (OpenShift's alertmanager-main) and a pool's section replacing the Rollout's whole.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';
import { ClusterBuilder, nodes, NEW, planFor } from '../support/cluster.ts';
import { stringify } from 'yaml';
import { parseFleetSpec, effectiveSpecs } from '../../src/fleet/spec-load.ts';
import { overriddenFields } from '../../src/fleet/effective-spec.ts';

const s = suite('silence schema');
const D = 'quay.io/example/os@sha256:' + 'a'.repeat(64);
const HEAD = 'apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: prod\nspec:\n';
const POOL = `  pools:\n    - name: worker\n      image: ${D}\n`;
const errs = (section: string) => parseRolloutSpec(HEAD + '  silences:\n' + section + POOL, 's.yaml').diagnostics.filter((d) => d.severity === 'error');
const codes = (ds: Diagnostic[]) => ds.map((d) => d.code);

s('a section with templates loads without a finding', () => {
  assert.equal(
    errs(`    alertmanager: {url: 'https://am.example:9094'}\n    matchers: ['node="{node}"', 'instance=~"{node}(:.*)?"']\n    ttlMinutes: 5\n`),
    [],
  );
});

s('each bad template is an error at its character, with the rule and a hint', () => {
  const cases: [string, RegExp, number][] = [
    [`'node!="{node}"'`, /!= alone matches the empty string/, 4],
    [`'severity="critical"'`, /does not name \{node\}/, 9],
    [`'node="{host}"'`, /unknown placeholder \{host\}/, 6],
    [`'node=~"({node}"'`, /not an RE2/, 7],
  ];
  for (const [t, msg, offset] of cases) {
    const ds = errs(`    alertmanager: {url: 'https://am.example:9094'}\n    matchers: [${t}]\n`);
    assert.equal(codes(ds), ['silence-matcher-invalid'], t);
    assert.match(ds[0].message, msg, t);
    assert.is(ds[0].line, 8, t);
    // The column is the template's first character (after the quote) plus the offset.
    assert.is(ds[0].column, '    matchers: ['.length + 2 + offset, t);
    assert.ok(ds[0].hint, t);
  }
});

s('the endpoint rules of the health checks; TTL bounds; matchers required unless off', () => {
  assert.equal(codes(errs(`    alertmanager: {url: 'http://am.example:9093'}\n    matchers: ['node="{node}"']\n`)), ['http-with-token']);
  assert.equal(codes(errs(`    alertmanager: {url: 'https://u:p@am.example'}\n    matchers: ['node="{node}"']\n`)), ['url-credentials']);
  assert.equal(codes(errs(`    matchers: ['node="{node}"']\n    ttlMinutes: 1\n`)), ['out-of-range']);
  assert.equal(codes(errs(`    matchers: ['node="{node}"']\n    ttlMinutes: 121\n`)), ['out-of-range']);
  assert.equal(codes(errs(`    ttlMinutes: 5\n`)), ['required-field']);
  assert.equal(errs(`    enabled: false\n`), []);
});

s('the planner: OpenShift defaults; a pool of its own replaces the section; elsewhere the URL is required', () => {
  const b = new ClusterBuilder();
  const ocp = b.bootcPool('worker', nodes('w', 2)).bootcPool('infra', nodes('i', 2)).snapshot();
  const spec = (pools: Record<string, unknown>[]) =>
    stringify({ apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 't' }, spec: { silences: { matchers: ['node="{node}"'] }, pools } });
  const plan = planFor(
    spec([
      { name: 'worker', image: NEW },
      { name: 'infra', image: NEW, silences: { enabled: false } },
    ]),
    ocp,
  );
  assert.ok(ocp.clusterVersion, 'the builder makes an OpenShift cluster');
  assert.equal(
    plan.silences?.map((x) => [x.alertmanager.url, x.alertmanager.ca, x.pools, x.ttlMinutes]),
    [
      [
        'https://alertmanager-main.openshift-monitoring.svc:9094',
        { configMap: { namespace: 'openshift-bootcplan', name: 'openshift-service-ca.crt', key: 'service-ca.crt' } },
        ['worker'],
        10,
      ],
    ],
  );
  const plain = planFor(spec([{ name: 'worker', image: NEW }]), { ...ocp, clusterVersion: null });
  assert.ok(plain.diagnostics.some((d) => d.code === 'alertmanager-url-required' && d.path === 'spec.silences.alertmanager'));
  assert.is(plain.silences, undefined);
});

const FLEET = (overrides: string) => `apiVersion: bootcplan.dev/v1alpha1
kind: Fleet
metadata: {name: f}
spec:
  rollout:
    silences:
      alertmanager: {url: "https://am.example.com"}
      matchers: ['node="{node}"']
    pools:
      - name: worker
        image: ${D}
  overrides:
    - clusterSelector: {matchLabels: {site: lab}}
      silences: {enabled: false}
  clusters:
    - {name: a, snapshot: a.yaml}
    - {name: lab, snapshot: lab.yaml, labels: {site: lab}}
    - name: b
      snapshot: b.yaml
${overrides}`;

s('Fleet overrides replace the silences whole: per label, per cluster; positions and the reviewer point at the Fleet lines', () => {
  const text = FLEET(`      overrides:
        silences:
          alertmanager: {url: "https://am.b.example.com"}
          matchers: ['instance=~"{node}(:.*)?"']
          ttlMinutes: 5
`);
  const r = parseFleetSpec(text, 'f.yaml');
  assert.equal(r.diagnostics, []);
  const [a, lab, b] = effectiveSpecs(r.fleet!, r.map);
  assert.equal(a.spec.spec.silences, { alertmanager: { url: 'https://am.example.com' }, matchers: ['node="{node}"'] });
  assert.equal(lab.spec.spec.silences, { enabled: false });
  assert.equal(b.spec.spec.silences, { alertmanager: { url: 'https://am.b.example.com' }, matchers: ['instance=~"{node}(:.*)?"'], ttlMinutes: 5 });
  assert.is(b.map.values['spec.silences.matchers[0]'].line, 23);
  assert.is(b.map.values['spec.silences.alertmanager'].line, 22, "the override's, not the shared one at line 7");
  assert.is(b.map.values['spec.silences.alertmanager.url'].line, 22);
  assert.is(a.map.values['spec.silences.matchers[0]'].line, 8);
  assert.equal(overriddenFields(r.fleet!, 0), []);
  assert.equal(overriddenFields(r.fleet!, 1), [
    { field: 'silences', shared: 'https://am.example.com: node="{node}"', value: 'off', by: { path: 'spec.overrides[0]', selector: 'site=lab' } },
  ]);
  assert.equal(overriddenFields(r.fleet!, 2), [
    {
      field: 'silences',
      shared: 'https://am.example.com: node="{node}"',
      value: 'https://am.b.example.com: instance=~"{node}(:.*)?" (TTL 5m)',
      by: { path: 'spec.clusters[2].overrides', selector: null },
    },
  ]);
});

s('a Fleet override with a bad silence template is an error at its Fleet line', () => {
  const r = parseFleetSpec(FLEET(`      overrides:\n        silences:\n          matchers: ['node="{host}"']\n`), 'f.yaml');
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  assert.is(errors.length, 1, JSON.stringify(errors));
  assert.is(errors[0].line, 22);
  assert.match(errors[0].message, /unknown placeholder \{host\}/);
});

s.run();
