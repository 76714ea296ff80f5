/**
 * Health checks in a rehearsal (docs/apply.md "Rehearsing a failing gate"): every measurement
 * passes ("rehearsal: healthy") except those a fault script makes fail:
 * - `--fail-check NAME@POINT`: every measurement of check NAME at that gate fails. POINT is
 *   `preflight`, `wave=N` (the gate after wave N of any pool), `POOL:wave=N`, `node=NODE` (the
 *   gate after that node), or `batch` (a fleet canary's batch gate; a fleet prefixes `CLUSTER/`);
 * - `--fail-check-rate R`: each check of each gate evaluation fails with probability R, drawn
 *   from a stream of its own (seeded with the rehearsal's seed ^ 0x6865616c, "heal"): the fault
 *   generator of faults.ts is untouched, so a `--seed` rehearsal without health faults replays
 *   exactly as before.
 * A measurement takes no virtual time; a gate still costs its interval x (successes - 1), or
 * until failureLimit + 1 failures, which the timeline shows.
 */
import type { PlanHealthCheck } from '../plan/types.ts';
import type { GatePosition, HealthSource, Measurement } from '../apply/ports/health.ts';
import { mulberry32, type Rng } from './rng.ts';

/** One `--fail-check` rule. */
export interface FailCheckRule {
  /** The flag's text, for messages. */
  text: string;
  /** A fleet rehearsal's cluster (`CLUSTER/NAME@POINT`); null: any (a single cluster's rehearsal). */
  cluster: string | null;
  check: string;
  point: 'preflight' | 'afterWave' | 'afterNode' | 'batch';
  pool: string | null;
  wave: number | null;
  node: string | null;
}

export interface SimHealthOptions {
  failChecks?: readonly FailCheckRule[];
  /** Probability that a check fails at a gate evaluation (0..1). */
  failRate?: number;
  /** The rehearsal's seed; the rate's stream is seeded from it. */
  seed?: number;
  /** The cluster this source measures in a fleet rehearsal (its rules only). */
  cluster?: string | null;
}

export const FAIL_CHECK_EXPECTED = 'NAME@preflight, NAME@wave=N, NAME@POOL:wave=N, NAME@node=NODE or NAME@batch (a fleet: CLUSTER/NAME@POINT)';
const SEED_MIX = 0x6865616c;

/** Parses one `--fail-check` value, or says why it does not parse. */
export function parseFailCheck(text: string): FailCheckRule | string {
  const m = /^(?:([a-z0-9][-a-z0-9.]*)\/)?([a-z0-9]([-a-z0-9]*[a-z0-9])?)@(.+)$/.exec(text);
  if (!m) return `"${text}" is not NAME@POINT`;
  const [, cluster, check, , point] = m;
  const base = { text, cluster: cluster ?? null, check, pool: null, wave: null, node: null };
  if (point === 'preflight' || point === 'batch') return { ...base, point };
  const wave = /^(?:([a-z0-9][-a-z0-9.]*):)?wave=([1-9][0-9]{0,5})$/.exec(point);
  if (wave) return { ...base, point: 'afterWave', pool: wave[1] ?? null, wave: Number(wave[2]) };
  const node = /^node=(.+)$/.exec(point);
  if (node) return { ...base, point: 'afterNode', node: node[1] };
  return `"${point}" in "${text}" is no gate point`;
}

/** Whether a rule targets this measurement. */
function targets(r: FailCheckRule, check: PlanHealthCheck, p: GatePosition, cluster: string | null): boolean {
  if (r.check !== check.name || r.point !== p.point) return false;
  if (r.cluster !== null && r.cluster !== cluster) return false;
  if (r.pool !== null && r.pool !== p.pool) return false;
  if (r.wave !== null && r.wave !== p.wave) return false;
  return r.node === null || r.node === p.node;
}

export class SimHealthSource implements HealthSource {
  private readonly rng: Rng;
  /** The draw of each (gate evaluation, check), made at its first measurement. */
  private readonly drawn = new Map<string, boolean>();
  /** Measurements made, for tests: check name and gate position. */
  readonly measured: { check: string; position: GatePosition }[] = [];

  constructor(private readonly o: SimHealthOptions = {}) {
    this.rng = mulberry32(((o.seed ?? 1) ^ SEED_MIX) >>> 0);
  }

  async measure(check: PlanHealthCheck, position: GatePosition, _signal: AbortSignal): Promise<Measurement> {
    this.measured.push({ check: check.name, position });
    const cluster = this.o.cluster ?? null;
    const rule = (this.o.failChecks ?? []).find((r) => targets(r, check, position, cluster));
    if (rule) return { outcome: 'fail', observed: `rehearsal: --fail-check ${rule.text}` };
    const rate = this.o.failRate ?? 0;
    if (rate > 0) {
      const key = `${position.point}|${position.pool}|${position.wave}|${position.node}|${check.name}`;
      let fails = this.drawn.get(key);
      if (fails === undefined) this.drawn.set(key, (fails = this.rng() < rate));
      if (fails) return { outcome: 'fail', observed: `rehearsal: --fail-check-rate ${rate} (seed ${this.o.seed ?? 1})` };
    }
    return { outcome: 'pass', observed: 'rehearsal: healthy' };
  }
}

/** Rules that name a check the plan does not have (an input error: the flag would do nothing). */
export function unknownFailChecks(rules: readonly FailCheckRule[], checks: readonly { name: string }[]): FailCheckRule[] {
  const names = new Set(checks.map((c) => c.name));
  return rules.filter((r) => !names.has(r.check));
}
