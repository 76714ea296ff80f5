/**
 * fast-check parameters for every property in test/ (docs/development.md "Seeds"): each
 * fc.assert passes seeded(SEED, RUNS), so CI runs the same cases on every machine and every run.
 *   FC_SEED=fresh   a new random seed for every property (npm run test:properties:fresh);
 *                   fast-check prints the seed and the counterexample of a failure
 *   FC_SEED=N       seed N for every property (replays a reported failure)
 *   FC_RUNS=N       N runs per property instead of each one's own count
 * A counterexample a fresh seed finds is triaged: a bug is fixed, a legitimate outcome the
 * property did not allow is allowed, and either way the case is kept as a fixed test.
 */

export interface Seeded {
  seed: number;
  numRuns: number;
}

function fromEnv(name: string): number | 'fresh' | null {
  const v = process.env[name];
  if (v === undefined || v === '') return null;
  if (name === 'FC_SEED' && v === 'fresh') return 'fresh';
  if (!/^\d+$/.test(v)) throw new Error(`${name}=${v}: expected a whole number${name === 'FC_SEED' ? ' or "fresh"' : ''}`);
  return Number(v);
}

const SEED = fromEnv('FC_SEED');
const RUNS = fromEnv('FC_RUNS');

/** The options of one fc.assert: its fixed seed and run count, unless FC_SEED / FC_RUNS say otherwise. */
export function seeded(seed: number, numRuns: number): Seeded {
  const runs = typeof RUNS === 'number' ? RUNS : numRuns;
  if (SEED === 'fresh') return { seed: Math.floor(Math.random() * 2 ** 31), numRuns: runs };
  return { seed: SEED ?? seed, numRuns: runs };
}
