/**
 * Secret payloads masked (docs/design.md §8): Secret `data`/`stringData`, pull-secret payloads
 * (`.dockerconfigjson`, `.dockercfg`) and `pullSecretHash` are replaced by a short fingerprint,
 * so that a change stays visible ("(sensitive value, sha256 3f2a…)" -> "(sensitive value,
 * sha256 9b1c…)") while the value does not leak into PR comments or CI logs. JSON-patch
 * operations are masked by their path too: `{op: replace, path: /data/x, value}` inside a
 * Secret change, or any path through a sensitive key. A leaf: the plan file's writer
 * (plan/saved/writer.ts) and every renderer (render/secrets.ts forDisplay) mask through it.
 */
import { createHash } from 'node:crypto';
import { isPlainObject } from './schema.ts';

const SENSITIVE_KEYS = new Set(['.dockerconfigjson', '.dockercfg', 'pullSecretHash', 'pull-secret', 'pullSecret', 'token', 'password']);
const SECRET_PAYLOAD_KEYS = new Set(['data', 'stringData']);

function maskValue(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return `(sensitive value, sha256 ${createHash('sha256')
    .update(text ?? '')
    .digest('hex')
    .slice(0, 8)})`;
}

/** `value` with every secret payload replaced by its fingerprint (unchanged subtrees are shared, never mutated). */
export function maskSecrets<T>(value: T): T {
  return walk(value, false) as T;
}

/** Masks a whole payload: a map's values one by one (keys stay readable), anything else as one value. */
function maskPayload(val: unknown): unknown {
  return val !== null && typeof val === 'object' && !Array.isArray(val)
    ? Object.fromEntries(Object.entries(val).map(([kk, vv]) => [kk, maskValue(vv)]))
    : maskValue(val);
}

function pointerSegments(path: string): string[] {
  return path
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function isPatchOp(obj: Record<string, unknown>): obj is Record<string, unknown> & { op: string; path: string } {
  return typeof obj.op === 'string' && typeof obj.path === 'string';
}

/** Copy-on-write: subtrees without secrets are returned as they are (fast on 10,000-node plans). */
function walk(v: unknown, inSecret: boolean): unknown {
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x === null || typeof x !== 'object') continue;
      const y = walk(x, inSecret);
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  if (!isPlainObject(v)) return v;
  const obj = v;
  if (isPatchOp(obj) && 'value' in obj) {
    const segs = pointerSegments(obj.path);
    const hit = segs.findIndex((s) => SENSITIVE_KEYS.has(s));
    const secretRoot = inSecret && SECRET_PAYLOAD_KEYS.has(segs[0] ?? '');
    if (hit >= 0 || secretRoot) {
      // The value sits at (or below) a sensitive field: the path's depth tells which.
      const depthBelow = hit >= 0 ? segs.length - 1 - hit : segs.length - 1;
      return { ...obj, value: depthBelow === 0 ? maskPayload(obj.value) : maskValue(obj.value) };
    }
  }
  const isSecretObject = obj.kind === 'Secret';
  let out: Record<string, unknown> | null = null;
  for (const k in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
    const val = obj[k];
    let masked: unknown;
    if (SENSITIVE_KEYS.has(k) || ((isSecretObject || inSecret) && SECRET_PAYLOAD_KEYS.has(k))) masked = maskPayload(val);
    else if (val === null || typeof val !== 'object') continue;
    else masked = walk(val, inSecret || isSecretObject);
    if (masked !== val) (out ??= { ...obj })[k] = masked;
  }
  return out ?? obj;
}
