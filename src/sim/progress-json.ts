/** The `progress.json` text of the simulated progress ConfigMap, serialized node entry by node entry. */
import type { ProgressRecord } from '../apply/driver.ts';

/**
 * The JSON of successive progress records, kept node entry by node entry: the record has an
 * entry per node in flight (a whole wave) and is written at every step of every node, so
 * serializing all of it on every write grows with the square of the wave. An entry is
 * serialized again only when it changed since the last write.
 */
export class ProgressJson {
  private entries = new Map<string, { ref: unknown; flat: boolean; keys: string[]; vals: unknown[]; part: string; gen: number }>();
  private gen = 0;
  private static readonly MARK = '\u0000bootcplan-nodes\u0000';

  /** Returns JSON.stringify(p) as of now, computed when called (cheap to take, O(entries)). */
  capture(p: ProgressRecord): () => string {
    const nodes = (p.nodes ?? {}) as Record<string, unknown>;
    const parts: string[] = [];
    const gen = ++this.gen;
    for (const name in nodes) {
      if (!Object.prototype.hasOwnProperty.call(nodes, name)) continue;
      const e = nodes[name];
      if (e === undefined || typeof e === 'function' || typeof e === 'symbol') continue; // JSON leaves it out
      let c = this.entries.get(name);
      if (!c || !ProgressJson.same(c, e)) this.entries.set(name, (c = ProgressJson.entry(name, e, gen)));
      c.gen = gen;
      parts.push(c.part);
    }
    if (this.entries.size > parts.length) for (const [k, c] of this.entries) if (c.gen !== gen) this.entries.delete(k);
    const head = JSON.stringify(p, function (this: unknown, k, v) { return this === p && k === 'nodes' ? ProgressJson.MARK : v; });
    return () => {
      const mark = JSON.stringify(ProgressJson.MARK);
      const at = head.indexOf(mark);
      return at < 0 ? head : `${head.slice(0, at)}{${parts.join(',')}}${head.slice(at + mark.length)}`;
    };
  }

  private static entry(name: string, e: unknown, gen: number) {
    const keys: string[] = [];
    const vals: unknown[] = [];
    if (e !== null && typeof e === 'object' && !Array.isArray(e)) for (const k in e) { keys.push(k); vals.push((e as Record<string, unknown>)[k]); }
    const flat = vals.every((v) => v === null || typeof v !== 'object');
    return { ref: e, flat, keys, vals, part: `${JSON.stringify(name)}:${JSON.stringify(e)}`, gen };
  }

  /**
   * The same frozen object of primitive fields (the applier replaces entries rather than
   * changing them), or the same keys in the same order with the same primitive values
   * (nested objects: never the same).
   */
  private static same(c: { ref: unknown; flat: boolean; keys: string[]; vals: unknown[] }, e: unknown): boolean {
    if (e === c.ref && c.flat && Object.isFrozen(e)) return true;
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return false;
    let i = 0;
    for (const k in e) {
      const v = (e as Record<string, unknown>)[k];
      if (i >= c.keys.length || c.keys[i] !== k || c.vals[i] !== v || (v !== null && typeof v === 'object')) return false;
      i++;
    }
    return i === c.keys.length;
  }
}
