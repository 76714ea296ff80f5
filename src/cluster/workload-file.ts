/**
 * The workloads as a snapshot file carries them (docs/design.md §5, docs/apply.md "Drain
 * forecast"): one `snapshot.bootcplan.dev/v1` WorkloadProjection item in the List that
 * `bootcplan snapshot` writes, holding the projection (src/cluster/workloads.ts) as rows of
 * numbers and indices into tables, so that a pod costs well under 300 bytes of file: strings
 * that repeat (namespaces, nodes, controllers, phases) once in `strings`, label maps, node
 * selectors, toleration lists and budget selectors once in `values`. Reading it back gives the
 * same SnapshotWorkloads; a file edited by hand gets a field-level problem, never a crash.
 */
import { isPlainObject } from '../base/schema.ts';
import { NamedError } from '../base/errors.ts';
import type { LabelSelector } from '../base/api-types.ts';
import type { DrainBudget, DrainPod, IntOrPercent, SnapshotWorkloads, Toleration } from './workloads.ts';

const WORKLOAD_ITEM_API_VERSION = 'snapshot.bootcplan.dev/v1';
const WORKLOAD_ITEM_KIND = 'WorkloadProjection';
/** The List annotation that says which snapshot format a file is: "2" carries the workloads. */
export const SNAPSHOT_FORMAT_ANNOTATION = 'bootcplan.dev/snapshot-format';
export const SNAPSHOT_FORMAT_WORKLOADS = '2';

/** Pod flags, one bit each. */
const READY = 1,
  DELETING = 2,
  MIRROR = 4,
  EMPTY_DIR = 8;

/** The column names, written into the item so that a reader of the file can tell what a row holds. */
const POD_COLUMNS = [
  'namespace',
  'name',
  'node',
  'labels',
  'controllerKind',
  'controllerName',
  'phase',
  'flags',
  'pinnedTo',
  'cpuMillis',
  'memoryBytes',
  'nodeSelector',
  'tolerations',
];
const BUDGET_COLUMNS = [
  'namespace',
  'name',
  'minAvailable',
  'maxUnavailable',
  'unhealthyPodEvictionPolicy',
  'generation',
  'selector',
  'observedGeneration',
  'currentHealthy',
  'desiredHealthy',
  'disruptionsAllowed',
  'expectedPods',
];
const CONTROLLER_COLUMNS = ['kind', 'namespace', 'name', 'replicas'];

type Row = (string | number | null)[];

export interface WorkloadItem {
  apiVersion: typeof WORKLOAD_ITEM_API_VERSION;
  kind: typeof WORKLOAD_ITEM_KIND;
  metadata: { name: string };
  columns: { pods: string[]; budgets: string[]; controllers: string[] };
  strings: string[];
  values: unknown[];
  pods: Row[];
  budgets: Row[];
  controllers: Row[];
}

/** A table of distinct entries, each written once and referred to by its index. */
class Table<T> {
  readonly entries: T[] = [];
  private index = new Map<string, number>();
  constructor(private readonly keyOf: (v: T) => string) {}
  of(v: T): number {
    const k = this.keyOf(v);
    let i = this.index.get(k);
    if (i === undefined) {
      i = this.entries.length;
      this.entries.push(v);
      this.index.set(k, i);
    }
    return i;
  }
}

/** The item a snapshot file carries for these workloads. */
export function encodeWorkloads(w: SnapshotWorkloads): WorkloadItem {
  const strings = new Table<string>((s) => s);
  const values = new Table<unknown>((v) => JSON.stringify(v));
  const s = (v: string | null) => (v === null ? null : strings.of(v));
  const pods = w.pods.map((p): Row => {
    const flags = (p.ready ? READY : 0) | (p.deleting ? DELETING : 0) | (p.mirror ? MIRROR : 0) | (p.emptyDir ? EMPTY_DIR : 0);
    return [
      s(p.namespace),
      p.name,
      s(p.node),
      values.of(p.labels),
      s(p.controller?.kind ?? null),
      s(p.controller?.name ?? null),
      s(p.phase),
      flags,
      s(p.pinnedTo),
      p.requests.cpuMillis,
      p.requests.memoryBytes,
      values.of(p.nodeSelector),
      values.of(p.tolerations),
    ];
  });
  const budgets = w.budgets.map((b): Row => [
    s(b.namespace),
    b.name,
    b.minAvailable,
    b.maxUnavailable,
    s(b.unhealthyPodEvictionPolicy),
    b.generation,
    b.selector === null ? null : values.of(b.selector),
    b.status.observedGeneration,
    b.status.currentHealthy,
    b.status.desiredHealthy,
    b.status.disruptionsAllowed,
    b.status.expectedPods,
  ]);
  const controllers = w.controllers.map((c): Row => [s(c.kind), s(c.namespace), c.name, c.replicas]);
  return {
    apiVersion: WORKLOAD_ITEM_API_VERSION,
    kind: WORKLOAD_ITEM_KIND,
    metadata: { name: 'workloads' },
    columns: { pods: POD_COLUMNS, budgets: BUDGET_COLUMNS, controllers: CONTROLLER_COLUMNS },
    strings: strings.entries,
    values: values.entries,
    pods,
    budgets,
    controllers,
  };
}

/** What is wrong with an item, at a path inside it (as src/cluster/workload-projection.ts reports a budget). */
interface WorkloadItemProblem {
  path: string;
  message: string;
  expected: string;
}

/** A field of the item that is not what the writer puts there (caught in decodeWorkloads, never escapes). */
class BadWorkloadField extends NamedError {
  constructor(
    readonly path: string,
    readonly expectedWhat: string,
  ) {
    super(path);
  }
}

/** Whether an object is a WorkloadProjection item (of any version: a newer one is refused by decodeWorkloads). */
export function isWorkloadItem(o: { apiVersion: string; kind: string }): boolean {
  return o.kind === WORKLOAD_ITEM_KIND && o.apiVersion.startsWith('snapshot.bootcplan.dev/');
}

/** The workloads of an item, or what is wrong with it. */
export function decodeWorkloads(item: Record<string, unknown>): SnapshotWorkloads | WorkloadItemProblem {
  if (item.apiVersion !== WORKLOAD_ITEM_API_VERSION) {
    return {
      path: 'apiVersion',
      message: `${String(item.apiVersion)} is not a version this bootcplan reads`,
      expected: `${WORKLOAD_ITEM_API_VERSION} (a newer bootcplan wrote this file: upgrade, or take the snapshot again with this one)`,
    };
  }
  try {
    return decodeRows(item);
  } catch (err) {
    if (!(err instanceof BadWorkloadField)) throw err;
    return { path: err.path, message: 'is not what `bootcplan snapshot` writes there', expected: err.expectedWhat };
  }
}

function decodeRows(item: Record<string, unknown>): SnapshotWorkloads {
  const strings = arrayAt(item.strings, 'strings');
  const values = arrayAt(item.values, 'values');
  const str = (v: unknown, path: string): string => {
    if (typeof v !== 'number' || !Number.isInteger(v) || typeof strings[v] !== 'string') throw new BadWorkloadField(path, 'an index into strings');
    return strings[v];
  };
  const optStr = (v: unknown, path: string) => (v === null ? null : str(v, path));
  const name = (v: unknown, path: string): string => {
    if (typeof v !== 'string' || v === '') throw new BadWorkloadField(path, 'a name');
    return v;
  };
  const count = (v: unknown, path: string): number => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new BadWorkloadField(path, 'a number');
    return v;
  };
  const value = <T>(v: unknown, path: string, ok: (x: unknown) => x is T, what: string): T => {
    const x = typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < values.length ? values[v] : undefined;
    if (!ok(x)) throw new BadWorkloadField(path, `an index into values, of ${what}`);
    return x;
  };
  const rows = (key: string, width: number) =>
    arrayAt(item[key], key).map((r: unknown, i): unknown[] => {
      if (!Array.isArray(r) || r.length !== width) throw new BadWorkloadField(`${key}[${i}]`, `a row of ${width} columns`);
      const row: unknown[] = r;
      return row;
    });
  const pods = rows('pods', POD_COLUMNS.length).map((r, i): DrainPod => {
    const at = (c: number) => `pods[${i}][${c}]`;
    const kind = optStr(r[4], at(4));
    const controllerName = optStr(r[5], at(5));
    const flags = count(r[7], at(7));
    return {
      namespace: str(r[0], at(0)),
      name: name(r[1], at(1)),
      node: str(r[2], at(2)),
      labels: value(r[3], at(3), isStringMap, 'a map of strings'),
      controller: kind !== null && controllerName !== null ? { kind, name: controllerName } : null,
      phase: str(r[6], at(6)),
      ready: (flags & READY) !== 0,
      deleting: (flags & DELETING) !== 0,
      mirror: (flags & MIRROR) !== 0,
      emptyDir: (flags & EMPTY_DIR) !== 0,
      pinnedTo: optStr(r[8], at(8)),
      requests: { cpuMillis: count(r[9], at(9)), memoryBytes: count(r[10], at(10)) },
      nodeSelector: value(r[11], at(11), isStringMap, 'a map of strings'),
      tolerations: value(r[12], at(12), isTolerations, 'a list of tolerations'),
    };
  });
  const budgets = rows('budgets', BUDGET_COLUMNS.length).map((r, i): DrainBudget => {
    const at = (c: number) => `budgets[${i}][${c}]`;
    const policy = optStr(r[4], at(4));
    if (policy !== null && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow') throw new BadWorkloadField(at(4), 'IfHealthyBudget, AlwaysAllow or null');
    return {
      namespace: str(r[0], at(0)),
      name: name(r[1], at(1)),
      minAvailable: intOrPercent(r[2], at(2)),
      maxUnavailable: intOrPercent(r[3], at(3)),
      unhealthyPodEvictionPolicy: policy,
      generation: count(r[5], at(5)),
      selector: r[6] === null ? null : value(r[6], at(6), isSelector, 'a label selector'),
      status: {
        observedGeneration: count(r[7], at(7)),
        currentHealthy: count(r[8], at(8)),
        desiredHealthy: count(r[9], at(9)),
        disruptionsAllowed: count(r[10], at(10)),
        expectedPods: count(r[11], at(11)),
      },
    };
  });
  const controllers = rows('controllers', CONTROLLER_COLUMNS.length).map((r, i) => {
    const at = (c: number) => `controllers[${i}][${c}]`;
    return { kind: str(r[0], at(0)), namespace: str(r[1], at(1)), name: name(r[2], at(2)), replicas: count(r[3], at(3)) };
  });
  return { pods, budgets, controllers };
}

function arrayAt(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new BadWorkloadField(path, 'a list');
  return v;
}

function intOrPercent(v: unknown, path: string): IntOrPercent | null {
  if (v === null || (typeof v === 'number' && Number.isInteger(v) && v >= 0) || (typeof v === 'string' && /^(\d+)%$/.test(v) && Number(v.slice(0, -1)) <= 100))
    return v;
  throw new BadWorkloadField(path, 'a count, a percentage "N%" or null');
}

function isStringMap(v: unknown): v is Record<string, string> {
  return isPlainObject(v) && Object.values(v).every((x) => typeof x === 'string');
}

function isTolerations(v: unknown): v is Toleration[] {
  return (
    Array.isArray(v) &&
    v.every(
      (t) =>
        isPlainObject(t) &&
        ['key', 'value', 'effect'].every((k) => t[k] === undefined || typeof t[k] === 'string') &&
        (t.operator === undefined || t.operator === 'Exists' || t.operator === 'Equal'),
    )
  );
}

function isSelector(v: unknown): v is LabelSelector {
  return isPlainObject(v);
}
