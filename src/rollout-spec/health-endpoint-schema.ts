/**
 * The endpoint of a health check that reads HTTP (prometheus, alerts; docs/design.md §11, docs/spec.md
 * "Health checks"): its URL, how bootcplan authenticates and which CA it trusts, and the rules
 * that need the URL and the auth together. Part of the `healthChecks` schema (health-schema.ts).
 *
 * Trust: the spec comes from git and is reviewed, and it names the endpoint bootcplan sends a token
 * to. So credentials are only references to cluster objects (a Secret key) or bootcplan's own
 * identity, never file paths on the machine that applies (no `ca: {file}` exists) and never in the
 * URL; a token is never sent without TLS except to a loopback address.
 */
import { type Schema, type ObjectSchema, type Ctx, isPlainObject, validate, describeType } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';

/** The longest URL accepted (it ends up in plans, messages and HTTP request lines). */
const MAX_URL = 2048;
/** Kubernetes DNS-1123 label and subdomain (k8s.io/apimachinery pkg/util/validation). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const HOSTS_LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** A DNS-1123 label (a namespace, a check's name). */
export const dnsLabel = (description: string): Schema => ({
  type: 'string',
  pattern: DNS_LABEL,
  maxLength: 63,
  patternText: 'a DNS label: lowercase letters, digits and "-", at most 63 characters',
  description,
});
/** A Kubernetes object name: a DNS-1123 subdomain. */
export const dnsName = (description: string): Schema => ({
  type: 'string',
  pattern: DNS_SUBDOMAIN_NAME,
  maxLength: 253,
  patternText: 'a Kubernetes object name: lowercase letters, digits, "-" and "."',
  description,
});
const keySchema = (dflt: string): Schema => ({
  type: 'string',
  pattern: /^[-._a-zA-Z0-9]+$/,
  maxLength: 253,
  patternText: 'a ConfigMap or Secret key: letters, digits, "-", "_" and "."',
  default: dflt,
  description: 'The key of the data.',
});

const keyRef = (what: string, dflt: string): ObjectSchema => ({
  type: 'object',
  required: ['namespace', 'name'],
  description: what,
  fields: { namespace: dnsLabel('The namespace.'), name: dnsName("The object's name (RBAC can grant get on exactly this name)."), key: keySchema(dflt) },
});

const bearerSecretSchema = keyRef('A Secret holding the bearer token (read per apply, sent only in the Authorization header, never printed).', 'token');
const authObject: ObjectSchema = { type: 'object', required: ['bearerTokenSecret'], fields: { bearerTokenSecret: bearerSecretSchema } };
const caObjects: ObjectSchema = {
  type: 'object',
  fields: { configMap: keyRef('A ConfigMap key holding PEM certificates.', 'ca.crt'), secret: keyRef('A Secret key holding PEM certificates.', 'ca.crt') },
};

const authSchema: Schema = {
  type: 'any',
  expected: '`ServiceAccount`, `none`, or {bearerTokenSecret: {namespace, name, key}}',
  defaultText: 'ServiceAccount',
  description:
    "How bootcplan authenticates: ServiceAccount (the bearer token of bootcplan's own Kubernetes identity: in a pod its projected ServiceAccount token), none, or bearerTokenSecret (a token in a Secret; key defaults to token).",
  json: {
    oneOf: [
      { enum: ['ServiceAccount', 'none'] },
      { type: 'object', additionalProperties: false, required: ['bearerTokenSecret'], properties: { bearerTokenSecret: { type: 'object' } } },
    ],
  },
  check(v, path, ctx) {
    if (v === 'ServiceAccount' || v === 'none') return;
    if (typeof v === 'string') {
      ctx.report({
        code: 'invalid-enum',
        path,
        message: `Unsupported value: "${v}"`,
        expected: this.expected,
        hint: /^service ?account$/i.test(v) ? 'did you mean "ServiceAccount"?' : undefined,
      });
      return;
    }
    validate(authObject, v, path, ctx);
  },
};

const caSchema: Schema = {
  type: 'any',
  expected: '`system`, {configMap: {namespace, name, key}} or {secret: {namespace, name, key}}',
  defaultText: 'the default URL: the service CA bundle (ConfigMap openshift-bootcplan/openshift-service-ca.crt, key service-ca.crt); any other URL: system',
  description:
    "Who signs the server's certificate: system (Node.js's roots), or PEM certificates in a ConfigMap or Secret key (key defaults to ca.crt). The certificate is always verified; there is no option to skip it.",
  json: {
    oneOf: [
      { const: 'system' },
      {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        maxProperties: 1,
        properties: { configMap: { type: 'object' }, secret: { type: 'object' } },
      },
    ],
  },
  check(v, path, ctx) {
    if (v === 'system') return;
    if (typeof v === 'string' || !isPlainObject(v)) {
      ctx.report({
        code: 'wrong-type',
        path,
        message: `expected system or a ConfigMap/Secret reference, got ${describeType(v)}`,
        expected: this.expected,
        hint: 'a file path is not accepted: a spec from git never names files on the machine that applies it; put the CA in a ConfigMap',
      });
      return;
    }
    validate(caObjects, v, path, ctx);
    const kinds = Object.keys(v).filter((k) => k === 'configMap' || k === 'secret');
    if (kinds.length !== 1 && Object.keys(v).every((k) => k === 'configMap' || k === 'secret')) {
      ctx.report({
        code: 'ca-one-source',
        path,
        message: kinds.length ? 'a CA comes from a ConfigMap or a Secret, not both' : 'the CA names no ConfigMap or Secret',
        expected: this.expected,
      });
    }
  },
};

/** The fields of a check that reads an HTTP endpoint (prometheus, alerts): where, as whom, trusting which CA. */
export const endpointFields: Record<string, Schema> = {
  url: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_URL,
    defaultText: 'OpenShift: https://thanos-querier.openshift-monitoring.svc:9091; elsewhere required',
    description:
      'The Prometheus (or Thanos Querier, or Alertmanager) base URL; a path is a route prefix. https, or http only with auth: none or to a loopback address. No credentials, query or fragment.',
  },
  auth: authSchema,
  ca: caSchema,
};

/** The URL rules that need the URL and the auth together (docs/spec.md "Health checks"). */
export function checkEndpoint(e: Record<string, unknown>, path: string, ctx: Ctx): void {
  if (typeof e.url !== 'string' || !e.url) return;
  const at = joinPath(path, 'url');
  let u: URL;
  try {
    u = new URL(e.url);
  } catch {
    ctx.report({ code: 'health-url-invalid', path: at, message: `"${e.url}" is not an absolute URL`, expected: 'https://host[:port][/prefix]' });
    return;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    ctx.report({ code: 'health-url-invalid', path: at, message: `"${u.protocol}" URLs are not supported`, expected: 'https://host[:port][/prefix]' });
    return;
  }
  if (u.username || u.password) {
    ctx.report({
      code: 'url-credentials',
      path: at,
      message: 'the URL carries credentials',
      expected: 'a URL without user:password@',
      hint: 'put credentials in a Secret: auth.bearerTokenSecret',
    });
  }
  if (u.search || u.hash || e.url.includes('?') || e.url.includes('#')) {
    ctx.report({
      code: 'health-url-invalid',
      path: at,
      message: 'the URL has a query or a fragment',
      expected: 'a base URL: https://host[:port][/prefix]',
      hint: 'bootcplan adds /api/v1/... and its own parameters',
    });
  }
  if (u.protocol === 'http:') {
    const loopback = HOSTS_LOOPBACK.test(u.hostname);
    if (e.auth !== 'none' && !loopback) {
      ctx.report({
        code: 'http-with-token',
        path: at,
        message: 'a token would be sent without TLS',
        expected: 'an https URL, or auth: none',
        hint: 'use the https port of the service; an in-cluster Prometheus without authentication needs auth: none',
      });
    } else if (!loopback) {
      ctx.report({
        severity: 'warning',
        code: 'http-without-tls',
        path: at,
        message: `${u.host} is read over plain http: anyone on the path can change the answers the gates rely on`,
        hint: 'use https where the server offers it',
      });
    }
  }
}
