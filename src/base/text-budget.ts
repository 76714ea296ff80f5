/**
 * Text cut to a size an API accepts. The API server counts in two units: Go's `len()`, the
 * UTF-8 bytes (an Event's note: k8s.io/kubernetes pkg/apis/core/validation/events.go), and
 * OpenAPI `maxLength`, the characters (code points: kube-openapi counts runes, so a CRD's
 * bound on a status message). A cut text ends with "…", inside the budget, and is cut on a
 * character boundary: never half a UTF-8 sequence, never half a surrogate pair.
 */

const ELLIPSIS = '…';

/** The UTF-8 length of one code point (a lone surrogate is sent as U+FFFD: 3 bytes). */
function utf8Width(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** The UTF-8 byte length of `s` (what Go's `len()` of the decoded string is). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** The number of code points of `s` (a surrogate pair is one). */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * The longest prefix of `s` whose cost, with `mark` appended, fits `budget`, plus `mark`; or
 * `s` itself when it fits whole. `cost` measures one code point.
 */
function cut(s: string, budget: number, mark: string, total: number, cost: (cp: number) => number, markCost: number): string {
  if (total <= budget) return s;
  let left = budget - markCost;
  if (left < 0) return '';
  let end = 0;
  for (const ch of s) {
    const c = cost(ch.codePointAt(0) ?? 0); // a character of the string: it has a code point
    if (c > left) break;
    left -= c;
    end += ch.length;
  }
  return s.slice(0, end) + mark;
}

/** `s` in at most `maxBytes` UTF-8 bytes, "…" included when cut. */
export function cutToBytes(s: string, maxBytes: number, mark = ELLIPSIS): string {
  return cut(s, maxBytes, mark, utf8Length(s), utf8Width, utf8Length(mark));
}

/** `s` in at most `maxChars` code points, "…" included when cut. */
export function cutToChars(s: string, maxChars: number, mark = ELLIPSIS): string {
  return cut(s, maxChars, mark, codePointLength(s), () => 1, codePointLength(mark));
}
