/**
 * The duration model shared by `plan` (estimatedSeconds), `rehearse` and the simulator.
 * Defaults are typical for cloud VMs running RHCOS or a bootc image; override them with
 * `--durations stage=600,drain=60,reboot=300,soft-reboot=60,ready=30`.
 */
import type { PhaseDurations, RebootKind, Backend } from './types.ts';
import { MinHeap } from '../base/heap.ts';
import { nearest } from '../base/schema.ts';

export const DEFAULT_DURATIONS: PhaseDurations = {
  /** pull and stage the new image (bootc: in parallel before the first wave; MCO: inside each node's window) */
  stage: 600,
  /** cordon + drain with the eviction API */
  drain: 60,
  /** full reboot until the kubelet is back */
  reboot: 300,
  /** systemd soft-reboot (userspace only, same kernel) */
  softReboot: 60,
  /** from kubelet start until the Node reports Ready */
  ready: 30,
};

const DURATION_KEYS: Record<string, keyof PhaseDurations> = {
  stage: 'stage',
  drain: 'drain',
  reboot: 'reboot',
  'soft-reboot': 'softReboot',
  ready: 'ready',
};

/** "stage=600,drain=60" -> durations over the defaults; returns an error message on bad input. */
export function parseDurations(text: string | undefined, base: PhaseDurations = DEFAULT_DURATIONS): PhaseDurations | string {
  const out = { ...base };
  if (!text) return out;
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z-]+)=(\d+(?:\.\d+)?)$/.exec(part);
    if (!m) return `"${part}" is not name=seconds`;
    const key = DURATION_KEYS[m[1]];
    if (!key) {
      const near = nearest(m[1], Object.keys(DURATION_KEYS));
      return `unknown phase "${m[1]}"${near ? ` (did you mean ${near}?)` : ''}; phases are ${Object.keys(DURATION_KEYS).join(', ')}`;
    }
    out[key] = Number(m[2]);
  }
  return out;
}

/** Time a node is out of service: from cordon until Ready again. */
export function nodeWindowSeconds(d: PhaseDurations, backend: Backend, reboot: RebootKind): number {
  const rebootTime = reboot === 'soft' ? d.softReboot : d.reboot;
  // The MCO pulls the new OS image inside the node's drain window (the daemon runs
  // rpm-ostree/bootc after drain), so staging is on the critical path of every wave.
  const stageInWindow = backend === 'mco' ? d.stage : 0;
  return d.drain + stageInWindow + rebootTime + d.ready;
}

interface PoolEstimateInput {
  backend: Backend;
  /** `staged`: the node has the target staged already (bootc); absent = unknown (treated as not staged). */
  waves: { reboot: RebootKind; staged?: boolean }[][];
  soakSeconds: number;
  /** bootc: nodes still to stage before the first wave. */
  needsStaging: boolean;
}

/**
 * Waves run one after another; a wave lasts as long as its slowest node; soak between waves.
 * bootc staging: the applier sets every bootc pool's target first, so all nodes stage in
 * parallel from the start of the rollout; a wave holding a node that still stages starts
 * no earlier than `stage` seconds after the rollout began (waves of already-staged nodes
 * go at once). `start` is when this pool starts, in seconds since the rollout began
 * (legacy boolean: true = staging already paid, false = 0).
 */
export function estimatePoolSeconds(d: PhaseDurations, p: PoolEstimateInput, start: number | boolean = 0): number {
  if (p.waves.length === 0) return 0;
  const t0 = typeof start === 'boolean' ? (start ? Infinity : 0) : start;
  let t = t0 === Infinity ? 0 : t0;
  const stagingDone = t0 === Infinity ? 0 : d.stage;
  p.waves.forEach((wave, i) => {
    const waitsForStaging = p.backend === 'bootc' && p.needsStaging && wave.some((n) => n.staged !== true);
    if (waitsForStaging) t = Math.max(t, stagingDone);
    t += Math.max(...wave.map((n) => nodeWindowSeconds(d, p.backend, n.reboot)));
    if (i < p.waves.length - 1) t += p.soakSeconds;
  });
  return t - (t0 === Infinity ? 0 : t0);
}

interface SlotsEstimateInput {
  backend: Backend;
  /** The admission order. `staged`: the node has the target staged already (bootc). */
  order: { reboot: RebootKind; staged?: boolean }[];
  /** Nodes out of service at once (the pool's wave size: maxUnavailable minus nodes out already). */
  slots: number;
  /** bootc: nodes still to stage before the first admission of an unstaged node. */
  needsStaging: boolean;
}

/**
 * Slots (spec `rollout: slots`): a node is admitted, in order, as soon as fewer than `slots`
 * nodes are out of service; nodes already out of service keep their share of the budget for
 * the whole rollout (as for waves). A node that still stages is admitted no earlier than
 * `stage` seconds after the rollout began. `durationOf` gives a node's time out of service
 * (default: nodeWindowSeconds; the makespan benchmark passes jittered times). Returns the
 * seconds from `start` until the last node is back. O(n log slots).
 */
export function estimateSlotsSeconds(d: PhaseDurations, p: SlotsEstimateInput, start = 0, durationOf?: (i: number) => number): number {
  if (p.order.length === 0 || p.slots < 1) return 0;
  const stagingDone = d.stage;
  const finish = new MinHeap<number>((x, y) => x < y);
  let t = start;
  let end = start;
  p.order.forEach((n, i) => {
    if (finish.size >= p.slots) t = Math.max(t, finish.pop() ?? t);
    if (p.backend === 'bootc' && p.needsStaging && n.staged !== true) t = Math.max(t, stagingDone);
    const done = t + (durationOf ? durationOf(i) : nodeWindowSeconds(d, p.backend, n.reboot));
    finish.push(done);
    end = Math.max(end, done);
  });
  return end - start;
}
