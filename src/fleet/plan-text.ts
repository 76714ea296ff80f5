/**
 * The fleet plan as text (`fleet plan`, `fleet show`) and as JSON. Pure: reads only the fleet
 * plan, through `forDisplay` (secrets masked, invisible characters visible). Text: the batches,
 * every field an override changed (grouped: field, value, shared value, which override, the
 * clusters; see overrides.ts), one line per cluster (changes, nodes, waves, estimate, status), each pool's health gates
 * and way back (grouped), every cluster error with its hint, then the fleet line.
 */
import { batchGateChecks } from './gates.ts';
import { isFailedCluster, type FailedClusterPlan, type FleetPlan, type FleetClusterPlan } from './plan-types.ts';
import { failedCanaries } from './plan.ts';
import { forDisplay } from '../render/secrets.ts';
import { maskSecrets } from '../base/secret-mask.ts';
import { jsonText } from '../base/json-text.ts';
import { formatDuration, padTable, plural, foldNames, colors, type Colors } from '../render/format.ts';
import { fleetOverrides, overrideCause, valueText } from './overrides.ts';
import { poolGatesLine } from '../render/health.ts';
import { poolWayBack } from '../render/rollback.ts';

export interface FleetTextOptions {
  color?: boolean;
}

export function renderFleetJson(fp: FleetPlan): string {
  return jsonText(maskSecrets(fp), 2) + '\n';
}

export function renderFleetText(input: FleetPlan, opts: FleetTextOptions = {}): string {
  const fp = forDisplay(input);
  const c = colors(!!opts.color);
  const lines = [
    c.bold(`Fleet ${fp.fleet.name} (${fp.fleet.path}): ${plural(fp.summary.clusters, 'cluster')}, fleet plan ${fp.id}`),
    '',
    ...batchLines(fp, c),
    '',
    ...overrideLines(fp, c),
    c.bold('Clusters:'),
    ...padTable([['  cluster', 'batch', 'changes', 'nodes', 'waves', 'estimate', 'status'], ...fp.clusters.map((x) => clusterRow(x))]),
  ];
  lines.push(...gateAndWayBackLines(fp, c));
  const failed = fp.clusters.filter(isFailedCluster);
  if (failed.length) {
    lines.push('', c.red(c.bold('Errors:')));
    for (const x of failed) lines.push(...clusterErrorLines(x, c));
  }
  for (const d of fp.diagnostics) lines.push(c.yellow(`warning: ${d.file ?? ''}${d.line ? `:${d.line}:${d.column}` : ''}: ${d.message}`));
  lines.push('', fleetLine(fp, c));
  return lines.join('\n') + '\n';
}

function batchLines(fp: FleetPlan, c: Colors): string[] {
  const s = fp.strategy;
  if (!fp.batches.length) return [c.bold('Batches: none (no cluster has something to change and a plan without errors)')];
  const soak = s.batchSoakSeconds ? `, soak ${formatDuration(s.batchSoakSeconds)} between batches` : '';
  const timeout = s.batchTimeoutSeconds !== null ? `, batch timeout ${formatDuration(s.batchTimeoutSeconds)} (then ${s.batchTimeoutAction})` : '';
  const head = c.bold(
    `Batches (canaries first, then up to ${s.maxConcurrency.resolved} cluster${s.maxConcurrency.resolved === 1 ? '' : 's'} each, maxConcurrency ${s.maxConcurrency.value}${soak}${timeout}):`,
  );
  return [
    head,
    ...padTable(
      fp.batches.map((b) => [`  ${b.index}`, b.kind, `est. ${formatDuration(b.estimatedSeconds)}`, `${b.clusters.join(', ')}${batchGateText(fp, b)}`]),
    ),
  ];
}

/** A canary batch's gate: "; then its batch gate: a, b" (its afterWave checks, measured again after the batch soaked). */
export function batchGateText(fp: FleetPlan, b: FleetPlan['batches'][number]): string {
  if (b.kind !== 'canary') return '';
  const names = [...new Set(b.clusters.flatMap((n) => batchGateChecks(fp.clusters.find((c) => c.name === n)?.plan).map((x) => x.name)))];
  return names.length ? `; then its batch gate: ${names.join(', ')}` : '';
}

/** A pool's health gates or way back, in the single-cluster words, and the clusters where it reads so. */
export interface PoolLineGroup {
  pool: string;
  kind: 'gates' | 'way back';
  text: string;
  clusters: string[];
}

/**
 * Each pool's health gates and way back (docs/apply.md "Health gates", "Rollback"), in the words
 * of the single-cluster renderers (render/health.ts poolGatesLine, render/rollback.ts
 * poolWayBack); identical ones once, with their clusters, so 100 clusters of one shape take a
 * few lines. By pool, gates first, then in the Fleet's order.
 */
export function poolLineGroups(fp: FleetPlan): PoolLineGroup[] {
  const groups = new Map<string, PoolLineGroup>();
  const add = (pool: string, kind: PoolLineGroup['kind'], text: string | null, cluster: string) => {
    if (text === null) return;
    const key = JSON.stringify([pool, kind, text]);
    const g = groups.get(key) ?? { pool, kind, text, clusters: [] };
    g.clusters.push(cluster);
    groups.set(key, g);
  };
  for (const x of fp.clusters) {
    for (const pool of x.plan?.pools ?? []) {
      add(pool.name, 'gates', poolGatesLine(pool), x.name);
      add(pool.name, 'way back', poolWayBack(pool), x.name);
    }
  }
  const pools = [...new Set([...groups.values()].map((g) => g.pool))];
  return [...groups.values()].sort((a, b) => pools.indexOf(a.pool) - pools.indexOf(b.pool) || (a.kind === b.kind ? 0 : a.kind === 'gates' ? -1 : 1));
}

/** The section's title: "Health gates and way back", or "Way back" for a fleet without checks. */
export function poolLinesTitle(groups: readonly PoolLineGroup[]): string {
  return groups.some((g) => g.kind === 'gates') ? 'Health gates and way back' : 'Way back';
}

function gateAndWayBackLines(fp: FleetPlan, c: Colors): string[] {
  const groups = poolLineGroups(fp);
  if (!groups.length) return [];
  return [
    '',
    c.bold(`${poolLinesTitle(groups)} (per pool; identical ones grouped):`),
    ...groups.map((g) => `  ${g.pool} ${g.kind}: ${g.text}: ${foldNames(g.clusters, 20)}`),
  ];
}

/** Every deviation from the shared rollout, one line per group (none: no lines). */
function overrideLines(fp: FleetPlan, c: Colors): string[] {
  const { rows, clusters } = fleetOverrides(fp);
  if (!rows.length) return [];
  const table = rows.map((r) => {
    const cause = overrideCause(r);
    const by = `${cause.text}${cause.path ? ` (${cause.path})` : ''}`;
    return [
      `  ${r.field}`,
      valueText(r.field, r.value),
      `shared ${valueText(r.field, r.shared)}`,
      r.by === null ? c.yellow(by) : by,
      `${r.clusters.length > 1 ? `${r.clusters.length} clusters: ` : ''}${foldNames(r.clusters, 20)}`,
    ];
  });
  return [c.yellow(c.bold(`Overrides (${plural(clusters, 'cluster differs', 'clusters differ')} from the shared rollout):`)), ...padTable(table), ''];
}

function clusterRow(x: FleetClusterPlan): string[] {
  const name = `  ${x.name}${x.canary ? ' (canary)' : ''}`;
  const batch = x.batch === null ? '-' : String(x.batch);
  if (!x.plan) return [name, batch, '-', '-', '-', '-', `error: ${x.error?.code ?? 'unknown'}`];
  const s = x.plan.summary;
  const changes = s.create + s.update + s.delete;
  const status = x.error ? `error: ${x.error.code}` : x.batch === null ? 'nothing to change' : 'ok';
  return [name, batch, String(changes), String(s.nodes), String(s.waves), formatDuration(s.estimatedSeconds), status];
}

export function clusterErrorLines(x: FailedClusterPlan, c: Colors = colors(false)): string[] {
  const e = x.error;
  const out = [c.red(`  ${x.name}: ${e.code}: ${e.message}`)];
  for (const d of (x.plan?.diagnostics ?? []).filter((d) => d.severity === 'error').slice(0, 10)) {
    out.push(`    ${d.file ?? ''}${d.line ? `:${d.line}:${d.column}` : ''}: ${d.path ? `${d.path}: ` : ''}${d.message}`);
  }
  if (e.hint) out.push(`    hint: ${e.hint}`);
  return out;
}

/** The last line: what the fleet plan does, in one sentence. */
export function fleetLine(fp: FleetPlan, c: Colors = colors(false)): string {
  const s = fp.summary;
  const line = `Fleet: ${s.planned} of ${plural(s.clusters, 'cluster')} planned, ${s.withChanges} with changes; ${plural(s.nodes, 'node')} in ${plural(s.batches, 'batch', 'batches')} (est. ${formatDuration(s.estimatedSeconds)}).`;
  const canary = failedCanaries(fp).length > 0;
  if (s.failed)
    return c.red(
      c.bold(`${line} ${s.failed} cluster${s.failed === 1 ? '' : 's'} failed${canary ? ', a canary among them: the fleet cannot be applied' : ''}.`),
    );
  return c.bold(line);
}
