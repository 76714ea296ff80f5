/**
 * The effective Rollout spec of one cluster of a Fleet (DESIGN §10): the shared `spec.rollout`,
 * then each label override whose selector matches the cluster's labels, in file order, then the
 * cluster's own `overrides`. A pool override changes the fields it names of the shared pool of
 * that name; `maintenanceWindows` replaces the list and `timezone` fills every window without
 * one (for both, the last override that sets it wins, so a site's time zone from a label also
 * applies to windows a cluster override brings).
 *
 * With the spec comes its source map: every field points at the line of the Fleet file it came
 * from (the shared block or the override that set it), so the Rollout validation and the planner
 * report positions in the Fleet file. Pure.
 */
import type { SourceMap, Position } from '../base/diagnostics.ts';
import { selectorMatches } from '../domain/nodes.ts';
import { SPEC_API_VERSION, SPEC_KIND, type MaintenanceWindow, type PoolSpec, type RolloutSpec } from './types.ts';
import type { FleetOverride, FleetSpec } from './fleet-types.ts';

export interface EffectiveSpec {
  spec: RolloutSpec;
  map: SourceMap;
}

/** The source map entries of `spec.rollout`, moved to `spec` (computed once per Fleet). */
export interface SharedMap {
  file: string;
  values: Record<string, Position>;
  keys: Record<string, Position>;
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
  return { file: map.file, values: move(map.values), keys: move(map.keys) };
}

/** The overrides that apply to a cluster, in order, each with its path in the Fleet file. */
export function overridesOf(fleet: FleetSpec, index: number): { override: FleetOverride; path: string }[] {
  const cluster = fleet.spec.clusters[index];
  const labels = cluster.labels ?? {};
  const out: { override: FleetOverride; path: string }[] = [];
  (fleet.spec.overrides ?? []).forEach((o, i) => {
    if (selectorMatches(o.clusterSelector, labels)) out.push({ override: o, path: `spec.overrides[${i}]` });
  });
  if (cluster.overrides) out.push({ override: cluster.overrides, path: `spec.clusters[${index}].overrides` });
  return out;
}

const POOL_FIELDS = ['image', 'allowTags', 'maxUnavailable', 'rollout', 'soakSeconds', 'paused'] as const;

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
  for (const { override, path } of overridesOf(fleet, index)) {
    (override.pools ?? []).forEach((po, j) => {
      const i = pools?.findIndex((p) => p.name === po.name) ?? -1;
      if (i < 0 || !pools) return; // an unknown pool name is the Fleet schema's error
      const target = pools[i] as unknown as Record<string, unknown>;
      for (const f of POOL_FIELDS) {
        if (po[f] === undefined) continue;
        target[f] = po[f];
        at(`spec.pools[${i}].${f}`, `${path}.pools[${j}].${f}`);
      }
    });
    if (override.maintenanceWindows) {
      windows = override.maintenanceWindows;
      for (const m of [values, keys]) for (const k of Object.keys(m)) if (k.startsWith('spec.maintenanceWindows')) delete m[k];
      moveWindows(map, `${path}.maintenanceWindows`, values, keys);
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
  const body: RolloutSpec['spec'] = { ...rollout };
  if (pools) body.pools = pools;
  if (windows) body.maintenanceWindows = windows;
  const spec: RolloutSpec = { apiVersion: SPEC_API_VERSION, kind: SPEC_KIND, metadata: { name: fleet.metadata.name }, spec: body };
  return { spec, map: { file: map.file, values, keys } };
}

/** Positions of an override's window list, as `spec.maintenanceWindows...` of the effective spec. */
function moveWindows(map: SourceMap, from: string, values: Record<string, Position>, keys: Record<string, Position>): void {
  for (const [src, dst] of [[map.values, values], [map.keys, keys]] as const) {
    for (const [k, v] of Object.entries(src)) {
      if (k === from || k.startsWith(from + '[')) dst['spec.maintenanceWindows' + k.slice(from.length)] = v;
    }
  }
}
