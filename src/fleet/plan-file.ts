/**
 * Reading a fleet plan file back (`fleet show`, `fleet apply`, `fleet rehearse`, `fleet render
 * argocd`): JSON that must be a fleet plan of this format, whatever was done to it on the way,
 * as saved/reader.ts reads a plan. Every problem is a diagnostic with the file, line:column and
 * field path; the fleet plan is returned only when it has the shape the renderers and the
 * runner rely on, each cluster's plan checked with the plan-file schema, and its batches
 * consistent with its clusters. Whether the content is still what was reviewed is the seal's
 * question (fleet/plan.ts tamperedFleetId, then each cluster's plan as `apply` checks it).
 * Pure: the CLI reads the file.
 */
import { type Diagnostic, type DiagnosticInput, diagnosticAt, emptySourceMap, sortDiagnostics } from '../base/diagnostics.ts';
import { collect, validate, isPlainObject, objectFieldOf, type ObjectSchema, type Schema } from '../base/schema.ts';
import { parseYamlWithPositions, POSITION_REPARSE_LIMIT } from '../base/yaml.ts';
import { planFileSchema } from '../plan/saved/schema.ts';
import { readJsonDocument } from '../plan/saved/reader.ts';
import { FLEET_PLAN_FORMAT_VERSION, FLEET_PLAN_KIND, FLEET_BATCH_KINDS, FLEET_CLUSTER_ERRORS, type FleetPlan } from './plan-types.ts';
import { BATCH_TIMEOUT_ACTIONS } from './spec-types.ts';

interface LoadedFleetPlan {
  fleetPlan: FleetPlan | null;
  diagnostics: Diagnostic[];
}

const HINT = 'fleet plan files are written by `bootcplan fleet plan --out FILE`; plan the fleet again instead of editing one';

const str: Schema = { type: 'string' };
const strOrNull: Schema = { type: 'string', nullable: true };
const count: Schema = { type: 'integer', min: 0 };
const num: Schema = { type: 'number', min: 0 };
/** A value in a cluster's `overriddenBy` (optional: fleet plans written before it have none). */
const overrideValue: Schema = {
  type: 'any',
  nullable: true,
  expected: 'a string, number, boolean or null',
  check: (v, path, ctx) => {
    if (v !== null && !['string', 'number', 'boolean'].includes(typeof v))
      ctx.report({ code: 'wrong-type', path, message: 'expected a string, number, boolean or null', expected: 'a string, number, boolean or null' });
  },
};
const obj = (fields: Record<string, Schema>, required: string[] = Object.keys(fields)): ObjectSchema => ({ type: 'object', open: true, fields, required });

const specInfo = objectFieldOf(planFileSchema, 'spec');

const fleetPlanFileSchema: ObjectSchema = obj({
  formatVersion: { type: 'string', enum: [FLEET_PLAN_FORMAT_VERSION] },
  kind: { type: 'string', enum: [FLEET_PLAN_KIND] },
  id: { type: 'string', pattern: /^[0-9a-f]{16}$/, patternText: '16 lowercase hex digits' },
  fleet: specInfo,
  strategy: obj({
    canaries: { type: 'array', items: str },
    maxConcurrency: obj({ value: { type: 'any', expected: 'a count or a percentage', check: () => {} }, resolved: { type: 'integer', min: 1 }, rule: str }),
    batchSoakSeconds: count,
    batchTimeoutSeconds: { type: 'integer', min: 1, nullable: true },
    batchTimeoutAction: { type: 'string', enum: BATCH_TIMEOUT_ACTIONS },
  }),
  batches: {
    type: 'array',
    items: obj({
      index: { type: 'integer', min: 1 },
      kind: { type: 'string', enum: FLEET_BATCH_KINDS },
      clusters: { type: 'array', items: str, minItems: 1 },
      estimatedSeconds: num,
    }),
  },
  clusters: {
    type: 'array',
    items: obj(
      {
        name: str,
        labels: { type: 'map', values: str },
        source: obj({ context: strOrNull, kubeconfig: strOrNull, snapshot: strOrNull }),
        destination: obj({ name: strOrNull, server: strOrNull }),
        canary: { type: 'boolean' },
        overriddenBy: { type: 'array', items: obj({ field: str, shared: overrideValue, value: overrideValue, by: obj({ path: str, selector: strOrNull }) }) },
        batch: { type: 'integer', min: 1, nullable: true },
        plan: { ...planFileSchema, nullable: true },
        error: { ...obj({ code: { type: 'string', enum: FLEET_CLUSTER_ERRORS }, message: str, hint: str }, ['code', 'message']), nullable: true },
      },
      ['name', 'labels', 'source', 'destination', 'canary', 'batch', 'plan', 'error'],
    ),
  },
  diagnostics: planFileSchema.fields.diagnostics,
  summary: obj({
    clusters: count,
    planned: count,
    withChanges: count,
    failed: count,
    nodes: count,
    batches: count,
    estimatedSeconds: num,
    errors: count,
    warnings: count,
  }),
});

function fail(
  file: string,
  code: string,
  message: string,
  at: { line: number; column: number } | null = null,
  expected = `a fleet plan file (JSON, kind ${FLEET_PLAN_KIND}, formatVersion ${FLEET_PLAN_FORMAT_VERSION})`,
): LoadedFleetPlan {
  return {
    fleetPlan: null,
    diagnostics: [{ severity: 'error', code, message, path: null, file, line: at?.line ?? 1, column: at?.column ?? 1, expected, hint: HINT }],
  };
}

/** The document is a FleetPlan when fleetPlanFileSchema, which checks it field by field, found nothing. */
function conforms(doc: unknown, diagnostics: readonly unknown[]): doc is FleetPlan {
  return diagnostics.length === 0;
}

export function parseFleetPlanFile(text: string, file: string): LoadedFleetPlan {
  const read = readJsonDocument(text, file, 'a fleet plan file', (code, message, at) => fail(file, code, message, at).diagnostics, HINT);
  if (read.diagnostics) return { fleetPlan: null, diagnostics: read.diagnostics };
  const doc = read.doc;
  if (!isPlainObject(doc) || doc.kind !== FLEET_PLAN_KIND) {
    const plan = isPlainObject(doc) && doc.formatVersion !== undefined && doc.kind === undefined;
    return fail(file, 'not-a-fleet-plan', plan ? 'this is a plan of one cluster, not a fleet plan' : `not a fleet plan file (kind is not ${FLEET_PLAN_KIND})`);
  }
  if (doc.formatVersion !== FLEET_PLAN_FORMAT_VERSION) {
    return fail(
      file,
      'plan-format-unsupported',
      `fleet plan format ${JSON.stringify(doc.formatVersion).slice(0, 40)} is not supported (this bootcplan reads ${FLEET_PLAN_FORMAT_VERSION})`,
      null,
      `formatVersion "${FLEET_PLAN_FORMAT_VERSION}"`,
    );
  }
  const { ctx, diagnostics } = collect(null);
  validate(fleetPlanFileSchema, doc, '', ctx);
  if (conforms(doc, diagnostics)) {
    for (const d of consistency(doc)) ctx.report(d);
    if (!diagnostics.length) return { fleetPlan: doc, diagnostics: [] };
  }
  const map = text.length <= POSITION_REPARSE_LIMIT ? parseYamlWithPositions(text, file).map : emptySourceMap(file);
  return {
    fleetPlan: null,
    diagnostics: sortDiagnostics(diagnostics.slice(0, 50).map((d) => diagnosticAt(map, { ...d, hint: d.hint ?? HINT, code: d.code }))),
  };
}

/**
 * What the schema cannot say: cluster names once, batches numbered in order and naming known
 * clusters once, each cluster's `batch` the batch that names it, canary batches of one canary,
 * and each cluster plan made for that cluster (spec.fleetCluster).
 */
function consistency(fp: FleetPlan): DiagnosticInput[] {
  const out: DiagnosticInput[] = [];
  const index = new Map<string, number>();
  fp.clusters.forEach((c, i) => {
    if (index.has(c.name)) out.push({ code: 'fleet-plan-inconsistent', path: `clusters[${i}].name`, message: `cluster "${c.name}" is listed twice` });
    index.set(c.name, i);
    if (c.plan && c.plan.spec.fleetCluster !== c.name) {
      out.push({
        code: 'fleet-plan-inconsistent',
        path: `clusters[${i}].plan.spec`,
        message: `the plan of cluster "${c.name}" was made for ${c.plan.spec.fleetCluster === undefined ? 'no fleet cluster' : `cluster ${JSON.stringify(c.plan.spec.fleetCluster)}`}`,
      });
    }
  });
  const placed = new Map<string, number>();
  fp.batches.forEach((b, i) => {
    if (b.index !== i + 1) out.push({ code: 'fleet-plan-inconsistent', path: `batches[${i}].index`, message: `batch ${i + 1} says it is batch ${b.index}` });
    if (b.kind === 'canary' && b.clusters.length !== 1)
      out.push({ code: 'fleet-plan-inconsistent', path: `batches[${i}].clusters`, message: 'a canary batch holds exactly one cluster' });
    b.clusters.forEach((name, j) => {
      const at = `batches[${i}].clusters[${j}]`;
      const ci = index.get(name);
      if (ci === undefined)
        out.push({ code: 'fleet-plan-inconsistent', path: at, message: `batch ${i + 1} names "${name}", which is not a cluster of the fleet plan` });
      else if (placed.has(name))
        out.push({ code: 'fleet-plan-inconsistent', path: at, message: `cluster "${name}" is in batches ${placed.get(name)} and ${i + 1}` });
      else if (!fp.clusters[ci].plan)
        out.push({ code: 'fleet-plan-inconsistent', path: at, message: `cluster "${name}" is in batch ${i + 1} but has no plan` });
      placed.set(name, i + 1);
    });
  });
  fp.clusters.forEach((c, i) => {
    if ((placed.get(c.name) ?? null) !== c.batch)
      out.push({
        code: 'fleet-plan-inconsistent',
        path: `clusters[${i}].batch`,
        message: `cluster "${c.name}" says batch ${c.batch}, the batches say ${placed.get(c.name) ?? 'none'}`,
      });
  });
  return out;
}
