/**
 * The Alertmanager silence port against a real Alertmanager (src/apply/gates/silences.ts; docs/apply.md
 * "Silences"): API v2 `POST /api/v2/silences` (create, or update with the id), `DELETE
 * /api/v2/silence/{id}` (expire) and `GET /api/v2/status` (preflight), through the bounded client
 * of the health checks (src/kube/prometheus-client.ts: TLS verified, no redirects, bounded bodies,
 * the request timeout and the stop signal) with the token and CA resolved as a health check's
 * (src/kube/health-credentials.ts). Answers are checked as untrusted: a silence id is a short
 * printable string or the answer is refused.
 */
import type { KubeAccess } from './kubeconfig-types.ts';
import type { PlanHealthEndpoint } from '../plan/types.ts';
import type { SilencePort, SilenceRequest } from '../apply/gates/silences.ts';
import type { KubeClient } from './rest.ts';
import { PrometheusClient, HealthRequestError } from './prometheus-client.ts';
import { HealthCredentials } from './health-credentials.ts';
import { CredentialMask } from './credential-mask.ts';
import { isPlainObject } from '../base/schema.ts';
import { printable } from './answers.ts';

/** Alertmanager's ids are UUIDs; anything printable up to 128 characters is taken, nothing else. */
const ID = /^[A-Za-z0-9._:-]{1,128}$/;

const FORBIDDEN_HINT =
  'grant the identity the right to create silences (OpenShift: the monitoring-alertmanager-edit Role in openshift-monitoring, bound with a RoleBinding; docs/spec.md "Silences")';

export class KubeAlertmanagerSilences implements SilencePort {
  private readonly http: PrometheusClient;
  private readonly credentials: HealthCredentials;

  /** `mask`: the process's credential mask (src/kube/credential-mask.ts), shared with the health source. */
  constructor(kube: KubeClient, kc: KubeAccess, mask: CredentialMask = new CredentialMask()) {
    this.http = new PrometheusClient({ maxBytes: 256 * 1024, mask });
    this.credentials = new HealthCredentials(kube, kc, { mask });
  }

  async put(am: PlanHealthEndpoint, s: SilenceRequest, timeoutMs: number, signal: AbortSignal): Promise<string> {
    const body = await this.ask(am, 'POST', '/api/v2/silences', s, timeoutMs, signal);
    const id = isPlainObject(body) ? body.silenceID : undefined;
    if (typeof id !== 'string' || !ID.test(id))
      throw new HealthRequestError('bad-answer', `not an Alertmanager silence answer (no silenceID) from ${new URL(am.url).origin}`);
    return id;
  }

  async expire(am: PlanHealthEndpoint, id: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (!ID.test(id)) throw new Error(`internal: silence id ${printable(id, 60)}`);
    await this.ask(am, 'DELETE', `/api/v2/silence/${encodeURIComponent(id)}`, undefined, timeoutMs, signal);
  }

  async ping(am: PlanHealthEndpoint, timeoutMs: number, signal: AbortSignal): Promise<void> {
    const body = await this.ask(am, 'GET', '/api/v2/status', undefined, timeoutMs, signal);
    if (!isPlainObject(body) || !isPlainObject(body.versionInfo))
      throw new HealthRequestError('bad-answer', `not an Alertmanager status answer (no versionInfo) from ${new URL(am.url).origin}`);
  }

  close(): void {
    this.http.close();
  }

  private async ask(
    am: PlanHealthEndpoint,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body: unknown,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<unknown> {
    const token = await this.credentials.token(am.auth, signal);
    const ca = await this.credentials.ca(am.ca, signal);
    try {
      return await this.http.requestJson({ url: am.url, token, ca: ca.pem, caName: ca.name }, { method, path, body, timeoutMs, signal, api: 'Alertmanager' });
    } catch (err) {
      if (err instanceof HealthRequestError && err.kind === 'unauthorized') this.credentials.forget(am.auth);
      if (err instanceof HealthRequestError && err.kind === 'forbidden')
        throw new HealthRequestError('forbidden', `403 from ${new URL(am.url).origin}; ${FORBIDDEN_HINT}`);
      throw err;
    }
  }
}
