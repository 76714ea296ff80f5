/**
 * maxUnavailable arithmetic (docs/design.md §7 "Pools and waves").
 *
 * The MCO resolves an IntOrString percentage with floor and a minimum of 1
 * (machine-config-operator pkg/controller/node: intstr.GetScaledValueFromIntOrPercent(..., false),
 * then "if maxunavail == 0 { maxunavail = 1 }"), while the bootc-operator rounds up. bootcplan
 * resolves once, with the MCO rule, and writes the integer to both pools so they cannot disagree.
 */
import { describeType, INT32_MAX } from '../base/schema.ts';

export type MaxUnavailable = { kind: 'count'; value: number } | { kind: 'percent'; value: number };

type ParseResult = { ok: true; value: MaxUnavailable } | { ok: false; message: string; expected: string; hint?: string; code: string };

export const MAX_UNAVAILABLE_EXPECTED = 'an integer >= 1, or a percentage "N%" with 1 <= N <= 100';

export function parseMaxUnavailable(raw: unknown): ParseResult {
  const fail = (message: string, hint?: string, code = 'max-unavailable-invalid'): ParseResult => ({
    ok: false,
    message,
    expected: MAX_UNAVAILABLE_EXPECTED,
    hint,
    code,
  });
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) return fail(`${raw} is not a whole number`, 'use a whole number of nodes, or a percentage such as "25%"');
    if (raw === 0) return fail('0 would never let a node update', 'to hold this pool back, set `paused: true` instead', 'max-unavailable-zero');
    if (raw < 0) return fail(`${raw} is negative`);
    // MachineConfigPool spec.maxUnavailable and BootcNodePool spec.rollout.maxUnavailable are
    // IntOrString: an int32 on the wire.
    if (raw > INT32_MAX)
      return fail(
        `${raw} is larger than ${INT32_MAX}, the largest count the API stores`,
        'a count above the pool size already means "the whole pool"; use "100%" for that',
      );
    return { ok: true, value: { kind: 'count', value: raw } };
  }
  if (typeof raw === 'string') {
    const m = /^(\d+)%$/.exec(raw);
    if (!m) {
      if (/^\d+$/.test(raw.trim())) {
        return fail(`"${raw}" is a string without a % sign`, `write ${raw.trim()} without quotes for a node count, or "${raw.trim()}%" for a percentage`);
      }
      return fail(`"${raw}" is not a count or a percentage`, 'write a percentage as digits directly followed by %, e.g. "25%"');
    }
    const pct = Number(m[1]);
    if (pct === 0) return fail('0% would never let a node update', 'to hold this pool back, set `paused: true` instead', 'max-unavailable-zero');
    if (pct > 100) return fail(`${raw} is more than 100%`);
    return { ok: true, value: { kind: 'percent', value: pct } };
  }
  return fail(`expected a number or a string, got ${describeType(raw)}`);
}

export interface ResolvedBudget {
  /** As written in the spec (or the default). */
  value: string | number;
  resolved: number;
  rule: string;
}

/** floor(percent x nodes), minimum 1 — the MCO's rule, used for both backends. */
export function resolveMaxUnavailable(mu: MaxUnavailable, poolSize: number): ResolvedBudget {
  if (mu.kind === 'count') {
    return { value: mu.value, resolved: mu.value, rule: 'integer' };
  }
  const resolved = Math.max(1, Math.floor((mu.value * poolSize) / 100));
  return { value: `${mu.value}%`, resolved, rule: 'floor(percent x nodes), minimum 1' };
}

/**
 * The most nodes of a pool out of service at once while it rolls out: its largest wave (a
 * slots pool: its largest admission batch) plus the nodes already out of service (cordoned by
 * an administrator, not ready), which stay out while it runs and use up maxUnavailable as the
 * MCO counts them (docs/design.md §7 "Pools and waves"). A pool with nothing to roll out: 0.
 * Every planned figure of nodes out of service (plan text, Markdown, the HTML summary and its
 * estimated timeline) is this one; a rehearsal measures the same nodes (sim/cordons.ts).
 */
export function outOfServiceAtOnce(pool: { waves: readonly (readonly string[])[]; unavailableNow: readonly string[] }): number {
  if (!pool.waves.length) return 0;
  return Math.max(...pool.waves.map((w) => w.length)) + pool.unavailableNow.length;
}

/**
 * The figure every renderer shows (text, Markdown, HTML): the most nodes out of service at once
 * over `pools`, and how many of those were out of service already (of pools that roll out).
 */
export function outOfServiceFigure(pools: readonly { waves: readonly (readonly string[])[]; unavailableNow: readonly string[] }[]): {
  atOnce: number;
  already: number;
} {
  return { atOnce: planOutOfServiceAtOnce(pools), already: pools.filter((p) => p.waves.length).reduce((n, p) => n + p.unavailableNow.length, 0) };
}

/** The most nodes out of service at once over a plan whose pools roll out one after another. */
function planOutOfServiceAtOnce(pools: readonly { waves: readonly (readonly string[])[]; unavailableNow: readonly string[] }[]): number {
  return Math.max(0, ...pools.map(outOfServiceAtOnce));
}
