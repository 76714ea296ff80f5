/**
 * Loads a Fleet spec from text (the CLI does the file or git I/O) through the Rollout spec's
 * pipeline (rollout-spec/load.ts: one document, a mapping, the schema's findings): every
 * problem at once, each with file:line:column, expected and hint; never throws on bad input. Then each cluster's effective spec (effective-spec.ts) is validated as
 * a Rollout spec, so that an override cannot make an invalid spec for one cluster unnoticed.
 */
import { type Diagnostic, type SourceMap, hasErrors, sortDiagnostics } from '../base/diagnostics.ts';
import { readOneDocument, schemaDiagnostics, type DocumentKind, type Loaded } from '../rollout-spec/load.ts';
import { fleetSchema } from './spec-schema.ts';
import { rolloutSchema } from '../rollout-spec/rollout-schema.ts';
import { effectiveSpec, sharedMapOf, type EffectiveSpec, type SharedMap } from './effective-spec.ts';
import { FLEET_KIND, type FleetSpec } from './spec-types.ts';

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

const FLEET_DOCUMENT: DocumentKind = {
  expected: `exactly one document of kind ${FLEET_KIND}`,
  start: 'start from examples/fleet/fleet.yaml',
  onePerFile: 'keep one Fleet per file',
  notMapping: 'not-a-fleet',
};

export function parseFleetSpec(text: string, file: string): LoadedFleet {
  const read = readOneDocument(text, file, FLEET_DOCUMENT);
  const { doc, map, sha256 } = read;
  if (doc === null) return { fleet: null, map, diagnostics: read.diagnostics, sha256 };
  const diagnostics = schemaDiagnostics(fleetSchema, doc, map);
  if (doc.kind === 'Rollout') {
    diagnostics.push({
      severity: 'error',
      code: 'not-a-fleet',
      message: 'this is a Rollout spec, not a Fleet',
      path: null,
      file,
      line: 1,
      column: 1,
      expected: `kind ${FLEET_KIND}`,
      hint: "plan one cluster with `bootcplan plan -f FILE`; a Fleet wraps the Rollout spec's `spec` block in spec.rollout",
    });
  }
  let all = [...read.diagnostics, ...diagnostics];
  if (conforms(doc, all)) all = [...all, ...effectiveDiagnostics(doc, map, new Set(all.map(where)))];
  const sorted = sortDiagnostics(all);
  return conforms(doc, sorted) ? { fleet: doc, map, diagnostics: sorted, sha256 } : { fleet: null, map, diagnostics: sorted, sha256 };
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
    for (const d of schemaDiagnostics(rolloutSchema, eff.spec, eff.map)) {
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
