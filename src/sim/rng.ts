/** A small seeded PRNG (mulberry32): the simulator's faults are reproducible from a seed. */
export type Rng = () => number;

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * FNV-1a of a name, mixed with a seed: a seed of its own for each node (jitter.ts) or each
 * cluster of a fleet (src/fleet/rehearsal-sim.ts), whatever order they run in.
 */
export function hashName(seed: number, name: string): number {
  let h = (2166136261 ^ seed) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
  return h;
}
