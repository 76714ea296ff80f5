/**
 * YAML (and JSON, its flow subset) with positions: every field's line:column, for diagnostics
 * that name where a value is. Used for specs, and on the error paths of snapshot and plan
 * files. Hostile input ends in a diagnostic: aliases that expand (the yaml library's
 * maxAliasCount) and nesting deeper than MAX_NESTING (base/limits.ts).
 */
import { LineCounter, parseAllDocuments, isMap, isSeq, isScalar, isPair, isAlias, isNode, visit, type Node as YamlNode, type Document } from 'yaml';
import { type Diagnostic, type SourceMap, emptySourceMap, joinPath } from './diagnostics.ts';
import { MAX_NESTING, flowNestingOffset } from './limits.ts';
import { messageOf } from './errors.ts';

interface ParsedYaml {
  /** One JS value per document in the stream. */
  documents: unknown[];
  map: SourceMap;
  diagnostics: Diagnostic[];
}

interface ParseOptions {
  /** How deep to record field positions (snapshots of big clusters only need the first levels). */
  maxDepth?: number;
  /** Prefix paths with `[docIndex]` when the stream has several documents. */
  multiDocument?: boolean;
}

/**
 * Rejects input that is not text: a NUL byte or a run of invalid UTF-8 (decoded as U+FFFD)
 * means someone pointed us at a binary, and the YAML parser would report nonsense.
 */
export function binaryInputDiagnostic(text: string, file: string): Diagnostic | null {
  const nul = text.indexOf('\u0000');
  const bad = text.indexOf('\uFFFD');
  const at = nul >= 0 ? nul : bad;
  if (at < 0) return null;
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - before.lastIndexOf('\n');
  return {
    severity: 'error',
    code: 'not-text',
    message: nul >= 0 ? 'file contains a NUL byte; it is not a text file' : 'file is not valid UTF-8 text',
    path: null,
    file,
    line,
    column,
    expected: 'a UTF-8 YAML or JSON text file',
    hint: 'check the path: this looks like a binary or a compressed file',
  };
}

/**
 * Above this size a bad file's errors name the field path without line:column: the
 * position-tracking re-parse (error path only) is too slow for bigger files.
 */
export const POSITION_REPARSE_LIMIT = 8 * 1024 * 1024;

/** The 1-based line and column of a character offset in `text`. */
export function positionAt(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
}

export function parseYamlWithPositions(text: string, file: string, opts: ParseOptions = {}): ParsedYaml {
  const map = emptySourceMap(file);
  const diagnostics: Diagnostic[] = [];
  const binary = binaryInputDiagnostic(text, file);
  if (binary) return { documents: [], map, diagnostics: [binary] };

  const lineCounter = new LineCounter();
  let docs: Document.Parsed[];
  try {
    docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  } catch (err) {
    diagnostics.push({
      severity: 'error',
      code: 'yaml-syntax',
      message: `cannot parse YAML: ${messageOf(err)}`,
      path: null,
      file,
      line: null,
      column: null,
      expected: 'a YAML document',
    });
    return { documents: [], map, diagnostics };
  }

  const pos = (offset: number) => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };

  diagnostics.push(...parserDiagnostics(docs, text, file, pos));
  if (diagnostics.some((d) => d.severity === 'error')) return { documents: [], map, diagnostics };

  const maxDepth = opts.maxDepth ?? Infinity;
  let tooDeepAt: { line: number; column: number } | null = null;
  const walk = (node: YamlNode | null | undefined, path: string, depth: number) => {
    if (!node || depth > maxDepth || tooDeepAt) return;
    if (depth > MAX_NESTING) {
      tooDeepAt = pos(node.range?.[0] ?? 0);
      return;
    }
    if (node.range) map.values[path] ??= pos(node.range[0]);
    if (isScalar(node) && node.type && node.type !== 'PLAIN')
      (map.offsets ??= {})[path] = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE' ? 1 : null;
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const childPath = joinPath(path, key);
        const keyNode = isNode(pair.key) ? pair.key : null;
        if (keyNode?.range) map.keys[childPath] = pos(keyNode.range[0]);
        walk(isNode(pair.value) ? pair.value : null, childPath, depth + 1);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(isNode(item) ? item : null, joinPath(path, i), depth + 1));
    }
  };

  const documents: unknown[] = [];
  const live = docs.filter((d) => d.contents !== null || docs.length === 1);
  for (const [i, doc] of live.entries()) {
    const prefix = opts.multiDocument && live.length > 1 ? `[${i}]` : '';
    walk(doc.contents, prefix, 0);
    if (tooDeepAt) return { documents: [], map, diagnostics: [...diagnostics, tooDeep(file, tooDeepAt)] };
    try {
      // The yaml library counts what aliases expand to and throws past the limit.
      documents.push(doc.toJS({ maxAliasCount: 100 }));
    } catch (err) {
      if (!(err instanceof ReferenceError) || !/alias/i.test(err.message)) throw err;
      const at = firstAliasOffset(doc);
      return { documents: [], map, diagnostics: [...diagnostics, aliasExpansion(file, at === null ? null : pos(at))] };
    }
  }
  return { documents, map, diagnostics };
}

/** The yaml library's errors and warnings as diagnostics. */
function parserDiagnostics(
  docs: readonly Document.Parsed[],
  text: string,
  file: string,
  pos: (offset: number) => { line: number; column: number },
): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const doc of docs) {
    for (const e of [...doc.errors, ...doc.warnings]) {
      if (e.code === 'RESOURCE_EXHAUSTION') {
        // The parser ran out of stack: nesting no real input has.
        out.push(tooDeep(file, pos(flowNestingOffset(text) ?? e.pos[0])));
        continue;
      }
      const p = pos(e.pos[0]);
      const isDup = e.code === 'DUPLICATE_KEY';
      out.push({
        severity: doc.errors.includes(e) ? 'error' : 'warning',
        code: isDup ? 'duplicate-key' : 'yaml-syntax',
        message: firstLine(e.message),
        path: null,
        file,
        line: p.line,
        column: p.column,
        expected: isDup ? 'each key once per mapping' : 'valid YAML',
        hint: isDup ? 'remove or merge the repeated key' : 'check indentation and quoting around this position',
      });
    }
  }
  return out;
}

/** Where the first alias (`*name`) of a parsed document stands, as an offset. */
function firstAliasOffset(doc: Document.Parsed): number | null {
  let at: number | null = null;
  visit(doc, {
    Alias(_, node) {
      if (isAlias(node) && node.range) at = Math.min(at ?? Infinity, node.range[0]);
    },
  });
  return at;
}

/** Offset of the first alias in YAML text, found with the position-tracking parser (error path only). */
export function firstAliasPosition(text: string): { line: number; column: number } | null {
  const lineCounter = new LineCounter();
  let at: number | null = null;
  for (const doc of parseAllDocuments(text, { lineCounter })) {
    const a = firstAliasOffset(doc);
    if (a !== null) at = Math.min(at ?? Infinity, a);
  }
  if (at === null) return null;
  const p = lineCounter.linePos(at);
  return { line: p.line, column: p.col };
}

export function aliasExpansion(file: string, at: { line: number; column: number } | null): Diagnostic {
  return {
    severity: 'error',
    code: 'yaml-alias-expansion',
    message: 'YAML aliases expand to far more values than the file holds (an "alias bomb")',
    path: null,
    file,
    line: at?.line ?? null,
    column: at?.column ?? null,
    expected: 'plain YAML; bootcplan and kubectl never write aliases that refer to aliases',
    hint: 'write the values out instead of using anchors (&name) and aliases (*name)',
  };
}

export function tooDeep(file: string, at: { line: number; column: number } | null, path: string | null = null): Diagnostic {
  return {
    severity: 'error',
    code: 'yaml-too-deep',
    message: `nested more than ${MAX_NESTING} levels deep`,
    path,
    file,
    line: at?.line ?? null,
    column: at?.column ?? null,
    expected: `at most ${MAX_NESTING} levels of nesting`,
    hint: 'this is not a Kubernetes object or a bootcplan spec; check the file',
  };
}

function firstLine(s: string): string {
  return s.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}
