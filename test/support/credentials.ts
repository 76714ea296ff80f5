/**
 * Credentials a test hands to bootcplan, and the check that no piece of one reached a text
 * (docs/safety.md "Credentials in answers"): neither the credential nor any run of 8 of its
 * characters, so a credential cut short by a renderer counts as shown too.
 */
import * as assert from 'uvu/assert';

/** Every 8-character piece of `credential` (the whole of it when shorter). */
export function piecesOf(credential: string): string[] {
  if (credential.length < 8) return [credential];
  return Array.from({ length: credential.length - 7 }, (_, i) => credential.slice(i, i + 8));
}

/** The first piece of any of `credentials` that `text` holds, or null. */
export function shownPiece(text: string, credentials: readonly string[]): string | null {
  for (const c of credentials) for (const p of piecesOf(c)) if (text.includes(p)) return p;
  return null;
}

/** Fails, naming `what` and the piece, when `text` holds a piece of any of `credentials`. */
export function assertNoPiece(text: string, credentials: readonly string[], what: string): void {
  const p = shownPiece(text, credentials);
  if (p === null) return;
  const at = text.indexOf(p);
  assert.unreachable(`${what} shows ${JSON.stringify(p)}: ...${text.slice(Math.max(0, at - 60), at + 40)}...`);
}
