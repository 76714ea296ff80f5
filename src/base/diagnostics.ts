/**
 * Diagnostics are user-facing findings about input (spec, snapshot) or the plan.
 * They are data, never exceptions: every loader collects all of them at once so a
 * user fixes a file in one round trip.
 */
type Severity = 'error' | 'warning';

export interface Diagnostic {
  severity: Severity;
  /** Stable kebab-case identifier, e.g. `max-unavailable-zero`. Tests and bots key on it. */
  code: string;
  message: string;
  /** Field path in the input, e.g. `spec.pools[0].maxUnavailable`. */
  path: string | null;
  file: string | null;
  line: number | null;
  column: number | null;
  /** What a valid value looks like. */
  expected?: string;
  /** What the user can do about it. */
  hint?: string;
}

export interface Position {
  line: number;
  column: number;
}

/**
 * Where each field of a YAML document sits. Keys are field paths (`spec.pools[0].image`).
 * `values` point at the value node, `keys` at the mapping key (used for unknown-field errors).
 * Plain data so the pure planner can attach positions to its own diagnostics.
 */
export interface SourceMap {
  file: string;
  values: Record<string, Position>;
  keys: Record<string, Position>;
  /**
   * Scalars whose text does not start at their position: 1 for a quoted one (the quote), null
   * for a block scalar (its text starts on the next line). Plain scalars are absent (0). Lets a
   * finding about a part of a value point at its column (DiagnosticInput.offset).
   */
  offsets?: Record<string, number | null>;
}

export function emptySourceMap(file: string): SourceMap {
  return { file, values: {}, keys: {} };
}

/**
 * Position of a path, falling back to the nearest ancestor that has one, and last to the
 * document itself (path ""), so that a finding about a whole document still says where.
 */
function locate(map: SourceMap | null, path: string, preferKey = false): Position | null {
  if (!map) return null;
  let p: string | null = path;
  while (p) {
    const hit = preferKey ? (map.keys[p] ?? map.values[p]) : (map.values[p] ?? map.keys[p]);
    if (hit) return hit;
    p = parentPath(p);
  }
  return map.values[''] ?? null;
}

function parentPath(path: string): string | null {
  const m = /^(.*)(\.[^.[\]]+|\[\d+\])$/.exec(path);
  return m ? m[1] || null : null;
}

export function joinPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return base ? `${base}.${key}` : key;
}

export interface DiagnosticInput {
  severity?: Severity;
  code: string;
  message: string;
  path?: string | null;
  expected?: string;
  hint?: string;
  /** Point at the mapping key rather than the value (unknown fields, duplicates). */
  atKey?: boolean;
  /** 0-based character of the (string) value the finding is about, e.g. where a condition stops parsing. */
  offset?: number;
}

export function diagnosticAt(map: SourceMap | null, d: DiagnosticInput): Diagnostic {
  const pos = locate(map, d.path ?? '', d.atKey);
  const out: Diagnostic = {
    severity: d.severity ?? 'error',
    code: d.code,
    message: d.message,
    path: d.path ?? null,
    file: map?.file ?? null,
    line: pos?.line ?? null,
    column: pos?.column ?? null,
  };
  // Into the value only when it is the value's own position and its text is on that line.
  if (d.offset !== undefined && d.path && map && map.values[d.path] === pos && !d.atKey && out.column !== null) {
    const shift = map.offsets && Object.hasOwn(map.offsets, d.path) ? map.offsets[d.path] : 0;
    if (shift !== null) out.column += shift + d.offset; // null: a block scalar, its text on the next line
  }
  if (d.expected) out.expected = d.expected;
  if (d.hint) out.hint = d.hint;
  return out;
}

export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === 'error');
}

/** `file:line:column` (as far as known) — the prefix editors and CI annotators understand. */
function formatLocation(d: Pick<Diagnostic, 'file' | 'line' | 'column'>): string {
  if (!d.file) return '';
  if (d.line == null) return d.file;
  return `${d.file}:${d.line}:${d.column ?? 1}`;
}

/** One-screen, plain-text rendering of a diagnostic (used on stderr by the CLI). */
export function formatDiagnostic(d: Diagnostic): string {
  const loc = formatLocation(d);
  const head = [d.severity, loc, d.path].filter(Boolean).join(': ');
  const lines = [`${head}: ${d.message}`];
  if (d.expected) lines.push(`  expected: ${d.expected}`);
  if (d.hint) lines.push(`  hint: ${d.hint}`);
  return lines.join('\n');
}

export function sortDiagnostics(ds: Diagnostic[]): Diagnostic[] {
  const rank = (d: Diagnostic) => (d.severity === 'error' ? 0 : 1);
  return ds.sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (a.file ?? '').localeCompare(b.file ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.column ?? 0) - (b.column ?? 0) ||
      a.code.localeCompare(b.code),
  );
}
