/**
 * The errors of the REST layer. Two families:
 * - The API server refused a request with a Kubernetes Status: the driver's errors
 *   (NotFoundError, ConflictError, ...), DriverErrors the applier branches on
 *   (src/apply/ports/driver.ts), or else KubeApiError, a ClusterApiError.
 * - No usable answer at all (unreachable, timed out, too large, not JSON, not the kind
 *   asked for, refused by a proxy): KubeRequestError, a ClusterApiError, so every command
 *   reports it as one line with a hint (exit 1), whatever path it leaves src/kube by.
 */
import type http from 'node:http';
import { ClusterApiError, messageOf } from '../base/errors.ts';
import { type DriverError, ConflictError, PreconditionFailedError, NotFoundError, AlreadyExistsError } from '../apply/ports/driver.ts';
import { printable } from './answers.ts';
import { isPlainObject } from '../base/schema.ts';

/**
 * The API server refused a request (a Status other than the driver's specific errors: 401,
 * 403, 422, 429, 5xx, ...). A ClusterApiError ("the cluster ... refused a request"), so
 * every command reports it as one line with its hint, wherever it surfaces; the applier
 * never branches on it (it branches on the driver's errors, which stay DriverErrors).
 */
export class KubeApiError extends ClusterApiError {
  readonly status: number | null;
  readonly reason: string | null;
  constructor(message: string, status: number | null, reason: string | null = null, hint?: string) {
    super(message, hint);
    this.status = status;
    this.reason = reason;
  }
}

/**
 * A JSON patch the server could not apply to the object (a `test` that failed, or a path
 * that does not exist). kube-apiserver answers 422 with a generic message and no causes,
 * so the driver re-reads the object to say which operation failed.
 */
export class PatchNotApplicableError extends KubeApiError {
  constructor(message: string) {
    super(message, 422, 'Invalid');
  }
}

/** Why a request got no usable answer. */
type RequestProblem =
  | 'kubeconfig' // the kubeconfig's credentials or proxy could not be applied
  | 'unreachable' // connection refused or reset, DNS, TLS
  | 'proxy' // the proxy of proxy-url refused the tunnel
  | 'timeout' // no complete answer within the request timeout
  | 'too-large' // the answer passed the size cap
  | 'not-json' // a 2xx answer that is not JSON (an HTML login page, garbage)
  | 'unexpected-answer' // JSON, but not what was asked for; or an error that is not a Status
  | 'list-expired'; // a paginated list whose continue token expired again after a restart

/** A request that got no usable answer from the API server. */
export class KubeRequestError extends ClusterApiError {
  constructor(
    message: string,
    readonly problem: RequestProblem,
    readonly endpoint: string,
    hint: string,
  ) {
    super(message, hint);
  }
}

export const HINT_NOT_API_SERVER =
  'is --kubeconfig pointing at the API server, or at a login proxy? (`kubectl --kubeconfig FILE get --raw /version` should print JSON)';

/**
 * Maps an API status to the driver's errors. A failed JSON-patch `test` comes back as
 * 422 (apiserver patch handler: "testing value /path failed") — PreconditionFailedError;
 * a 409 is a write conflict (ConflictError) unless it says AlreadyExists.
 */
export function errorFromStatus(
  status: number,
  body: Record<string, unknown>,
  what: string,
  headers: http.IncomingHttpHeaders = {},
): DriverError | KubeApiError {
  const message = typeof body.message === 'string' ? printable(body.message, 2000) : `HTTP ${status}`;
  const reason = typeof body.reason === 'string' ? printable(body.reason, 100) : null;
  const details = isPlainObject(body.details) ? body.details : {};
  const testFailed = /testing value (\S+) failed|test operation|TestFailed|test failed/i.exec(message);
  if ((status === 422 || status === 409) && testFailed) {
    return new PreconditionFailedError(`${what}: a precondition of the patch failed (${message})`, testFailed[1] ?? '');
  }
  if (status === 404) return new NotFoundError(`${what}: not found${message && !/not found/.test(message) ? ` (${message})` : ''}`);
  if (status === 409 && reason === 'AlreadyExists') return new AlreadyExistsError(`${what}: already exists`);
  if (status === 409) return new ConflictError(`${what}: ${message}`);
  if (status === 401)
    return new KubeApiError(
      `${what}: the cluster refused the credentials (401 Unauthorized)`,
      status,
      reason,
      'log in again (`oc login`), or check the token or client certificate of the kubeconfig user',
    );
  if (status === 403)
    return new KubeApiError(`${what}: ${message}`, status, reason, 'the account lacks a permission; bootcplan needs the ClusterRole of examples/rbac.yaml');
  if (status === 429) {
    const retry = Number(headers['retry-after'] ?? '');
    return new KubeApiError(
      `${what}: ${message}`,
      status,
      reason ?? 'TooManyRequests',
      Number.isFinite(retry) && retry > 0 ? `retry after ${retry}s` : undefined,
    );
  }
  if (status === 422 && reason === 'Invalid' && !details.causes && !details.name) {
    return new PatchNotApplicableError(`${what}: the patch cannot be applied: ${message}`);
  }
  if (status === 422) return new KubeApiError(`${what}: rejected by the API server: ${message}`, status, reason ?? 'Invalid');
  return new KubeApiError(`${what}: ${message}`, status, reason);
}

/** Where a request went, for messages: the server, the proxy (credentials masked), the context. */
export interface Route {
  server: string;
  proxy: string | null;
  context: string;
}

const via = (r: Route) => `${r.server}${r.proxy ? ` through proxy ${r.proxy}` : ''}`;

function unreachableHint(code: string, message: string, r: Route): string {
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/.test(code) || /certificate/i.test(message))
    return 'the server certificate is not trusted: check certificate-authority(-data) in the kubeconfig';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `the host name of ${r.proxy && /proxy/.test(message) ? 'the proxy' : 'the server'} does not resolve: check the server (and proxy-url) of the kubeconfig cluster, and DNS`;
  if (code === 'ECONNRESET' || /socket hang up|aborted/.test(message))
    return `the server${r.proxy ? ' or the proxy' : ''} closed the connection: check that the URL is the API server's (https for https), and any load balancer or proxy in between`;
  if (r.proxy) {
    const env = /\((HTTPS?_PROXY|https?_proxy)\)$/.exec(r.proxy)?.[1];
    return env
      ? `check that the proxy of ${env} is up and reaches the cluster, or add the API server's host to NO_PROXY to reach it directly`
      : 'check that the proxy of proxy-url in the kubeconfig is up, and that the cluster is reachable from it';
  }
  return 'check that the cluster is up and that the kubeconfig points at it (`kubectl cluster-info`)';
}

/** A connection failure (refused, reset, DNS, TLS: Node.js error `code` and `message`) as a KubeRequestError naming the server. */
export function unreachable(code: string, message: string, endpoint: string, r: Route): KubeRequestError {
  const text = printable(message.replace(new RegExp(`^${code}:?\\s*`), ''), 300);
  const msg = `cannot reach the Kubernetes API at ${via(r)} (context "${r.context}"): ${code ? code + ' ' : ''}${text} (${endpoint})`;
  return new KubeRequestError(msg, 'unreachable', endpoint, unreachableHint(code, message, r));
}

export function timedOut(endpoint: string, r: Route, seconds: number, phase: 'headers' | 'body' | 'watch'): KubeRequestError {
  const what =
    phase === 'headers'
      ? `no answer from ${via(r)} within ${seconds}s`
      : phase === 'body'
        ? `the answer from ${via(r)} was not complete within ${seconds}s`
        : `the server did not end the watch within ${seconds}s after its timeoutSeconds (${via(r)})`;
  return new KubeRequestError(
    `${endpoint}: ${what}`,
    'timeout',
    endpoint,
    'the API server or the network is slow or stuck: check `kubectl get --raw /readyz`; a slow link may need a longer --request-timeout',
  );
}

export function tooLarge(endpoint: string, r: Route, capBytes: number, declared?: number): KubeRequestError {
  return new KubeRequestError(
    `response from ${endpoint} exceeded ${formatBytes(capBytes)}${declared !== undefined ? ` (Content-Length ${declared})` : ''} (${via(r)})`,
    'too-large',
    endpoint,
    `no Kubernetes API server answers this much (objects are at most about 1.5 MiB, lists come in pages): ${HINT_NOT_API_SERVER}`,
  );
}

export function formatBytes(n: number): string {
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n / 2 ** 20} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** The kubeconfig could not be applied to a request (exec plugin, token file, TLS material). */
export function kubeconfigFailure(err: unknown, endpoint: string, r: Route, user: string): KubeRequestError {
  const first = printable(messageOf(err).split('\n')[0], 300);
  return new KubeRequestError(
    `cannot prepare ${endpoint} for ${r.server} with the credentials of kubeconfig user "${user}" (context "${r.context}"): ${first}`,
    'kubeconfig',
    endpoint,
    'check the user and cluster entries of the kubeconfig (`kubectl config view --minify`), and any exec plugin it runs',
  );
}
