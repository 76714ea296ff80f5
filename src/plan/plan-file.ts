/**
 * Reading a plan file back (`show`, `apply`, `rehearse`): JSON that must be a plan of this
 * format, whatever was done to it on the way. Every problem is a diagnostic with the file,
 * line:column and field path; the plan is returned only when it has the shape the renderers
 * and the applier rely on (whether its content is still what was reviewed is plan/seal.ts's
 * question). Pure: the CLI reads the file.
 */
import { type Diagnostic, diagnosticAt, emptySourceMap, sortDiagnostics } from '../base/diagnostics.ts';
import { collect, validate, isPlainObject } from '../base/schema.ts';
import { binaryInputDiagnostic, parseYamlWithPositions, tooDeep, positionAt, POSITION_REPARSE_LIMIT } from '../base/yaml.ts';
import { checkShape, valueBudget, flowNestingOffset } from '../base/limits.ts';
import { planFileSchema } from './plan-schema.ts';
import { PLAN_FORMAT_VERSIONS, type Plan } from './types.ts';

export interface LoadedPlan {
  plan: Plan | null;
  diagnostics: Diagnostic[];
}

const HINT = 'plan files are written by `bootcplan plan --out FILE`; plan again instead of editing one';

function fail(file: string, code: string, message: string, at: { line: number; column: number } | null = null, expected = 'a plan file (JSON, formatVersion 1.0 or 1.1)'): LoadedPlan {
  return { plan: null, diagnostics: [{ severity: 'error', code, message, path: null, file, line: at?.line ?? 1, column: at?.column ?? 1, expected, hint: HINT }] };
}

export function parsePlanFile(text: string, file: string): LoadedPlan {
  const binary = binaryInputDiagnostic(text, file);
  if (binary) return { plan: null, diagnostics: [binary] };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    // JSON is YAML flow syntax: the position-tracking parser says where it broke.
    const at = parseYamlWithPositions(text.slice(0, POSITION_REPARSE_LIMIT), file).diagnostics.find((d) => d.line !== null);
    return fail(file, 'json-syntax', `not a plan file: invalid JSON (${(err as Error).message.split('\n')[0].replace(/ in JSON at position \d+.*$/, '')})`, at ? { line: at.line!, column: at.column! } : null);
  }
  const shape = checkShape([doc], valueBudget(text.length));
  if (shape) {
    const at = flowNestingOffset(text);
    return { plan: null, diagnostics: [{ ...tooDeep(file, at === null ? null : positionAt(text, at), shape.kind === 'too-deep' ? shape.path : null), hint: HINT }] };
  }
  if (!isPlainObject(doc) || doc.formatVersion === undefined) return fail(file, 'not-a-plan', 'not a plan file (no formatVersion)');
  if (!(PLAN_FORMAT_VERSIONS as readonly unknown[]).includes(doc.formatVersion)) {
    const known = PLAN_FORMAT_VERSIONS.join(' and ');
    return fail(file, 'plan-format-unsupported', `plan format ${JSON.stringify(doc.formatVersion).slice(0, 40)} is not supported (this bootcplan reads ${known})`, null, `formatVersion ${PLAN_FORMAT_VERSIONS.map((v) => `"${v}"`).join(' or ')}`);
  }
  const { ctx, diagnostics } = collect(null);
  validate(planFileSchema, doc, '', ctx);
  if (!diagnostics.length) return { plan: doc as unknown as Plan, diagnostics: [] };
  const map = text.length <= POSITION_REPARSE_LIMIT ? parseYamlWithPositions(text, file).map : emptySourceMap(file);
  return {
    plan: null,
    diagnostics: sortDiagnostics(diagnostics.slice(0, 50).map((d) => diagnosticAt(map, { ...d, hint: d.hint ?? HINT, code: d.code }))),
  };
}
