/**
 * Unified YAML diff of the managed fields of a change (jsdiff), with a little context and
 * `# (N unchanged fields hidden)` notes. jsdiff's Myers search is bounded by
 * `maxEditLength`; when it gives up, the diff says so and shows the JSON patch instead.
 * Secrets are masked before diffing, so a changed secret shows as two different
 * fingerprints; every line shown has the credentials of references masked and invisible
 * characters made visible (the values diffed are data: docs/safety.md "What is masked in outputs"). Pure.
 */
import { diffLines } from 'diff/lib/diff/line.js'; // one module, not the whole library (start-up)
import { stringify } from 'yaml';
import type { Operation } from 'fast-json-patch';
import type { PlanChange } from '../plan/types.ts';
import { maskCredentials } from './secrets.ts';
import { maskSecrets } from '../base/secret-mask.ts';
import { clipMiddle, visible } from './vocabulary.ts';

export interface DiffLine {
  /** ' ' context, '+' added, '-' removed, '#' a note (its text carries its own indentation). */
  kind: ' ' | '+' | '-' | '#';
  text: string;
}

interface DiffOptions {
  /** Unchanged lines shown around each change (default 1). */
  context?: number;
  /** Show everything (no hidden lines). */
  full?: boolean;
  /** jsdiff's edit-length cap (default 1000 line edits; the Myers search is quadratic in it). */
  maxEditLength?: number;
  /** Shown instead of the YAML diff when jsdiff gives up. */
  patch?: readonly Operation[];
  /** Longest line shown; longer values are cut in the middle (default 400; 0 = no limit). */
  maxLineLength?: number;
}

interface DiffResult {
  lines: DiffLine[];
  /** jsdiff hit its edit-length cap; `lines` holds the JSON patch (when given). */
  gaveUp: boolean;
  /** Unchanged fields left out (0 with `full`). */
  hiddenFields: number;
  added: number;
  removed: number;
}

const DEFAULT_MAX_EDIT_LENGTH = 1000;

function toYaml(v: unknown): string {
  if (v === null || v === undefined) return '';
  return stringify(v, { lineWidth: 0, indent: 2 });
}

/** Back-compatible: the diff lines only. */
export function yamlDiff(before: unknown, after: unknown, opts: DiffOptions = {}): DiffLine[] {
  return diffValues(before, after, opts).lines;
}

/** The diff of one plan change, secrets masked; a create shows the whole object. */
export function changeDiff(ch: PlanChange, opts: DiffOptions = {}): DiffResult {
  const masked = maskSecrets({ kind: ch.kind, before: ch.before, after: ch.after, object: ch.object, patch: ch.patch });
  const after = ch.action === 'create' && masked.object !== undefined ? masked.object : masked.after;
  return diffValues(ch.action === 'create' ? null : masked.before, ch.action === 'delete' ? null : after, {
    ...opts,
    patch: opts.patch ?? masked.patch,
  });
}

export function diffValues(before: unknown, after: unknown, opts: DiffOptions = {}): DiffResult {
  const a = toYaml(before);
  const b = toYaml(after);
  const maxEditLength = opts.maxEditLength ?? DEFAULT_MAX_EDIT_LENGTH;
  const maxLine = opts.maxLineLength ?? 400;
  const parts = diffLines(a, b, { maxEditLength });
  if (!parts) return gaveUp(maxEditLength, opts.patch, maxLine);

  const lines: DiffLine[] = [];
  let added = 0;
  let removed = 0;
  for (const p of parts) {
    const kind = p.added ? '+' : p.removed ? '-' : ' ';
    const body = p.value.endsWith('\n') ? p.value.slice(0, -1) : p.value;
    for (const t of body.split('\n')) {
      lines.push({ kind, text: displayLine(t, maxLine) });
      if (kind === '+') added++;
      if (kind === '-') removed++;
    }
  }
  if (opts.full) return { lines, gaveUp: false, hiddenFields: 0, added, removed };

  const ctx = opts.context ?? 1;
  const keep = lines.map(() => false);
  lines.forEach((l, i) => {
    if (l.kind === ' ') return;
    for (let k = Math.max(0, i - ctx); k <= Math.min(lines.length - 1, i + ctx); k++) keep[k] = true;
  });
  // Keep the parent keys of every shown line so the path stays readable.
  const shown = keep.slice();
  lines.forEach((l, i) => {
    if (!shown[i]) return;
    let indent = leadingSpaces(l.text);
    for (let k = i - 1; k >= 0 && indent > 0; k--) {
      const ind = leadingSpaces(lines[k].text);
      if (lines[k].kind === ' ' && ind < indent && lines[k].text.trim()) {
        keep[k] = true;
        indent = ind;
      }
    }
  });

  const out: DiffLine[] = [];
  let hiddenFields = 0;
  let run: DiffLine[] = [];
  const flush = (next: DiffLine | undefined) => {
    if (!run.length) return;
    const n = countFields(run);
    hiddenFields += n;
    // The note sits at the indentation of the hidden lines, like a YAML comment among them.
    const indent = ' '.repeat(Math.min(...run.map((l) => leadingSpaces(l.text)), next ? leadingSpaces(next.text) : Infinity));
    out.push({ kind: '#', text: `${indent}# (${n} unchanged ${n === 1 ? 'field' : 'fields'} hidden)` });
    run = [];
  };
  lines.forEach((l, i) => {
    if (keep[i]) {
      flush(l);
      out.push(l);
    } else run.push(l);
  });
  flush(undefined);
  return { lines: out, gaveUp: false, hiddenFields, added, removed };
}

function gaveUp(maxEditLength: number, patch: readonly Operation[] | undefined, maxLine: number): DiffResult {
  const lines: DiffLine[] = [
    {
      kind: '#',
      text: `# diff gave up: more than ${maxEditLength} lines differ (jsdiff maxEditLength)${patch ? '; the JSON patch instead:' : '; see the JSON patch'}`,
    },
  ];
  let added = 0;
  let removed = 0;
  if (patch) {
    for (let i = 0; i < patch.length; i++) {
      const op = patch[i] as Operation & { value?: unknown; from?: string };
      const next = patch[i + 1] as (Operation & { value?: unknown }) | undefined;
      if (op.op === 'test' && next && next.path === op.path && (next.op === 'replace' || next.op === 'remove')) {
        lines.push({ kind: '-', text: displayLine(`${op.path}: ${JSON.stringify(op.value)}`, maxLine) });
        removed++;
        if (next.op === 'replace') {
          lines.push({ kind: '+', text: displayLine(`${next.path}: ${JSON.stringify(next.value)}`, maxLine) });
          added++;
        }
        i++;
      } else if (op.op === 'add' || op.op === 'replace') {
        lines.push({ kind: '+', text: displayLine(`${op.path}: ${JSON.stringify(op.value)}`, maxLine) });
        added++;
      } else if (op.op === 'remove') {
        lines.push({ kind: '-', text: displayLine(op.path, maxLine) });
        removed++;
      } else {
        lines.push({
          kind: ' ',
          text: displayLine(`${op.op} ${op.path}${'value' in op ? `: ${JSON.stringify(op.value)}` : ''}${op.from ? ` from ${op.from}` : ''}`, maxLine),
        });
      }
    }
  }
  return { lines, gaveUp: true, hiddenFields: 0, added, removed };
}

/** Hidden lines that carry a value (parents like `spec:` are not fields of their own). */
function countFields(run: readonly DiffLine[]): number {
  const n = run.filter((l) => {
    const t = l.text.trim();
    return t !== '' && t !== '-' && !/:$/.test(t);
  }).length;
  return n || run.length;
}

/** A line as the diff shows it: credentials masked, invisible characters visible, long lines cut in the middle. */
function displayLine(line: string, maxLine: number): string {
  return clipMiddle(visible(maskCredentials(line)), maxLine);
}

function leadingSpaces(s: string): number {
  return s.length - s.trimStart().length;
}
