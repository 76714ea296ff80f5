/**
 * Reads a cluster snapshot (DESIGN §5): a Kubernetes `List` or a multi-document YAML
 * stream, YAML or JSON, as `kubectl get -o yaml|json` prints. JSON goes through
 * JSON.parse because big clusters give snapshots of tens of MB. Unknown kinds are ignored.
 */
import { createHash } from 'node:crypto';
import { LineCounter, parseDocument } from 'yaml';
import { type Diagnostic, type DiagnosticInput, emptySourceMap, diagnosticAt, sortDiagnostics, hasErrors } from '../base/diagnostics.ts';
import jsyaml from 'js-yaml';
import { parseYamlWithPositions, binaryInputDiagnostic, aliasExpansion, firstAliasPosition, tooDeep, positionAt, POSITION_REPARSE_LIMIT } from '../base/yaml.ts';
import { checkShape, checkDepth, valueBudget, flowNestingOffset } from '../base/limits.ts';
import { isPlainObject } from '../base/schema.ts';
import { messageOf } from '../base/errors.ts';
import { type ClusterSnapshot, type KObject, BOOTCPLAN_NAMESPACE, LOCK_NAME, PROGRESS_NAME } from './types.ts';
import { isKObject, objectShapeProblem, type BootEntry, type BootcNodeObject, type NodeObject } from './kinds.ts';
import { KUBE_SYSTEM_NAMESPACE, SNAPSHOT_SERVER_ANNOTATION, serverHost } from './identity.ts';

export interface LoadedSnapshot {
  snapshot: ClusterSnapshot | null;
  diagnostics: Diagnostic[];
}

const apiGroup = (apiVersion: string) => {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
};

type ListField = 'nodes' | 'machineConfigPools' | 'machineConfigs' | 'bootcNodePools' | 'bootcNodes' | 'machineSets';
type SingletonField = 'machineConfiguration' | 'controlPlaneMachineSet' | 'bootImagesConfigMap' | 'featureGate' | 'infrastructure' | 'clusterVersion' | 'kubeSystemNamespace' | 'lock' | 'progress';

/** Which list of the snapshot an object belongs to, keyed by `group/Kind`. */
const LISTS: Record<string, ListField> = {
  '/Node': 'nodes',
  'machineconfiguration.openshift.io/MachineConfigPool': 'machineConfigPools',
  'machineconfiguration.openshift.io/MachineConfig': 'machineConfigs',
  'node.bootc.dev/BootcNodePool': 'bootcNodePools',
  'node.bootc.dev/BootcNode': 'bootcNodes',
  'machine.openshift.io/MachineSet': 'machineSets',
};

/** Singletons and the name (and namespace) they must have. */
const SINGLETONS: { key: string; field: SingletonField; name: string; namespace?: string }[] = [
  { key: 'operator.openshift.io/MachineConfiguration', field: 'machineConfiguration', name: 'cluster' },
  { key: 'machine.openshift.io/ControlPlaneMachineSet', field: 'controlPlaneMachineSet', name: 'cluster', namespace: 'openshift-machine-api' },
  { key: '/ConfigMap', field: 'bootImagesConfigMap', name: 'coreos-bootimages', namespace: 'openshift-machine-config-operator' },
  { key: 'config.openshift.io/FeatureGate', field: 'featureGate', name: 'cluster' },
  { key: 'config.openshift.io/Infrastructure', field: 'infrastructure', name: 'cluster' },
  { key: 'config.openshift.io/ClusterVersion', field: 'clusterVersion', name: 'version' },
  { key: '/Namespace', field: 'kubeSystemNamespace', name: KUBE_SYSTEM_NAMESPACE },
  { key: 'coordination.k8s.io/Lease', field: 'lock', name: LOCK_NAME, namespace: BOOTCPLAN_NAMESPACE },
  { key: '/ConfigMap', field: 'progress', name: PROGRESS_NAME, namespace: BOOTCPLAN_NAMESPACE },
];

/** The `group/Kind` keys of every object a snapshot keeps. */
const KEPT_KINDS = new Set([...Object.keys(LISTS), ...SINGLETONS.map((s) => s.key)]);

export function emptySnapshot(source: string): ClusterSnapshot {
  return {
    source, fingerprint: '', nodes: [], machineConfigPools: [], machineConfigs: [], bootcNodePools: [], bootcNodes: [],
    machineSets: [], machineConfiguration: null, controlPlaneMachineSet: null, bootImagesConfigMap: null,
    featureGate: null, infrastructure: null, clusterVersion: null, kubeSystemNamespace: null, server: null, lock: null, progress: null,
  };
}

/**
 * Builds a snapshot from already-parsed objects (used by the file reader, the live reader and
 * tests); `server`: the API server's host, when known (src/cluster/identity.ts serverHost).
 * The objects' shapes were checked where they came in (objectShapeProblem, src/cluster/kinds.ts:
 * parseSnapshot below, src/kube/answers.ts for API answers and watch events), so each goes
 * into its typed list as it is.
 */
export function snapshotFromObjects(objects: readonly KObject[], source: string, server: string | null = null): ClusterSnapshot {
  const snap = emptySnapshot(source);
  snap.server = server;
  const lists: Record<ListField, KObject[]> = snap;
  const singletons: Record<SingletonField, KObject | null> = snap;
  for (const o of objects) {
    const key = `${apiGroup(o.apiVersion)}/${o.kind}`;
    const list = LISTS[key];
    if (list) {
      lists[list].push(o);
      continue;
    }
    for (const s of SINGLETONS) {
      if (s.key === key && o.metadata.name === s.name && (s.namespace === undefined || o.metadata.namespace === s.namespace)) {
        singletons[s.field] = o;
      }
    }
  }
  for (const list of Object.values(LISTS)) lists[list].sort(byName);
  snap.fingerprint = fingerprintOf(snap);
  return snap;
}

/** Every object of a snapshot: the lists, then the singletons, in the order emptySnapshot lays them out. */
export function snapshotObjects(snap: ClusterSnapshot): KObject[] {
  const singletons = [
    snap.machineConfiguration, snap.controlPlaneMachineSet, snap.bootImagesConfigMap, snap.featureGate, snap.infrastructure,
    snap.clusterVersion, snap.kubeSystemNamespace, snap.lock, snap.progress,
  ];
  return [
    ...snap.nodes, ...snap.machineConfigPools, ...snap.machineConfigs, ...snap.bootcNodePools, ...snap.bootcNodes, ...snap.machineSets,
    ...singletons.filter((o) => o !== null),
  ];
}

const byName = (a: KObject, b: KObject) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);

/**
 * sha256 over the objects the planner reads. Fields that change without the desired or
 * observed state changing (metadata.managedFields, metadata.resourceVersion, the Node
 * condition heartbeats) are left out; the rest is hashed as serialized, which is fast
 * enough for 50k-node snapshots (native JSON.stringify, no canonical re-ordering). The
 * kube-system Namespace is read for its uid only, which the plan records and compares on its
 * own (src/cluster/identity.ts): its labels and annotations change nothing that is planned.
 */
export function fingerprintOf(snap: ClusterSnapshot): string {
  const h = createHash('sha256');
  const add = (view: unknown) => h.update(JSON.stringify(view)).update('\n');
  // The lists in the order of LISTS, then the singletons in the order of SINGLETONS.
  for (const o of snap.nodes) add(nodePlanningView(o));
  for (const o of snap.machineConfigPools) add(withoutVolatileMetadata(o));
  for (const o of snap.machineConfigs) add(withoutVolatileMetadata(o));
  for (const o of snap.bootcNodePools) add(withoutVolatileMetadata(o));
  for (const o of snap.bootcNodes) add(bootcNodePlanningView(o));
  for (const o of snap.machineSets) add(withoutVolatileMetadata(o));
  for (const s of SINGLETONS) {
    const o = snap[s.field];
    if (o && o !== snap.lock && o !== snap.progress && o !== snap.kubeSystemNamespace) add(withoutVolatileMetadata(o));
  }
  return `sha256:${h.digest('hex')}`;
}

function withoutVolatileMetadata(o: KObject): unknown {
  const { managedFields: _m, resourceVersion: _r, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/**
 * The part of a Node the planner reads. Real Node objects are large (status.images alone
 * lists every cached image) and change all the time (heartbeats, image lists, allocatable),
 * none of which changes a plan.
 */
function nodePlanningView(o: NodeObject): unknown {
  const conds = Array.isArray(o.status?.conditions) ? o.status.conditions.map((c) => [c.type, c.status, c.reason]) : null;
  return [o.metadata.name, o.metadata.labels ?? null, o.metadata.annotations ?? null, o.metadata.creationTimestamp ?? null, o.spec?.unschedulable ?? false, o.spec?.taints ?? null, conds];
}

/** The part of a BootcNode the planner and the applier read (one per node: keep it small). */
function bootcNodePlanningView(o: BootcNodeObject): unknown {
  const entry = (e: BootEntry | null | undefined) => (e ? [e.image ?? null, e.imageDigest ?? null, e.softRebootCapable ?? false] : null);
  const conds = Array.isArray(o.status?.conditions) ? o.status.conditions.map((c) => [c.type, c.status, c.reason]) : null;
  return [o.metadata.name, o.metadata.annotations ?? null, o.metadata.ownerReferences?.map((r) => r.name) ?? null, o.spec ?? null, entry(o.status?.booted), entry(o.status?.staged), conds];
}

/** JSON with sorted keys, skipping the given keys at any depth (canonical form for hashing). */
export function stableStringify(v: unknown, skip: Set<string> = new Set()): string {
  const parts: string[] = [];
  canonical(v, skip, parts);
  return parts.join('');
}

function canonical(v: unknown, skip: Set<string>, out: string[]): void {
  if (Array.isArray(v)) {
    out.push('[');
    for (let i = 0; i < v.length; i++) {
      if (i) out.push(',');
      canonical(v[i], skip, out);
    }
    out.push(']');
    return;
  }
  if (!isPlainObject(v)) {
    out.push(v === undefined ? 'null' : JSON.stringify(v));
    return;
  }
  const keys = Object.keys(v);
  if (keys.length > 1) keys.sort();
  out.push('{');
  let first = true;
  for (const k of keys) {
    const val = v[k];
    if (val === undefined || skip.has(k)) continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(k), ':');
    canonical(val, skip, out);
  }
  out.push('}');
}

/** Parses snapshot text. `file` is used in messages and in `source`. */
export function parseSnapshot(text: string, file: string): LoadedSnapshot {
  const parsed = parseDocuments(text, file);
  if ('diagnostic' in parsed) return { snapshot: null, diagnostics: [parsed.diagnostic] };
  const { objects, pending } = collectObjects(parsed.docs);
  if (pending.length) {
    // Point at the bad objects: a position-tracking re-parse, affordable on this error path
    // for files of reasonable size (and JSON is YAML flow syntax, so it works for both).
    const map = text.length <= POSITION_REPARSE_LIMIT
      ? parseYamlWithPositions(text, file, { maxDepth: 4, multiDocument: true }).map
      : emptySourceMap(file);
    const diagnostics = pending.map((d) => diagnosticAt(map, d));
    return { snapshot: null, diagnostics: sortDiagnostics(diagnostics) };
  }
  if (!objects.length) {
    return {
      snapshot: null,
      diagnostics: [{
        severity: 'error', code: 'snapshot-empty', message: 'the snapshot is empty: it holds no Kubernetes objects',
        path: null, file, line: 1, column: 1,
        expected: 'the objects of a cluster: a List, or a multi-document stream of objects',
        hint: 'write one with `bootcplan snapshot --out FILE`; an empty file is never taken as an empty cluster',
      }],
    };
  }
  return { snapshot: snapshotFromObjects(objects, `file:${file}`, serverOfDocuments(parsed.docs)), diagnostics: [] };
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

/** The Kubernetes objects of the documents (Lists unpacked), and what is wrong with the others. */
function collectObjects(docs: readonly unknown[]): { objects: KObject[]; pending: DiagnosticInput[] } {
  const objects: KObject[] = [];
  const pending: DiagnosticInput[] = [];
  const multi = docs.length > 1;
  docs.forEach((doc, di) => {
    const prefix = multi ? `[${di}]` : '';
    if (doc === null || doc === undefined) return;
    if (!isPlainObject(doc)) {
      pending.push({
        code: 'snapshot-invalid', path: prefix || null,
        message: `expected a Kubernetes object or List, got ${Array.isArray(doc) ? 'a list' : 'a single value'}`,
        expected: 'the output of `kubectl get -o yaml` or `bootcplan snapshot`',
      });
      return;
    }
    if (doc.kind === 'List' || (typeof doc.kind === 'string' && doc.kind.endsWith('List') && Array.isArray(doc.items))) {
      if (!Array.isArray(doc.items)) {
        pending.push({ code: 'snapshot-invalid', path: `${prefix ? prefix + '.' : ''}items`, message: 'a List needs an "items" list', expected: 'items: [ ... ]' });
        return;
      }
      doc.items.forEach((item, i) => checkObject(item, `${prefix ? prefix + '.' : ''}items[${i}]`));
      return;
    }
    checkObject(doc, prefix);
  });
  return { objects, pending };

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
        code: 'snapshot-invalid', path: where,
        message: `object ${describe(o)} lacks ${missing.join(', ')}`,
        expected: 'every object to have apiVersion, kind and metadata.name',
        hint: `check ${sub(missing[0])}; snapshots are written by \`bootcplan snapshot\` or \`kubectl get -o yaml\``,
      });
      return;
    }
    const shape = listShapeProblem(o);
    if (shape) {
      pending.push({
        code: 'snapshot-invalid', path: path ? `${path}.${shape.field}` : shape.field,
        message: `object ${describe(o)}: ${shape.field} ${shape.problem}`,
        expected: 'a list of mappings, as the API server stores it',
        hint: 'snapshots are written by `bootcplan snapshot` or `kubectl get -o yaml`; check this field',
      });
      return;
    }
    // The kinds the snapshot keeps: every field their views name (src/cluster/kinds.ts).
    const field = KEPT_KINDS.has(`${apiGroup(o.apiVersion)}/${o.kind}`) ? objectShapeProblem(o, o.kind) : null;
    if (field) {
      pending.push({
        code: 'snapshot-invalid', path: path ? `${path}.${field.path}` : field.path,
        message: `object ${describe(o)}: ${field.path}: ${field.message}`,
        expected: `${field.expected}, as the API server stores it`,
        hint: 'snapshots are written by `bootcplan snapshot` or `kubectl get -o yaml`; check this field',
      });
      return;
    }
    objects.push(o);
  }
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
  return { ...tooDeep(file, at, path), code: 'snapshot-too-deep', hint: 'Kubernetes objects nest about 15 levels; regenerate the file with `bootcplan snapshot`' };
}


function yamlSyntaxDiagnostic(file: string, err: unknown): Diagnostic {
  const y = err instanceof jsyaml.YAMLException ? err : null;
  const mark = y?.mark;
  const reason = y?.reason ?? messageOf(err).split('\n')[0];
  return {
    severity: 'error', code: 'yaml-syntax', message: `cannot parse YAML: ${reason}`,
    path: null, file, line: mark ? mark.line + 1 : null, column: mark ? mark.column + 1 : null,
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
    severity: 'error', code: 'json-syntax',
    message: `cannot parse JSON: ${firstLineOf(errorText).replace(/ in JSON at position \d+.*$/, '').replace(/,\s*(\.\.\.)?".*$/, '')}`,
    path: null, file, line, column,
    expected: 'a JSON Kubernetes List or object',
    hint: 'was the file cut short? regenerate it with `bootcplan snapshot --out FILE`',
  };
}

function firstLineOf(s: string): string {
  return s.split('\n')[0];
}
