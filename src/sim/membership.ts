/**
 * Pool membership and availability in the simulated cluster: which pool each node is in, how
 * many nodes of each pool are out of service, kept node by node as they change, and the most
 * each pool had out of service at any instant.
 */
import type { ClusterSnapshot } from '../cluster/types.ts';
import { computeMembership } from '../domain/pools.ts';

/** The pool's name in a key `mco/NAME` or `bootc/NAME`. */
export const poolNameOfKey = (k: string) => k.slice(k.indexOf('/') + 1);

export class PoolMembership {
  /** node -> pool, and per-pool members */
  private poolOf = new Map<string, string>();
  private members = new Map<string, string[]>();
  /** node -> every pool key whose members include it (an MCP and a bootc pool may both). */
  private memberOf = new Map<string, string[]>();
  private unavailable = new Map<string, boolean>();
  private counts = new Map<string, number>();
  /** Most nodes of each pool out of service at any instant (pre-existing ones included). */
  readonly peakUnavailable = new Map<string, number>();

  /** Recomputes the pools from the view, and the availability of every node. */
  recompute(view: ClusterSnapshot, nodes: Iterable<string>, isUnavailable: (node: string) => boolean) {
    const m = computeMembership(view);
    this.poolOf.clear();
    this.members.clear();
    for (const [pool, list] of m.mco) {
      this.members.set(`mco/${pool}`, list);
      for (const n of list) this.poolOf.set(n, `mco/${pool}`);
    }
    // bootc membership wins over the MCO pool the node is also in (worker)
    for (const [pool, list] of m.bootc) {
      this.members.set(`bootc/${pool}`, list);
      for (const n of list) this.poolOf.set(n, `bootc/${pool}`);
    }
    this.memberOf.clear();
    for (const [key, list] of this.members) {
      for (const n of list) {
        const keys = this.memberOf.get(n);
        if (!keys) this.memberOf.set(n, [key]);
        else if (!keys.includes(key)) keys.push(key);
      }
    }
    for (const n of nodes) this.unavailable.set(n, isUnavailable(n));
    this.recount();
    for (const key of this.members.keys()) this.updatePeak(key);
  }

  /** Records a node's availability; a change moves the counts of its pools and the peak. */
  setUnavailable(node: string, now: boolean) {
    const was = this.unavailable.get(node) === true;
    this.unavailable.set(node, now);
    if (was !== now) {
      for (const key of this.memberOf.get(node) ?? []) this.counts.set(key, (this.counts.get(key) ?? 0) + (now ? 1 : -1));
      const pool = this.poolOf.get(node);
      if (pool) this.updatePeak(pool);
    }
  }

  isUnavailable(node: string): boolean {
    return this.unavailable.get(node) === true;
  }
  countUnavailable(poolKey: string): number {
    return this.counts.get(poolKey) ?? 0;
  }
  membersOf(poolKey: string): readonly string[] {
    return this.members.get(poolKey) ?? [];
  }
  /** The key of the pool that drives the node (bootc over MCO), or null. */
  poolKeyOf(node: string): string | null {
    return this.poolOf.get(node) ?? null;
  }
  /** Every node that belongs to a pool. */
  pooledNodes(): string[] {
    return [...this.poolOf.keys()];
  }

  private recount() {
    this.counts.clear();
    for (const [key, list] of this.members) {
      let c = 0;
      for (const n of list) if (this.unavailable.get(n)) c++;
      this.counts.set(key, c);
    }
  }
  private updatePeak(poolKey: string) {
    const name = poolNameOfKey(poolKey);
    const c = this.countUnavailable(poolKey);
    // A bootc pool and the MCP of the same name describe the same nodes; report under the name.
    if (c > (this.peakUnavailable.get(name) ?? -1)) this.peakUnavailable.set(name, c);
  }
}
