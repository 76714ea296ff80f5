/**
 * The effective Rollout spec of one cluster of a Fleet (docs/design.md §10): the shared `spec.rollout`,
 * then each label override whose selector matches the cluster's labels, in file order, then the
 * cluster's own `overrides`. A pool override changes the fields it names of the shared pool of
 * that name; `maintenanceWindows` replaces the list and `timezone` fills every window without
 * one (for both, the last override that sets it wins, so a site's time zone from a label also
 * applies to windows a cluster override brings).
 *
 * With the spec comes its source map: every field points at the line of the Fleet file it came
 * from (the shared block or the override that set it), so the Rollout validation and the planner
 * report positions in the Fleet file. Pure.
 *
 * `overriddenFields` lists what an effective spec changes in the shared one and which override
 * did it: the fleet plan carries it per cluster so the pull-request comment can name it.
 */
import type { SourceMap, Position } from '../base/diagnostics.ts';
import { selectorMatches } from '../domain/nodes.ts';
import {
  SPEC_API_VERSION,
  SPEC_KIND,
  HEALTH_CHECK_KINDS,
  type HealthCheckSpec,
  type MaintenanceWindow,
  type SilencesSpec,
  type PoolSpec,
  type RolloutSpec,
} from '../rollout-spec/types.ts';
import type { LabelSelector } from '../base/api-types.ts';
import type { FleetFieldOverride, FleetOverride, FleetSpec } from './spec-types.ts';

export interface EffectiveSpec {
  spec: RolloutSpec;
  map: SourceMap;
}

/** The source map entries of `spec.rollout`, moved to `spec` (computed once per Fleet). */
export interface SharedMap extends SourceMap {
  /**
   * The positions of each override's fields that replace the shared one whole (the window list,
   * the silences), by `override path.field`, as `spec.FIELD...` (one pass over the map).
   */
  windows: Map<string, { values: [string, Position][]; keys: [string, Position][] }>;
}

const OVERRIDE_WINDOWS = /^(spec\.overrides\[\d+\]|spec\.clusters\[\d+\]\.overrides)\.(maintenanceWindows|silences)(?=$|[.[])/;

function windowIndex(map: SourceMap): SharedMap['windows'] {
  const out: SharedMap['windows'] = new Map();
  for (const kind of ['values', 'keys'] as const) {
    for (const [k, v] of Object.entries(map[kind])) {
      const m = OVERRIDE_WINDOWS.exec(k);
      if (!m) continue;
      const at = `${m[1]}.${m[2]}`;
      let entry = out.get(at);
      if (!entry) out.set(at, (entry = { values: [], keys: [] }));
      entry[kind].push([`spec.${m[2]}` + k.slice(m[0].length), v]);
    }
  }
  return out;
}

export function sharedMapOf(map: SourceMap): SharedMap {
  const move = (from: Record<string, Position>) => {
    const out: Record<string, Position> = {};
    for (const [k, v] of Object.entries(from)) {
      if (k === 'spec.rollout' || k.startsWith('spec.rollout.') || k.startsWith('spec.rollout[')) out['spec' + k.slice('spec.rollout'.length)] = v;
    }
    // A finding about the document as a whole points at the Fleet's metadata.
    for (const k of ['', 'apiVersion', 'kind', 'metadata', 'metadata.name']) if (from[k]) out[k] = from[k];
    return out;
  };
  return { file: map.file, values: move(map.values), keys: move(map.keys), windows: windowIndex(map) };
}

/** The overrides that apply to a cluster, in order, each with its path in the Fleet file and its clusterSelector (null: the cluster's own). */
function overridesOf(fleet: FleetSpec, index: number): { override: FleetOverride; path: string; selector: LabelSelector | null }[] {
  const cluster = fleet.spec.clusters[index];
  const labels = cluster.labels ?? {};
  const out: { override: FleetOverride; path: string; selector: LabelSelector | null }[] = [];
  (fleet.spec.overrides ?? []).forEach((o, i) => {
    if (selectorMatches(o.clusterSelector, labels)) out.push({ override: o, path: `spec.overrides[${i}]`, selector: o.clusterSelector });
  });
  if (cluster.overrides) out.push({ override: cluster.overrides, path: `spec.clusters[${index}].overrides`, selector: null });
  return out;
}

const POOL_FIELDS = ['image', 'allowTags', 'maxUnavailable', 'rollout', 'soakSeconds', 'paused'] as const;
type PoolField = (typeof POOL_FIELDS)[number];
/** A value a pool field of POOL_FIELDS takes. */
type PoolValue = NonNullable<PoolSpec[PoolField]>;

/** Sets field `f` of a pool to the override's value: one field, one type, whichever `f` is. */
function overrideField<K extends PoolField>(target: Partial<Pick<PoolSpec, K>>, from: Partial<Pick<PoolSpec, K>>, f: K): void {
  target[f] = from[f];
}

export function effectiveSpec(fleet: FleetSpec, map: SourceMap, shared: SharedMap, index: number): EffectiveSpec {
  const values = { ...shared.values };
  const keys = { ...shared.keys };
  const at = (path: string, from: string) => {
    if (map.values[from]) values[path] = map.values[from];
    if (map.keys[from]) keys[path] = map.keys[from];
  };
  const rollout = fleet.spec.rollout;
  const pools: PoolSpec[] | undefined = rollout.pools?.map((p) => ({ ...p }));
  let windows: MaintenanceWindow[] | undefined = rollout.maintenanceWindows;
  let timezone: { value: string; path: string } | null = null;
  let silences: SilencesSpec | undefined = rollout.silences;
  for (const { override, path } of overridesOf(fleet, index)) {
    (override.pools ?? []).forEach((po, j) => {
      const i = pools?.findIndex((p) => p.name === po.name) ?? -1;
      if (i < 0 || !pools) return; // an unknown pool name is the Fleet schema's error
      const target = pools[i];
      for (const f of POOL_FIELDS) {
        if (po[f] === undefined) continue;
        overrideField(target, po, f);
        at(`spec.pools[${i}].${f}`, `${path}.pools[${j}].${f}`);
      }
    });
    if (override.maintenanceWindows) {
      windows = override.maintenanceWindows;
      for (const m of [values, keys]) for (const k of Object.keys(m)) if (k.startsWith('spec.maintenanceWindows')) delete m[k];
      const moved = shared.windows.get(`${path}.maintenanceWindows`);
      for (const [k, v] of moved?.values ?? []) values[k] = v;
      for (const [k, v] of moved?.keys ?? []) keys[k] = v;
    }
    // Replaces the shared silences whole (docs/fleets.md "The Fleet spec"), as a pool's section does the Rollout's.
    if (override.silences) {
      silences = override.silences;
      for (const m of [values, keys]) for (const k of Object.keys(m)) if (k === 'spec.silences' || k.startsWith('spec.silences.')) delete m[k];
      const moved = shared.windows.get(`${path}.silences`);
      for (const [k, v] of moved?.values ?? []) values[k] = v;
      for (const [k, v] of moved?.keys ?? []) keys[k] = v;
    }
    if (override.timezone !== undefined) timezone = { value: override.timezone, path: `${path}.timezone` };
  }
  if (windows && timezone) {
    const tz = timezone;
    windows = windows.map((w, i) => {
      if (w.timezone !== undefined) return w;
      at(`spec.maintenanceWindows[${i}].timezone`, tz.path);
      return { ...w, timezone: tz.value };
    });
  }
  const checks = mergeHealthChecks(fleet, index, map, values, keys);
  const body: RolloutSpec['spec'] = { ...rollout };
  if (pools) body.pools = pools;
  if (windows) body.maintenanceWindows = windows;
  if (checks) body.healthChecks = checks;
  if (silences) body.silences = silences;
  const spec: RolloutSpec = { apiVersion: SPEC_API_VERSION, kind: SPEC_KIND, metadata: { name: fleet.metadata.name }, spec: body };
  return { spec, map: { file: map.file, values, keys } };
}

/** An override entry with `enabled: false` and no kind drops the check of its name. */
const dropsCheck = (c: HealthCheckSpec) => c.enabled === false && !HEALTH_CHECK_KINDS.some((k) => Object.hasOwn(c, k));

/**
 * The shared health checks with the cluster's overrides merged by name (an entry replaces the check
 * of its name whole, a drop removes it, a new name is added at the end), as spec.healthChecks; null
 * when no override names any (the shared list stands). The positions of the merged list's entries
 * point at the Fleet lines each came from (`values`/`keys` are changed in place).
 */
function mergeHealthChecks(
  fleet: FleetSpec,
  index: number,
  map: SourceMap,
  values: Record<string, Position>,
  keys: Record<string, Position>,
): HealthCheckSpec[] | null {
  const HC = 'spec.healthChecks';
  type Entry = { c: HealthCheckSpec; from: { m: Record<string, Position>[]; prefix: string } };
  const overrides = overridesOf(fleet, index).filter(({ override }) => override.healthChecks?.length);
  if (!overrides.length) return null;
  const shared = [{ ...values }, { ...keys }];
  const list: Entry[] = (fleet.spec.rollout.healthChecks ?? []).map((c, i) => ({ c, from: { m: shared, prefix: `${HC}[${i}]` } }));
  for (const { override, path } of overrides) {
    for (const [j, c] of (override.healthChecks ?? []).entries()) {
      const i = list.findIndex((x) => x.c.name === c.name);
      if (dropsCheck(c)) {
        if (i >= 0) list.splice(i, 1);
        continue;
      }
      const entry: Entry = { c, from: { m: [map.values, map.keys], prefix: `${path}.healthChecks[${j}]` } };
      if (i >= 0) list[i] = entry;
      else list.push(entry);
    }
  }
  for (const m of [values, keys]) for (const k of Object.keys(m)) if (k === HC || k.startsWith(`${HC}[`)) delete m[k];
  list.forEach(({ from }, e) => {
    [values, keys].forEach((target, t) => {
      for (const [k, v] of Object.entries(from.m[t])) {
        if (k === from.prefix || k.startsWith(`${from.prefix}.`) || k.startsWith(`${from.prefix}[`)) target[`${HC}[${e}]${k.slice(from.prefix.length)}`] = v;
      }
    });
  });
  return list.map((x) => x.c);
}

/** What a pool field left out means (plan/pool.ts): compared with its default, an override to the default changes nothing. */
const POOL_DEFAULTS: Record<(typeof POOL_FIELDS)[number], string | number | boolean | null> = {
  image: null,
  allowTags: false,
  maxUnavailable: 1,
  rollout: 'waves',
  soakSeconds: 0,
  paused: false,
};

function selectorText(s: LabelSelector): string {
  const labels = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  const exprs = (s.matchExpressions ?? []).map((e) => `${e.key} ${e.operator}${e.values ? ` (${e.values.join(',')})` : ''}`);
  return [...labels, ...exprs].join(',') || 'every cluster';
}

function windowsText(ws: readonly MaintenanceWindow[] | undefined): string | null {
  if (!ws) return null;
  return ws.length ? ws.map((w) => `${w.schedule} for ${w.duration}${w.timezone ? ` (${w.timezone})` : ''}`).join('; ') : 'none';
}

/** Silences in a word for the reviewer: off, or the Alertmanager, the matchers and the TTL as written. */
function silencesText(s: SilencesSpec | undefined): string | null {
  if (!s) return null;
  if (s.enabled === false) return 'off';
  return `${s.alertmanager?.url ?? 'the default Alertmanager'}: ${(s.matchers ?? []).join(', ')}${s.ttlMinutes !== undefined ? ` (TTL ${s.ttlMinutes}m)` : ''}`;
}

/**
 * The fields of cluster `index`'s effective spec that differ from the shared `spec.rollout`,
 * each with the override whose value won (the last that set it, as effectiveSpec applies them).
 * Pool fields in shared-pool order, then the windows, then the time zone. Pure.
 */
export function overriddenFields(fleet: FleetSpec, index: number): FleetFieldOverride[] {
  const rollout = fleet.spec.rollout;
  type Won<T> = { value: T; by: FleetFieldOverride['by'] };
  const won = new Map<string, Won<PoolValue>>();
  const checks = new Map<string, Won<'dropped' | 'replaced'>>();
  let windows: Won<MaintenanceWindow[]> | null = null;
  let timezone: Won<string> | null = null;
  let silences: Won<SilencesSpec> | null = null;
  for (const { override, path, selector } of overridesOf(fleet, index)) {
    const by = { path, selector: selector ? selectorText(selector) : null };
    if (override.silences) silences = { value: override.silences, by };
    for (const po of override.pools ?? []) for (const f of POOL_FIELDS) if (po[f] !== undefined) won.set(`pools.${po.name}.${f}`, { value: po[f], by });
    if (override.maintenanceWindows) windows = { value: override.maintenanceWindows, by };
    if (override.timezone !== undefined) timezone = { value: override.timezone, by };
    for (const c of override.healthChecks ?? []) checks.set(c.name, { value: dropsCheck(c) ? 'dropped' : 'replaced', by });
  }
  const out: FleetFieldOverride[] = [];
  for (const pool of rollout.pools ?? []) {
    for (const f of POOL_FIELDS) {
      const w = won.get(`pools.${pool.name}.${f}`);
      const shared = pool[f] ?? POOL_DEFAULTS[f];
      const value = w?.value;
      if (w && value !== shared) out.push({ field: `pools.${pool.name}.${f}`, shared, value: value ?? null, by: w.by });
    }
  }
  const sharedChecks = new Set((rollout.healthChecks ?? []).map((c) => c.name));
  for (const [name, w] of checks) {
    const shared = sharedChecks.has(name) ? 'as in spec.rollout' : null;
    if (w.value === 'dropped' && !shared) continue;
    out.push({ field: `healthChecks.${name}`, shared, value: w.value === 'replaced' && !shared ? 'added' : w.value, by: w.by });
  }
  const sharedWindows = windowsText(rollout.maintenanceWindows);
  const effective = windows ? windows.value : rollout.maintenanceWindows;
  if (windows && windowsText(effective) !== sharedWindows)
    out.push({ field: 'maintenanceWindows', shared: sharedWindows, value: windowsText(effective), by: windows.by });
  if (timezone && (effective ?? []).some((w) => w.timezone === undefined))
    out.push({ field: 'timezone', shared: null, value: timezone.value, by: timezone.by });
  const sharedSilences = silencesText(rollout.silences);
  const effectiveSilences = silences ? silencesText(silences.value) : sharedSilences;
  if (silences && effectiveSilences !== sharedSilences) out.push({ field: 'silences', shared: sharedSilences, value: effectiveSilences, by: silences.by });
  return out;
}
