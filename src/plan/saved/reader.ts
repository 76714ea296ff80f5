/**
 * The saved-plan module's reader (Terraform keeps its plan file format apart from the plan
 * model the same way: internal/plans/planfile): a plan file's text back to a Plan (`show`,
 * `apply`, `rehearse`, a fleet plan's cluster plans). JSON that must be a plan of this format,
 * whatever was done to it on the way. Every problem is a diagnostic with the file, line:column
 * and field path; the plan is returned only when it has the shape the renderers and the applier
 * rely on (whether its content is still what was reviewed is ./seal.ts's question). Pure: the
 * application layer reads the file (src/app/saved-plan.ts).
 */
import { type Diagnostic, diagnosticAt, emptySourceMap, sortDiagnostics } from '../../base/diagnostics.ts';
import { InputError, StalePlanError, messageOf } from '../../base/errors.ts';
import { planIdOf } from '../planner.ts';
import { collect, validate, isPlainObject } from '../../base/schema.ts';
import { binaryInputDiagnostic, parseYamlWithPositions, tooDeep, positionAt, POSITION_REPARSE_LIMIT } from '../../base/yaml.ts';
import { checkShape, valueBudget, flowNestingOffset } from '../../base/limits.ts';
import { planFileSchema } from './schema.ts';
import { PLAN_FORMAT_VERSIONS, type Plan } from '../types.ts';

interface LoadedPlan {
  plan: Plan | null;
  diagnostics: Diagnostic[];
  /**
   * A document of a plan format this bootcplan reads that failed the format's schema, and whose
   * content no longer hashes to the id it carries: the id it hashes to (modified after it was made).
   */
  tampered?: { actual: string; claimed: string };
}

const HINT = 'plan files are written by `bootcplan plan --out FILE`; plan again instead of editing one';

function fail(
  file: string,
  code: string,
  message: string,
  at: { line: number; column: number } | null = null,
  expected = 'a plan file (JSON, formatVersion 1.0, 1.1, 1.2 or 1.3)',
): LoadedPlan {
  return {
    plan: null,
    diagnostics: [{ severity: 'error', code, message, path: null, file, line: at?.line ?? 1, column: at?.column ?? 1, expected, hint: HINT }],
  };
}

/**
 * The JSON document of a file bootcplan wrote (a plan, a fleet plan), or the one diagnostic that
 * says why it is none: binary, invalid JSON (positioned by the YAML parser: JSON is YAML flow
 * syntax), too deep or too large. `what` names the file in the message ("a plan file").
 */
export function readJsonDocument(
  text: string,
  file: string,
  what: string,
  fail: (code: string, message: string, at: { line: number; column: number } | null) => Diagnostic[],
  hint: string,
): { doc: unknown; diagnostics: null } | { doc: null; diagnostics: Diagnostic[] } {
  const binary = binaryInputDiagnostic(text, file);
  if (binary) return { doc: null, diagnostics: [binary] };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    let at: { line: number; column: number } | null = null;
    for (const d of parseYamlWithPositions(text.slice(0, POSITION_REPARSE_LIMIT), file).diagnostics) {
      if (d.line !== null && d.column !== null) {
        at = { line: d.line, column: d.column };
        break;
      }
    }
    return {
      doc: null,
      diagnostics: fail(
        'json-syntax',
        `not ${what}: invalid JSON (${messageOf(err)
          .split('\n')[0]
          .replace(/ in JSON at position \d+.*$/, '')})`,
        at,
      ),
    };
  }
  const shape = checkShape([doc], valueBudget(text.length));
  if (shape) {
    const at = flowNestingOffset(text);
    return { doc: null, diagnostics: [{ ...tooDeep(file, at === null ? null : positionAt(text, at), shape.kind === 'too-deep' ? shape.path : null), hint }] };
  }
  return { doc, diagnostics: null };
}

/** The document is a Plan when validating it against the plan format's schema reported nothing. */
function conforms(doc: unknown, diagnostics: readonly unknown[]): doc is Plan {
  return diagnostics.length === 0;
}

export function parsePlanFile(text: string, file: string): LoadedPlan {
  const read = readJsonDocument(text, file, 'a plan file', (code, message, at) => fail(file, code, message, at).diagnostics, HINT);
  if (read.diagnostics) return { plan: null, diagnostics: read.diagnostics };
  const doc = read.doc;
  if (!isPlainObject(doc) || doc.formatVersion === undefined) return fail(file, 'not-a-plan', 'not a plan file (no formatVersion)');
  if (!PLAN_FORMAT_VERSIONS.some((v) => v === doc.formatVersion)) {
    const known = `${PLAN_FORMAT_VERSIONS.slice(0, -1).join(', ')} and ${PLAN_FORMAT_VERSIONS[PLAN_FORMAT_VERSIONS.length - 1]}`;
    return fail(
      file,
      'plan-format-unsupported',
      `plan format ${JSON.stringify(doc.formatVersion).slice(0, 40)} is not supported (this bootcplan reads ${known})`,
      null,
      `formatVersion ${PLAN_FORMAT_VERSIONS.map((v) => `"${v}"`).join(' or ')}`,
    );
  }
  const { ctx, diagnostics } = collect(null);
  validate(planFileSchema, doc, '', ctx);
  if (conforms(doc, diagnostics)) return { plan: doc, diagnostics: [] };
  const map = text.length <= POSITION_REPARSE_LIMIT ? parseYamlWithPositions(text, file).map : emptySourceMap(file);
  // A plan file is only ever written whole by plan --out, sealed by its id (seal.ts): one that
  // breaks the schema and no longer hashes to its id was edited, as a changed value would be.
  const actual = planIdOf(doc);
  return {
    plan: null,
    diagnostics: sortDiagnostics(diagnostics.slice(0, 50).map((d) => diagnosticAt(map, { ...d, hint: d.hint ?? HINT, code: d.code }))),
    ...(actual !== doc.id ? { tampered: { actual, claimed: String(doc.id).slice(0, 40) } } : {}),
  };
}

/** The plan in a plan file's text, or an InputError with every diagnostic (`name`: the file as the user named it). */
export function readPlan(text: string, name: string): Plan {
  const r = parsePlanFile(text, name);
  if (!r.plan && r.tampered) {
    // Exit 3, as an edit that keeps the schema (seal.ts checkPlanSeal): show's help says so.
    throw new StalePlanError('the plan file was modified after it was made', [
      ...r.diagnostics.slice(0, 5).map((d) => `${d.file}:${d.line}:${d.column}: ${d.path ? `${d.path}: ` : ''}${d.message}`),
      ...(r.diagnostics.length > 5 ? [`... and ${r.diagnostics.length - 5} more`] : []),
      `its content hashes to ${r.tampered.actual}, but it says it is plan ${r.tampered.claimed}`,
      'use only the file `bootcplan plan --out` wrote, as it was reviewed',
    ]);
  }
  if (!r.plan) throw new InputError(`${name}: not a usable plan file`, r.diagnostics);
  return r.plan;
}
