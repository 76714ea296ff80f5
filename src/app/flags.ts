/**
 * Flag values read strictly (docs/design.md §2): whole numbers, fractions and durations, each refused
 * with the flag's name and what was expected. The commands read them in the order they always
 * have, so a run with two mistakes reports the same one first; commander declares the flags
 * (cli/options.ts).
 */
import { InputError } from '../base/errors.ts';
import type { WindowSpec } from '../domain/windows.ts';
import { DEFAULT_DURATIONS, parseDurations } from '../domain/timing.ts';
import type { Plan, PhaseDurations } from '../plan/types.ts';
import { parseFailCheck, unknownFailChecks, FAIL_CHECK_EXPECTED, type SimHealthOptions } from '../sim/health.ts';

/**
 * A whole-number flag, read strictly: digits only (no "", "0x10", "1e3" or " 5 ", which
 * Number() would take), within [min, max].
 */
export function parseIntegerFlag(flag: string, text: string, range: { min: number; max: number }): number {
  const n = /^-?\d{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max) {
    throw new InputError(`${flag} ${JSON.stringify(text)}: expected a whole number from ${range.min} to ${range.max}`);
  }
  return n;
}

/** A probability flag, read strictly: a decimal number from 0 to 1 ("0.25", "1", ".5" is refused). */
function parseFractionFlag(flag: string, text: string): number {
  const n = /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : NaN;
  if (!(n >= 0 && n <= 1)) throw new InputError(`${flag} ${JSON.stringify(text)}: expected a number from 0 to 1, such as 0.05`);
  return n;
}

const START_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * `--start` of a rehearsal: an ISO 8601 time with its offset (Z or +hh:mm), so the moment does
 * not depend on the machine's time zone. Epoch seconds. A day that does not exist (02-30) is
 * refused, not moved on (Date.parse would take it for March 2).
 */
function parseStartFlag(text: string): number {
  const m = START_RE.exec(text.trim());
  const at = m ? Date.parse(text.trim()) : NaN;
  const day = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  const real = !!m && !!day && day.getUTCDate() === Number(m[3]) && day.getUTCMonth() === Number(m[2]) - 1;
  if (!Number.isFinite(at) || !real) {
    throw new InputError(
      `--start ${JSON.stringify(text)}: expected a date and time with its offset (YYYY-MM-DDThh:mm[:ss] then Z or +hh:mm)`,
      [],
      'e.g. --start 2026-12-13T01:00:00+08:00',
    );
  }
  return at / 1000;
}

/**
 * A duration flag (kubectl's grammar: a whole number is seconds, else Go units such as 90s,
 * 5m or 1h30m), at most `maxSeconds`. Seconds.
 */
export function parseDurationFlag(flag: string, text: string, maxSeconds: number): number {
  const t = text.trim();
  const units: Record<string, number> = { ms: 1e-3, s: 1, m: 60, h: 3600 };
  let seconds = NaN;
  if (/^\d{1,12}$/.test(t)) seconds = Number(t);
  else if (t.length <= 64 && /^(\d+(\.\d+)?(ms|s|m|h))+$/.test(t)) {
    seconds = 0;
    for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) seconds += Number(m[1]) * units[m[2]];
  }
  if (!(seconds >= 0 && seconds <= maxSeconds))
    throw new InputError(
      `${flag} ${JSON.stringify(text).slice(0, 60)}: expected a duration such as 90s, 5m or 1h (at most ${maxSeconds / 3600}h; 0: do not wait)`,
    );
  return seconds;
}

/** The simulation flags of `rehearse` and `fleet rehearse`. */
export interface SimulationOptions {
  durations?: string;
  failRate?: string;
  jitter?: string;
  seed: string;
  failCheck?: string[];
  failCheckRate?: string;
  /** The rehearsal's start (ISO 8601 with offset); default: the first moment inside a window after now. */
  start?: string;
}

/** The simulation flags, checked: durations over the planner's defaults (never a file's alone), fail rate, seed, jitter, health faults. */
export function simulationFlags(opts: SimulationOptions): {
  durations: PhaseDurations;
  failRate: number;
  seed: number;
  jitter: number;
  health: SimHealthOptions;
  /** --start, epoch seconds, when given. */
  start: number | undefined;
} {
  const durations = parseDurations(opts.durations, DEFAULT_DURATIONS);
  if (typeof durations === 'string')
    throw new InputError(`--durations: ${durations}`, [], 'e.g. --durations stage=600,drain=60,reboot=300,soft-reboot=60,ready=30');
  const failRate = opts.failRate === undefined ? 0 : parseFractionFlag('--fail-rate', opts.failRate);
  const seed = parseIntegerFlag('--seed', opts.seed, { min: 0, max: 2 ** 32 - 1 });
  const jitter = opts.jitter === undefined ? 0 : parseFractionFlag('--jitter', opts.jitter);
  if (jitter > 0.9) throw new InputError(`--jitter ${opts.jitter}: at most 0.9 (a node's durations stay positive)`, [], 'e.g. --jitter 0.3');
  const failChecks = (opts.failCheck ?? []).map((t) => {
    const r = parseFailCheck(t);
    if (typeof r === 'string') throw new InputError(`--fail-check ${JSON.stringify(t)}: ${r}`, [], `e.g. --fail-check ${FAIL_CHECK_EXPECTED}`);
    return r;
  });
  const failCheckRate = opts.failCheckRate === undefined ? 0 : parseFractionFlag('--fail-check-rate', opts.failCheckRate);
  const start = opts.start === undefined ? undefined : parseStartFlag(opts.start);
  return { durations, failRate, seed, jitter, health: { failChecks, failRate: failCheckRate, seed }, start };
}

/** --fail-check names a check the plan has (otherwise the flag would do nothing: an input error listing the plan's). */
export function checkFailCheckNames(health: SimHealthOptions, plans: readonly Plan[]): void {
  const checks = plans.flatMap((p) => p.healthChecks ?? []);
  const unknown = unknownFailChecks(health.failChecks ?? [], checks);
  if (!unknown.length) return;
  const names = [...new Set(checks.map((c) => c.name))];
  throw new InputError(
    `--fail-check ${unknown.map((r) => r.text).join(', ')}: ${unknown.length === 1 ? 'no health check of that name' : 'no health checks of those names'} in the plan`,
    [],
    names.length ? `the plan's checks: ${names.join(', ')}` : 'the plan has no health checks (spec.healthChecks)',
  );
}

/**
 * Where a rehearsal starts, epoch seconds: --start, else now (the clock port) when there are
 * windows: the run waits from now for the next window, as an apply started now would be
 * retried until it opens (docs/apply.md "Rehearsal and maintenance windows"), and the wait
 * counts in the makespan. Without windows and --start: undefined (the simulator's own start;
 * times are shown from it).
 */
export function rehearsalStart(start: number | undefined, windows: readonly WindowSpec[] | undefined, nowMs: number): number | undefined {
  if (start !== undefined) return start;
  return windows?.length ? Math.floor(nowMs / 1000) : undefined;
}
