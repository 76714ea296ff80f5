/**
 * Who bootcplan is to Prometheus, and whom it trusts (docs/safety.md "Health checks"). A spec
 * comes from git and is applied on another machine, so it names only cluster objects or
 * bootcplan's own identity, never files:
 * - `auth: ServiceAccount`: the bearer token bootcplan's Kubernetes identity uses (in a pod the
 *   projected ServiceAccount token, re-read from its file every minute (src/kube/kubeconfig.ts); from a
 *   workstation the kubeconfig's token or exec plugin). Only an `Authorization: Bearer` header is
 *   kept: client certificates and basic auth authenticate to the API server, not to Prometheus;
 * - `auth: {bearerTokenSecret}`: one key of one Secret, read by name (RBAC `resourceNames`). The
 *   value must be 1 to 16,384 visible ASCII characters: CR or LF in it would smuggle a header;
 * - `ca: {configMap | secret}`: a PEM bundle (on OpenShift the service CA, ConfigMap
 *   `openshift-service-ca.crt` key `service-ca.crt`, which the service-ca-cert-publisher puts in
 *   every namespace), each certificate parsed; `system`: Node's roots.
 * A value read is kept in memory for a minute at most (a rotated Secret is picked up within one),
 * dropped at once when Prometheus refuses the token (401), and never shown: messages name the
 * object and key only, and every token is added to the credential mask as it is obtained (the
 * kubeconfig's own token and password when the source is made; src/kube/credential-mask.ts), so
 * an answer that echoes it back shows `[masked]`. Failures are HealthRequestErrors: an `error`
 * measurement, a failed check.
 */
import { X509Certificate } from 'node:crypto';
import type { KubeAccess } from './kubeconfig-types.ts';
import type { KubeClient } from './rest.ts';
import { KubeApiError, KubeRequestError } from './api-errors.ts';
import { NotFoundError } from '../apply/ports/driver.ts';
import { ClusterApiError, messageOf } from '../base/errors.ts';
import { printable } from './answers.ts';
import { HealthRequestError } from './prometheus-answers.ts';
import { CONFIGMAP, SECRET, objectPath } from './resources.ts';
import { CredentialMask } from './credential-mask.ts';

import type { PlanHealthAuth, PlanHealthCa, PlanObjectKeyRef as KeyRef } from '../plan/types.ts';

interface ResolvedCa {
  /** The PEM bundle that replaces the system roots; null: the system roots. */
  pem: string | null;
  /** How messages name it. */
  name: string;
}

export interface HealthCredentialsOptions {
  /** Milliseconds since the epoch (tests pass a fake). */
  now?: () => number;
  /** Where each credential obtained is added (the health source's mask). */
  mask?: CredentialMask;
}

const CACHE_MS = 60_000;
const MAX_TOKEN_BYTES = 16_384;
const MAX_CA_BYTES = 256 * 1024;
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

const refText = (kind: string, r: KeyRef) => `${kind} ${r.namespace}/${r.name}`;

export class HealthCredentials {
  private readonly cache = new Map<string, { value: string; at: number }>();
  private readonly now: () => number;
  private readonly mask: CredentialMask;

  constructor(
    private readonly client: KubeClient,
    private readonly kc: KubeAccess,
    opts: HealthCredentialsOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.mask = opts.mask ?? new CredentialMask();
    // The kubeconfig's written credentials: the API server's answers are health answers too (condition checks).
    const user = kc.getCurrentUser();
    this.mask.add(user?.token);
    this.mask.add(user?.password);
  }

  /** The bearer token to send, or null for `auth: none`. */
  async token(auth: PlanHealthAuth, signal: AbortSignal): Promise<string | null> {
    if (auth === 'none') return null;
    if (auth === 'ServiceAccount') return this.identityToken();
    const ref = auth.bearerTokenSecret;
    const key = ref.key;
    const raw = await this.keyOf('Secret', ref, key, signal);
    this.mask.add(raw);
    const bytes = Buffer.from(raw, 'base64');
    const value = bytes.subarray(0, bytes.length - (bytes.at(-1) === 0x0a ? 1 : 0));
    if (value.length < 1 || value.length > MAX_TOKEN_BYTES || value.some((b) => b < 0x21 || b > 0x7e)) {
      throw new HealthRequestError(
        'no-token',
        `${refText('Secret', ref)}[${key}] is not a usable bearer token (1 to ${MAX_TOKEN_BYTES} visible ASCII characters, no spaces or line breaks)`,
      );
    }
    const token = value.toString('ascii');
    this.mask.add(token);
    return token;
  }

  /** Forgets a Secret's token (Prometheus refused it): the next measurement reads the Secret again. */
  forget(auth: PlanHealthAuth): void {
    if (typeof auth === 'object') this.cache.delete(cacheKey('Secret', auth.bearerTokenSecret, auth.bearerTokenSecret.key));
  }

  /** The CA bundle to verify the server's certificate with. */
  async ca(ca: PlanHealthCa, signal: AbortSignal): Promise<ResolvedCa> {
    if (ca === 'system') return { pem: null, name: 'the system roots' };
    const [kind, ref] = 'configMap' in ca ? (['ConfigMap', ca.configMap] as const) : (['Secret', ca.secret] as const);
    const key = ref.key;
    const name = `${refText(kind, ref)}[${key}]`;
    const raw = await this.keyOf(kind, ref, key, signal);
    const pem = kind === 'Secret' ? Buffer.from(raw, 'base64').toString('utf8') : raw;
    if (Buffer.byteLength(pem) > MAX_CA_BYTES) throw new HealthRequestError('tls', `${name} is over 256 KiB: not a CA bundle`);
    const blocks = pem.match(PEM_BLOCK) ?? [];
    if (!blocks.length) throw new HealthRequestError('tls', `${name} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    blocks.forEach((b, i) => {
      try {
        new X509Certificate(b);
      } catch {
        throw new HealthRequestError('tls', `${name}: certificate ${i + 1} is not a valid X.509 certificate`);
      }
    });
    return { pem, name };
  }

  /** The kubeconfig identity's bearer token (re-resolved each time: projected tokens rotate). */
  private async identityToken(): Promise<string> {
    const user = printable(this.kc.getCurrentUser()?.name ?? 'unknown', 60);
    const opts: { headers: Record<string, string> } = { headers: {} };
    try {
      await this.kc.applyToHTTPSOptions(opts);
    } catch (err) {
      throw new HealthRequestError('no-token', `the Kubernetes identity (user ${user}) gave no token: ${printable(messageOf(err), 120)}`);
    }
    const header = opts.headers.Authorization ?? opts.headers.authorization ?? '';
    const m = /^Bearer ([\x21-\x7e]{1,16384})$/.exec(header);
    if (!m) throw new HealthRequestError('no-token', `the Kubernetes identity (user ${user}) has no bearer token to send: use auth.bearerTokenSecret`);
    this.mask.add(m[1]);
    return m[1];
  }

  /** `data[key]` of a ConfigMap or Secret (a Secret's still base64), from the cache when fresh. */
  private async keyOf(kind: 'ConfigMap' | 'Secret', ref: KeyRef, key: string, signal: AbortSignal): Promise<string> {
    const k = cacheKey(kind, ref, key);
    const hit = this.cache.get(k);
    if (hit && this.now() - hit.at < CACHE_MS) return hit.value;
    const type = kind === 'Secret' ? SECRET : CONFIGMAP;
    let obj: { data?: Record<string, unknown> | null };
    try {
      obj = await this.client.request('GET', objectPath(type, ref.name, ref.namespace), { expect: kind, signal, what: refText(kind, ref) });
    } catch (err) {
      throw readFailure(err, kind, ref, type.plural);
    }
    const value = obj.data?.[key];
    if (typeof value !== 'string')
      throw new HealthRequestError(kind === 'Secret' ? 'no-token' : 'tls', `${refText(kind, ref)} has no key ${printable(key, 60)}`);
    this.cache.set(k, { value, at: this.now() });
    return value;
  }
}

const cacheKey = (kind: string, r: KeyRef, key: string) => JSON.stringify([kind, r.namespace, r.name, key]);

function readFailure(err: unknown, kind: 'ConfigMap' | 'Secret', ref: KeyRef, plural: string): unknown {
  const what = refText(kind, ref);
  if (err instanceof NotFoundError) return new HealthRequestError(kind === 'Secret' ? 'no-token' : 'tls', `${what} not found`);
  return apiFailure(err, `reading ${what}`, `get on ${plural}, resourceNames [${ref.name}], in ${ref.namespace}`);
}

/**
 * A failed request to the API server during a measurement, as the HealthRequestError to report
 * (`rule`: the RBAC rule a 403 asks for). AbortedError and programming errors pass through.
 */
export function apiFailure(err: unknown, doing: string, rule: string): unknown {
  if (err instanceof KubeApiError && err.status === 403) {
    return new HealthRequestError('forbidden', `${doing}: ${printable(err.message, 120)}; grant ${rule}`);
  }
  if (err instanceof KubeApiError && err.status === 401) return new HealthRequestError('unauthorized', `${doing}: ${printable(err.message, 160)}`);
  if (err instanceof KubeRequestError) {
    const kind =
      err.problem === 'timeout'
        ? 'timeout'
        : err.problem === 'too-large'
          ? 'too-large'
          : err.problem === 'not-json' || err.problem === 'unexpected-answer'
            ? 'bad-answer'
            : 'unreachable';
    return new HealthRequestError(kind, `${doing}: ${printable(err.message, 200)}`);
  }
  if (err instanceof ClusterApiError) return new HealthRequestError('http-status', `${doing}: ${printable(err.message, 200)}`);
  return err;
}
