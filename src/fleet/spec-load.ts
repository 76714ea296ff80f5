/**
 * Loads a Fleet spec from text (the CLI does the file or git I/O), as spec/load.ts loads a
 * Rollout spec: every problem at once, each with file:line:column, expected and hint; never
 * throws on bad input. Then each cluster's effective spec (effective-spec.ts) is validated as
 * a Rollout spec, so that an override cannot make an invalid spec for one cluster unnoticed.
 */
import { createHash } from 'node:crypto';
import { type Diagnostic, type SourceMap, hasErrors, sortDiagnostics } from '../base/diagnostics.ts';
import { parseYamlWithPositions } from '../base/yaml.ts';
import { collect, validate, isPlainObject } from '../base/schema.ts';
import { fleetSchema } from './spec-schema.ts';
import { rolloutSchema } from '../rollout-spec/rollout-schema.ts';
import { effectiveSpec, sharedMapOf, type EffectiveSpec, type SharedMap } from './effective-spec.ts';
import { FLEET_KIND, type FleetSpec } from './spec-types.ts';

interface Loaded {
  map: SourceMap;
  diagnostics: Diagnostic[];
  /** sha256 of the exact bytes read. */
  sha256: string;
}

/** A Fleet without error diagnostics: the schema (spec-schema.ts) and every effective spec hold. */
export interface CheckedFleet extends Loaded {
  fleet: FleetSpec;
}

/** A Fleet as read: checked, or null with the errors that say why. */
export type LoadedFleet = CheckedFleet | (Loaded & { fleet: null });

/** A loaded Fleet is checked when it has no error diagnostic (then parseFleetSpec gave it a Fleet). */
export function isCheckedFleet(loaded: LoadedFleet): loaded is CheckedFleet {
  return loaded.fleet !== null && !hasErrors(loaded.diagnostics);
}

/** The document is a FleetSpec when validating it against the schema reported no error. */
function conforms(doc: unknown, diagnostics: readonly Diagnostic[]): doc is FleetSpec {
  return !hasErrors(diagnostics);
}

const START = 'start from examples/fleet/fleet.yaml';

function single(file: string, code: string, message: string, expected: string, hint: string): Diagnostic {
  return { severity: 'error', code, message, path: null, file, line: 1, column: 1, expected, hint };
}

export function parseFleetSpec(text: string, file: string): LoadedFleet {
  const sha256 = createHash('sha256').update(text).digest('hex');
  const parsed = parseYamlWithPositions(text, file);
  const fail = (diagnostics: Diagnostic[]): LoadedFleet => ({ fleet: null, map: parsed.map, diagnostics: sortDiagnostics(diagnostics), sha256 });
  if (hasErrors(parsed.diagnostics)) return fail(parsed.diagnostics);
  const docs = parsed.documents.filter((d) => d !== null && d !== undefined);
  if (docs.length !== 1) {
    return fail([
      docs.length === 0
        ? single(file, 'empty-spec', 'the file is empty', `exactly one document of kind ${FLEET_KIND}`, START)
        : single(
            file,
            'multiple-documents',
            `the file holds ${docs.length} YAML documents`,
            `exactly one document of kind ${FLEET_KIND}`,
            'keep one Fleet per file',
          ),
    ]);
  }
  const doc = docs[0];
  if (!isPlainObject(doc)) {
    return fail([
      single(
        file,
        'not-a-fleet',
        `the document is ${Array.isArray(doc) ? 'a list' : 'a single value'}, not a mapping`,
        'a mapping with apiVersion, kind, metadata and spec',
        START,
      ),
    ]);
  }
  const { ctx, diagnostics } = collect(parsed.map);
  validate(fleetSchema, doc, '', ctx);
  if (doc.kind === 'Rollout') {
    diagnostics.push(
      single(
        file,
        'not-a-fleet',
        'this is a Rollout spec, not a Fleet',
        `kind ${FLEET_KIND}`,
        "plan one cluster with `bootcplan plan -f FILE`; a Fleet wraps the Rollout spec's `spec` block in spec.rollout",
      ),
    );
  }
  let all = [...parsed.diagnostics, ...diagnostics];
  if (conforms(doc, all)) all = [...all, ...effectiveDiagnostics(doc, parsed.map, new Set(all.map(where)))];
  const sorted = sortDiagnostics(all);
  return conforms(doc, sorted) ? { fleet: doc, map: parsed.map, diagnostics: sorted, sha256 } : { fleet: null, map: parsed.map, diagnostics: sorted, sha256 };
}

/**
 * Each cluster's effective spec validated as a Rollout spec. A finding many clusters share (an
 * override applied to them all) is reported once, at its position, naming the first cluster
 * and how many more; a finding of the shared spec itself (already reported) is not repeated.
 */
const where = (d: Diagnostic) => `${d.code} ${d.line}:${d.column}`;

function effectiveDiagnostics(fleet: FleetSpec, map: SourceMap, known: ReadonlySet<string>): Diagnostic[] {
  const shared = sharedMapOf(map);
  const found = new Map<string, { d: Diagnostic; clusters: string[] }>();
  fleet.spec.clusters.forEach((c, i) => {
    const eff = effectiveSpec(fleet, map, shared, i);
    const { ctx, diagnostics } = collect(eff.map);
    validate(rolloutSchema, eff.spec, '', ctx);
    for (const d of diagnostics) {
      if (known.has(where(d))) continue; // the shared spec's own finding, reported once already
      const key = `${d.severity} ${d.code} ${d.line}:${d.column} ${d.message}`;
      const seen = found.get(key);
      if (seen) seen.clusters.push(c.name);
      else found.set(key, { d, clusters: [c.name] });
    }
  });
  return [...found.values()].map(({ d, clusters }) => ({
    ...d,
    message: `${clusters.length === 1 ? `cluster "${clusters[0]}"` : `clusters "${clusters[0]}" and ${clusters.length - 1} more`}: ${d.message}`,
  }));
}

/** Every cluster's effective spec, in the Fleet's order (the Fleet must be valid). */
export function effectiveSpecs(fleet: FleetSpec, map: SourceMap): EffectiveSpec[] {
  const shared: SharedMap = sharedMapOf(map);
  return fleet.spec.clusters.map((_, i) => effectiveSpec(fleet, map, shared, i));
}
