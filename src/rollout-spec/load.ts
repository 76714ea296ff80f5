/**
 * Loads a Rollout spec from text (the CLI does the file or git I/O). Returns every
 * problem at once, each with file:line:column, never throws on bad input.
 */
import { createHash } from 'node:crypto';
import { type Diagnostic, type SourceMap, hasErrors, sortDiagnostics } from '../base/diagnostics.ts';
import { parseYamlWithPositions } from '../base/yaml.ts';
import { collect, validate, isPlainObject, type Schema } from '../base/schema.ts';
import { rolloutSchema } from './rollout-schema.ts';
import type { RolloutSpec } from './types.ts';

export interface Loaded {
  map: SourceMap;
  diagnostics: Diagnostic[];
  /** sha256 of the exact bytes read. */
  sha256: string;
}

/** A spec without error diagnostics: the schema (rollout-schema.ts) holds for it. */
export interface ValidSpec extends Loaded {
  spec: RolloutSpec;
}

/** A spec as read: valid, or null with the errors that say why. */
export type LoadedSpec = ValidSpec | (Loaded & { spec: null });

/** A loaded spec is valid when it has no error diagnostic (then parseRolloutSpec gave it a spec). */
export function isValidSpec(loaded: LoadedSpec): loaded is ValidSpec {
  return loaded.spec !== null && !hasErrors(loaded.diagnostics);
}

/** The document is a RolloutSpec when validating it against the schema reported no error. */
function conforms(doc: unknown, diagnostics: readonly Diagnostic[]): doc is RolloutSpec {
  return !hasErrors(diagnostics);
}

/** The words of a loader's first checks: one document of its kind, and a mapping. */
export interface DocumentKind {
  /** What the file must hold, e.g. "exactly one document of kind Rollout". */
  expected: string;
  /** The hint of an empty file or a document that is no mapping (where to start from). */
  start: string;
  /** The hint of a file of many documents. */
  onePerFile: string;
  /** The code of a document that is no mapping. */
  notMapping: string;
}

/** The text read as one YAML document that is a mapping, or the diagnostics (sorted) that say why not. */
type OneDocument = (Loaded & { doc: Record<string, unknown> }) | (Loaded & { doc: null });

const firstLine = (file: string, code: string, message: string, expected: string, hint: string): Diagnostic => ({
  severity: 'error',
  code,
  message,
  path: null,
  file,
  line: 1,
  column: 1,
  expected,
  hint,
});

/**
 * The first steps of every spec loader (this file's and src/fleet/spec-load.ts): the bytes
 * hashed, the YAML parsed with positions, then exactly one document, a mapping.
 */
export function readOneDocument(text: string, file: string, kind: DocumentKind): OneDocument {
  const sha256 = createHash('sha256').update(text).digest('hex');
  const parsed = parseYamlWithPositions(text, file);
  const fail = (diagnostics: Diagnostic[]): OneDocument => ({ doc: null, map: parsed.map, diagnostics: sortDiagnostics(diagnostics), sha256 });
  if (hasErrors(parsed.diagnostics)) return fail(parsed.diagnostics);
  const docs = parsed.documents.filter((d) => d !== null && d !== undefined);
  if (docs.length !== 1)
    return fail([
      docs.length === 0
        ? firstLine(file, 'empty-spec', 'the file is empty', kind.expected, kind.start)
        : firstLine(file, 'multiple-documents', `the file holds ${docs.length} YAML documents`, kind.expected, kind.onePerFile),
    ]);
  const doc = docs[0];
  if (!isPlainObject(doc))
    return fail([
      firstLine(
        file,
        kind.notMapping,
        `the document is ${Array.isArray(doc) ? 'a list' : 'a single value'}, not a mapping`,
        'a mapping with apiVersion, kind, metadata and spec',
        kind.start,
      ),
    ]);
  return { doc, map: parsed.map, diagnostics: parsed.diagnostics, sha256 };
}

/** What validating `doc` against `schema` reports, with the positions of `map`. */
export function schemaDiagnostics(schema: Schema, doc: unknown, map: SourceMap): Diagnostic[] {
  const { ctx, diagnostics } = collect(map);
  validate(schema, doc, '', ctx);
  return diagnostics;
}

const ROLLOUT_DOCUMENT: DocumentKind = {
  expected: 'exactly one document of kind Rollout (apiVersion bootcplan.dev/v1alpha1)',
  start: 'start from examples/rollout.yaml',
  onePerFile: 'keep one Rollout per file',
  notMapping: 'not-a-rollout',
};

export function parseRolloutSpec(text: string, file: string): LoadedSpec {
  const read = readOneDocument(text, file, ROLLOUT_DOCUMENT);
  const { doc, map, sha256 } = read;
  if (doc === null) return { spec: null, map, diagnostics: read.diagnostics, sha256 };
  const all = sortDiagnostics([...read.diagnostics, ...schemaDiagnostics(rolloutSchema, doc, map)]);
  return conforms(doc, all) ? { spec: doc, map, diagnostics: all, sha256 } : { spec: null, map, diagnostics: all, sha256 };
}
