/**
 * Health gates in the plan and its renderers (docs/spec.md "Health checks"): the effective checks
 * per pool with every default, sealed (formatVersion 1.2, part of the id), the gate time in the
 * estimate, and the text, Markdown (PR comment) and HTML reports naming each gate: what, where,
 * when, on failure. Plans without checks are unchanged (the demo goldens of render.test.ts).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';
import { buildPlan, planIdOf } from '../../src/plan/planner.ts';
import { parsePlanFile } from '../../src/plan/saved/reader.ts';
import { settingsDifference } from '../../src/plan/saved/compare.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { renderPlan } from '../../src/render/formats.ts';
import type { Plan } from '../../src/plan/types.ts';
import { ROOT, golden, demoPlan } from '../support/render.ts';

const s = suite('health gates in the plan');
const SPEC = 'examples/health/openshift.yaml';

function healthPlan(edit: (t: string) => string = (t) => t, cluster = 'examples/cluster.yaml'): Plan {
  const loaded = parseRolloutSpec(edit(readFileSync(join(ROOT, SPEC), 'utf8')), SPEC);
  const snap = parseSnapshot(readFileSync(join(ROOT, cluster), 'utf8'), cluster);
  if (!loaded.spec || !snap.snapshot) throw new Error(JSON.stringify(loaded.diagnostics));
  return buildPlan({
    spec: loaded.spec,
    specMap: loaded.map,
    snapshot: snap.snapshot,
    specDiagnostics: loaded.diagnostics,
    specInfo: { name: loaded.spec.metadata.name, path: SPEC, ref: null, commit: null, sha256: loaded.sha256, dirty: null },
  });
}

s("the plan carries each pool's effective checks once, defaults filled in, OpenShift's monitoring as the default source", () => {
  const plan = healthPlan();
  assert.is(plan.formatVersion, '1.2');
  assert.equal(
    plan.healthChecks!.map((c) => [c.name, c.kind, c.pools]),
    [
      ['no-critical-alerts', 'alerts', ['infra', 'worker']],
      ['api-error-ratio', 'prometheus', ['infra', 'worker']],
      ['operators', 'clusterOperators', ['infra', 'worker']],
      ['router-available', 'condition', ['infra']],
    ],
  );
  const alerts = plan.healthChecks![0];
  assert.equal(alerts.alerts, {
    url: 'https://thanos-querier.openshift-monitoring.svc:9091',
    auth: 'ServiceAccount',
    ca: { configMap: { namespace: 'openshift-bootcplan', name: 'openshift-service-ca.crt', key: 'service-ca.crt' } },
    source: 'prometheus',
    matchers: ['severity="critical"'],
    ignore: ['Watchdog', 'InfoInhibitor'],
    states: ['firing'],
    heartbeat: 'Watchdog',
  });
  assert.equal(
    [
      alerts.when,
      alerts.intervalSeconds,
      alerts.successes,
      alerts.failureLimit,
      alerts.timeoutSeconds,
      alerts.requestTimeoutSeconds,
      alerts.onFailure,
      alerts.scope,
    ],
    [['preflight', 'afterWave'], 30, 2, 0, 600, 10, 'halt', 'run'],
  );
  assert.equal(plan.healthChecks![1].prometheus!.parsed, { subject: 'every', op: '<', value: 0.01 });
  assert.equal(plan.healthChecks![3].requestTimeoutSeconds, 10);
  const infra = plan.pools.find((p) => p.name === 'infra')!;
  assert.equal(infra.gates, {
    preflight: ['no-critical-alerts', 'operators'],
    afterWave: ['no-critical-alerts', 'api-error-ratio', 'operators'],
    afterNode: ['router-available'],
    minSeconds: 3 * 30 + 300 + 3 * 20,
  });
  assert.equal([plan.summary.healthChecks, plan.summary.gates], [4, 1 + 3 + 3 + 4]);
});

s("gate time is in the estimates: each pool's least gate time, the soak after its last wave, the preflight gate", () => {
  const plain = healthPlan((t) => t.replace(/ {2}healthChecks:[\s\S]*?(?= {2}pools:)/, '').replace(/ {6}healthChecks:[\s\S]*$/, ''));
  assert.equal(plain.healthChecks, undefined);
  assert.is(plain.formatVersion, '1.0');
  const gated = healthPlan();
  for (const p of gated.pools) assert.is(p.estimatedSeconds - plain.pools.find((x) => x.name === p.name)!.estimatedSeconds, p.gates!.minSeconds, p.name);
  // Preflight: no-critical-alerts needs 2 passes 30 s apart.
  assert.is(gated.summary.estimatedSeconds - plain.summary.estimatedSeconds, gated.pools.reduce((n, p) => n + p.gates!.minSeconds, 0) + 30);
});

s('sealed: the checks are part of the plan id and of the decisions a saved plan is compared on', () => {
  const plan = healthPlan();
  const edited = structuredClone(plan);
  edited.healthChecks![0].alerts!.matchers = [];
  assert.is.not(planIdOf(edited), plan.id);
  const fresh = healthPlan((t) => t.replace('matchers: [\'severity="critical"\']', 'matchers: [\'severity="warning"\']'));
  const diff = settingsDifference(plan, fresh);
  assert.ok(
    diff.some((l) => l.startsWith('~ health check no-critical-alerts (infra, worker):')),
    diff.join('\n'),
  );
  const dropped = healthPlan((t) => t.replace('    - name: operators', '    - enabled: false\n      name: operators'));
  assert.ok(settingsDifference(plan, dropped).some((l) => l.startsWith('- health check operators')));
  assert.equal(settingsDifference(plan, healthPlan()), []);
});

s('a plan file with health checks reads back; a malformed check is refused with its path', () => {
  const plan = healthPlan();
  const text = JSON.stringify(plan, null, 2);
  const back = parsePlanFile(text, 'p.json');
  assert.equal(back.diagnostics, []);
  assert.equal(back.plan!.healthChecks, plan.healthChecks);
  const bad = JSON.parse(text);
  bad.healthChecks[0].when = ['afterwave'];
  bad.healthChecks[1].prometheus.parsed.op = '=~';
  const r = parsePlanFile(JSON.stringify(bad), 'p.json');
  assert.equal(
    r.diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => d.path)
      .sort(),
    ['healthChecks[0].when[0]', 'healthChecks[1].prometheus.parsed.op'],
  );
});

s('not OpenShift: no default URL and no ClusterOperators, each a plan error at its check', () => {
  const noCv = readFileSync(join(ROOT, 'examples/cluster.yaml'), 'utf8').replace(
    / {2}- apiVersion: config\.openshift\.io\/v1\n {4}kind: ClusterVersion[\s\S]*?(?=\n {2}- apiVersion)/,
    '',
  );
  assert.not.match(noCv, /kind: ClusterVersion/);
  const loaded = parseRolloutSpec(readFileSync(join(ROOT, SPEC), 'utf8'), SPEC);
  const snap = parseSnapshot(noCv, 'k.yaml');
  const plan = buildPlan({
    spec: loaded.spec!,
    specMap: loaded.map,
    snapshot: snap.snapshot!,
    specInfo: { name: 'x', path: SPEC, ref: null, commit: null, sha256: loaded.sha256, dirty: null },
  });
  const errs = plan.diagnostics.filter((d) => d.severity === 'error');
  assert.equal(
    errs.map((d) => [d.code, d.path, d.line]),
    [
      ['health-url-required', 'spec.healthChecks[0].alerts', 13],
      ['health-url-required', 'spec.healthChecks[1].prometheus', 18],
      ['cluster-operators-not-openshift', 'spec.healthChecks[2].clusterOperators', 23],
    ],
  );
  assert.equal(
    plan.healthChecks!.map((c) => c.name),
    ['router-available'],
  );
});

s('a slots pool runs its afterWave checks once, when it is done, and the plan warns', () => {
  const plan = healthPlan((t) => t.replace('      soakSeconds: 120\n', '      rollout: slots\n'));
  const w = plan.diagnostics.find((d) => d.code === 'afterwave-in-slots')!;
  assert.ok(w);
  assert.equal([w.severity, w.path], ['warning', 'spec.pools[0].rollout']);
  const worker = plan.pools.find((p) => p.name === 'worker')!;
  assert.is(worker.gates!.minSeconds, 30);
});

s('goldens: text, Markdown and HTML of the OpenShift example (new goldens); plans without checks render as before', async () => {
  const plan = healthPlan();
  const text = await renderPlan(plan, 'text', { color: false });
  golden('health-demo.txt', text);
  golden('health-demo.md', renderMarkdown(plan));
  golden('health-demo.html', renderHtml(plan));
  assert.match(text, /Plan: .*11 nodes in 7 waves, 4 health checks at 11 gates \(est\. /);
  assert.match(
    text,
    /health gates: before the first write: no-critical-alerts, operators; after each of 3 waves \(after the 5m soak\): no-critical-alerts, api-error-ratio, operators; after each node: router-available; at least 7m30s in all/,
  );
  assert.match(
    text,
    /router-available \(condition\): Deployment openshift-ingress\/router-default Available=True\n {6}after each node; 3 passes in a row 10s apart, no failure tolerated, fails after 10m without a verdict; on failure: halt \(pool paused, exit 5\)/,
  );
  const md = renderMarkdown(plan);
  assert.match(md, /\| Health gates \| 4 health checks at 11 gates; a failure halts the rollout \|/);
  assert.match(
    md,
    /\| `no-critical-alerts` \| alerts \| no firing alert matching severity="critical"; ignoring Watchdog, InfoInhibitor; Watchdog must be firing \| before the first write, after each wave \| halt \(pool paused, exit 5\) \|/,
  );
  assert.match(renderHtml(plan), /<section id="health">/);
  assert.not.match(renderMarkdown(demoPlan()), /Health/);
});

s('a pool that replaces a check of the same name gets its own entry, and the renderers name its pool', async () => {
  const plan = healthPlan((t) =>
    t.replace(
      '        - name: router-available',
      '        - name: operators\n          clusterOperators: {names: [ingress]}\n        - name: router-available',
    ),
  );
  const ops = plan.healthChecks!.filter((c) => c.name === 'operators');
  assert.equal(
    ops.map((c) => [c.pools, c.clusterOperators!.names]),
    [
      [['infra'], ['ingress']],
      [['worker'], []],
    ],
  );
  const text = await renderPlan(plan, 'text', { color: false });
  assert.match(text, /operators \(infra\) \(clusterOperators\): ClusterOperators ingress Available=True/);
});

s('a check on trial: the plan carries mode observe (an enforcing check as before), and text, Markdown and HTML mark it observing', async () => {
  const plan = healthPlan((t) =>
    t
      .replace('      when: [afterWave]\n', '      when: [afterWave]\n      mode: observe\n')
      .replace('      when: [preflight, afterWave]\n', '      when: [preflight, afterWave]\n      onFailure: pause\n'),
  );
  const [alerts, ratio, ops] = plan.healthChecks!;
  assert.is(ratio.mode, 'observe');
  assert.not.ok('mode' in alerts, 'an enforcing check is carried without mode, as plans before modes carried it');
  assert.is(ops.onFailure, 'pause');
  assert.equal(healthPlan().id === plan.id, false, 'the mode is part of the sealed plan');
  const back = parsePlanFile(JSON.stringify(plan), 'p.json');
  assert.ok(back.plan, JSON.stringify(back.diagnostics));
  assert.equal(back.plan!.healthChecks, plan.healthChecks);

  const text = await renderPlan(plan, 'text', { color: false });
  assert.match(text, /api-error-ratio \(prometheus, observing\): /);
  assert.match(text, /on failure: none: observing, the verdict is recorded and never acted on \(once enforced: halt \(pool paused, exit 5\)\)/);
  assert.match(text, /operators \(clusterOperators\): .*\n.*on failure: pause \(pool paused, exit 5; apply --retry goes on past the gate\)/);
  const md = renderMarkdown(plan);
  assert.match(md, /\| Health gates \| .*; a failure halts the rollout; 1 observing \(recorded, never acted on\) \|/);
  assert.match(md, /\| `api-error-ratio` \| prometheus, observing \|/);
  const html = renderHtml(plan);
  assert.match(html, /<td>prometheus, observing<\/td>/);

  const allObserving = healthPlan((t) =>
    t.replace(/^( {6}| {10})when: (.*)$/gm, '$1when: $2\n$1mode: observe').replace(/( {6})successes: 2\n/, '$1successes: 2\n$1mode: observe\n'),
  );
  assert.ok(
    allObserving.healthChecks!.every((c) => c.mode === 'observe'),
    JSON.stringify(allObserving.healthChecks!.map((c) => c.name + ' ' + c.mode)),
  );
  assert.match(renderMarkdown(allObserving), /\| Health gates \| .*; no failure halts \(every check is observing\) \|/);
});

s('hostile strings in a crafted plan file are escaped in Markdown and HTML', () => {
  const plan = healthPlan();
  plan.healthChecks![0].alerts!.matchers = ['a="<img src=x onerror=alert(1)>|@team"'];
  const md = renderMarkdown(plan);
  assert.not.match(md, /<img/);
  assert.not.match(md, /@team/);
  assert.not.match(renderHtml(plan), /<img/);
});

s.run();
