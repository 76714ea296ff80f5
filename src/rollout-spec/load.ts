/**
 * Loads a Rollout spec from text (the CLI does the file or git I/O). Returns every
 * problem at once, each with file:line:column, never throws on bad input.
 */
import { createHash } from 'node:crypto';
import { type Diagnostic, type SourceMap, hasErrors, sortDiagnostics } from '../base/diagnostics.ts';
import { parseYamlWithPositions } from '../base/yaml.ts';
import { collect, validate, isPlainObject } from '../base/schema.ts';
import { rolloutSchema } from './rollout-schema.ts';
import type { RolloutSpec } from './types.ts';

interface Loaded {
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

export function parseRolloutSpec(text: string, file: string): LoadedSpec {
  const sha256 = createHash('sha256').update(text).digest('hex');
  const parsed = parseYamlWithPositions(text, file);
  if (hasErrors(parsed.diagnostics)) {
    return { spec: null, map: parsed.map, diagnostics: sortDiagnostics(parsed.diagnostics), sha256 };
  }
  const docs = parsed.documents.filter((d) => d !== null && d !== undefined);
  if (docs.length !== 1) {
    return {
      spec: null,
      map: parsed.map,
      sha256,
      diagnostics: [
        {
          severity: 'error',
          code: docs.length === 0 ? 'empty-spec' : 'multiple-documents',
          message: docs.length === 0 ? 'the file is empty' : `the file holds ${docs.length} YAML documents`,
          path: null,
          file,
          line: 1,
          column: 1,
          expected: 'exactly one document of kind Rollout (apiVersion bootcplan.dev/v1alpha1)',
          hint: docs.length === 0 ? 'start from examples/rollout.yaml' : 'keep one Rollout per file',
        },
      ],
    };
  }
  const doc = docs[0];
  if (!isPlainObject(doc)) {
    return {
      spec: null,
      map: parsed.map,
      sha256,
      diagnostics: [
        {
          severity: 'error',
          code: 'not-a-rollout',
          message: `the document is ${Array.isArray(doc) ? 'a list' : 'a single value'}, not a mapping`,
          path: null,
          file,
          line: 1,
          column: 1,
          expected: 'a mapping with apiVersion, kind, metadata and spec',
          hint: 'start from examples/rollout.yaml',
        },
      ],
    };
  }
  const { ctx, diagnostics } = collect(parsed.map);
  validate(rolloutSchema, doc, '', ctx);
  const all = sortDiagnostics([...parsed.diagnostics, ...diagnostics]);
  return conforms(doc, all) ? { spec: doc, map: parsed.map, diagnostics: all, sha256 } : { spec: null, map: parsed.map, diagnostics: all, sha256 };
}
