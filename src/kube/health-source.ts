/**
 * The real health source (src/apply/health.ts port; docs/apply.md "Health gates"): one
 * measurement of a check of the plan, of each kind:
 * - `prometheus`: an instant query (`/api/v1/query`) through the bounded client
 *   (src/kube/prometheus-client.ts), with the check's token and CA (src/kube/health-credentials.ts);
 * - `alerts`: Prometheus' `/api/v1/alerts`, or Alertmanager's `/api/v2/alerts` with the matchers as
 *   filters and silenced or inhibited alerts left out;
 * - `clusterOperators`: the config.openshift.io/v1 ClusterOperators, listed through the API server;
 * - `condition`: one object, its resource found by API discovery (once per apply), read by name.
 * The answers are judged by the pure src/domain/health-observe.ts. Whatever the source answers or
 * fails to answer is a measurement: a failure to ask is an `error` one, which fails the check, so
 * an unreachable source is never a pass. The whole measurement (credentials, CA, discovery, the
 * request) ends within the check's `requestTimeoutSeconds`; the stop signal ends it at once
 * (AbortedError, the only exception `measure` throws for a reason other than a bug).
 */
import type { KubeAccess } from './kubeconfig.ts';
import type { HealthSource, GatePosition, Measurement } from '../apply/health.ts';
import type { PlanHealthCheck, PlanHealthEndpoint, PlanConditionCheck } from '../plan/types.ts';
import { AbortedError, NotFoundError } from '../apply/driver.ts';
import { cancelledByCaller } from '../apply/interrupt.ts';
import { observation } from '../domain/health-verdict.ts';
import { observeQuery, observePrometheusAlerts, observeAlertmanagerAlerts, observeClusterOperators, observeObjectCondition } from '../domain/health-observe.ts';
import type { KubeClient } from './rest.ts';
import { PrometheusClient, HealthRequestError, type PrometheusEndpoint } from './prometheus-client.ts';
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
  private readonly prometheus = new PrometheusClient();
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
    this.credentials = new HealthCredentials(kube, kc, opts);
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
      return await this.measureKind(check, budget);
    } catch (err) {
      if (signal.aborted) throw new AbortedError();
      if (cancelledByCaller(err, deadline.signal))
        return failed(new HealthRequestError('timeout', `no answer within ${check.requestTimeoutSeconds} s from ${budget.waitingFor}`));
      if (err instanceof HealthRequestError) return failed(err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.prometheus.close();
  }

  /** The check by its settings: a planned check carries those of its kind and no other (src/plan/health.ts planCheck). */
  private async measureKind(check: PlanHealthCheck, b: Budget): Promise<Measurement> {
    const { prometheus: p, alerts: a, clusterOperators: o, condition: c } = check;
    if (p) {
      const answer = await this.ask(p, b, (ep) => this.prometheus.query(ep, p.query, b.left(), b.signal));
      return observeQuery(answer.data, answer.warnings, { condition: p.parsed, onEmpty: p.onEmpty });
    }
    if (a) {
      const rules = { matchers: a.matchers, ignore: a.ignore, states: a.states, heartbeat: a.heartbeat };
      if (a.source === 'alertmanager')
        return observeAlertmanagerAlerts(await this.ask(a, b, (ep) => this.prometheus.alertmanagerAlerts(ep, a.matchers, b.left(), b.signal)), rules);
      const answer = await this.ask(a, b, (ep) => this.prometheus.alerts(ep, b.left(), b.signal));
      return observePrometheusAlerts(answer.data, answer.warnings, rules);
    }
    if (o) return observeClusterOperators(await this.clusterOperators(b), o);
    if (c) return observeObjectCondition(await this.object(c, b), c);
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
