/**
 * Models of the rollouts users have today, for side-by-side makespans. Deliberately small
 * and explicit; each follows the upstream controller's rule named in its comment.
 */
export interface Durations {
  stage: number;
  drain: number;
  reboot: number;
  softReboot: number;
  ready: number;
}

export interface Node {
  name: string;
  zone: string;
  createdAt: number;
  softCapable: boolean;
}

/** Continuous slot refill: a node starts as soon as a slot frees; returns the makespan. */
function refill(order: Node[], slots: number, start: number, perNode: (n: Node) => number): number {
  const running: number[] = []; // finish times
  let t = start;
  let end = start;
  for (const n of order) {
    if (running.length >= slots) {
      running.sort((a, b) => a - b);
      t = Math.max(t, running.shift()!);
    }
    const fin = t + perNode(n);
    running.push(fin);
    end = Math.max(end, fin);
  }
  return end;
}

/**
 * MCO-style (machine-config-operator pkg/controller/node); `perNode` gives a node its own time
 * out of service (per-node jitter: bench/slots.ts): maxUnavailable resolved with
 * floor and a minimum of 1; candidates ordered by zone, then by age; a freed slot is
 * refilled at the next sync; the new OS image is pulled by the daemon after the drain,
 * inside each node's window; every OS change is a full reboot.
 */
export function mcoStyleMakespan(
  nodes: Node[],
  pct: number,
  d: Durations,
  perNode: (n: Node) => number = () => d.drain + d.stage + d.reboot + d.ready,
): number {
  const k = Math.max(1, Math.floor((pct / 100) * nodes.length));
  const order = [...nodes].sort((a, b) => a.zone.localeCompare(b.zone) || a.createdAt - b.createdAt);
  return refill(order, k, 0, perNode);
}

/**
 * bootc-operator-style (bootc-dev/bootc-operator internal/controller/rollout.go): every
 * node stages in parallel first; the budget rounds up (GetScaledValueFromIntOrPercent with
 * roundUp=true); staged nodes take slots in alphabetical order; slots refill as nodes come
 * back; the daemon always runs a full reboot (soft reboot is not implemented upstream).
 */
export function bootcOperatorStyleMakespan(nodes: Node[], pct: number, d: Durations): number {
  const k = Math.max(1, Math.ceil((pct / 100) * nodes.length));
  const order = [...nodes].sort((a, b) => a.name.localeCompare(b.name));
  return refill(order, k, d.stage, () => d.drain + d.reboot + d.ready);
}

/** The limit when staging runs in parallel first: stage + ceil(N/k) x (drain + reboot). */
export function limitMakespan(n: number, k: number, d: Durations): number {
  return d.stage + Math.ceil(n / k) * (d.drain + d.reboot + d.ready);
}
