/**
 * Secret masking for every output (DESIGN §8): Secret `data`/`stringData`, pull-secret
 * payloads (`.dockerconfigjson`, `.dockercfg`) and `pullSecretHash` are replaced by a
 * short fingerprint, so that a change stays visible ("(sensitive value, sha256 3f2a…)" ->
 * "(sensitive value, sha256 9b1c…)") while the value does not leak into PR comments or CI logs.
 *
 * JSON-patch operations are masked by their path too: `{op: replace, path: /data/x, value}`
 * inside a Secret change, or any path through a sensitive key.
 *
 * Human outputs (not the plan JSON) also mask the credentials inside references
 * (`maskCredentials`), and read data through `forDisplay`, which does all the masking and
 * makes invisible characters visible.
 */
import { createHash } from 'node:crypto';
import { visible } from './vocabulary.ts';

const SENSITIVE_KEYS = new Set(['.dockerconfigjson', '.dockercfg', 'pullSecretHash', 'pull-secret', 'pullSecret', 'token', 'password']);
const SECRET_PAYLOAD_KEYS = new Set(['data', 'stringData']);

export function isSensitiveKey(k: string): boolean {
  return SENSITIVE_KEYS.has(k);
}

export function maskValue(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return `(sensitive value, sha256 ${createHash('sha256').update(text ?? '').digest('hex').slice(0, 8)})`;
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
  return path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function isPatchOp(obj: Record<string, unknown>): boolean {
  return typeof obj.op === 'string' && typeof obj.path === 'string';
}

/** Copy-on-write: subtrees without secrets are returned as they are (fast on 10,000-node plans). */
function walk(v: unknown, inSecret: boolean): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x === null || typeof x !== 'object') continue;
      const y = walk(x, inSecret);
      if (y !== x) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  const obj = v as Record<string, unknown>;
  if (isPatchOp(obj) && 'value' in obj) {
    const segs = pointerSegments(obj.path as string);
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

// ---------------------------------------------------------------------------- credentials in references

/**
 * The userinfo part in front of a host: `user:password@registry/ns/img` or `user@registry`
 * (some tools take registry credentials inside an image reference, and URLs such as a proxy
 * or a cluster server may carry them too). Starts at the beginning of the text or after a
 * space, quote or bracket, so the `@` of a digest inside a reference (`quay.io/ns/img@sha256:…`)
 * is never taken for one; the userinfo may hold `=` and `@` (tokens, unencoded passwords):
 * the last `@` before the host ends it. An optional scheme (`docker://`, `https://`) stays.
 */
const USERINFO = /(^|[\s"'`(<[{,;])((?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?)([^\s/"'`<>()[\]{},;]+)@(?=([^\s/@"'`<>()[\]{},;]+)(\/?))/g;
/** `name@sha256:<hex>` is an image pinned by digest, not a user at a host (OCI image-spec descriptor digest grammar). */
const DIGEST = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-fA-F0-9]{32,}$/;

/**
 * `s` with the userinfo of every reference masked: `robot:token@quay.io/ns/img` reads
 * `***@quay.io/ns/img`, so credentials never reach a terminal, a CI log, a PR comment or a
 * report. Human outputs only: the plan JSON keeps every reference exact, since apply writes it.
 */
export function maskCredentials(s: string): string {
  if (!s.includes('@')) return s;
  return s.replace(USERINFO, (all, before: string, scheme: string, user: string, host: string, slash: string) => {
    if (DIGEST.test(host)) return all;
    // A password (`user:token@`), a URL, or a reference (`robot@quay.io/ns/img`) carries
    // credentials; a bare `name@host` is an identity (a lock holder, an e-mail address) and stays.
    const credentials = user.includes(':') || scheme !== '' || slash === '/';
    return credentials ? `${before}${scheme}***@` : all;
  });
}

// ---------------------------------------------------------------------------- what a human output reads

/** Shown only through the YAML diff (./diff.ts), which masks and makes visible each line it writes. */
const DIFFED_KEYS = new Set(['before', 'after', 'object', 'patch']);
/** Text that a renderer splits into lines itself (the unified diff of the spec file). */
const MULTILINE_KEYS = new Set(['unified']);

/** One string of data as a human output shows it: credentials masked, invisible characters escaped. */
function displayString(s: string, multiline: boolean): string {
  return multiline ? s.split('\n').map((l) => visible(maskCredentials(l))).join('\n') : visible(maskCredentials(s));
}

/**
 * What every human renderer (text, markdown, HTML, event lines, rehearsal text, and the CLI's
 * messages) reads instead of the data itself: secrets masked (`maskSecrets`), and every string,
 * wherever it sits, with the credentials of references masked (`maskCredentials`) and control,
 * bidi and invisible characters made visible (`visible`). Applied once where data enters an
 * output, so no field can be forgotten, including strings where a crafted file has a number.
 * Takes a plan, an event, a rehearsal, a diagnostic or a string. Copy-on-write: unchanged
 * subtrees are shared, and the input is never changed.
 */
export function forDisplay<T>(value: T): T {
  return displayWalk(maskSecrets(value), '') as T;
}

function displayWalk(v: unknown, key: string): unknown {
  if (typeof v === 'string') return displayString(v, MULTILINE_KEYS.has(key));
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const y = displayWalk(v[i], key);
      if (y !== v[i]) (out ??= v.slice())[i] = y;
    }
    return out ?? v;
  }
  const obj = v as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const k of Object.keys(obj)) {
    if (DIFFED_KEYS.has(k)) continue;
    const y = displayWalk(obj[k], k);
    // defineProperty: a key `__proto__` (JSON.parse makes it an own property) stays a field.
    if (y !== obj[k]) Object.defineProperty((out ??= { ...obj }), k, { value: y, enumerable: true, writable: true, configurable: true });
  }
  return out ?? obj;
}
