/**
 * Unified YAML diff of the managed fields of a change (jsdiff), with a little context and
 * a note of how many unchanged lines are hidden. Pure.
 */
import { diffLines } from 'diff';
import { stringify } from 'yaml';

export interface DiffLine {
  kind: ' ' | '+' | '-' | '#';
  text: string;
}

export interface DiffOptions {
  context?: number;
  /** Show everything (no hidden lines). */
  full?: boolean;
}

export function toYaml(v: unknown): string {
  if (v === null || v === undefined) return '';
  return stringify(v, { lineWidth: 0, indent: 2 });
}

export function yamlDiff(before: unknown, after: unknown, opts: DiffOptions = {}): DiffLine[] {
  const a = toYaml(before);
  const b = toYaml(after);
  // maxEditLength bounds the Myers search on pathological inputs; undefined means it gave up.
  const parts = diffLines(a, b, { maxEditLength: 5000 } as any) as ReturnType<typeof diffLines> | undefined;
  if (!parts) return [{ kind: '#', text: '(diff too large to compute; see the JSON patch)' }];
  const lines: DiffLine[] = [];
  for (const p of parts) {
    const kind = p.added ? '+' : p.removed ? '-' : ' ';
    const body = p.value.endsWith('\n') ? p.value.slice(0, -1) : p.value;
    for (const t of body.split('\n')) lines.push({ kind, text: t });
  }
  if (opts.full) return lines;
  const ctx = opts.context ?? 2;
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
  let hidden = 0;
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (hidden) out.push({ kind: '#', text: `(${hidden} unchanged ${hidden === 1 ? 'line' : 'lines'} hidden)` });
      hidden = 0;
      out.push(l);
    } else hidden++;
  });
  if (hidden) out.push({ kind: '#', text: `(${hidden} unchanged ${hidden === 1 ? 'line' : 'lines'} hidden)` });
  return out;
}

function leadingSpaces(s: string): number {
  return s.length - s.trimStart().length;
}
