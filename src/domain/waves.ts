/**
 * Wave planning (docs/design.md §7 "Pools and waves").
 *
 * Order inside a bootc pool: nodes already staged with the target first (their download is
 * already paid); among those, the ones that will soft-reboot first (BootcNode
 * `status.staged.softRebootCapable` under rebootPolicy AllowSoftReboot), so that soft
 * reboots share waves: a wave lasts as long as its slowest node, and one hard reboot in a
 * wave of soft ones would cost the whole wave a full reboot. Then, inside each of these
 * groups, round-robin across topology.kubernetes.io/zone, then by name, so that no wave
 * empties a zone another zone could cover. Nodes without a zone form one group of their own.
 *
 * MCO-only pools follow the MCO's own order instead (`orderNodesLikeMco`): bootcplan
 * cannot choose which nodes the MCO's node controller takes.
 */
interface WaveCandidate {
  name: string;
  zone: string | null;
  staged: boolean;
  /** Staged and known to soft-reboot (only ever true for a staged node). */
  softReboot?: boolean;
}

const NO_ZONE = '\uffff';

export function orderNodesForRollout<T extends WaveCandidate>(nodes: readonly T[]): T[] {
  const soft = nodes.filter((n) => n.staged && n.softReboot === true);
  const staged = nodes.filter((n) => n.staged && n.softReboot !== true);
  const rest = nodes.filter((n) => !n.staged);
  return [...roundRobinByZone(soft), ...roundRobinByZone(staged), ...roundRobinByZone(rest)];
}

interface McoCandidate {
  name: string;
  zone: string | null;
  /** Node metadata.creationTimestamp (RFC 3339, so string order is time order). */
  createdAt: string | null;
}

/**
 * The order in which the MCO's node controller hands a new config to the nodes of a pool
 * (openshift/machine-config-operator pkg/controller/node/node_controller.go:
 * updateCandidateMachines sorts the candidates of getAllCandidateMachines with
 * sortNodeList when there are more of them than capacity): nodes with a
 * topology.kubernetes.io/zone label first, by zone name, oldest first inside a zone (by
 * creationTimestamp); nodes without the label last, oldest first. Upstream's sort is not
 * stable; ties (same zone, same creation second) are broken by name here. The controller
 * takes the first `capacity` (= maxUnavailable - unavailable) candidates each time it
 * syncs, and bootcplan pauses the pool between waves, so waves are consecutive slices of
 * this order. (For the master pool it also defers the node running the
 * machine-config-operator pod, which a snapshot does not tell.) The nodes given must be the
 * candidates only: getAllCandidateMachines never picks a node that is not ready as
 * LayeredNodeState.CheckNodeReady sees it (Ready, DiskPressure, NetworkUnavailable,
 * unschedulable) or that is not done with its current config (docs/safety.md rules 5 and 7;
 * src/domain/nodes.ts mcoNodeHealth, mcoNodeWork); those nodes use up capacity instead
 * (waveSizeFor).
 */
export function orderNodesLikeMco<T extends McoCandidate>(nodes: readonly T[]): T[] {
  return [...nodes].sort((a, b) => {
    if ((a.zone === null) !== (b.zone === null)) return a.zone === null ? 1 : -1;
    if (a.zone !== null && b.zone !== null && a.zone !== b.zone) return a.zone < b.zone ? -1 : 1;
    const ca = a.createdAt ?? '',
      cb = b.createdAt ?? '';
    if (ca !== cb) return Date.parse(ca || '1970-01-01T00:00:00Z') - Date.parse(cb || '1970-01-01T00:00:00Z') || (ca < cb ? -1 : 1);
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

function roundRobinByZone<T extends WaveCandidate>(nodes: readonly T[]): T[] {
  const byZone = new Map<string, T[]>();
  for (const n of nodes) {
    const z = n.zone ?? NO_ZONE;
    let list = byZone.get(z);
    if (!list) byZone.set(z, (list = []));
    list.push(n);
  }
  const zones = [...byZone.keys()].sort();
  const queues = zones.map((z) => (byZone.get(z) ?? []).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
  const out: T[] = [];
  const cursor = queues.map(() => 0);
  let remaining = nodes.length;
  while (remaining > 0) {
    for (let i = 0; i < queues.length; i++) {
      if (cursor[i] < queues[i].length) {
        out.push(queues[i][cursor[i]++]);
        remaining--;
      }
    }
  }
  return out;
}

/**
 * The node running bootcplan's own pod goes last among `ordered` (docs/design.md §7 "Stopping"): its
 * drain evicts bootcplan itself, which then stops and leaves the rest to a rerun; last, that
 * happens once, when nothing else is left. The MCO does the same for the node of its own
 * operator pod: machine-config-operator pkg/controller/node/node_controller.go
 * filterControlPlaneCandidateNodes drops the node running the `k8s-app=machine-config-operator`
 * pod from the master pool's update candidates (event DeferringOperatorNodeUpdate) while any
 * other candidate is left. Same nodes, the others in the same order; `self` null or not among
 * them: `ordered` unchanged.
 */
export function selfLast<T>(ordered: readonly T[], self: string | null | undefined, nameOf: (t: T) => string): T[] {
  const i = self ? ordered.findIndex((t) => nameOf(t) === self) : -1;
  if (i < 0) return [...ordered];
  return [...ordered.slice(0, i), ...ordered.slice(i + 1), ordered[i]];
}

/** Splits ordered nodes into waves of `size` (size >= 1). */
export function planWaves<T>(ordered: readonly T[], size: number): T[][] {
  if (size < 1) throw new RangeError(`wave size must be >= 1, got ${size}`);
  const waves: T[][] = [];
  for (let i = 0; i < ordered.length; i += size) waves.push(ordered.slice(i, i + size));
  return waves;
}

/**
 * Nodes per wave: the resolved budget minus nodes already out of service (they use up
 * budget: MCO getUnavailableMachines, bootc-operator occupied slots). The control-plane
 * pool rolls one node at a time whatever the budget says (etcd quorum).
 */
export function waveSizeFor(resolvedMaxUnavailable: number, unavailableNow: number, controlPlane: boolean): number {
  const free = resolvedMaxUnavailable - unavailableNow;
  return Math.max(0, controlPlane ? Math.min(1, free) : free);
}
