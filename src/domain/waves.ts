/**
 * Wave planning (DESIGN §7 "Pools and waves").
 *
 * Order inside a pool: nodes already staged with the target first (their reboot is the
 * shortest and their download is already paid), then round-robin across
 * topology.kubernetes.io/zone, then by name, so that no wave empties a zone another zone
 * could cover. Nodes without a zone form one group of their own.
 */
export interface WaveCandidate {
  name: string;
  zone: string | null;
  staged: boolean;
}

const NO_ZONE = '\uffff';

export function orderNodesForRollout<T extends WaveCandidate>(nodes: readonly T[]): T[] {
  const staged = nodes.filter((n) => n.staged);
  const rest = nodes.filter((n) => !n.staged);
  return [...roundRobinByZone(staged), ...roundRobinByZone(rest)];
}

export function roundRobinByZone<T extends WaveCandidate>(nodes: readonly T[]): T[] {
  const byZone = new Map<string, T[]>();
  for (const n of nodes) {
    const z = n.zone ?? NO_ZONE;
    let list = byZone.get(z);
    if (!list) byZone.set(z, (list = []));
    list.push(n);
  }
  const zones = [...byZone.keys()].sort();
  const queues = zones.map((z) => byZone.get(z)!.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
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
