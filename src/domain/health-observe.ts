/**
 * What a health source answered, judged (docs/spec.md "Health checks"): a Prometheus instant
 * query, Prometheus' or Alertmanager's alert list, the ClusterOperators, one object's condition,
 * each turned into a Measurement with a short observation. Pure: the source fetches (the kube
 * implementation in src/kube/, bounded in size and time) and these functions decide, so the rules
 * are the same whoever asks and are tested without a server.
 *
 * Answers are untrusted JSON: every shape is checked here (a wrong one is an `error` measurement
 * `bad-answer`, never a pass) and every string that reaches an observation is cut and made one
 * printable line (observation()).
 *
 * Upstream shapes: Prometheus HTTP API docs/querying/api.md "Instant queries" and "Expression
 * query result formats" (vector samples `{metric, value: [t, "v"]}` or `histogram` instead of
 * `value`; sample values are strings, "NaN" / "+Inf" / "-Inf" included), "Alerts"
 * (`{alerts: [{labels, annotations, state, activeAt, value}]}`); Alertmanager api/v2/openapi.yaml
 * gettableAlert (`{labels, status: {state}}`); openshift/api config/v1 ClusterOperator
 * (`status.conditions[]` Available, Degraded: "Available=True ∧ Degraded=False" is healthy,
 * Progressing is reported during normal node reboots and is not judged).
 */
import { evaluateCondition, type ParsedCondition, type Sample } from './health-condition.ts';
import { MatcherSet, alertText, blockingAlerts, type AlertSample, type Matcher } from './alert-matchers.ts';
import { coveredBy } from './silences.ts';
import { observation, type HealthErrorKind, type Measurement } from './health-verdict.ts';

/** More series or alerts than this is `too-large`: the query should aggregate (a client sends limit=10001). */
export const MAX_SERIES = 10_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const error = (kind: HealthErrorKind, text: string): Measurement => ({ outcome: 'error', error: kind, observed: observation(text) });
const outcome = (o: Measurement['outcome'], text: string): Measurement => ({ outcome: o, observed: observation(text) });

/** A float as the API writes it ("NaN", "+Inf", "-Inf", decimal or exponent), or null for anything else. */
export function parseSampleValue(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  if (v === 'NaN') return NaN;
  if (v === '+Inf' || v === 'Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  return /^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/.test(v) ? Number(v) : null;
}

function labelsOf(v: unknown): Record<string, string> | null {
  if (!isObject(v)) return null;
  for (const x of Object.values(v)) if (typeof x !== 'string') return null;
  return v as Record<string, string>;
}

/** A partial answer (Thanos with a store down answers success with warnings): it may lack exactly the failing series. */
function partial(warnings: readonly unknown[]): Measurement | null {
  const first = warnings.find((w) => typeof w === 'string' && w.length > 0);
  return warnings.length ? outcome('inconclusive', `partial response: ${typeof first === 'string' ? first.slice(0, 200) : 'warnings'}`) : null;
}

interface QueryCheck {
  condition: ParsedCondition;
  onEmpty: 'fail' | 'pass';
}

/**
 * An instant query's `data` (the envelope's status already `success`) and its `warnings`. The
 * series count is judged before the warnings: a server that honours `limit` cuts the answer and
 * warns "results truncated due to limit", which is too large, not partial.
 */
export function observeQuery(data: unknown, warnings: readonly unknown[], check: QueryCheck): Measurement {
  if (!isObject(data) || typeof data.resultType !== 'string') return error('bad-answer', 'not a Prometheus query answer (no data.resultType)');
  const { resultType, result } = data;
  if (resultType === 'matrix') return error('bad-answer', 'a range vector: wrap it in a function such as max_over_time(...)');
  if (resultType === 'string') return error('bad-answer', 'a string result: the query must give a vector or a scalar');
  if (resultType === 'scalar') {
    const v = Array.isArray(result) && result.length === 2 ? parseSampleValue(result[1]) : null;
    if (v === null) return error('bad-answer', 'a scalar result without a sample value');
    return partial(warnings) ?? judged(evaluateCondition({ type: 'scalar', value: v }, check.condition, check.onEmpty));
  }
  if (resultType !== 'vector' || !Array.isArray(result)) return error('bad-answer', `unknown result type ${JSON.stringify(String(resultType).slice(0, 40))}`);
  if (result.length > MAX_SERIES) return error('too-large', `more than ${MAX_SERIES} series: aggregate in the query`);
  const samples: Sample[] = [];
  for (const s of result) {
    if (!isObject(s)) return error('bad-answer', 'a vector sample that is not an object');
    const metric = labelsOf(s.metric ?? {});
    if (!metric) return error('bad-answer', 'a vector sample whose labels are not strings');
    if (s.value === undefined && s.histogram !== undefined)
      return error('bad-answer', 'native histogram sample: use histogram_quantile/histogram_count in the query');
    const v = Array.isArray(s.value) && s.value.length === 2 ? parseSampleValue(s.value[1]) : null;
    if (v === null) return error('bad-answer', 'a vector sample without a sample value');
    samples.push({ metric, value: v });
  }
  return partial(warnings) ?? judged(evaluateCondition({ type: 'vector', samples }, check.condition, check.onEmpty));
}

const judged = (r: { pass: boolean; observed: string }): Measurement => outcome(r.pass ? 'pass' : 'fail', r.observed);

// ---------------------------------------------------------------------------------------
// Alerts

interface AlertsCheck {
  matchers: readonly string[];
  ignore: readonly string[];
  states: readonly string[];
  /** An alert that must be firing for "no alert" to count ("" : none). */
  heartbeat: string;
  /** The matchers of the silences bootcplan holds for the nodes in flight (one list per silence): the alerts they cover never block. */
  silenced?: readonly (readonly Matcher[])[];
}

/** Compiled matcher sets by their texts: a gate measures every few seconds, RE2 compiles once. */
const compiledSets = new Map<string, MatcherSet>();

function matcherSet(texts: readonly string[]): MatcherSet {
  const key = JSON.stringify(texts);
  let set = compiledSets.get(key);
  if (!set) {
    if (compiledSets.size > 64) compiledSets.clear();
    set = MatcherSet.parse(texts);
    compiledSets.set(key, set);
  }
  return set;
}

/** Prometheus' `/api/v1/alerts` `data` (every active alert: pending and firing) and the envelope's warnings. */
export function observePrometheusAlerts(data: unknown, warnings: readonly unknown[], check: AlertsCheck): Measurement {
  if (!isObject(data) || !Array.isArray(data.alerts)) return error('bad-answer', 'not a Prometheus alerts answer (no data.alerts list)');
  const alerts = alertSamples(data.alerts, (a) => (typeof a.state === 'string' ? a.state : null));
  if (!Array.isArray(alerts)) return alerts;
  return partial(warnings) ?? judgeAlerts(alerts, check, check.states, 'prometheus');
}

/**
 * Alertmanager's `/api/v2/alerts?active=true&silenced=false&inhibited=false` answer: every alert
 * returned is active and neither silenced nor inhibited, so each counts as firing; the matchers are
 * applied again here (one semantics, whatever the server's filter did).
 */
export function observeAlertmanagerAlerts(body: unknown, check: AlertsCheck): Measurement {
  if (!Array.isArray(body)) return error('bad-answer', 'not an Alertmanager alerts answer (no list)');
  const alerts = alertSamples(body, (a) => (isObject(a.status) && typeof a.status.state === 'string' ? 'firing' : null));
  if (!Array.isArray(alerts)) return alerts;
  return judgeAlerts(alerts, check, null, 'alertmanager');
}

function alertSamples(list: unknown[], stateOf: (a: Record<string, unknown>) => string | null): AlertSample[] | Measurement {
  if (list.length > MAX_SERIES) return error('too-large', `more than ${MAX_SERIES} alerts`);
  const out: AlertSample[] = [];
  for (const a of list) {
    const labels = isObject(a) ? labelsOf(a.labels) : null;
    const state = isObject(a) ? stateOf(a) : null;
    if (!labels || state === null) return error('bad-answer', 'an alert without string labels or a state');
    out.push({ labels, state });
  }
  return out;
}

function judgeAlerts(alerts: AlertSample[], check: AlertsCheck, states: readonly string[] | null, source: 'prometheus' | 'alertmanager'): Measurement {
  const matchers = matcherSet(check.matchers);
  const all = blockingAlerts(alerts, { matchers, ignore: check.ignore, states });
  // The alerts of the nodes in flight, which bootcplan's own silences cover (docs/apply.md "Silences").
  const silenced = check.silenced ?? [];
  const covered = silenced.length ? coveredBy(silenced) : () => false;
  const blocking = all.filter((a) => !covered(a.labels));
  const ignoredText = silencedText(all.length - blocking.length, silenced.length, source);
  const scope = (n: number) => (check.matchers.length ? ` match${n === 1 ? 'es' : ''} ${check.matchers.join(', ')}` : '');
  if (blocking.length) {
    const n = blocking.length;
    const names = blocking.slice(0, 3).map(alertText).join(', ');
    const more = n > 3 ? ` ... and ${n - 3} more` : '';
    const what = states === null ? 'active' : [...new Set(blocking.map((a) => a.state))].sort().join('/');
    return outcome('fail', `${n} ${what} alert${n === 1 ? '' : 's'}${scope(n) || ' (no matchers)'}: ${names}${more}${ignoredText}`);
  }
  if (check.heartbeat && !alerts.some((a) => a.labels.alertname === check.heartbeat && (source === 'alertmanager' || a.state === 'firing'))) {
    return outcome('inconclusive', `heartbeat ${check.heartbeat} not firing: the alerting pipeline may be down`);
  }
  return outcome(
    'pass',
    `no ${states === null ? 'active' : states.join('/')} alert${scope(1)}${check.heartbeat ? ` (heartbeat ${check.heartbeat} firing)` : ''}${ignoredText}`,
  );
}

/**
 * How many alerts the silences of the nodes in flight covered ("" without silences). Alertmanager
 * leaves silenced alerts out of its answer itself, so it cannot count them: it is said so.
 */
function silencedText(ignored: number, silences: number, source: 'prometheus' | 'alertmanager'): string {
  if (!silences) return '';
  const held = `${silences} silence${silences === 1 ? '' : 's'} for the nodes in flight`;
  if (ignored) return `; ignored ${ignored} alert${ignored === 1 ? '' : 's'} covered by bootcplan's ${held}`;
  return source === 'alertmanager' ? `; Alertmanager leaves out the alerts bootcplan's ${held} cover` : `; ignored 0 alerts (bootcplan's ${held})`;
}

// ---------------------------------------------------------------------------------------
// Kubernetes objects

interface ConditionView {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration: number | null;
}

function conditionsOf(obj: Record<string, unknown>): ConditionView[] | null {
  const status = obj.status;
  if (status === undefined) return [];
  if (!isObject(status)) return null;
  if (status.conditions === undefined) return [];
  if (!Array.isArray(status.conditions)) return null;
  const out: ConditionView[] = [];
  for (const c of status.conditions) {
    if (!isObject(c) || typeof c.type !== 'string' || typeof c.status !== 'string') return null;
    out.push({
      type: c.type,
      status: c.status,
      reason: typeof c.reason === 'string' ? c.reason : '',
      message: typeof c.message === 'string' ? c.message : '',
      observedGeneration: typeof c.observedGeneration === 'number' ? c.observedGeneration : null,
    });
  }
  return out;
}

const nameOf = (o: unknown): string | null => (isObject(o) && isObject(o.metadata) && typeof o.metadata.name === 'string' ? o.metadata.name : null);
const conditionPhrase = (c: ConditionView) =>
  `${c.type}=${c.status}${c.reason || c.message ? ` (${[c.reason, c.message.slice(0, 80)].filter(Boolean).join(': ')})` : ''}`;

interface ClusterOperatorsCheck {
  names: readonly string[];
  ignore: readonly string[];
}

/**
 * The ClusterOperators (config.openshift.io/v1) as listed: every selected one (all, or the named
 * ones, minus `ignore`) must be Available=True and Degraded=False. A named operator that does not
 * exist fails; a condition that is Unknown or missing makes the measurement inconclusive.
 */
export function observeClusterOperators(items: readonly unknown[], check: ClusterOperatorsCheck): Measurement {
  if (items.length > MAX_SERIES) return error('too-large', `more than ${MAX_SERIES} ClusterOperators`);
  const byName = new Map<string, ConditionView[]>();
  for (const o of items) {
    const name = nameOf(o);
    const conds = isObject(o) ? conditionsOf(o) : null;
    if (name === null || conds === null) return error('bad-answer', 'a ClusterOperator without a name or with malformed conditions');
    byName.set(name, conds);
  }
  const selected = (check.names.length ? [...check.names] : [...byName.keys()].sort()).filter((n) => !check.ignore.includes(n));
  const failing: string[] = [];
  const unsure: string[] = [];
  for (const name of selected) {
    const conds = byName.get(name);
    if (!conds) {
      failing.push(`${name} not found`);
      continue;
    }
    const available = conds.find((c) => c.type === 'Available');
    const degraded = conds.find((c) => c.type === 'Degraded');
    if (available?.status === 'False') failing.push(`${name} ${conditionPhrase(available)}`);
    if (degraded?.status === 'True') failing.push(`${name} ${conditionPhrase(degraded)}`);
    if (!available || (available.status !== 'True' && available.status !== 'False')) unsure.push(`${name} Available=${available?.status ?? 'missing'}`);
    if (!degraded || (degraded.status !== 'True' && degraded.status !== 'False')) unsure.push(`${name} Degraded=${degraded?.status ?? 'missing'}`);
  }
  if (failing.length) return outcome('fail', listed(failing));
  if (unsure.length) return outcome('inconclusive', listed(unsure));
  return outcome('pass', `${selected.length} ClusterOperator${selected.length === 1 ? '' : 's'} Available=True, Degraded=False`);
}

function listed(items: string[]): string {
  return items.length > 3 ? `${items.slice(0, 3).join('; ')}; ... and ${items.length - 3} more` : items.join('; ');
}

interface ObjectConditionCheck {
  kind: string;
  namespace: string | null;
  name: string;
  type: string;
  status: string;
  reason: string | null;
}

/**
 * One object's condition (null: the object does not exist). The condition must be there with the
 * wanted status (and reason, when one is named); a condition missing, or observed for an older
 * generation of the object than the current one, is inconclusive: the controller has not judged
 * the object as it is now.
 */
export function observeObjectCondition(obj: unknown, check: ObjectConditionCheck): Measurement {
  const what = `${check.kind} ${check.namespace ? `${check.namespace}/` : ''}${check.name}`;
  if (obj === null || obj === undefined) return outcome('fail', `${what} not found`);
  const conds = isObject(obj) ? conditionsOf(obj) : null;
  if (!isObject(obj) || conds === null) return error('bad-answer', `${what}: malformed status.conditions`);
  const c = conds.find((x) => x.type === check.type);
  if (!c) return outcome('inconclusive', `${what} has no ${check.type} condition`);
  const generation = isObject(obj.metadata) && typeof obj.metadata.generation === 'number' ? obj.metadata.generation : null;
  const observed = c.observedGeneration ?? (isObject(obj.status) && typeof obj.status.observedGeneration === 'number' ? obj.status.observedGeneration : null);
  if (generation !== null && observed !== null && observed < generation)
    return outcome('inconclusive', `${what} ${check.type} observed generation ${observed}, the object is at ${generation}`);
  const ok = c.status === check.status && (check.reason === null || c.reason === check.reason);
  return outcome(ok ? 'pass' : 'fail', `${what} ${conditionPhrase(c)}`);
}
