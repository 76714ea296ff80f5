/**
 * The fleet plan as ONE pull-request comment (docs/design.md §10). Pure: reads only the fleet plan.
 *
 * - The first line is a hidden marker (`<!-- bootcplan:fleet spec=PATH -->`), keyed by the Fleet
 *   file's path, so a bot updates one sticky comment per Fleet.
 * - The head comes first and is never cut: the fleet summary table, the overrides (every field
 *   of a cluster's effective spec that differs from the shared rollout: the shared value, its
 *   value, the override that set it, the clusters; identical ones grouped; plus any pool whose
 *   plan differs from the others' with no override recorded; rows while their budget lasts,
 *   then how many more), every cluster that failed (each named with its error code; messages
 *   and hints while their budget lasts), the batches.
 * - Then each pool's health gates and way back, grouped (identical ones once, with their
 *   clusters), the cluster table and each cluster's details, folded in `<details>`: canaries and
 *   failed clusters first, then in batch order. Whatever does not fit in `MARKDOWN_LIMIT`
 *   (60,000 characters, under GitHub's 65,536) is left out with a note naming the command that
 *   shows it; for 500 clusters the head alone stays far below the limit (test/fleet/render.test.ts).
 * - Data is text: read through `forDisplay`, escaped where it is written, mentions broken.
 */
import { isFailedCluster, type FailedClusterPlan, type FleetPlan, type FleetClusterPlan } from './plan-types.ts';
import type { Plan } from '../plan/types.ts';
import { forDisplay } from '../render/secrets.ts';
import { formatDuration, formatCount, plural, foldNames } from '../render/format.ts';
import { escapeMarkdown, clipEnd, poolKind } from '../render/vocabulary.ts';
import { MARKDOWN_LIMIT, code, diagnosticItem, markerKey } from '../render/markdown.ts';
import { fleetLine, batchGateText, poolLineGroups, poolLinesTitle } from './plan-text.ts';
import { fleetOverrides, overrideCause, valueText } from './overrides.ts';
import { ICON } from '../render/icons.ts';

export interface FleetMarkdownOptions {
  /** Character limit (default MARKDOWN_LIMIT). */
  limit?: number;
}

/** Bounds of the head's parts (characters), so that the head fits whatever the fleet. */
const HEAD_BUDGET = { errors: 24_000, batches: 8_000, overrides: 12_000, message: 300, gates: 8_000 };

export function fleetMarkdownMarker(fp: Pick<FleetPlan, 'fleet'>): string {
  return `<!-- bootcplan:fleet spec=${markerKey(fp.fleet.path)} -->`;
}

export function renderFleetMarkdown(input: FleetPlan, opts: FleetMarkdownOptions = {}): string {
  const fp = forDisplay(input);
  const limit = opts.limit ?? MARKDOWN_LIMIT;
  const head = [fleetMarkdownMarker(input), ...summary(fp), ...overrides(fp), ...errors(fp), ...batches(fp)].join('\n') + '\n';
  const order = [...fp.clusters].sort((a, b) => rank(a) - rank(b));
  const blocks = [gatesAndWaysBack(fp), clusterTable(fp), ...order.map((c) => () => clusterBlock(c))];
  return assemble(head, blocks, fp, limit, 2);
}

/** Canaries, then failed clusters, then by batch; clusters in no batch last. */
function rank(c: FleetClusterPlan): number {
  if (c.canary) return 0;
  if (c.error) return 1;
  return c.batch === null ? 1e9 : 2 + c.batch;
}

function summary(fp: FleetPlan): string[] {
  const s = fp.summary;
  const md = escapeMarkdown;
  const st = fp.strategy;
  const status = s.failed ? ICON.error : s.warnings ? ICON.warning : ICON.ok;
  const f = fp.fleet;
  const canaries = fp.batches.filter((b) => b.kind === 'canary').length;
  return [
    `### ${status} bootcplan fleet plan for ${code(f.name)}`,
    '',
    `**${md(fleetLine(fp))}**`,
    '',
    `<sub>fleet ${code(f.path)}${f.ref ? ` at ${code(f.ref)}` : ''}${f.commit ? ` (commit ${code(String(f.commit).slice(0, 12))})` : ''}${f.dirty ? ', uncommitted changes' : ''} · fleet plan ${code(fp.id)}</sub>`,
    '',
    '| Summary | |',
    '|---|---|',
    `| Clusters | ${md(s.clusters)}: ${md(s.planned)} planned, ${md(s.withChanges)} with changes, ${s.failed ? `**${md(s.failed)} failed**` : '0 failed'} |`,
    `| Nodes | ${md(formatCount(s.nodes))} to update |`,
    `| Batches | ${md(s.batches)}: ${plural(canaries, 'canary', 'canaries')} first, then up to ${md(st.maxConcurrency.resolved)} cluster${st.maxConcurrency.resolved === 1 ? '' : 's'} each (maxConcurrency ${md(st.maxConcurrency.value)}) |`,
    `| Estimated duration | ${md(formatDuration(s.estimatedSeconds))}${st.batchSoakSeconds ? `, with ${md(formatDuration(st.batchSoakSeconds))} soak between batches` : ''} |`,
    `| Batch timeout | ${st.batchTimeoutSeconds === null ? 'none' : `${md(formatDuration(st.batchTimeoutSeconds))}, then ${md(st.batchTimeoutAction)}`} |`,
    `| Errors / warnings | ${s.errors ? `**${md(s.errors)}**` : '0'} / ${md(s.warnings)} |`,
    '',
  ];
}

/** Every deviation from the shared rollout, grouped; rows while the budget lasts, then how many more. */
function overrides(fp: FleetPlan): string[] {
  const { rows, clusters } = fleetOverrides(fp);
  if (!rows.length) return [];
  const md = escapeMarkdown;
  const out = [
    `#### ${ICON.warning} Overrides: ${plural(clusters, 'cluster differs', 'clusters differ')} from the shared rollout`,
    '',
    '| Field | Shared | This value | Set by | Clusters |',
    '|---|---|---|---|---|',
  ];
  let used = 0;
  for (const [i, r] of rows.entries()) {
    const cause = overrideCause(r);
    const row = `| ${code(r.field)} | ${code(clipEnd(valueText(r.field, r.shared), 400))} | ${code(clipEnd(valueText(r.field, r.value), 400))} | ${r.by === null ? `${ICON.warning} ` : ''}${md(cause.text)}${cause.path ? ` (${code(cause.path)})` : ''} | ${r.clusters.length > 1 ? `${r.clusters.length} clusters: ` : ''}${code(foldNames(r.clusters, 8))} |`;
    if (used + row.length > HEAD_BUDGET.overrides) {
      const rest = rows.slice(i);
      out.push(
        `| … | ${plural(rest.length, 'more row')} on ${plural(new Set(rest.flatMap((x) => x.clusters)).size, 'cluster')}, shown by \`bootcplan fleet show FLEETPLAN\` | | | |`,
      );
      break;
    }
    out.push(row);
    used += row.length + 1;
  }
  out.push('');
  return out;
}

/** Every failed cluster is named; messages and hints while the budget lasts, then names only. */
function errors(fp: FleetPlan): string[] {
  const failed = fp.clusters.filter(isFailedCluster);
  if (!failed.length) return [];
  const out = [
    `#### ${ICON.error} ${plural(failed.length, 'cluster')} failed${failed.some((c) => c.canary) ? ': a canary failed, the fleet cannot be applied' : ': they sit in no batch'}`,
    '',
  ];
  let used = 0;
  let i = 0;
  for (; i < failed.length; i++) {
    const item = errorItem(failed[i]);
    if (used + item.length > HEAD_BUDGET.errors) break;
    out.push(item);
    used += item.length + 1;
  }
  if (i < failed.length) {
    const rest = failed.slice(i);
    const byCode = new Map<string, string[]>();
    for (const c of rest) byCode.set(c.error.code, [...(byCode.get(c.error.code) ?? []), c.name]);
    out.push(`- … and ${plural(rest.length, 'more cluster')}, shown by \`bootcplan fleet show FLEETPLAN\`:`);
    for (const [k, names] of byCode) out.push(`  - ${code(k)}: ${escapeMarkdown(clipEnd(names.join(', '), 12_000))}`);
  }
  out.push('');
  return out;
}

function errorItem(c: FailedClusterPlan): string {
  const e = c.error;
  const lines = [
    `- ${code(c.name)}${c.canary ? ' (canary)' : ''} ${code(e.code)}: ${escapeMarkdown(clipEnd(e.message, HEAD_BUDGET.message))}${e.hint ? `<br>hint: ${escapeMarkdown(clipEnd(e.hint, HEAD_BUDGET.message))}` : ''}`,
  ];
  const ds = (c.plan?.diagnostics ?? []).filter((d) => d.severity === 'error');
  for (const d of ds.slice(0, 3)) lines.push('  ' + diagnosticItem(d));
  if (ds.length > 3) lines.push(`  - … and ${plural(ds.length - 3, 'more error')}`);
  return lines.join('\n');
}

function batches(fp: FleetPlan): string[] {
  if (!fp.batches.length) return ['#### Batches', '', 'None: no cluster has something to change and a plan without errors.', ''];
  const out = ['#### Batches', '', '| # | Kind | Clusters | Est. |', '|--:|---|---|--:|'];
  let used = 0;
  for (const [i, b] of fp.batches.entries()) {
    const row = `| ${escapeMarkdown(b.index)} | ${b.kind === 'canary' ? 'canary' : 'batch'} | ${b.clusters.length > 1 ? `${b.clusters.length}: ` : ''}${escapeMarkdown(foldNames(b.clusters, 8))}${escapeMarkdown(batchGateText(fp, b))} | ${escapeMarkdown(formatDuration(b.estimatedSeconds))} |`;
    if (used + row.length > HEAD_BUDGET.batches) {
      out.push(`| … | | ${plural(fp.batches.length - i, 'more batch', 'more batches')} | |`);
      break;
    }
    out.push(row);
    used += row.length + 1;
  }
  out.push('');
  return out;
}

/**
 * Each pool's health gates and way back, grouped as the text groups them (plan-text.ts
 * poolLineGroups, in the single-cluster words), folded: a fleet of one shape takes a few rows
 * instead of a line in each of its clusters' details; rows while HEAD_BUDGET.gates lasts.
 */
function gatesAndWaysBack(fp: FleetPlan): (budget: number) => string {
  return (budget) => {
    const groups = poolLineGroups(fp);
    if (!groups.length) return '';
    const head = [
      `<details><summary>${poolLinesTitle(groups)} per pool (${plural(groups.length, 'group')}; identical ones grouped)</summary>`,
      '',
      '| Pool | Health gates / way back | Clusters |',
      '|---|---|---|',
    ];
    const tail = ['', '</details>', ''];
    let used = head.join('\n').length + tail.join('\n').length + 200;
    const rows: string[] = [];
    for (const [i, g] of groups.entries()) {
      const row = `| ${code(g.pool)} | ${g.kind === 'gates' ? 'gates' : 'way back'}: ${escapeMarkdown(clipEnd(g.text, 600))} | ${g.clusters.length > 1 ? `${g.clusters.length}: ` : ''}${escapeMarkdown(foldNames(g.clusters, 8))} |`;
      if (used + row.length + 1 > Math.min(budget, HEAD_BUDGET.gates)) {
        rows.push(`| … | ${plural(groups.length - i, 'more row')}, shown by \`bootcplan fleet show FLEETPLAN\` | |`);
        break;
      }
      rows.push(row);
      used += row.length + 1;
    }
    return [...head, ...rows, ...tail].join('\n');
  };
}

/** One row per cluster, folded; rows beyond what fits are counted. */
function clusterTable(fp: FleetPlan): (budget: number) => string {
  return (budget) => {
    const head = [
      `<details><summary>Clusters (${fp.clusters.length})</summary>`,
      '',
      '| Cluster | Batch | Changes | Nodes | Waves | Est. | Status |',
      '|---|--:|--:|--:|--:|--:|---|',
    ];
    const tail = ['', '</details>', ''];
    let used = head.join('\n').length + tail.join('\n').length + 200;
    const rows: string[] = [];
    for (const [i, c] of fp.clusters.entries()) {
      const row = clusterRow(c);
      if (used + row.length + 1 > budget) {
        rows.push(`| … ${plural(fp.clusters.length - i, 'more cluster')} | | | | | | |`);
        break;
      }
      rows.push(row);
      used += row.length + 1;
    }
    return [...head, ...rows, ...tail].join('\n');
  };
}

function clusterRow(c: FleetClusterPlan): string {
  const md = escapeMarkdown;
  const name = `${code(c.name)}${c.canary ? ' (canary)' : ''}`;
  const batch = c.batch === null ? '–' : md(c.batch);
  if (!c.plan) return `| ${name} | ${batch} | | | | | ${ICON.error} ${md(c.error?.code)} |`;
  const s = c.plan.summary;
  const status = c.error ? `${ICON.error} ${md(c.error.code)}` : c.batch === null ? 'nothing to change' : 'ok';
  return `| ${name} | ${batch} | ${md(s.create + s.update + s.delete)} | ${md(s.nodes)} | ${md(s.waves)} | ${md(formatDuration(s.estimatedSeconds))} | ${status} |`;
}

/** One cluster's plan, folded: its pools and the objects it changes. */
function clusterBlock(c: FleetClusterPlan): string {
  if (!c.plan) return '';
  const p: Plan = c.plan;
  const s = p.summary;
  const title = `${c.name}${c.canary ? ' (canary)' : ''}${c.batch !== null ? ` · batch ${c.batch}` : ''}: ${s.create + s.update + s.delete} changes, ${plural(s.nodes, 'node')} in ${plural(s.waves, 'wave')}, est. ${formatDuration(s.estimatedSeconds)}`;
  const lines = [`<details><summary>${escapeMarkdown(clipEnd(title, 300))}</summary>`, ''];
  lines.push(
    `<sub>cluster ${code(clipEnd(p.cluster.source, 200))}${p.cluster.version ? `, OpenShift ${escapeMarkdown(p.cluster.version)}` : ''} · plan ${code(p.id)}</sub>`,
    '',
  );
  if (p.pools.length) {
    lines.push('| Pool | Backend | Target | maxUnavailable | Nodes to update | Waves | Per wave | Est. |', '|---|---|---|---|--:|--:|--:|--:|');
    for (const pool of p.pools.slice(0, 20)) {
      const sched = pool.nodes.filter((n) => n.wave !== null).length;
      const mu = pool.maxUnavailable;
      lines.push(
        `| ${code(pool.name)}${pool.paused ? ' (paused)' : ''} | ${poolKind(pool.backend)} | ${code(clipEnd(pool.targetImage, 400))} | ${code(String(mu.value))} → ${escapeMarkdown(mu.resolved)} | ${sched} of ${escapeMarkdown(pool.nodeCount)} | ${pool.rollout === 'slots' ? 'slots' : escapeMarkdown(pool.waves.length)} | ${escapeMarkdown(pool.waveSize)} | ${escapeMarkdown(formatDuration(pool.estimatedSeconds))} |`,
      );
    }
    lines.push('');
  }
  const changed = p.changes.filter((x) => x.action !== 'noop');
  if (changed.length)
    lines.push(
      `Changes: ${changed
        .slice(0, 20)
        .map((x) => `${code(x.address)} (${escapeMarkdown(x.action)}${x.risk !== 'none' ? `, ${escapeMarkdown(x.risk)}` : ''})`)
        .join(', ')}${changed.length > 20 ? ` and ${changed.length - 20} more` : ''}`,
      '',
    );
  const warnings = p.diagnostics.filter((d) => d.severity === 'warning');
  for (const d of warnings.slice(0, 5)) lines.push(diagnosticItem(d));
  if (warnings.length) lines.push('');
  lines.push('</details>', '');
  return lines.join('\n');
}

/** The head whole; then the blocks in order while they fit; a note for what was left out. */
function assemble(head: string, blocks: ((budget: number) => string)[], fp: FleetPlan, limit: number, tables: number): string {
  const note = (n: number) =>
    `<sub>${plural(n, 'cluster detail', 'cluster details')} left out to stay within ${formatCount(limit)} characters: \`bootcplan fleet show FLEETPLAN --cluster NAME\` shows one cluster's plan.</sub>\n`;
  let budget = limit - head.length - note(fp.clusters.length).length - 2;
  const out = [head];
  let left = 0;
  for (const [i, block] of blocks.entries()) {
    const text = block(budget);
    if (!text) continue;
    if (text.length + 1 > budget) {
      left += i < tables ? 0 : 1;
      continue;
    }
    out.push(text);
    budget -= text.length + 1;
  }
  if (left) out.push(note(left));
  const result = out.join('\n');
  return result.length <= limit ? result : clipEnd(result, limit);
}
