/**
 * Secret masking for every output (docs/design.md §8): secret payloads are masked in every output
 * (base/secret-mask.ts maskSecrets, the plan file's writer's too).
 *
 * Human outputs (not the plan JSON) also mask the credentials inside references
 * (`maskCredentials`), and read data through `forDisplay`, which does all the masking and
 * makes invisible characters visible.
 */
import { maskSecrets } from '../base/secret-mask.ts';
import { visible } from './vocabulary.ts';

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
  return multiline
    ? s
        .split('\n')
        .map((l) => visible(maskCredentials(l)))
        .join('\n')
    : visible(maskCredentials(s));
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
