/**
 * Answers judged as measurements (src/domain/health-observe.ts), with the answers' real shapes
 * (Prometheus docs/querying/api.md, Alertmanager api/v2/openapi.yaml, openshift/api ClusterOperator):
 * a wrong shape is an error, never a pass; a partial answer is inconclusive; too many series is
 * too-large before the truncation warning counts; a missing heartbeat is inconclusive; strings
 * from the answer reach the observation cut and printable.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  observeQuery,
  observePrometheusAlerts,
  observeAlertmanagerAlerts,
  observeClusterOperators,
  observeObjectCondition,
  parseSampleValue,
  MAX_SERIES,
} from '../../src/domain/health-observe.ts';
import { parseCondition, type ParsedCondition } from '../../src/domain/health-condition.ts';

const s = suite('health observe');
const cond = (t: string): ParsedCondition => {
  const r = parseCondition(t);
  if (!r.ok) throw new Error(r.message);
  return r.parsed;
};
const q = (t: string, onEmpty: 'fail' | 'pass' = 'fail') => ({ condition: cond(t), onEmpty });
const vector = (...vs: string[]) => ({
  resultType: 'vector',
  result: vs.map((v, i) => ({ metric: { __name__: 'err', job: `j${i}` }, value: [1767225600.5, v] })),
});

s('sample values as the API writes them; anything else is no number', () => {
  assert.equal(['1', '-0.5', '1e-3', '+Inf', '-Inf', '.5', '2.'].map(parseSampleValue), [1, -0.5, 0.001, Infinity, -Infinity, 0.5, 2]);
  assert.ok(Number.isNaN(parseSampleValue('NaN')));
  assert.equal(['', '0x10', '1_0', ' 1', 'abc', null, 5].map(parseSampleValue), [null, null, null, null, null, null, null]);
});

s('instant query: vector and scalar judged; NaN fails; partial answers are inconclusive', () => {
  assert.equal(observeQuery(vector('0.001', '0.002'), [], q('every sample < 0.01')).outcome, 'pass');
  const bad = observeQuery(vector('0.001', '0.5'), [], q('every sample < 0.01'));
  assert.equal(bad, { outcome: 'fail', observed: '1 of 2 not < 0.01: err{job="j1"}=0.5' });
  assert.equal(observeQuery(vector('NaN'), [], q('every sample != 0')).outcome, 'fail');
  assert.equal(observeQuery({ resultType: 'scalar', result: [1, 'NaN'] }, [], q('value < 1')).outcome, 'fail');
  assert.equal(observeQuery({ resultType: 'vector', result: [] }, [], q('empty')).outcome, 'pass');
  assert.equal(observeQuery({ resultType: 'vector', result: [] }, [], q('max < 1')), { outcome: 'fail', observed: 'empty result (onEmpty: fail)' });
  const partial = observeQuery(vector('0.001'), ['partial response: store x unavailable'], q('every sample < 0.01'));
  assert.equal(partial.outcome, 'inconclusive');
  assert.match(partial.observed, /^partial response: /);
});

s('instant query: wrong shapes are errors (bad-answer), never passes; more than 10,000 series is too-large first', () => {
  const errorOf = (data: unknown) => {
    const r = observeQuery(data, [], q('empty'));
    assert.is(r.outcome, 'error');
    return `${r.error}: ${r.observed}`;
  };
  assert.match(errorOf({ resultType: 'matrix', result: [] }), /^bad-answer: a range vector: wrap it in a function such as max_over_time/);
  assert.match(errorOf({ resultType: 'string', result: [1, 'x'] }), /^bad-answer: a string result/);
  assert.match(errorOf({ resultType: 'vector', result: [{ metric: {}, histogram: [1, {}] }] }), /native histogram sample/);
  assert.match(errorOf({ resultType: 'vector', result: [{ metric: { a: 1 }, value: [1, '1'] }] }), /labels are not strings/);
  assert.match(errorOf({ resultType: 'vector', result: [{ metric: {}, value: [1, 1] }] }), /without a sample value/);
  assert.match(errorOf('<html>'), /^bad-answer/);
  assert.match(errorOf(null), /^bad-answer/);
  const many = { resultType: 'vector', result: Array.from({ length: MAX_SERIES + 1 }, (_, i) => ({ metric: { i: String(i) }, value: [1, '0'] })) };
  const r = observeQuery(many, ['results truncated due to limit'], q('every sample < 1'));
  assert.equal([r.outcome, r.error], ['error', 'too-large']);
});

const PROM_ALERTS = (...alerts: { labels: Record<string, string>; state: string }[]) => ({
  alerts: alerts.map((a) => ({ ...a, annotations: {}, activeAt: '2026-12-03T10:00:00Z', value: '1e+00' })),
});
const watchdog = { labels: { alertname: 'Watchdog', severity: 'none' }, state: 'firing' };
const check = { matchers: ['severity="critical"'], ignore: ['Watchdog', 'InfoInhibitor'], states: ['firing'], heartbeat: 'Watchdog' };

s('Prometheus alerts: blocking alerts fail with their names; pending is not firing; a missing heartbeat is inconclusive', () => {
  const broken = { labels: { alertname: 'E2EWorkloadBroken', severity: 'critical', job: 'e2e' }, state: 'firing' };
  assert.equal(observePrometheusAlerts(PROM_ALERTS(watchdog, broken), [], check), {
    outcome: 'fail',
    observed: '1 firing alert matches severity="critical": E2EWorkloadBroken{job="e2e"}',
  });
  assert.equal(observePrometheusAlerts(PROM_ALERTS(watchdog, { ...broken, state: 'pending' }), [], check).outcome, 'pass');
  assert.equal(
    observePrometheusAlerts(PROM_ALERTS(watchdog, { ...broken, state: 'pending' }), [], { ...check, states: ['firing', 'pending'] }).outcome,
    'fail',
  );
  const noHeartbeat = observePrometheusAlerts(PROM_ALERTS(), [], check);
  assert.equal(noHeartbeat, { outcome: 'inconclusive', observed: 'heartbeat Watchdog not firing: the alerting pipeline may be down' });
  assert.equal(observePrometheusAlerts(PROM_ALERTS(), [], { ...check, heartbeat: '' }).outcome, 'pass');
  assert.equal(observePrometheusAlerts(PROM_ALERTS(watchdog), ['partial'], check).outcome, 'inconclusive');
  assert.equal(observePrometheusAlerts({ alerts: [{ labels: { alertname: 1 }, state: 'firing' }] }, [], check).error, 'bad-answer');
  assert.equal(observePrometheusAlerts([], [], check).error, 'bad-answer');
});

s('Alertmanager alerts: every one listed counts as firing, matchers applied again; ANSI in label values never reaches the observation', () => {
  const am = (labels: Record<string, string>) => ({
    labels,
    annotations: {},
    fingerprint: 'f',
    receivers: [],
    startsAt: '',
    updatedAt: '',
    endsAt: '',
    status: { state: 'active', silencedBy: [], inhibitedBy: [] },
  });
  const r = observeAlertmanagerAlerts(
    [
      am({ alertname: 'Watchdog' }),
      am({ alertname: 'X', severity: 'critical', pod: '\u001b[31mred\u001b[0m\nnext' }),
      am({ alertname: 'Y', severity: 'warning' }),
    ],
    check,
  );
  assert.is(r.outcome, 'fail');
  assert.ok(!/[\u0000-\u001f]/.test(r.observed), r.observed);
  assert.match(r.observed, /^1 active alert matches severity="critical": X\{pod=/);
  assert.equal(observeAlertmanagerAlerts([am({ alertname: 'Watchdog' })], check).outcome, 'pass');
  assert.equal(observeAlertmanagerAlerts({ alerts: [] }, check).error, 'bad-answer');
});

const co = (name: string, available: string, degraded: string, reason = '') => ({
  metadata: { name },
  status: {
    conditions: [
      { type: 'Available', status: available },
      { type: 'Degraded', status: degraded, reason, message: reason ? 'the router is down' : '' },
      { type: 'Progressing', status: 'True' },
    ],
  },
});

s('ClusterOperators: Available=True and Degraded=False, Progressing ignored; a named one missing fails; Unknown is inconclusive', () => {
  const all = [co('ingress', 'True', 'False'), co('dns', 'True', 'False')];
  assert.equal(observeClusterOperators(all, { names: [], ignore: [] }), { outcome: 'pass', observed: '2 ClusterOperators Available=True, Degraded=False' });
  assert.equal(observeClusterOperators([co('ingress', 'True', 'True', 'IngressDegraded'), all[1]], { names: [], ignore: [] }), {
    outcome: 'fail',
    observed: 'ingress Degraded=True (IngressDegraded: the router is down)',
  });
  assert.equal(observeClusterOperators([co('ingress', 'True', 'True', 'X')], { names: [], ignore: ['ingress'] }).outcome, 'pass');
  assert.equal(observeClusterOperators(all, { names: ['etcd'], ignore: [] }), { outcome: 'fail', observed: 'etcd not found' });
  assert.equal(observeClusterOperators([co('dns', 'Unknown', 'False')], { names: [], ignore: [] }).outcome, 'inconclusive');
  assert.equal(observeClusterOperators([{ metadata: { name: 'x' } }], { names: [], ignore: [] }).outcome, 'inconclusive');
  assert.equal(observeClusterOperators([{ status: {} }], { names: [], ignore: [] }).error, 'bad-answer');
});

s("an object's condition: status (and reason) must match; missing or stale is inconclusive; no object fails", () => {
  const c = { kind: 'Deployment', namespace: 'shop', name: 'frontend', type: 'Available', status: 'True', reason: null };
  const dep = (status: string, generation = 2, observed = 2) => ({
    metadata: { name: 'frontend', generation },
    status: { observedGeneration: observed, conditions: [{ type: 'Available', status, reason: 'MinimumReplicasAvailable' }] },
  });
  assert.equal(observeObjectCondition(dep('True'), c), { outcome: 'pass', observed: 'Deployment shop/frontend Available=True (MinimumReplicasAvailable)' });
  assert.equal(observeObjectCondition(dep('False'), c).outcome, 'fail');
  assert.equal(observeObjectCondition(dep('True', 3, 2), c).outcome, 'inconclusive');
  assert.equal(observeObjectCondition(dep('True'), { ...c, reason: 'Other' }).outcome, 'fail');
  assert.equal(observeObjectCondition(null, c), { outcome: 'fail', observed: 'Deployment shop/frontend not found' });
  assert.equal(observeObjectCondition({ metadata: { name: 'frontend' }, status: {} }, c).outcome, 'inconclusive');
  assert.equal(observeObjectCondition({ metadata: {}, status: { conditions: 'x' } }, c).error, 'bad-answer');
});

s.run();
