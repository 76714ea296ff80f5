/**
 * Stable fake identifiers for generated objects: digests, image references and uids derived
 * from a label, so that the same label gives the same identifier in every run.
 */
import { createHash } from 'node:crypto';

const REGISTRY = 'quay.io/example/fedora-bootc-node';

/** A stable fake sha256 digest derived from a label. */
export function fakeDigest(label: string): string {
  return `sha256:${createHash('sha256').update(label).digest('hex')}`;
}
export function imageRef(label: string, repo = REGISTRY): string {
  return `${repo}@${fakeDigest(label)}`;
}

/** A stable fake uid (the form of metadata.uid) derived from `s`. */
export function uidOf(s: string): string {
  const h = createHash('sha1').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
