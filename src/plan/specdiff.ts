/**
 * What a pull request changes in the spec itself (`plan --base REF`), shown beside the
 * cluster diff. Pure: both texts are passed in.
 */
import { createTwoFilesPatch } from 'diff';

export interface SpecChanges {
  /** the base revision as given, e.g. origin/main */
  base: string;
  baseCommit: string;
  path: string;
  /** unified diff of the spec file, base -> this plan's spec; empty when identical */
  unified: string;
  added: number;
  removed: number;
}

export function specChangesOf(baseText: string, text: string, path: string, base: string, baseCommit: string, headLabel: string): SpecChanges {
  const patch = createTwoFilesPatch(`${path}@${base}`, `${path}@${headLabel}`, baseText, text, undefined, undefined, { context: 3 });
  // Drop jsdiff's "Index:"/"===" preamble; keep ---/+++ and hunks.
  const lines = patch.split('\n').filter((l, i) => !(i < 2 && (l.startsWith('Index:') || l.startsWith('==='))));
  const hunks = lines.filter((l) => l.startsWith('@@')).length;
  const added = lines.filter((l) => l.startsWith('+') && !l.startsWith('+++')).length;
  const removed = lines.filter((l) => l.startsWith('-') && !l.startsWith('---')).length;
  return { base, baseCommit, path, unified: hunks ? lines.join('\n').trimEnd() + '\n' : '', added, removed };
}
