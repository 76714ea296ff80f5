/**
 * The credentials a health source holds, kept out of every text its answers become
 * (docs/safety.md "Credentials in answers"). A debugging proxy, or a server that logs the
 * request into its answer, can echo the bearer token back in an ordinary 200 answer: an alert
 * label `authorization="Bearer ..."`, a series label, a warning, a header. Every credential the
 * source obtains is added here as it is obtained (the kubeconfig's token, the identity's token
 * each time it is resolved, each Secret token read, a URL's userinfo), and every string that
 * comes from a health source is passed through `text` or `json` before it is shown:
 * - a credential of 8 characters or more is masked wherever it occurs, and so is every run of 8
 *   or more characters that is a piece of one: a credential a renderer cut short (a label cut
 *   at 60 characters) shows no piece of 8 either;
 * - a credential shorter than 8 characters is masked wherever it occurs whole (its pieces are
 *   too short to tell from ordinary text);
 * - the marker `[masked]` replaces each masked run; a marker already in the text is left as it
 *   is, so masking twice changes nothing.
 * The 8-character pieces are kept in a set, found through a rolling hash and a bitmap (one
 * probe per position; the set is read only where the bitmap says a piece may start): a 4 MiB
 * answer of 10,000 series is masked in 40 to 130 ms as one text and 70 to 360 ms as parsed
 * JSON on 2 shared cores, several times that when they are heavily loaded
 * (test/kube/credential-mask.test.ts). Credentials are kept up to 256 Ki
 * characters, the one least recently added dropped first (a rotated token stays masked long
 * after it rotated; one in use is added again at each measurement).
 */

export const MASKED = '[masked]';
/** The shortest run of a credential that is masked on its own. */
const MASK_PIECE = 8;
const MAX_HELD_CHARS = 256 * 1024;
const BITS = 1 << 20;
const BASE = 0x01000193;
/** BASE^(MASK_PIECE-1), modulo 2^32: what the character leaving the window weighed. */
const OUT_WEIGHT = (() => {
  let w = 1;
  for (let i = 1; i < MASK_PIECE; i++) w = Math.imul(w, BASE);
  return w;
})();

export class CredentialMask {
  /** The credentials, oldest first (a Map keeps insertion order). */
  private readonly held = new Map<string, true>();
  private heldChars = 0;
  private pieces = new Set<string>();
  private bitmap = new Uint32Array(BITS / 32);
  /** Credentials shorter than MASK_PIECE, longest first. */
  private short: string[] = [];
  /** No text shorter than this holds anything to mask. */
  private shortest = MASK_PIECE;

  /** Adds a credential (null, undefined and '' are ignored); one known already becomes the newest again, cheaply. */
  add(credential: string | null | undefined): void {
    if (!credential) return;
    if (this.held.has(credential)) {
      // A token in use is re-added at each measurement: it is never the oldest to drop.
      this.held.delete(credential);
      this.held.set(credential, true);
      return;
    }
    this.held.set(credential, true);
    this.heldChars += credential.length;
    let dropped = false;
    for (const old of this.held.keys()) {
      if (this.heldChars <= MAX_HELD_CHARS || old === credential) break;
      this.held.delete(old);
      this.heldChars -= old.length;
      dropped = true;
    }
    if (dropped) this.rebuild();
    else this.index(credential);
  }

  /** True when no credential is held: nothing to mask. */
  get empty(): boolean {
    return this.held.size === 0;
  }

  /** `s` with every credential, and every piece of 8 or more characters of one, replaced by MASKED. */
  text(s: string): string {
    if (this.held.size === 0 || s.length < this.shortest) return s;
    if (!s.includes(MASKED)) return this.maskRun(s);
    return s
      .split(MASKED)
      .map((part) => this.maskRun(part))
      .join(MASKED);
  }

  /** A JSON value with every string in it, object keys included, masked; unchanged subtrees are returned as they are. */
  json(v: unknown): unknown {
    if (this.held.size === 0) return v;
    return this.walk(v);
  }

  private walk(v: unknown): unknown {
    if (typeof v === 'string') return this.text(v);
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        const y = this.walk(x);
        if (y !== x) (out ??= v.slice())[i] = y;
      }
      return out ?? v;
    }
    if (v === null || typeof v !== 'object') return v;
    let changed = false;
    const entries: [string, unknown][] = [];
    for (const [k, x] of Object.entries(v)) {
      const mk = this.text(k);
      const mx = this.walk(x);
      if (mk !== k || mx !== x) changed = true;
      entries.push([mk, mx]);
    }
    return changed ? Object.fromEntries(entries) : v;
  }

  /** Masks one run of text that holds no marker. */
  private maskRun(s: string): string {
    let spans = this.pieces.size && s.length >= MASK_PIECE ? this.findPieces(s) : null;
    for (const c of this.short) {
      for (let i = s.indexOf(c); i >= 0; i = s.indexOf(c, i + c.length)) (spans ??= []).push([i, i + c.length]);
    }
    if (!spans) return s;
    spans.sort((a, b) => a[0] - b[0]);
    let out = '';
    let at = 0;
    let end = -1;
    for (const [from, to] of spans) {
      if (from > end) {
        if (end >= 0) out += MASKED;
        out += s.slice(at, from);
      }
      end = Math.max(end, to);
      at = end;
    }
    return out + MASKED + s.slice(at);
  }

  /** The runs of `s` made of 8-character pieces of a credential (overlapping pieces merged), or null. */
  private findPieces(s: string): [number, number][] | null {
    let spans: [number, number][] | null = null;
    let h = 0;
    for (let i = 0; i < MASK_PIECE; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
    let from = -1;
    let to = -1;
    for (let i = 0; ; i++) {
      const slot = (h >>> 0) & (BITS - 1);
      if (this.bitmap[slot >>> 5] & (1 << (slot & 31)) && this.pieces.has(s.slice(i, i + MASK_PIECE))) {
        if (i > to) {
          if (from >= 0) (spans ??= []).push([from, to]);
          from = i;
        }
        to = i + MASK_PIECE;
      }
      if (i + MASK_PIECE >= s.length) break;
      h = (Math.imul(h - Math.imul(s.charCodeAt(i), OUT_WEIGHT), BASE) + s.charCodeAt(i + MASK_PIECE)) | 0;
    }
    if (from >= 0) (spans ??= []).push([from, to]);
    return spans;
  }

  private index(credential: string): void {
    if (credential.length < MASK_PIECE) {
      this.short = [...this.short, credential].sort((a, b) => b.length - a.length);
      this.shortest = Math.min(this.shortest, credential.length);
      return;
    }
    let h = 0;
    for (let i = 0; i < MASK_PIECE; i++) h = (Math.imul(h, BASE) + credential.charCodeAt(i)) | 0;
    for (let i = 0; ; i++) {
      this.pieces.add(credential.slice(i, i + MASK_PIECE));
      const slot = (h >>> 0) & (BITS - 1);
      this.bitmap[slot >>> 5] |= 1 << (slot & 31);
      if (i + MASK_PIECE >= credential.length) break;
      h = (Math.imul(h - Math.imul(credential.charCodeAt(i), OUT_WEIGHT), BASE) + credential.charCodeAt(i + MASK_PIECE)) | 0;
    }
  }

  private rebuild(): void {
    this.pieces = new Set();
    this.bitmap = new Uint32Array(BITS / 32);
    this.short = [];
    this.shortest = MASK_PIECE;
    for (const c of this.held.keys()) this.index(c);
  }
}
