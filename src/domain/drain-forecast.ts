/**
 * The drain forecast of one wave (docs/apply.md "Drain forecast"), pure: which pods the drain
 * of the wave's nodes evicts, what their PodDisruptionBudgets allow, and whether the drain can
 * finish. It follows the drain bootcplan performs, which is the MCO's and `kubectl drain`'s
 * (k8s.io/kubectl/pkg/drain filters): DaemonSet pods and mirror (static) pods stay, terminal
 * pods are deleted, pods without a controller are deleted and not recreated, emptyDir data is
 * lost; every other pod goes through the Eviction API (src/domain/disruption-budget.ts).
 *
 * Classes, worst first: `blocked` (the drain can never finish), `no-room` (the evicted pods do
 * not fit elsewhere: a first-fit estimate), `outage` (a workload without a budget loses every
 * ready replica), `serialized` (a budget allows fewer evictions than the wave needs: the drain
 * waits for replacements, in rounds), `ok`. `message` and `hint` explain; nothing branches on them.
 */
import { selectorMatches } from './nodes.ts';
import { countsHealthy, evictionNeed, neverAllows } from './disruption-budget.ts';
import type { Budget, DrainBudget, DrainNode, DrainPod, Taint, Toleration } from '../cluster/workloads.ts';

export const DRAIN_CLASSES = ['ok', 'serialized', 'outage', 'no-room', 'blocked'] as const;
export type DrainClass = (typeof DRAIN_CLASSES)[number];

/** Why a finding was made: a closed union (the class follows from it). */
type DrainReason =
  'max-unavailable-zero' | 'min-available-all' | 'below-desired' | 'multiple-budgets' | 'no-replacement' | 'serialized' | 'unguarded-workload' | 'no-room';

const CLASS_OF: Record<DrainReason, Exclude<DrainClass, 'ok'>> = {
  'max-unavailable-zero': 'blocked',
  'min-available-all': 'blocked',
  'below-desired': 'blocked',
  'multiple-budgets': 'blocked',
  'no-replacement': 'blocked',
  serialized: 'serialized',
  'unguarded-workload': 'outage',
  'no-room': 'no-room',
};

export interface DrainCluster {
  pods: readonly DrainPod[];
  budgets: readonly DrainBudget[];
  nodes: readonly DrainNode[];
}

export interface DrainFinding {
  class: Exclude<DrainClass, 'ok'>;
  reason: DrainReason;
  /** The wave's nodes the finding's pods run on. */
  nodes: string[];
  /** namespace/name of the pods concerned. */
  pods: string[];
  /** namespace/name of the budget, or null. */
  budget: string | null;
  /** The budget's numbers (status) and what the wave asks of it. */
  numbers: { currentHealthy: number; desiredHealthy: number; disruptionsAllowed: number; expectedPods: number; evictions: number } | null;
  /** serialized: rounds of evictions, each waiting for replacements to be Ready. */
  rounds: number | null;
  message: string;
  hint: string;
}

export interface PodEffect {
  pod: string;
  node: string;
  effect: 'deleted-unmanaged' | 'emptydir-lost';
}

interface WaveDrainForecast {
  /** The worst class of the findings; ok without any. */
  class: DrainClass;
  findings: DrainFinding[];
  effects: PodEffect[];
  /** Pods the drain removes from the wave's nodes (evicted or deleted). */
  evicted: number;
  /** The most rounds any budget makes the drain wait (1 when nothing waits). */
  rounds: number;
}

const ref = (p: { namespace: string; name: string }) => `${p.namespace}/${p.name}`;

/** The pods a drain leaves in place (kubectl drain: DaemonSet-managed and mirror pods). */
export function staysOnDrain(p: DrainPod): boolean {
  return p.mirror || p.controller?.kind === 'DaemonSet';
}

/** Does a pod tolerate the taint (core/v1 Toleration.ToleratesTaint)? */
export function tolerates(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === 'Exists') return !t.key || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

/** May the scheduler place the pod on the node (unschedulable, NoSchedule/NoExecute taints, nodeSelector)? */
export function mayRunOn(p: DrainPod, n: DrainNode): boolean {
  if (n.unschedulable) return false;
  for (const [k, v] of Object.entries(p.nodeSelector)) if (n.labels[k] !== v) return false;
  return n.taints.every((t) => t.effect === 'PreferNoSchedule' || tolerates(p.tolerations, t));
}

/**
 * The budgets of each namespace, made once per list of budgets (a cache: same answers, without
 * scanning every budget of the cluster for every pod).
 */
const byNamespace = new WeakMap<readonly DrainBudget[], Map<string, DrainBudget[]>>();
function budgetsIn(budgets: readonly DrainBudget[], namespace: string): readonly DrainBudget[] {
  let idx = byNamespace.get(budgets);
  if (!idx) {
    idx = new Map();
    for (const b of budgets) {
      const list = idx.get(b.namespace);
      if (list) list.push(b);
      else idx.set(b.namespace, [b]);
    }
    byNamespace.set(budgets, idx);
  }
  return idx.get(namespace) ?? [];
}

/** Each pod's budgets, once per list of budgets: every wave of a plan asks again for the same pods. */
const ofPod = new WeakMap<readonly DrainBudget[], WeakMap<DrainPod, DrainBudget[]>>();

/** The budgets of a pod: those of its namespace whose selector matches its labels. */
export function budgetsOf(p: DrainPod, budgets: readonly DrainBudget[]): readonly DrainBudget[] {
  let memo = ofPod.get(budgets);
  if (!memo) ofPod.set(budgets, (memo = new WeakMap()));
  let found = memo.get(p);
  if (!found) memo.set(p, (found = budgetsIn(budgets, p.namespace).filter((b) => selectorMatches(b.selector, p.labels))));
  return found;
}

/**
 * Places the evicted pods that come back (a controller recreates them) on the nodes they may
 * move to, first fit, largest request first: the pods that find no room. An estimate (named as
 * one in the finding): the scheduler scores nodes, it does not pack.
 */
function podsWithoutRoom(moving: DrainPod[], cluster: DrainCluster, wave: ReadonlySet<string>): DrainPod[] {
  const free = new Map<string, { cpu: number; mem: number; pods: number }>();
  for (const n of cluster.nodes) {
    if (wave.has(n.name)) continue;
    free.set(n.name, { cpu: n.allocatable.cpuMillis, mem: n.allocatable.memoryBytes, pods: n.allocatable.pods });
  }
  for (const p of cluster.pods) {
    const f = free.get(p.node);
    if (!f || p.phase === 'Succeeded' || p.phase === 'Failed') continue;
    f.cpu -= p.requests.cpuMillis;
    f.mem -= p.requests.memoryBytes;
    f.pods -= 1;
  }
  const nodes = cluster.nodes.filter((n) => free.has(n.name));
  const order = [...moving].sort(
    (a, b) => b.requests.cpuMillis - a.requests.cpuMillis || b.requests.memoryBytes - a.requests.memoryBytes || ref(a).localeCompare(ref(b)),
  );
  const homeless: DrainPod[] = [];
  for (const p of order) {
    const target = nodes.find((n) => {
      const f = free.get(n.name);
      return f !== undefined && mayRunOn(p, n) && f.cpu >= p.requests.cpuMillis && f.mem >= p.requests.memoryBytes && f.pods >= 1;
    });
    const f = target && free.get(target.name);
    if (!f) {
      homeless.push(p);
      continue;
    }
    f.cpu -= p.requests.cpuMillis;
    f.mem -= p.requests.memoryBytes;
    f.pods -= 1;
  }
  return homeless;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function budgetSpecText(b: DrainBudget): string {
  return b.maxUnavailable !== null ? `maxUnavailable ${b.maxUnavailable}` : `minAvailable ${b.minAvailable ?? '?'}`;
}

/** The forecast of draining `waveNodes` together, with the cluster as the snapshot shows it. */
export function forecastWaveDrain(cluster: DrainCluster, waveNodes: readonly string[]): WaveDrainForecast {
  const wave = new Set(waveNodes);
  const findings: DrainFinding[] = [];
  const effects: PodEffect[] = [];
  const onWave = cluster.pods.filter((p) => wave.has(p.node) && !staysOnDrain(p));
  const removed = onWave.filter((p) => p.phase !== 'Succeeded' && p.phase !== 'Failed');
  for (const p of removed) {
    if (p.controller === null) effects.push({ pod: ref(p), node: p.node, effect: 'deleted-unmanaged' });
    if (p.emptyDir) effects.push({ pod: ref(p), node: p.node, effect: 'emptydir-lost' });
  }

  // Pods that come back elsewhere during the wave: recreated by a controller, not pinned to a
  // node of the wave, with room on a node they may run on.
  const recreated = removed.filter((p) => p.controller !== null && !(p.pinnedTo !== null && wave.has(p.pinnedTo)));
  const homeless = podsWithoutRoom(recreated, cluster, wave);
  if (homeless.length > 0) {
    findings.push({
      class: 'no-room',
      reason: 'no-room',
      nodes: [...new Set(homeless.map((p) => p.node))].sort(),
      pods: homeless.map(ref).sort(),
      budget: null,
      numbers: null,
      rounds: null,
      message: `${plural(homeless.length, 'evicted pod')} would not fit on the nodes they may move to (first-fit estimate of requests against free allocatable)`,
      hint: 'add room outside this wave (nodes, or fewer nodes per wave), or check the pods\u2019 nodeSelector and tolerations',
    });
  }
  const homelessSet = new Set(homeless);
  const recreatedSet = new Set(recreated);
  const comesBack = (p: DrainPod) => recreatedSet.has(p) && !homelessSet.has(p);

  const budgets = budgetFindings(cluster, removed, comesBack);
  findings.push(...budgets.findings, ...outageFindings(cluster, wave));
  const worst = findings.reduce<DrainClass>((w, f) => (DRAIN_CLASSES.indexOf(f.class) > DRAIN_CLASSES.indexOf(w) ? f.class : w), 'ok');
  return { class: worst, findings, effects, evicted: removed.length, rounds: budgets.rounds };
}

/** The budgets' findings: each evicted pod under exactly one (the Eviction API refuses a pod under two). */
function budgetFindings(
  cluster: DrainCluster,
  removed: readonly DrainPod[],
  comesBack: (p: DrainPod) => boolean,
): { findings: DrainFinding[]; rounds: number } {
  const findings: DrainFinding[] = [];
  const byBudget = new Map<DrainBudget, DrainPod[]>();
  for (const p of removed) {
    const bs = budgetsOf(p, cluster.budgets);
    if (bs.length > 1) {
      findings.push({
        class: 'blocked',
        reason: 'multiple-budgets',
        nodes: [p.node],
        pods: [ref(p)],
        budget: bs.map(ref).sort().join(', '),
        numbers: null,
        rounds: null,
        message: `${ref(p)} is selected by ${bs.length} PodDisruptionBudgets (${bs
          .map((b) => b.name)
          .sort()
          .join(', ')}): the Eviction API refuses to evict it`,
        hint: 'make the budgets\u2019 selectors disjoint, so that each pod has at most one',
      });
      continue;
    }
    if (bs.length !== 1) continue;
    const list = byBudget.get(bs[0]);
    if (list) list.push(p);
    else byBudget.set(bs[0], [p]);
  }
  let rounds = 1;
  for (const [b, pods] of [...byBudget].sort(([a], [c]) => ref(a).localeCompare(ref(c)))) {
    const f = judgeBudget(b, pods, cluster, comesBack);
    if (!f) continue;
    findings.push(f);
    if (f.rounds !== null) rounds = Math.max(rounds, f.rounds);
  }
  return { findings, rounds };
}

/** One budget against the wave's evictions of its pods: a finding, or null when it allows them. */
function judgeBudget(b: DrainBudget, pods: readonly DrainPod[], cluster: DrainCluster, comesBack: (p: DrainPod) => boolean): DrainFinding | null {
  const asking = pods.filter((p) => evictionNeed(p, b) === 'budget');
  if (asking.length === 0) return null;
  const s = b.status;
  const numbers = { ...pick(s), evictions: asking.length };
  const finding = (reason: DrainReason, message: string, hint: string, r: number | null = null): DrainFinding => ({
    class: CLASS_OF[reason],
    reason,
    nodes: [...new Set(asking.map((p) => p.node))].sort(),
    pods: asking.map(ref).sort(),
    budget: ref(b),
    numbers,
    rounds: r,
    message,
    hint,
  });
  const spec = budgetSpecText(b);
  const never = neverAllows(b, { expectedPods: s.expectedPods, desiredHealthy: s.desiredHealthy });
  if (never !== null) {
    return never === 'max-unavailable-zero'
      ? finding(
          'max-unavailable-zero',
          `PDB ${ref(b)} (${spec}) allows no disruption`,
          `set maxUnavailable: 1 (or a percentage above 0) on PDB ${ref(b)}, or leave these nodes out`,
        )
      : finding(
          'min-available-all',
          `PDB ${ref(b)}: ${spec} of ${s.expectedPods} healthy allows 0 disruptions`,
          `scale to ${s.expectedPods + 1} or set maxUnavailable: 1 on PDB ${ref(b)}`,
        );
  }
  if (s.disruptionsAllowed <= 0) {
    const unready = cluster.pods.filter((p) => p.namespace === b.namespace && selectorMatches(b.selector, p.labels) && !countsHealthy(p)).length;
    return finding(
      'below-desired',
      `PDB ${ref(b)} has ${s.currentHealthy} healthy of the ${s.desiredHealthy} it needs (${s.expectedPods} expected): it allows 0 disruptions now`,
      unready > 0
        ? `bring its ${plural(unready, 'unready pod')} back to Ready first${b.unhealthyPodEvictionPolicy === 'AlwaysAllow' ? '' : ' (unhealthyPodEvictionPolicy: AlwaysAllow lets unready pods be evicted)'}`
        : 'bring the workload back to its expected replicas first',
    );
  }
  const a = s.disruptionsAllowed;
  if (asking.length <= a) return null;
  // More evictions than allowed at once: the drain retries the refused ones as replacements
  // become Ready. A pod that does not come back during the wave holds its disruption until the
  // wave is over; once those hold every disruption, the rest can never go.
  const stuck = asking.filter((p) => !comesBack(p)).length;
  if (stuck >= a) {
    return finding(
      'no-replacement',
      `PDB ${ref(b)} allows ${a} at once and ${plural(stuck, 'evicted pod')} of this wave cannot come back elsewhere (no controller, pinned by a local volume, or no room): the other ${asking.length - stuck} wait forever`,
      `spread these nodes over more waves (at most ${a} of this budget's pods per wave), or raise the budget`,
    );
  }
  const r = Math.ceil(asking.length / a);
  return finding(
    'serialized',
    `PDB ${ref(b)} allows ${a} at once; the wave evicts ${asking.length}: ${r} rounds, each waiting for the replacements to be Ready`,
    `spread these nodes over more waves (at most ${a} of this budget's pods per wave), or raise the budget`,
    r,
  );
}

/** Workloads without any budget that lose every ready replica to this wave. */
function outageFindings(cluster: DrainCluster, wave: ReadonlySet<string>): DrainFinding[] {
  const findings: DrainFinding[] = [];
  const guarded = (p: DrainPod) => budgetsOf(p, cluster.budgets).length > 0;
  const workloads = new Map<string, DrainPod[]>();
  for (const p of cluster.pods) {
    if (!p.controller || staysOnDrain(p) || !countsHealthy(p)) continue;
    const key = `${p.namespace}/${p.controller.kind}/${p.controller.name}`;
    const list = workloads.get(key);
    if (list) list.push(p);
    else workloads.set(key, [p]);
  }
  for (const [, pods] of [...workloads].sort(([a], [b]) => a.localeCompare(b))) {
    if (pods.some(guarded) || !pods.every((p) => wave.has(p.node))) continue;
    const c = pods[0].controller;
    if (!c) continue;
    findings.push({
      class: 'outage',
      reason: 'unguarded-workload',
      nodes: [...new Set(pods.map((p) => p.node))].sort(),
      pods: pods.map(ref).sort(),
      budget: null,
      numbers: null,
      rounds: null,
      message: `${c.kind} ${pods[0].namespace}/${c.name} has ${pods.length === 1 ? 'its only ready replica' : `all ${pods.length} ready replicas`} on this wave's nodes and no PodDisruptionBudget: it is down during the drain`,
      hint: 'run at least 2 replicas spread over nodes, with a PodDisruptionBudget',
    });
  }
  return findings;
}

function pick(s: Budget['status']) {
  return { currentHealthy: s.currentHealthy, desiredHealthy: s.desiredHealthy, disruptionsAllowed: s.disruptionsAllowed, expectedPods: s.expectedPods };
}
