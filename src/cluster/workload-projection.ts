/**
 * The projection of workload objects into what a snapshot carries for the drain forecast
 * (src/cluster/workloads.ts, docs/apply.md "Drain forecast"). A WorkloadCollector takes objects
 * one at a time, as each page of a list arrives, and keeps only the compact records, so memory is
 * bounded by the projection and not by the API's answers. Shapes follow k8s.io/api core/v1 and
 * policy/v1; the requests of a pod follow the scheduler's rule (k8s.io/component-helpers
 * resource.PodRequests: the sum over containers, at least the largest init container, plus the
 * pod overhead).
 */
import { isPlainObject } from '../base/schema.ts';
import type { KObject } from './objects.ts';
import type { BudgetStatus, DrainBudget, DrainPod, IntOrPercent, SnapshotWorkloads, Toleration } from './workloads.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const strMap = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj(v))) if (typeof x === 'string') out[k] = x;
  return out;
};

const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const QUANTITY = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/**
 * A Kubernetes resource.Quantity ("100m", "1.5", "128Mi", "1e3") in base units, or null when it
 * is not one (k8s.io/apimachinery/pkg/api/resource: decimal SI, binary SI and exponent forms).
 */
export function parseQuantity(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string') return null;
  const m = QUANTITY.exec(v.trim());
  if (!m) return null;
  const n = Number(m[1]);
  if (m[2]) return n * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  return n * (BINARY[suffix] ?? DECIMAL[suffix]);
}

type Requests = { cpuMillis: number; memoryBytes: number };
function requestsOf(resources: unknown): Requests {
  const r = obj(obj(resources).requests);
  // Rounded up, as Quantity.MilliValue and Quantity.Value do.
  return { cpuMillis: Math.ceil((parseQuantity(r.cpu) ?? 0) * 1000 - 1e-9), memoryBytes: Math.ceil(parseQuantity(r.memory) ?? 0) };
}

/** The scheduler's requests of a pod spec: the containers' sum, at least each init container's, plus overhead. */
export function podRequests(spec: Obj): Requests {
  const sum: Requests = { cpuMillis: 0, memoryBytes: 0 };
  for (const c of list(spec.containers)) {
    const r = requestsOf(c.resources);
    sum.cpuMillis += r.cpuMillis;
    sum.memoryBytes += r.memoryBytes;
  }
  for (const c of list(spec.initContainers)) {
    const r = requestsOf(c.resources);
    sum.cpuMillis = Math.max(sum.cpuMillis, r.cpuMillis);
    sum.memoryBytes = Math.max(sum.memoryBytes, r.memoryBytes);
  }
  const overhead = requestsOf({ requests: spec.overhead });
  return { cpuMillis: sum.cpuMillis + overhead.cpuMillis, memoryBytes: sum.memoryBytes + overhead.memoryBytes };
}

/** A pod's projection before its claims are resolved to the node a local volume pins it to. */
interface PendingPod {
  pod: DrainPod;
  claims: string[];
}

function projectPod(o: KObject): PendingPod | null {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const node = str(spec.nodeName);
  // A pod the scheduler has not placed is on no node: no drain meets it.
  if (!node) return null;
  const owner = list(o.metadata.ownerReferences).find((r) => r.controller === true);
  const volumes = list(spec.volumes);
  const ns = o.metadata.namespace ?? 'default';
  const claims = volumes.map((v) => str(obj(v.persistentVolumeClaim).claimName)).filter((c) => c !== null);
  const pod: DrainPod = {
    namespace: ns,
    name: o.metadata.name,
    node,
    labels: strMap(o.metadata.labels),
    controller: owner && typeof owner.kind === 'string' && typeof owner.name === 'string' ? { kind: owner.kind, name: owner.name } : null,
    phase: str(status.phase) ?? 'Unknown',
    ready: list(status.conditions).some((c) => c.type === 'Ready' && c.status === 'True'),
    deleting: typeof o.metadata.deletionTimestamp === 'string' && o.metadata.deletionTimestamp !== '',
    mirror: 'kubernetes.io/config.mirror' in obj(o.metadata.annotations),
    emptyDir: volumes.some((v) => isPlainObject(v.emptyDir)),
    pinnedTo: null,
    requests: podRequests(spec),
    nodeSelector: strMap(spec.nodeSelector),
    tolerations: list(spec.tolerations).map(toleration),
  };
  return { pod, claims: claims.map((c) => `${ns}/${c}`) };
}

function toleration(t: Obj): Toleration {
  const out: Toleration = {};
  if (typeof t.key === 'string') out.key = t.key;
  if (t.operator === 'Exists' || t.operator === 'Equal') out.operator = t.operator;
  if (typeof t.value === 'string') out.value = t.value;
  if (typeof t.effect === 'string') out.effect = t.effect;
  return out;
}

/** What is wrong with a budget's spec, as the API server's validation would refuse it (policy/v1 ValidatePodDisruptionBudgetSpec). */
interface BudgetProblem {
  path: string;
  message: string;
  expected: string;
}

function intOrPercent(v: unknown, field: string): IntOrPercent | null | BudgetProblem {
  if (v === undefined || v === null) return null;
  const bad = { path: `spec.${field}`, expected: 'a count (0 or more) or a percentage "N%" from 0% to 100%' };
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? v : { ...bad, message: `${v} is not a count` };
  if (typeof v === 'string') {
    const m = /^(\d+)%$/.exec(v);
    if (m && Number(m[1]) <= 100) return v;
    return { ...bad, message: `"${v}" is not a percentage` };
  }
  return { ...bad, message: 'is neither a count nor a percentage' };
}

const isProblem = (v: unknown): v is BudgetProblem => isPlainObject(v) && typeof v.message === 'string';

/** A PodDisruptionBudget's projection, or what is wrong with its spec. */
export function projectBudget(o: KObject): DrainBudget | BudgetProblem {
  const spec = obj(o.spec);
  const status = obj(o.status);
  const minAvailable = intOrPercent(spec.minAvailable, 'minAvailable');
  if (isProblem(minAvailable)) return minAvailable;
  const maxUnavailable = intOrPercent(spec.maxUnavailable, 'maxUnavailable');
  if (isProblem(maxUnavailable)) return maxUnavailable;
  if (minAvailable !== null && maxUnavailable !== null) {
    return { path: 'spec', message: 'minAvailable and maxUnavailable are both set', expected: 'one of minAvailable and maxUnavailable' };
  }
  const policy = spec.unhealthyPodEvictionPolicy;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    namespace: o.metadata.namespace ?? 'default',
    name: o.metadata.name,
    minAvailable,
    maxUnavailable,
    unhealthyPodEvictionPolicy: policy === 'IfHealthyBudget' || policy === 'AlwaysAllow' ? policy : null,
    generation: num(o.metadata.generation),
    selector: isPlainObject(spec.selector) ? spec.selector : null,
    status: budgetStatus(status),
  };
}

function budgetStatus(status: Obj): BudgetStatus {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    observedGeneration: num(status.observedGeneration),
    currentHealthy: num(status.currentHealthy),
    desiredHealthy: num(status.desiredHealthy),
    disruptionsAllowed: num(status.disruptionsAllowed),
    expectedPods: num(status.expectedPods),
  };
}

/** The kinds a collector projects, keyed by `group/Kind` (the group of apiVersion). */
const WORKLOAD_KINDS = new Set([
  '/Pod',
  'policy/PodDisruptionBudget',
  '/PersistentVolumeClaim',
  '/PersistentVolume',
  'apps/ReplicaSet',
  'apps/Deployment',
  'apps/StatefulSet',
]);
const CONTROLLER_KINDS = new Set(['ReplicaSet', 'Deployment', 'StatefulSet']);

const keyOf = (o: KObject) => {
  const slash = o.apiVersion.indexOf('/');
  return `${slash < 0 ? '' : o.apiVersion.slice(0, slash)}/${o.kind}`;
};

const WORKLOAD_KIND_NAMES = new Set([...WORKLOAD_KINDS].map((k) => k.slice(k.indexOf('/') + 1)));

/** Whether an object is one of the workload kinds a snapshot projects (the kind first: no string built for a Node). */
export function isWorkloadKind(o: KObject): boolean {
  return WORKLOAD_KIND_NAMES.has(o.kind) && WORKLOAD_KINDS.has(keyOf(o));
}

/** The node a PersistentVolume's required node affinity pins it to: one kubernetes.io/hostname value. */
function pinnedHost(pv: KObject): string | null {
  const terms = list(obj(obj(obj(pv.spec).nodeAffinity).required).nodeSelectorTerms);
  const hosts = new Set<string>();
  for (const t of terms) {
    for (const e of list(t.matchExpressions)) {
      if (e.key === 'kubernetes.io/hostname' && e.operator === 'In' && Array.isArray(e.values))
        for (const v of e.values) if (typeof v === 'string') hosts.add(v);
    }
  }
  return hosts.size === 1 ? [...hosts][0] : null;
}

/**
 * Takes workload objects one at a time (a file's items, or each page of a live list) and keeps
 * their projection; `finish` resolves each pod's claims through its PersistentVolumeClaim and
 * PersistentVolume to the node a local volume pins it to.
 */
export class WorkloadCollector {
  private pods: PendingPod[] = [];
  private budgets: DrainBudget[] = [];
  private controllers: SnapshotWorkloads['controllers'] = [];
  private claimVolume = new Map<string, string>();
  private volumeHost = new Map<string, string>();
  private seen = false;
  /** Equal label maps, node selectors and toleration lists, kept once (the pods of a ReplicaSet share them). */
  private shared = new Map<string, unknown>();
  /** Pods on no node (not yet scheduled), which no drain meets. */
  unscheduledPods = 0;

  /** Projects one object; a budget whose spec the API server would refuse comes back as its problem. */
  add(o: KObject): BudgetProblem | null {
    const key = keyOf(o);
    if (!WORKLOAD_KINDS.has(key)) return null;
    this.seen = true;
    if (key === '/Pod') {
      const p = projectPod(o);
      if (p) {
        p.pod.labels = this.once(p.pod.labels);
        p.pod.nodeSelector = this.once(p.pod.nodeSelector);
        p.pod.tolerations = this.once(p.pod.tolerations);
        this.pods.push(p);
      } else this.unscheduledPods++;
    } else if (key === 'policy/PodDisruptionBudget') {
      const b = projectBudget(o);
      if (isProblem(b)) return b;
      this.budgets.push(b);
    } else if (key === '/PersistentVolumeClaim') {
      const volume = str(obj(o.spec).volumeName);
      if (volume) this.claimVolume.set(`${o.metadata.namespace ?? 'default'}/${o.metadata.name}`, volume);
    } else if (key === '/PersistentVolume') {
      const host = pinnedHost(o);
      if (host) this.volumeHost.set(o.metadata.name, host);
    } else if (CONTROLLER_KINDS.has(o.kind)) {
      const replicas = obj(o.spec).replicas;
      // spec.replicas defaults to 1 (apps/v1 defaults).
      this.controllers.push({
        kind: o.kind,
        namespace: o.metadata.namespace ?? 'default',
        name: o.metadata.name,
        replicas: typeof replicas === 'number' ? replicas : 1,
      });
    }
    return null;
  }

  /**
   * One object for equal values: 100,000 pods of 5,000 ReplicaSets hold 5,000 label maps, not
   * 100,000 (the projection is read, never written: src/domain/drain-forecast.ts is pure).
   */
  private once<T>(v: T): T {
    const key = JSON.stringify(v);
    const had = this.shared.get(key);
    if (had !== undefined) return had as T;
    this.shared.set(key, v);
    return v;
  }

  /** Takes in workloads already projected (a snapshot file's WorkloadProjection item: src/cluster/workload-file.ts). */
  addProjected(w: SnapshotWorkloads): void {
    this.seen = true;
    for (const pod of w.pods) this.pods.push({ pod, claims: [] });
    for (const b of w.budgets) this.budgets.push(b);
    for (const c of w.controllers) this.controllers.push(c);
  }

  /** Takes in what another collector kept (one per list, so that a restarted list starts over). */
  merge(other: WorkloadCollector): void {
    // Loops, not push(...): a spread of 300,000 pods overflows the call stack (RangeError).
    for (const p of other.pods) this.pods.push(p);
    for (const b of other.budgets) this.budgets.push(b);
    for (const c of other.controllers) this.controllers.push(c);
    for (const [k, v] of other.claimVolume) this.claimVolume.set(k, v);
    for (const [k, v] of other.volumeHost) this.volumeHost.set(k, v);
    this.seen ||= other.seen;
    this.unscheduledPods += other.unscheduledPods;
  }

  /**
   * The workloads, or null when no workload object came in (an older snapshot). `nodeOfHost`:
   * the node name of a kubernetes.io/hostname label value (they differ on some clouds).
   */
  finish(nodeOfHost: (host: string) => string = (h) => h): SnapshotWorkloads | null {
    if (!this.seen) return null;
    const pods = this.pods.map(({ pod, claims }) => {
      for (const c of claims) {
        const volume = this.claimVolume.get(c);
        const host = volume === undefined ? undefined : this.volumeHost.get(volume);
        if (host !== undefined) return { ...pod, pinnedTo: nodeOfHost(host) };
      }
      return pod;
    });
    const order = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
      a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    return {
      pods: pods.sort(order),
      budgets: [...this.budgets].sort(order),
      controllers: [...this.controllers].sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : order(a, b))),
    };
  }
}
