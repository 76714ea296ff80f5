/**
 * Reading a run record back (src/cluster/progress.ts ProgressRecord), field by field: apply
 * resumes from it, `status` prints it, holds refuse applies by it and `plan --rollback` turns
 * it into a plan that reboots nodes. It is a ConfigMap anyone with write access to the
 * namespace could edit, so a record of another shape is refused with the field that is wrong,
 * never read half-way. Pure: both drivers use it (src/kube/progress-configmap.ts,
 * src/sim/progress-store.ts).
 */
import {
  type ProgressRecord,
  ROLLBACK_SCOPES,
  MAX_CHAIN,
  MAX_HOLDS,
  MAX_OBSERVED,
  MAX_OBSERVING,
  MAX_PULLSPEC,
  MAX_SILENCES,
  isDigestReference,
} from './progress.ts';

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A whole number, at least `min`. */
const isInteger = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const isTime = (v: unknown) => typeof v === 'string' && v.length <= 64 && Number.isFinite(Date.parse(v));
const isDigest = (v: unknown) => typeof v === 'string' && /^sha256:[0-9a-f]{64}$/.test(v);
const isPlanId = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{16}$/.test(v);
/** A Kubernetes object name (at most 253 characters, no space or control character). */
const isName = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 253 && /^[^\s\p{Cc}]+$/u.test(v);
/** An image reference as a pool or MachineConfig holds it (a tag or a digest). */
const isReference = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= MAX_PULLSPEC && /^[^\s\p{Cc}]+$/u.test(v);
const isText = (v: unknown, max: number) => typeof v === 'string' && v.length <= max;
const orNull = (ok: (v: unknown) => boolean) => (v: unknown) => v === null || ok(v);

/** Quotes a name from the record for a message (the caller's quoting makes it printable). */
type Quote = (s: string) => string;
const defaultQuote: Quote = (s) => JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}...` : s);

/** The record of a run.json text, or what is wrong with it (one phrase: "pool "w" has a ..."). */
export function decodeRunRecord(text: unknown, quote: Quote = defaultQuote): ProgressRecord | string {
  let p: unknown;
  try {
    p = JSON.parse(String(text));
  } catch {
    return 'is not valid JSON';
  }
  if (!isMap(p)) return 'is not a JSON object';
  // The times and the plan id go on into a rollback's own record (rollbackOf, its trigger), which
  // is read back as strictly: a value that is only a string would leave that rollback unreadable.
  if (!isPlanId(p.planId)) return 'has no planId of 16 hex digits';
  for (const f of ['startedAt', 'updatedAt']) if (!isTime(p[f])) return `has no ${f} that is a time`;
  for (const f of ['changesApplied', 'done']) if (typeof p[f] !== 'boolean') return `has no boolean ${f}`;
  if (!isMap(p.pools)) return 'has no pools map';
  if (p.preflightPassed !== undefined && typeof p.preflightPassed !== 'boolean') return 'has a preflightPassed that is not a boolean';
  for (const [name, pool] of Object.entries(p.pools)) {
    if (!isName(name)) return `has a pool ${quote(name)} that is not a pool name`;
    const bad = poolProblem(pool);
    if (bad) return `pool ${quote(name)} ${bad}`;
  }
  // Every field of ProgressRecord was checked above (and in runProblem): the record's shape.
  return runProblem(p, quote) ?? (p as unknown as ProgressRecord);
}

function poolProblem(pool: unknown): string | null {
  if (!isMap(pool) || !isInteger(pool.wavesDone, 0) || typeof pool.done !== 'boolean') return 'is malformed';
  if (pool.mcoUnpaused !== undefined && typeof pool.mcoUnpaused !== 'boolean') return 'has a mcoUnpaused that is not a boolean';
  const seen = pool.stagingSeen;
  if (seen !== undefined && (!isMap(seen) || Object.values(seen).some((t) => !isTime(t)))) return 'has a stagingSeen that is not a map of node names to times';
  const i = pool.interrupted;
  if (
    i !== undefined &&
    i !== null &&
    (!isMap(i) || typeof i.at !== 'string' || typeof i.reason !== 'string' || !(i.wave === null || Number.isSafeInteger(i.wave)))
  )
    return 'has a malformed interrupted entry';
  if (pool.lastWaveEnd !== undefined && !orNull(isTime)(pool.lastWaveEnd)) return 'has a lastWaveEnd that is not a time';
  if (pool.gatesPassed !== undefined && !isInteger(pool.gatesPassed, 0)) return 'has a gatesPassed that is not a count';
  const h = pool.halted;
  if (
    h !== undefined &&
    h !== null &&
    (!isMap(h) || !(h.node === null || isName(h.node)) || !isText(h.reason, 4096) || (h.check !== undefined && !isName(h.check)))
  )
    return 'has a malformed halted entry';
  if (pool.origin !== undefined && pool.origin !== null) {
    const bad = originProblem(pool.origin);
    if (bad) return `has an origin ${bad}`;
  }
  return null;
}

/** What is wrong with a pool's origin (src/cluster/progress.ts BootcOrigin, McoOrigin), or null. */
export function originProblem(o: unknown): string | null {
  if (!isMap(o)) return 'that is not an object';
  if (o.kind === 'bootc') {
    if (!isReference(o.ref)) return 'whose ref is not an image reference';
    if (!orNull(isDigestReference)(o.image)) return 'whose image is not a digest reference (name@sha256:<64 hex>)';
    if (!orNull(isDigest)(o.digest)) return 'whose digest is not sha256:<64 hex>';
    if (typeof o.image === 'string' && typeof o.digest === 'string' && !o.image.endsWith(`@${o.digest}`)) return 'whose image and digest differ';
    if (o.mixed !== null && (!Array.isArray(o.mixed) || o.mixed.length < 2 || o.mixed.length > 8 || !o.mixed.every(isDigest)))
      return 'whose mixed is not a list of 2 to 8 digests';
    return null;
  }
  if (o.kind === 'mco') {
    if (!isName(o.machineConfig) || !isName(o.rendered) || !orNull(isName)(o.renderedTarget)) return 'whose MachineConfig names are malformed';
    if (!orNull(isReference)(o.osImageURL) || !isReference(o.image)) return 'whose images are not image references';
    if (o.readAt !== undefined && !isTime(o.readAt)) return 'whose readAt is not a time';
    return null;
  }
  return 'of no known kind (bootc, mco)';
}

function runProblem(p: Record<string, unknown>, quote: Quote): string | null {
  const r = p.run;
  if (r !== undefined) {
    if (!isMap(r) || !isPlanId(r.id) || !Array.isArray(r.planIds) || r.planIds.length < 1 || r.planIds.length > MAX_CHAIN || !r.planIds.every(isPlanId))
      return 'has a malformed run (id, planIds: 1 to 64 plan ids)';
    if (!isMap(r.targets) || !Object.entries(r.targets).every(([k, v]) => isName(k) && isReference(v)))
      return 'has run targets that are not pool names to images';
  }
  const s = p.spec;
  if (
    s !== undefined &&
    (!isMap(s) ||
      !isText(s.name, 253) ||
      !isText(s.path, 4096) ||
      !(typeof s.sha256 === 'string' && /^[0-9a-f]{64}$/.test(s.sha256)) ||
      !orNull((c) => isText(c, 64))(s.commit))
  )
    return 'has a malformed spec entry';
  if (p.holds !== undefined) {
    if (!Array.isArray(p.holds) || p.holds.length > MAX_HOLDS) return `has holds that are not a list of at most ${MAX_HOLDS}`;
    const pools = new Set<string>();
    for (const h of p.holds) {
      const bad = holdProblem(h);
      if (bad) return `has a hold ${bad}`;
      const pool = String((h as { pool: string }).pool); // holdProblem found a pool name
      if (pools.has(pool)) return `has two holds of pool ${quote(pool)}`;
      pools.add(pool);
    }
  }
  if (p.observing !== undefined) {
    if (!Array.isArray(p.observing) || p.observing.length > MAX_OBSERVING) return `has observing verdicts that are not a list of at most ${MAX_OBSERVING}`;
    if (!p.observing.every(observingOk)) return 'has a malformed observing verdict (check, pool, point, wave, node, result, observed, at)';
  }
  if (p.silences !== undefined) {
    if (!Array.isArray(p.silences) || p.silences.length > MAX_SILENCES) return `has silences that are not a list of at most ${MAX_SILENCES}`;
    if (!p.silences.every(isSilence)) return 'has a silence without a pool, a node, ids, matchers (texts) and an endsAt time';
  }
  if (p.rollbackOf !== undefined && p.rollbackOf !== null) {
    const bad = rollbackOfProblem(p.rollbackOf, quote);
    if (bad) return `has a rollbackOf ${bad}`;
  }
  return null;
}

function observingOk(v: unknown): boolean {
  return (
    isMap(v) &&
    isName(v.check) &&
    orNull(isName)(v.pool) &&
    typeof v.point === 'string' &&
    ['preflight', 'afterWave', 'afterNode', 'batch'].includes(v.point) &&
    (v.wave === null || isInteger(v.wave, 1)) &&
    orNull(isName)(v.node) &&
    (v.result === 'passed' || v.result === 'failed') &&
    isText(v.observed, MAX_OBSERVED) &&
    isTime(v.at)
  );
}

const isTexts = (v: unknown, max: number) => Array.isArray(v) && v.length <= 64 && v.every((x) => isText(x, max));
function isSilence(x: unknown): boolean {
  return isMap(x) && isName(x.pool) && isName(x.node) && isTexts(x.ids, 128) && isTexts(x.matchers, 4096) && isTime(x.endsAt);
}

function holdProblem(h: unknown): string | null {
  if (!isMap(h) || !isName(h.pool)) return 'without a pool name';
  if (!isReference(h.target)) return 'whose target is not an image';
  if (h.action !== 'halted' && h.action !== 'paused' && h.action !== 'rolled-back') return 'whose action is not halted, paused or rolled-back';
  if (!orNull((c) => isName(c))(h.check) || !isText(h.observed, MAX_OBSERVED) || !isTime(h.at) || !isPlanId(h.planId))
    return 'with a malformed check, observed, at or planId';
  return null;
}

function rollbackOfProblem(r: unknown, quote: Quote): string | null {
  if (!isMap(r) || !isPlanId(r.planId) || !ROLLBACK_SCOPES.some((scope) => scope === r.scope)) return 'without a plan id and a scope (run, wave)';
  if (!orNull(isName)(r.pool) || !(r.wave === null || isInteger(r.wave, 1))) return 'with a malformed pool or wave';
  const t = r.trigger;
  if (
    !isMap(t) ||
    (t.kind !== 'health-check' && t.kind !== 'manual') ||
    !orNull(isName)(t.check) ||
    !orNull((o) => isText(o, MAX_OBSERVED))(t.observed) ||
    !isTime(t.at)
  )
    return 'with a malformed trigger';
  if (!isMap(r.origins)) return 'without origins';
  for (const [pool, o] of Object.entries(r.origins)) {
    const bad = originProblem(o);
    if (bad) return `whose origin of pool ${quote(pool)} is ${bad}`;
  }
  return continuationProblem(r);
}

/** The fields an unfinished rollback is continued from (all or none: progress.ts RollbackOf). */
function continuationProblem(r: Record<string, unknown>): string | null {
  const fields = ['startedAt', 'run', 'targets', 'order', 'scopeWave'];
  const present = fields.filter((f) => r[f] !== undefined);
  if (!present.length) return null;
  if (present.length < fields.length) return `with only some of ${fields.join(', ')}`;
  if (!isTime(r.startedAt)) return 'with a startedAt that is not a time';
  if (
    !isMap(r.run) ||
    !isPlanId(r.run.id) ||
    !Array.isArray(r.run.planIds) ||
    r.run.planIds.length < 1 ||
    r.run.planIds.length > MAX_CHAIN ||
    !r.run.planIds.every(isPlanId)
  )
    return 'with a malformed run (id, planIds: 1 to 64 plan ids)';
  if (!isMap(r.targets) || !Object.entries(r.targets).every(([k, v]) => isName(k) && isReference(v))) return 'with targets that are not pool names to images';
  if (!Array.isArray(r.order) || r.order.length > 64 || !r.order.every(isName)) return 'with an order that is not a list of pool names';
  const w = r.scopeWave;
  if (w !== null && (!isMap(w) || !isPlanId(w.planId) || !isName(w.pool) || !isInteger(w.wave, 1))) return 'with a malformed scopeWave';
  return null;
}
