/**
 * Reads a cluster snapshot file (docs/design.md §5): a Kubernetes `List` or a multi-document YAML
 * stream, YAML or JSON, as `kubectl get -o yaml|json` prints. JSON goes through
 * JSON.parse because big clusters give snapshots of tens of MB. Unknown kinds are ignored.
 * Every object is checked here, where the file comes in, and each problem becomes a
 * positioned diagnostic; the checked objects go into a snapshot (src/cluster/snapshot.ts).
 */
import { LineCounter, parseDocument } from 'yaml';
import { type Diagnostic, type DiagnosticInput, emptySourceMap, diagnosticAt, sortDiagnostics } from '../base/diagnostics.ts';
import jsyaml from 'js-yaml';
import {
  parseYamlWithPositions,
  binaryInputDiagnostic,
  aliasExpansion,
  firstAliasPosition,
  tooDeep,
  positionAt,
  POSITION_REPARSE_LIMIT,
} from '../base/yaml.ts';
import { checkShape, checkDepth, valueBudget, flowNestingOffset } from '../base/limits.ts';
import { isPlainObject } from '../base/schema.ts';
import { messageOf } from '../base/errors.ts';
import type { ClusterSnapshot, KObject } from './types.ts';
import { isKObject, objectShapeProblem } from './kinds.ts';
import { SNAPSHOT_SERVER_ANNOTATION, serverHost } from './identity.ts';
import { isKeptKind, snapshotFromObjects } from './snapshot.ts';
import { WorkloadCollector, isWorkloadKind } from './workload-projection.ts';
import { decodeWorkloads, isWorkloadItem } from './workload-file.ts';

interface LoadedSnapshot {
  snapshot: ClusterSnapshot | null;
  diagnostics: Diagnostic[];
}

/** Parses snapshot text. `file` is used in messages and in `source`. */
export function parseSnapshot(text: string, file: string): LoadedSnapshot {
  const parsed = parseDocuments(text, file);
  if ('diagnostic' in parsed) return { snapshot: null, diagnostics: [parsed.diagnostic] };
  const { objects, pending, workloads, workloadObjects } = collectObjects(parsed.docs);
  if (pending.length) {
    // Point at the bad objects: a position-tracking re-parse, affordable on this error path
    // for files of reasonable size (and JSON is YAML flow syntax, so it works for both).
    const map = text.length <= POSITION_REPARSE_LIMIT ? parseYamlWithPositions(text, file, { maxDepth: 4, multiDocument: true }).map : emptySourceMap(file);
    const diagnostics = pending.map((d) => diagnosticAt(map, d));
    return { snapshot: null, diagnostics: sortDiagnostics(diagnostics) };
  }
  if (!objects.length && !workloadObjects) {
    return {
      snapshot: null,
      diagnostics: [
        {
          severity: 'error',
          code: 'snapshot-empty',
          message: 'the snapshot is empty: it holds no Kubernetes objects',
          path: null,
          file,
          line: 1,
          column: 1,
          expected: 'the objects of a cluster: a List, or a multi-document stream of objects',
          hint: 'write one with `bootcplan snapshot --out FILE`; an empty file is never taken as an empty cluster',
        },
      ],
    };
  }
  return { snapshot: snapshotFromObjects(objects, `file:${file}`, serverOfDocuments(parsed.docs), workloads), diagnostics: [] };
}

/**
 * The API server a snapshot file was read from: the `bootcplan.dev/server` annotation that
 * `bootcplan snapshot` writes on its List (null for a multi-document stream, or without it).
 */
function serverOfDocuments(docs: readonly unknown[]): string | null {
  if (docs.length !== 1 || !isPlainObject(docs[0]) || !isPlainObject(docs[0].metadata)) return null;
  const annotations = docs[0].metadata.annotations;
  return isPlainObject(annotations) ? serverHost(annotations[SNAPSHOT_SERVER_ANNOTATION]) : null;
}

/** The documents of a snapshot text (JSON or YAML), or the one diagnostic that stops reading. */
function parseDocuments(text: string, file: string): { docs: unknown[] } | { diagnostic: Diagnostic } {
  const binary = binaryInputDiagnostic(text, file);
  if (binary) return { diagnostic: binary };
  const trimmed = text.trimStart();
  let docs: unknown[];
  const json = trimmed.startsWith('{') || trimmed.startsWith('[');
  if (json) {
    try {
      docs = [JSON.parse(text)];
    } catch (err) {
      return { diagnostic: jsonSyntaxDiagnostic(text, file, err) };
    }
  } else {
    // js-yaml: about 10x faster than the position-tracking parser on big snapshots
    // (28 MB, 10k nodes: 2.7 s against 34 s). Positions are recovered only on the error path.
    try {
      // CORE_SCHEMA: timestamps stay strings, as the API server sends them.
      docs = jsyaml.loadAll(text, undefined, { filename: file, schema: jsyaml.CORE_SCHEMA });
    } catch (err) {
      const y = err instanceof jsyaml.YAMLException ? err : null;
      const mark = y?.mark;
      // js-yaml stops at its own maxDepth (100), with the position.
      if (/maxDepth/.test(y?.reason ?? '')) {
        return { diagnostic: snapshotTooDeep(file, mark ? { line: mark.line + 1, column: mark.column + 1 } : null, null) };
      }
      return { diagnostic: yamlSyntaxDiagnostic(file, err) };
    }
  }
  // Before anything walks the objects: aliases that expand (js-yaml shares them, the
  // fingerprint and the planner would not) and nesting that overflows recursive readers.
  // JSON has no aliases: only its depth is checked.
  const shape = json ? checkDepth(docs) : checkShape(docs, valueBudget(text.length));
  if (shape?.kind === 'too-many-values') return { diagnostic: aliasExpansion(file, firstAliasPosition(text)) };
  if (shape?.kind === 'too-deep') {
    const at = flowNestingOffset(text);
    return { diagnostic: snapshotTooDeep(file, at === null ? null : positionAt(text, at), shape.path) };
  }
  return { docs };
}

/**
 * The Kubernetes objects of the documents (Lists unpacked), and what is wrong with the others.
 * Workload objects and the WorkloadProjection item are projected here, once, as they are checked
 * (src/cluster/workload-projection.ts, src/cluster/workload-file.ts), and kept only as `workloads`.
 */
function collectObjects(docs: readonly unknown[]): { objects: KObject[]; pending: DiagnosticInput[]; workloads: WorkloadCollector; workloadObjects: number } {
  const objects: KObject[] = [];
  const pending: DiagnosticInput[] = [];
  const workloads = new WorkloadCollector();
  let workloadObjects = 0;
  const multi = docs.length > 1;
  docs.forEach((doc, di) => {
    const prefix = multi ? `[${di}]` : '';
    if (doc === null || doc === undefined) return;
    if (!isPlainObject(doc)) {
      pending.push({
        code: 'snapshot-invalid',
        path: prefix || null,
        message: `expected a Kubernetes object or List, got ${Array.isArray(doc) ? 'a list' : 'a single value'}`,
        expected: 'the output of `kubectl get -o yaml` or `bootcplan snapshot`',
      });
      return;
    }
    if (doc.kind === 'List' || (typeof doc.kind === 'string' && doc.kind.endsWith('List') && Array.isArray(doc.items))) {
      if (!Array.isArray(doc.items)) {
        pending.push({
          code: 'snapshot-invalid',
          path: `${prefix ? prefix + '.' : ''}items`,
          message: 'a List needs an "items" list',
          expected: 'items: [ ... ]',
        });
        return;
      }
      doc.items.forEach((item, i) => checkObject(item, `${prefix ? prefix + '.' : ''}items[${i}]`));
      return;
    }
    checkObject(doc, prefix);
  });
  return { objects, pending, workloads, workloadObjects };

  function checkObject(o: unknown, path: string) {
    const where = path || null;
    if (!isPlainObject(o)) {
      pending.push({ code: 'snapshot-invalid', path: where, message: 'expected a Kubernetes object (a mapping)', expected: 'apiVersion, kind, metadata' });
      return;
    }
    if (!isKObject(o)) {
      const meta = o.metadata;
      const missing = ['apiVersion', 'kind'].filter((k) => typeof o[k] !== 'string' || o[k] === '');
      if (!isPlainObject(meta) || typeof meta.name !== 'string' || meta.name === '') missing.push('metadata.name');
      const sub = (k: string) => (path ? `${path}.${k}` : k);
      pending.push({
        code: 'snapshot-invalid',
        path: where,
        message: `object ${describe(o)} lacks ${missing.join(', ')}`,
        expected: 'every object to have apiVersion, kind and metadata.name',
        hint: `check ${sub(missing[0])}; snapshots are written by \`bootcplan snapshot\` or \`kubectl get -o yaml\``,
      });
      return;
    }
    const shape = listShapeProblem(o);
    if (shape) {
      pending.push({
        code: 'snapshot-invalid',
        path: path ? `${path}.${shape.field}` : shape.field,
        message: `object ${describe(o)}: ${shape.field} ${shape.problem}`,
        expected: 'a list of mappings, as the API server stores it',
        hint: 'snapshots are written by `bootcplan snapshot` or `kubectl get -o yaml`; check this field',
      });
      return;
    }
    const problem = keptShapeProblem(o, path);
    if (problem) {
      pending.push(problem);
      return;
    }
    const workload = collectWorkload(o, path, workloads);
    if (workload === 'other') objects.push(o);
    else {
      workloadObjects++;
      if (workload) pending.push(workload);
    }
  }
}

/**
 * Projects a workload object into `workloads`, or takes in a WorkloadProjection item: what is
 * wrong with it, null, or 'other' for an object of any other kind.
 */
function collectWorkload(o: KObject, path: string, workloads: WorkloadCollector): DiagnosticInput | null | 'other' {
  if (isWorkloadItem(o)) {
    const w = decodeWorkloads(o);
    if ('path' in w) return fieldProblem(o, path, w, 'as `bootcplan snapshot` writes it', 'regenerate the file with `bootcplan snapshot`');
    workloads.addProjected(w);
    return null;
  }
  if (!isWorkloadKind(o)) return 'other';
  // A budget whose spec the API server would refuse (both fields, a percentage that is not one).
  const budget = workloads.add(o);
  if (!budget) return null;
  return fieldProblem(
    o,
    path,
    budget,
    'as the API server validates it',
    'the API server refuses such a PodDisruptionBudget: fix it, or regenerate the file with `bootcplan snapshot`',
  );
}

/** The kinds the snapshot keeps: every field their views name (src/cluster/kinds.ts). */
function keptShapeProblem(o: KObject, path: string): DiagnosticInput | null {
  const field = isKeptKind(o) ? objectShapeProblem(o, o.kind) : null;
  if (!field) return null;
  return fieldProblem(
    o,
    path,
    field,
    'as the API server stores it',
    'snapshots are written by `bootcplan snapshot` or `kubectl get -o yaml`; check this field',
  );
}

/** One field of an object the file holds, refused: at the object's path, naming the object. */
function fieldProblem(
  o: KObject,
  path: string,
  field: { path: string; message: string; expected: string },
  expectedWhy: string,
  hint: string,
): DiagnosticInput {
  return {
    code: 'snapshot-invalid',
    path: path ? `${path}.${field.path}` : field.path,
    message: `object ${describe(o)}: ${field.path}: ${field.message}`,
    expected: `${field.expected}, ${expectedWhy}`,
    hint,
  };
}

/**
 * Lists the planner walks, which the API server guarantees to be lists of objects
 * (metav1.ObjectMeta ownerReferences, status conditions, LabelSelector matchExpressions). A
 * file may hold anything there; it is refused here rather than met deep in a rule.
 */
function listShapeProblem(o: KObject): { field: string; problem: string } | null {
  // Direct reads, not a walk along a list of paths: one call for each of 20,000 objects.
  const owners = listProblem(o.metadata.ownerReferences, 'metadata.ownerReferences');
  if (owners) return owners;
  const status = o.status;
  if (isPlainObject(status)) {
    const conditions = listProblem(status.conditions, 'status.conditions');
    if (conditions) return conditions;
  }
  const spec = o.spec;
  const selector = isPlainObject(spec) ? spec.nodeSelector : undefined;
  if (isPlainObject(selector)) {
    const expressions = listProblem(selector.matchExpressions, 'spec.nodeSelector.matchExpressions');
    if (expressions) return expressions;
    const labels = selector.matchLabels;
    if (labels !== undefined && labels !== null && !isPlainObject(labels)) return { field: 'spec.nodeSelector.matchLabels', problem: 'is not a mapping' };
  }
  return null;
}

/** A list field the API server guarantees to be a list of mappings: absent (or null), or what is wrong with it. */
function listProblem(v: unknown, field: string): { field: string; problem: string } | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) return { field, problem: 'is not a list' };
  for (let i = 0; i < v.length; i++) if (!isPlainObject(v[i])) return { field: `${field}[${i}]`, problem: 'is not a mapping' };
  return null;
}

function snapshotTooDeep(file: string, at: { line: number; column: number } | null, path: string | null): Diagnostic {
  return {
    ...tooDeep(file, at, path),
    code: 'snapshot-too-deep',
    hint: 'Kubernetes objects nest about 15 levels; regenerate the file with `bootcplan snapshot`',
  };
}

function yamlSyntaxDiagnostic(file: string, err: unknown): Diagnostic {
  const y = err instanceof jsyaml.YAMLException ? err : null;
  const mark = y?.mark;
  const reason = y?.reason ?? messageOf(err).split('\n')[0];
  return {
    severity: 'error',
    code: 'yaml-syntax',
    message: `cannot parse YAML: ${reason}`,
    path: null,
    file,
    line: mark ? mark.line + 1 : null,
    column: mark ? mark.column + 1 : null,
    expected: 'a YAML Kubernetes List or a multi-document stream of objects',
    hint: 'check indentation and quoting around this position; regenerate the file with `bootcplan snapshot --out FILE`',
  };
}

function describe(o: Record<string, unknown>): string {
  const kind = typeof o.kind === 'string' ? o.kind : '?';
  const name = isPlainObject(o.metadata) && typeof o.metadata.name === 'string' ? o.metadata.name : '?';
  return `${kind}/${name}`;
}

function jsonSyntaxDiagnostic(text: string, file: string, err: unknown): Diagnostic {
  const errorText = messageOf(err);
  let line: number | null = null;
  let column: number | null = null;
  // V8 on Node 20 does not always say where JSON.parse failed; JSON is YAML 1.2 flow
  // syntax, so the YAML parser (slower, only used on this error path) finds the position.
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const first = doc.errors[0];
  if (first) {
    const p = lineCounter.linePos(first.pos[0]);
    line = p.line;
    column = p.col;
  } else {
    const m = /position (\d+)/.exec(errorText);
    if (m) {
      const pos = Number(m[1]);
      const before = text.slice(0, pos);
      line = before.split('\n').length;
      column = pos - before.lastIndexOf('\n');
    }
  }
  return {
    severity: 'error',
    code: 'json-syntax',
    message: `cannot parse JSON: ${firstLineOf(errorText)
      .replace(/ in JSON at position \d+.*$/, '')
      .replace(/,\s*(\.\.\.)?".*$/, '')}`,
    path: null,
    file,
    line,
    column,
    expected: 'a JSON Kubernetes List or object',
    hint: 'was the file cut short? regenerate it with `bootcplan snapshot --out FILE`',
  };
}

function firstLineOf(s: string): string {
  return s.split('\n')[0];
}
