/**
 * Secret masking for every output (DESIGN §8): Secret `data`/`stringData`, pull-secret
 * payloads (`.dockerconfigjson`, `.dockercfg`) and `pullSecretHash` are replaced by a
 * short fingerprint, so that a change stays visible ("(sensitive, 3f2a…)" -> "(sensitive, 9b1c…)")
 * while the value does not leak into PR comments or CI logs.
 */
import { createHash } from 'node:crypto';

const SENSITIVE_KEYS = new Set(['.dockerconfigjson', '.dockercfg', 'pullSecretHash', 'pull-secret', 'token', 'password']);

export function maskValue(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return `(sensitive value, sha256 ${createHash('sha256').update(text ?? '').digest('hex').slice(0, 8)})`;
}

export function maskSecrets<T>(value: T): T {
  return walk(value, false) as T;
}

function walk(v: unknown, inSecret: boolean): unknown {
  if (Array.isArray(v)) return v.map((x) => walk(x, inSecret));
  if (v === null || typeof v !== 'object') return v;
  const obj = v as Record<string, unknown>;
  const isSecretObject = obj.kind === 'Secret';
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(obj)) {
    if (SENSITIVE_KEYS.has(k) || (isSecretObject && (k === 'data' || k === 'stringData'))) {
      out[k] = val !== null && typeof val === 'object' && !Array.isArray(val)
        ? Object.fromEntries(Object.entries(val).map(([kk, vv]) => [kk, maskValue(vv)]))
        : maskValue(val);
    } else if (inSecret && (k === 'data' || k === 'stringData')) {
      out[k] = maskValue(val);
    } else {
      out[k] = walk(val, inSecret || isSecretObject);
    }
  }
  return out;
}
