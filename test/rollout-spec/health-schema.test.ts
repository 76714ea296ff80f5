/**
 * spec.healthChecks, pools' healthChecks and Fleet overrides (docs/spec.md "Health checks"):
 * every rule of the schema with file:line:column, the column inside a condition or a matcher
 * where it stops parsing, the trust rules for endpoints (no credentials in URLs, no file paths,
 * no token without TLS), merge-by-name in a Fleet, and the JSON Schema editors read.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { Ajv } from 'ajv';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { parseFleetSpec, effectiveSpecs } from '../../src/fleet/spec-load.ts';
import { SCHEMA_FILE } from '../../src/rollout-spec/reference.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';

const s = suite('health check schema');
const D = 'quay.io/example/os@sha256:' + 'a'.repeat(64);
const HEAD = 'apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: prod\nspec:\n';
const POOL = `  pools:\n    - name: worker\n      image: ${D}\n`;

const load = (text: string) => parseRolloutSpec(text, 'h.yaml');
const all = (checks: string) => load(HEAD + '  healthChecks:\n' + checks + POOL).diagnostics;
const errs = (checks: string) => all(checks).filter((d) => d.severity === 'error');
function one(list: Diagnostic[], code: string): Diagnostic {
  const d = list.find((x) => x.code === code);
  assert.ok(d, `expected ${code}, got ${JSON.stringify(list.map((x) => `${x.code} ${x.message}`))}`);
  return d!;
}
const at = (d: Diagnostic) => [d.line, d.column];

s('a spec with one check of each kind loads without a finding, defaults left to the planner', () => {
  const r = load(
    HEAD +
      `  healthChecks:
    - name: no-critical-alerts
      alerts:
        matchers: ['severity="critical"', 'alertname=~"(?i)kube.*"', 'team!="db"', 'namespace!~"test-.*"']
        heartbeat: Watchdog
      successes: 2
      onFailure: rollback
      scope: wave
    - name: error-ratio
      prometheus:
        url: https://prometheus.example.com/prefix
        auth: {bearerTokenSecret: {namespace: openshift-bootcplan, name: prometheus-reader}}
        ca: {configMap: {namespace: openshift-bootcplan, name: prom-ca, key: ca.pem}}
        query: sum(rate(x[5m]))
        condition: every sample < 0.01
    - name: operators
      clusterOperators: {ignore: [insights]}
      when: [preflight]
    - name: frontend
      condition: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: frontend, type: Available}
      when: [afterNode]
` +
      POOL +
      `      healthChecks:
        - {name: frontend, enabled: false}
        - name: etcd
          prometheus: {url: "http://127.0.0.1:9090", query: "min(etcd_server_has_leader)", condition: "every sample == 1"}
`,
  );
  assert.equal(r.diagnostics, []);
  const checks = r.spec!.spec.healthChecks!;
  assert.equal(
    checks.map((c) => c.name),
    ['no-critical-alerts', 'error-ratio', 'operators', 'frontend'],
  );
  assert.equal(checks[1].prometheus!.auth, { bearerTokenSecret: { namespace: 'openshift-bootcplan', name: 'prometheus-reader' } });
  assert.equal(r.spec!.spec.pools![0].healthChecks!.length, 2);
});

s('a condition that does not parse is an error at the character where it stops, plain or quoted', () => {
  const plain = one(errs(`    - name: x\n      prometheus: {query: up, condition: every sample < 1%}\n`), 'condition-invalid');
  // `      prometheus: {query: up, condition: ` is 41 characters: the value starts at column 42, "1" is its 16th.
  assert.equal(at(plain), [8, 42 + 15]);
  assert.match(plain.message, /at character 16: expected a number, got "1%"/);
  assert.match(plain.hint!, /no unit/);
  const quoted = one(errs(`    - name: x\n      prometheus:\n        query: up\n        condition: "every sample <> 0"\n`), 'condition-invalid');
  assert.equal(at(quoted), [10, 20 + 1 + 14]);
  assert.equal(quoted.path, 'spec.healthChecks[0].prometheus.condition');
  for (const [text, msg] of [
    ['max < NaN', /Inf and NaN/],
    ['Every sample < 1', /lower case: "every"/],
    ['max < 1 and min > 0', /combine in PromQL/],
    ['(max) < 1', /combine in PromQL/],
    ['', /non-empty|at least 1/],
  ] as const) {
    const d = errs(`    - name: x\n      prometheus: {query: up, condition: "${text}"}\n`)[0];
    assert.ok(d, text);
    assert.match(`${d.message} ${d.hint}`, msg, text);
  }
});

s('a matcher that does not parse, or is no RE2 regex, is an error at its column; RE2-only syntax is accepted', () => {
  const d = one(errs(`    - name: x\n      alerts:\n        matchers: ['severity="critical"', 'alertname=~"(?<=a)b"']\n`), 'matcher-invalid');
  // The second entry's quote is at column 43; its 13th character is the regex's first.
  assert.equal(at(d), [9, 44 + 12]);
  assert.match(d.message, /not an RE2 regular expression/);
  assert.match(one(errs(`    - name: x\n      alerts: {matchers: ['severity=critical']}\n`), 'matcher-invalid').hint!, /quote it: severity="critical"/);
  assert.match(one(errs(`    - name: x\n      alerts: {matchers: ['severity=="critical"']}\n`), 'matcher-invalid').hint!, /single "="/);
  assert.equal(errs(`    - name: x\n      alerts: {matchers: ['alertname=~"(?i)kube\\\\z"']}\n`), []);
});

s('exactly one kind: two point at the second, none at the name', () => {
  const two = one(errs(`    - name: x\n      alerts: {}\n      clusterOperators: {}\n`), 'health-check-kind');
  assert.equal([two.path, ...at(two)], ['spec.healthChecks[0].clusterOperators', 9, 7]);
  const none = one(errs(`    - name: x\n      when: [preflight]\n`), 'health-check-kind');
  assert.equal(none.path, 'spec.healthChecks[0].name');
  assert.match(none.expected!, /exactly one of prometheus, alerts, clusterOperators, condition/);
});

s('names: a DNS label, once per list; typos get a did-you-mean', () => {
  const dup = one(errs(`    - {name: x, clusterOperators: {}}\n    - {name: x, clusterOperators: {}}\n`), 'duplicate-health-check');
  assert.equal([dup.path, dup.line], ['spec.healthChecks[1].name', 8]);
  assert.match(dup.message, /first at spec.healthChecks\[0\]/);
  assert.equal(one(errs(`    - {name: No_Caps, clusterOperators: {}}\n`), 'invalid-format').path, 'spec.healthChecks[0].name');
  assert.match(one(errs(`    - name: x\n      prometeus: {query: up, condition: empty}\n`), 'unknown-field').hint!, /did you mean "prometheus"/);
  assert.match(one(errs(`    - {name: x, clusterOperators: {}, when: [afterwave]}\n`), 'invalid-enum').hint!, /did you mean "afterWave"/);
  assert.match(one(errs(`    - {name: x, clusterOperators: {}, onFailure: Halt}\n`), 'invalid-enum').hint!, /did you mean "halt"/);
  one(errs(`    - {name: x, clusterOperators: {}, when: [preflight, preflight]}\n`), 'duplicate-value');
  one(errs(`    - {name: x, clusterOperators: {}, when: []}\n`), 'too-few-items');
});

s('endpoints: no credentials in the URL, no token without TLS, no file paths for the CA', () => {
  const cred = one(errs(`    - name: x\n      prometheus: {url: "https://u:p@prom.example.com", query: up, condition: empty}\n`), 'url-credentials');
  assert.match(cred.hint!, /auth.bearerTokenSecret/);
  assert.equal(cred.line, 8);
  one(errs(`    - name: x\n      alerts: {url: "http://prom.example.com:9090"}\n`), 'http-with-token');
  one(errs(`    - name: x\n      alerts: {url: "http://prom.example.com", auth: {bearerTokenSecret: {namespace: a, name: b}}}\n`), 'http-with-token');
  const plainHttp = all(`    - name: x\n      alerts: {url: "http://prometheus-operated.monitoring.svc:9090", auth: none}\n`);
  assert.equal(
    plainHttp.filter((d) => d.severity === 'error'),
    [],
  );
  assert.equal(one(plainHttp, 'http-without-tls').severity, 'warning');
  assert.equal(all(`    - name: x\n      alerts: {url: "http://127.0.0.1:9090"}\n`), [], 'loopback: a token may go over http');
  one(errs(`    - name: x\n      alerts: {url: "https://prom.example.com/?x=1"}\n`), 'health-url-invalid');
  one(errs(`    - name: x\n      alerts: {url: "prom.example.com"}\n`), 'health-url-invalid');
  one(errs(`    - name: x\n      alerts: {url: "file:///etc/passwd"}\n`), 'health-url-invalid');
  const file = one(errs(`    - name: x\n      alerts: {ca: {file: /etc/pki/ca.pem}}\n`), 'unknown-field');
  assert.equal(file.path, 'spec.healthChecks[0].alerts.ca.file');
  assert.match(one(errs(`    - name: x\n      alerts: {ca: /etc/pki/ca.pem}\n`), 'wrong-type').hint!, /never names files/);
  one(errs(`    - name: x\n      alerts: {ca: {configMap: {namespace: a, name: b}, secret: {namespace: a, name: b}}}\n`), 'ca-one-source');
  assert.match(one(errs(`    - name: x\n      alerts: {auth: serviceaccount}\n`), 'invalid-enum').hint!, /ServiceAccount/);
  one(errs(`    - name: x\n      alerts: {auth: {bearerTokenSecret: {namespace: a}}}\n`), 'required-field');
});

s('timing and failure rules: a check that can never pass, scope without rollback, pending alerts in Alertmanager', () => {
  const never = one(errs(`    - {name: x, clusterOperators: {}, successes: 3, timeoutSeconds: 60}\n`), 'health-timeout-too-short');
  assert.match(never.message, /3 successes 30 s apart take at least 70 s/);
  assert.equal(never.path, 'spec.healthChecks[0].timeoutSeconds');
  one(errs(`    - {name: x, clusterOperators: {}, intervalSeconds: 5, requestTimeoutSeconds: 8}\n`), 'request-timeout-too-long');
  assert.equal(errs(`    - {name: x, clusterOperators: {}, intervalSeconds: 5, successes: 3, timeoutSeconds: 15}\n`), []);
  const scope = one(errs(`    - {name: x, clusterOperators: {}, scope: wave}\n`), 'scope-without-rollback');
  assert.equal(at(scope), [7, 39]);
  one(errs(`    - name: x\n      alerts: {source: alertmanager, states: [firing, pending]}\n`), 'states-pending-alertmanager');
  const unused = one(all(`    - name: x\n      prometheus: {query: up, condition: count == 3, onEmpty: pass}\n`), 'onempty-unused');
  assert.equal(unused.severity, 'warning');
  for (const [field, v] of [
    ['intervalSeconds', 0],
    ['successes', 101],
    ['failureLimit', -1],
    ['timeoutSeconds', 86401],
    ['requestTimeoutSeconds', 61],
  ] as const) {
    assert.ok(
      errs(`    - {name: x, clusterOperators: {}, ${field}: ${v}}\n`).some((d) => d.path === `spec.healthChecks[0].${field}`),
      field,
    );
  }
});

s('mode: enforce or observe, onFailure: halt, pause or rollback; a wrong value is an error at its position naming the choices', () => {
  assert.equal(errs(`    - {name: x, clusterOperators: {}, mode: observe}\n`), []);
  assert.equal(errs(`    - {name: x, clusterOperators: {}, mode: enforce, onFailure: pause}\n`), []);
  // On trial, onFailure says what the check will do once enforced; it is not an error.
  assert.equal(errs(`    - {name: x, clusterOperators: {}, mode: observe, onFailure: rollback, scope: wave}\n`), []);
  const mode = errs(`    - {name: x, clusterOperators: {}, mode: dryRun}\n`).find((d) => d.path === 'spec.healthChecks[0].mode');
  assert.ok(mode, 'an unknown mode is an error at the field');
  assert.equal(at(mode!), [7, 45]);
  assert.match(`${mode!.message} ${mode!.expected ?? ''}`, /enforce.*observe/);
  const on = errs(`    - {name: x, clusterOperators: {}, onFailure: abort}\n`).find((d) => d.path === 'spec.healthChecks[0].onFailure');
  assert.ok(on);
  assert.match(`${on!.message} ${on!.expected ?? ''}`, /halt.*pause.*rollback/);
  one(errs(`    - {name: x, clusterOperators: {}, onFailure: pause, scope: wave}\n`), 'scope-without-rollback');
});

s('a pool entry drops an inherited check with enabled: false; a drop of an unknown name is an error naming the inherited ones', () => {
  const text = (name: string) =>
    HEAD +
    `  healthChecks:\n    - {name: alerts, alerts: {}}\n    - {name: ops, clusterOperators: {}}\n${POOL}      healthChecks:\n        - {name: ${name}, enabled: false}\n`;
  assert.equal(load(text('ops')).diagnostics, []);
  const d = one(load(text('opz')).diagnostics, 'health-check-unknown');
  assert.equal([d.path, d.line], ['spec.pools[0].healthChecks[0].name', 13]);
  assert.equal(d.expected, 'one of: alerts, ops');
  const noKind = one(load(HEAD + POOL + `      healthChecks:\n        - {name: ops}\n`).diagnostics, 'health-check-kind');
  assert.match(noKind.hint!, /enabled: false to drop/);
});

s('the published JSON Schema accepts a spec with health checks and rejects an unknown field in one', () => {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  const valid = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));
  const text =
    HEAD + `  healthChecks:\n    - name: x\n      alerts: {auth: {bearerTokenSecret: {namespace: a, name: b}}, ca: system}\n      when: [afterWave]\n` + POOL;
  assert.ok(valid(parse(text)), JSON.stringify(valid.errors));
  assert.not.ok(valid(parse(text.replace('ca: system', 'ca: {file: x}'))));
  assert.not.ok(valid(parse(text.replace('when: [afterWave]', 'when: [afterwave]'))));
});

// ---------------------------------------------------------------- Fleet

const FLEET = (overrides: string) => `apiVersion: bootcplan.dev/v1alpha1
kind: Fleet
metadata: {name: f}
spec:
  rollout:
    healthChecks:
      - {name: alerts, alerts: {}}
      - {name: ops, clusterOperators: {}}
    pools:
      - name: worker
        image: ${D}
  clusters:
    - {name: a, snapshot: a.yaml, labels: {site: x}}
    - name: b
      snapshot: b.yaml
${overrides}`;

s('Fleet overrides merge health checks by name: replace whole, drop, add; positions point at the Fleet lines', () => {
  const text = FLEET(`      overrides:
        healthChecks:
          - {name: ops, enabled: false}
          - name: slo
            prometheus: {url: "https://prom.b.example.com", query: up, condition: "min == 1"}
          - {name: alerts, alerts: {matchers: ['severity="critical"']}}
`);
  const r = parseFleetSpec(text, 'f.yaml');
  assert.equal(r.diagnostics, []);
  const [a, b] = effectiveSpecs(r.fleet!, r.map);
  assert.equal(
    a.spec.spec.healthChecks!.map((c) => c.name),
    ['alerts', 'ops'],
  );
  assert.equal(
    b.spec.spec.healthChecks!.map((c) => c.name),
    ['alerts', 'slo'],
  );
  assert.equal(b.spec.spec.healthChecks![0].alerts!.matchers, ['severity="critical"']);
  assert.equal(b.map.values['spec.healthChecks[1].prometheus.condition'].line, 20);
  assert.equal(b.map.values['spec.healthChecks[0].name'].line, 21);
  assert.equal(a.map.values['spec.healthChecks[1].name'].line, 8);
});

s('a Fleet override that breaks a check is reported at its line, for the clusters it reaches; a drop of an unknown check is an error', () => {
  const bad = parseFleetSpec(
    FLEET(`      overrides:\n        healthChecks:\n          - {name: slo, prometheus: {query: up, condition: "max <"}}\n`),
    'f.yaml',
  );
  const d = one(bad.diagnostics, 'condition-invalid');
  assert.equal(d.line, 18);
  const drop = parseFleetSpec(FLEET(`      overrides:\n        healthChecks:\n          - {name: opz, enabled: false}\n`), 'f.yaml');
  const u = one(drop.diagnostics, 'health-check-unknown');
  assert.equal([u.path, u.line], ['spec.clusters[1].overrides.healthChecks[0].name', 18]);
  assert.match(u.expected!, /alerts, ops/);
});

s.run();
