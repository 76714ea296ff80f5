/**
 * The real health source (src/apply/ports/health.ts port; docs/apply.md "Health gates"): one
 * measurement of a check of the plan, of each kind:
 * - `prometheus`: an instant query (`/api/v1/query`) through the bounded client
 *   (src/kube/prometheus-client.ts), with the check's token and CA (src/kube/health-credentials.ts);
 * - `alerts`: Prometheus' `/api/v1/alerts`, or Alertmanager's `/api/v2/alerts` with the matchers as
 *   filters and silenced or inhibited alerts left out;
 * - `clusterOperators`: the config.openshift.io/v1 ClusterOperators, listed through the API server;
 * - `condition`: one object, its resource found by API discovery (once per apply), read by name.
 * The answers are judged by the pure src/domain/health-observe.ts. No credential leaves in a text
 * (docs/safety.md "Credentials in answers"): every credential the source obtains goes into one
 * CredentialMask (src/kube/credential-mask.ts), through which every answer is told and every
 * observation passes on its way out. Whatever the source answers or
 * fails to answer is a measurement: a failure to ask is an `error` one, which fails the check, so
 * an unreachable source is never a pass. The whole measurement (credentials, CA, discovery, the
 * request) ends within the check's `requestTimeoutSeconds`; the stop signal ends it at once
 * (AbortedError, the only exception `measure` throws for a reason other than a bug).
 */
import type { KubeAccess } from './kubeconfig-types.ts';
import type { HealthSource, GatePosition, Measurement } from '../apply/ports/health.ts';
import type { PlanHealthCheck, PlanHealthEndpoint, PlanConditionCheck } from '../plan/types.ts';
import { AbortedError, NotFoundError } from '../apply/ports/driver.ts';
import { cancelledByCaller } from '../apply/engine/interrupt.ts';
import { observation } from '../domain/health-verdict.ts';
import { observeQuery, observePrometheusAlerts, observeAlertmanagerAlerts, observeClusterOperators, observeObjectCondition } from '../domain/health-observe.ts';
import type { KubeClient } from './rest.ts';
import { PrometheusClient, HealthRequestError, type PrometheusEndpoint, type PromEnvelope } from './prometheus-client.ts';
import { CredentialMask } from './credential-mask.ts';
import { HealthCredentials, apiFailure, type HealthCredentialsOptions } from './health-credentials.ts';
import { CLUSTER_OPERATOR, apiPrefix, collectionPath, groupOf } from './resources.ts';
import { printable } from './answers.ts';
import { isPlainObject } from '../base/schema.ts';

/** A kind's resource as API discovery serves it (APIResourceList, apimachinery meta/v1). */
interface Served {
  plural: string;
  namespaced: boolean;
}

/** What one measurement may use: its deadline's signal, the time left, and what it is waiting for. */
interface Budget {
  signal: AbortSignal;
  left(): number;
  waitingFor: string;
}

export class KubeHealthSource implements HealthSource {
  /**
   * Every credential the process holds (the kubeconfig's, the identity's, the Secrets', URL
   * userinfo): one mask shared with the silence client when the caller passes it (src/app/live.ts).
   */
  private readonly mask: CredentialMask;
  private readonly prometheus: PrometheusClient;
  private readonly credentials: HealthCredentials;
  /**
   * Discovery per apiVersion: kind -> resource, or null when the group version is not served.
   * Only answers are kept, never a read in flight: a read another measurement's deadline ends
   * must not end this one.
   */
  private readonly discovery = new Map<string, Map<string, Served> | null>();

  constructor(
    private readonly kube: KubeClient,
    kc: KubeAccess,
    opts: HealthCredentialsOptions = {},
  ) {
    this.mask = opts.mask ?? new CredentialMask();
    this.prometheus = new PrometheusClient({ mask: this.mask });
    this.credentials = new HealthCredentials(kube, kc, { ...opts, mask: this.mask });
  }

  async measure(check: PlanHealthCheck, _position: GatePosition, signal: AbortSignal): Promise<Measurement> {
    if (signal.aborted) throw new AbortedError();
    const ms = check.requestTimeoutSeconds * 1000;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), ms);
    const start = Date.now();
    const budget: Budget = {
      signal: AbortSignal.any([signal, deadline.signal]),
      left: () => Math.max(1, start + ms - Date.now()),
      waitingFor: 'the API server',
    };
    try {
      return this.shown(await this.measureKind(check, budget));
    } catch (err) {
      if (signal.aborted) throw new AbortedError();
      if (cancelledByCaller(err, deadline.signal))
        return this.shown(failed(new HealthRequestError('timeout', `no answer within ${check.requestTimeoutSeconds} s from ${budget.waitingFor}`)));
      if (err instanceof HealthRequestError) return this.shown(failed(err));
      throw this.maskedError(err);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.prometheus.close();
  }

  /** The measurement as it leaves the source: its observation masked once more (whatever made it). */
  private shown(m: Measurement): Measurement {
    return this.mask.empty ? m : { ...m, observed: observation(this.mask.text(m.observed)) };
  }

  /** A bug's error, its message and stack masked: it is printed too. */
  private maskedError(err: unknown): unknown {
    if (err instanceof Error && !this.mask.empty) {
      err.message = this.mask.text(err.message);
      if (err.stack) err.stack = this.mask.text(err.stack);
    }
    return err;
  }

  /**
   * An answer judged as it came and told masked: the verdict is the raw answer's (a label that
   * shares 8 characters with a credential must not stop matching a matcher and let an alert
   * through), the observation the masked answer's, so no renderer after it sees a credential,
   * escaped by JSON.stringify or not. When masking would change the verdict, the raw
   * observation is masked as text instead (shown()).
   */
  private judged<A>(observe: (a: A) => Measurement, raw: A, masked: A | null): Measurement {
    const m = observe(raw);
    if (masked === null) return m;
    const told = observe(masked);
    return told.outcome === m.outcome && told.error === m.error ? { ...m, observed: told.observed } : m;
  }

  /** The masked copy of a JSON answer, or null when masking changes nothing. */
  private maskedJson(v: unknown): unknown {
    const m = this.mask.json(v);
    return m === v ? null : m;
  }

  private maskedEnvelope(e: PromEnvelope): PromEnvelope | null {
    const data = this.mask.json(e.data);
    const warnings = e.warnings.map((w) => this.mask.json(w));
    return data === e.data && warnings.every((w, i) => w === e.warnings[i]) ? null : { data, warnings };
  }

  /** The check by its settings: a planned check carries those of its kind and no other (src/plan/health.ts planCheck). */
  private async measureKind(check: PlanHealthCheck, b: Budget): Promise<Measurement> {
    const { prometheus: p, alerts: a, clusterOperators: o, condition: c } = check;
    if (p) {
      const answer = await this.ask(p, b, (ep) => this.prometheus.query(ep, p.query, b.left(), b.signal));
      const rules = { condition: p.parsed, onEmpty: p.onEmpty };
      return this.judged((e) => observeQuery(e.data, e.warnings, rules), answer, this.maskedEnvelope(answer));
    }
    if (a) {
      const rules = { matchers: a.matchers, ignore: a.ignore, states: a.states, heartbeat: a.heartbeat, silenced: a.silenced };
      if (a.source === 'alertmanager') {
        const body = await this.ask(a, b, (ep) => this.prometheus.alertmanagerAlerts(ep, a.matchers, b.left(), b.signal));
        return this.judged((x) => observeAlertmanagerAlerts(x, rules), body, this.maskedJson(body));
      }
      const answer = await this.ask(a, b, (ep) => this.prometheus.alerts(ep, b.left(), b.signal));
      return this.judged((e) => observePrometheusAlerts(e.data, e.warnings, rules), answer, this.maskedEnvelope(answer));
    }
    if (o) {
      const items = await this.clusterOperators(b);
      const masked = this.maskedJson(items);
      return this.judged((x) => observeClusterOperators(x, o), items, Array.isArray(masked) ? masked : null);
    }
    if (c) {
      const obj = await this.object(c, b);
      return this.judged((x) => observeObjectCondition(x, c), obj, this.maskedJson(obj));
    }
    throw new Error(`internal: health check ${check.name} (${check.kind}) carries no settings`);
  }

  /** Resolves the endpoint's token and CA, then asks; a refused token is read again next time. */
  private async ask<T>(e: PlanHealthEndpoint, b: Budget, request: (ep: PrometheusEndpoint) => Promise<T>): Promise<T> {
    b.waitingFor = 'the API server (the token and CA of the check)';
    const token = await this.credentials.token(e.auth, b.signal);
    const ca = await this.credentials.ca(e.ca, b.signal);
    b.waitingFor = new URL(e.url).origin;
    try {
      return await request({ url: e.url, token, ca: ca.pem, caName: ca.name });
    } catch (err) {
      if (err instanceof HealthRequestError && err.kind === 'unauthorized') this.credentials.forget(e.auth);
      throw err;
    }
  }

  private async clusterOperators(b: Budget): Promise<unknown[]> {
    b.waitingFor = 'the API server (listing ClusterOperators)';
    try {
      return (await this.kube.list(collectionPath(CLUSTER_OPERATOR), { kind: 'ClusterOperator' }, { signal: b.signal })).items;
    } catch (err) {
      // The API server's "404 page not found": the group is not installed (answers.ts isApiServerNotFoundPage).
      if (err instanceof NotFoundError)
        throw new HealthRequestError('source-missing', 'this cluster serves no ClusterOperators (config.openshift.io/v1): not OpenShift');
      throw apiFailure(err, 'listing ClusterOperators', 'get, list on clusteroperators (config.openshift.io)');
    }
  }

  /** The object a condition check names, or null when it does not exist. */
  private async object(c: PlanConditionCheck, b: Budget): Promise<unknown> {
    const served = await this.served(c.apiVersion, b);
    const r = served?.get(c.kind);
    if (!served) throw new HealthRequestError('source-missing', `${printable(c.apiVersion, 100)} is not served by this cluster`);
    if (!r) throw new HealthRequestError('source-missing', `${printable(c.apiVersion, 100)} serves no kind ${printable(c.kind, 60)}`);
    if (r.namespaced && !c.namespace) throw new HealthRequestError('source-missing', `${c.kind} is namespaced: the check names no namespace`);
    const ns = r.namespaced && c.namespace ? `/namespaces/${encodeURIComponent(c.namespace)}` : '';
    b.waitingFor = `the API server (reading ${c.kind} ${c.name})`;
    const path = `${apiPrefix(c.apiVersion)}${ns}/${r.plural}/${encodeURIComponent(c.name)}`;
    try {
      return await this.kube.request('GET', path, { expect: c.kind, signal: b.signal, what: `${c.kind} ${c.name}` });
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      const group = groupOf(c.apiVersion);
      throw apiFailure(
        err,
        `reading ${c.kind} ${r.namespaced ? `${c.namespace}/` : ''}${c.name}`,
        `get on ${r.plural}${group ? ` (${group})` : ''}, resourceNames [${c.name}]${r.namespaced ? `, in ${c.namespace}` : ''}`,
      );
    }
  }

  /** The kinds an apiVersion serves (API discovery `GET /apis/{group}/{version}`), read once per source. */
  private async served(apiVersion: string, b: Budget): Promise<Map<string, Served> | null> {
    const known = this.discovery.get(apiVersion);
    if (known !== undefined) return known;
    const found = await this.discover(apiVersion, b);
    this.discovery.set(apiVersion, found);
    return found;
  }

  private async discover(apiVersion: string, b: Budget): Promise<Map<string, Served> | null> {
    b.waitingFor = `the API server (discovery of ${printable(apiVersion, 100)})`;
    let list: { resources?: unknown };
    try {
      list = await this.kube.request('GET', apiPrefix(apiVersion), { signal: b.signal, what: `API discovery of ${apiVersion}` });
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw apiFailure(err, `API discovery of ${printable(apiVersion, 100)}`, 'get on the discovery endpoints (the system:discovery ClusterRole)');
    }
    const out = new Map<string, Served>();
    const resources: unknown[] = Array.isArray(list.resources) ? list.resources : [];
    for (const r of resources) {
      // Subresources (deployments/status) share the kind of their resource: skip them.
      if (isPlainObject(r) && typeof r.name === 'string' && !r.name.includes('/') && typeof r.kind === 'string' && !out.has(r.kind))
        out.set(r.kind, { plural: r.name, namespaced: r.namespaced === true });
    }
    return out;
  }
}

const failed = (e: HealthRequestError): Measurement => ({ outcome: 'error', error: e.kind, observed: observation(e.message) });
