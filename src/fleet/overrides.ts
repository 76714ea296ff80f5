/**
 * What differs between the clusters of a fleet plan, for the reviewer (docs/fleets.md "The
 * pull-request comment", Overrides): every field of a cluster's effective spec that an override
 * changed (the fleet plan's `overriddenBy`, with the shared value and the override), and, read
 * from the cluster plans themselves, every pool whose target image, maxUnavailable, paused,
 * rollout or soak differs from the other clusters' with no override recorded for it (an edited
 * fleet plan, or a bug). Identical deviations are one row, so 500 clusters under one label
 * override stay one line. Pure: reads only the fleet plan.
 */
import type { FleetPlan, FleetClusterPlan } from './plan-types.ts';
import type { PlanPool } from '../plan/types.ts';
import type { FleetFieldOverride } from './spec-types.ts';

type Value = FleetFieldOverride['shared'];

interface OverrideRow {
  field: string;
  /** The shared value; for a row with no override, the value most other clusters' plans have. */
  shared: Value;
  value: Value;
  /** The override that set it; null: none recorded, the cluster's plan differs from the others'. */
  by: FleetFieldOverride['by'] | null;
  clusters: string[];
}

interface FleetOverrides {
  rows: OverrideRow[];
  /** Clusters with at least one row. */
  clusters: number;
}

/** Pool fields read from each cluster plan, named as the Fleet names them. */
const PLAN_FIELDS: [string, (p: PlanPool) => Value][] = [
  ['image', (p) => p.targetImage],
  ['maxUnavailable', (p) => p.maxUnavailable.value],
  ['paused', (p) => p.paused],
  ['rollout', (p) => p.rollout ?? 'waves'],
  ['soakSeconds', (p) => p.soakSeconds],
];

const FIELD_ORDER = ['image', 'maxUnavailable', 'paused', 'rollout', 'soakSeconds', 'allowTags', 'maintenanceWindows', 'timezone'];
const fieldRank = (field: string) => {
  const i = FIELD_ORDER.indexOf(field.slice(field.lastIndexOf('.') + 1));
  return i < 0 ? FIELD_ORDER.length : i;
};

export function fleetOverrides(fp: Pick<FleetPlan, 'clusters'>): FleetOverrides {
  const groups = new Map<string, OverrideRow>();
  const add = (c: FleetClusterPlan, field: string, shared: Value, value: Value, by: OverrideRow['by']) => {
    const key = JSON.stringify([field, shared, value, by === null ? null : by.selector === null ? 'own' : by.path]);
    const row = groups.get(key) ?? { field, shared, value, by, clusters: [] };
    groups.set(key, row);
    if (!row.clusters.includes(c.name)) row.clusters.push(c.name);
  };
  for (const c of fp.clusters) for (const r of c.overriddenBy ?? []) add(c, r.field, r.shared, r.value, r.by);
  for (const u of unrecorded(fp.clusters)) add(u.cluster, u.field, u.shared, u.value, null);
  const rows = [...groups.values()].sort(
    (a, b) => (a.by === null ? 0 : 1) - (b.by === null ? 0 : 1) || fieldRank(a.field) - fieldRank(b.field) || a.clusters.length - b.clusters.length,
  );
  return { rows, clusters: new Set(rows.flatMap((r) => r.clusters)).size };
}

/**
 * Pools whose plan value differs from what the clusters without an override for that field
 * have (the shared value, after defaults), with no override recorded that explains it.
 */
function unrecorded(clusters: readonly FleetClusterPlan[]): { cluster: FleetClusterPlan; field: string; shared: Value; value: Value }[] {
  const out: { cluster: FleetClusterPlan; field: string; shared: Value; value: Value }[] = [];
  const pools = new Set(clusters.flatMap((c) => c.plan?.pools.map((p) => p.name) ?? []));
  for (const pool of pools) {
    for (const [name, read] of PLAN_FIELDS) {
      const field = `pools.${pool}.${name}`;
      const seen = clusters.flatMap((c) => {
        const p = c.plan?.pools.find((x) => x.name === pool);
        if (!p) return [];
        const r = (c.overriddenBy ?? []).find((x) => x.field === field);
        return [{ c, value: read(p), record: r }];
      });
      const plain = seen.filter((s) => !s.record);
      const shared = majority((plain.length ? plain : seen).map((s) => s.value));
      for (const s of seen) {
        const explained = !!s.record && String(s.record.value) === String(s.value);
        if (!explained && String(s.value) !== String(shared)) out.push({ cluster: s.c, field, shared, value: s.value });
      }
    }
  }
  return out;
}

/** The most common value (the first seen on a tie). */
function majority(values: readonly Value[]): Value {
  const counts = new Map<string, { v: Value; n: number }>();
  for (const v of values) {
    const k = JSON.stringify(v);
    const e = counts.get(k) ?? { v, n: 0 };
    e.n++;
    counts.set(k, e);
  }
  let best: { v: Value; n: number } | null = null;
  for (const e of counts.values()) if (!best || e.n > best.n) best = e;
  return best ? best.v : null;
}

/** "its own overrides (spec.clusters[1].overrides)", "spec.overrides[0] (region=eu)", or the warning for no override. */
export function overrideCause(row: OverrideRow): { path: string | null; text: string } {
  if (row.by === null) return { path: null, text: "no override in the Fleet: differs from most clusters' plans" };
  if (row.by.selector !== null) return { path: row.by.path, text: `label override, selector ${row.by.selector}` };
  return row.clusters.length === 1 ? { path: row.by.path, text: 'its own overrides' } : { path: null, text: 'their own overrides' };
}

export function valueText(field: string, v: Value): string {
  if (v === null) return field === 'timezone' ? 'none (UTC)' : 'none';
  return String(v);
}
