/**
 * The chart of a fleet rehearsal (`fleet rehearse -o html`): batches over time, inline SVG.
 * One lane per batch, in order, with the batch's span and, after it, the soak before the next
 * batch; one row per cluster of the batch, its bar from its start to its end coloured by its
 * outcome (a timed-out cluster's own rehearsal, cut by the batch timeout, runs on as a dashed
 * outline), its waits for its maintenance windows over it; the batch timeout as a red dashed line across its lane; the fleet's end and the
 * fleet plan's estimate as in the single cluster's chart (render/html/chart.ts, whose layout, axis and
 * end marks this reuses). Large fleets get one row per batch, its clusters' bars overlaid.
 * Pure: reads only the fleet timeline.
 *
 * Text goes through escapeHtml (cluster names come from the Fleet file), and every coordinate
 * through `f`, which writes only a finite number, whatever a crafted timeline holds.
 */
import type { FleetRehearsal, FleetRehearsalBatch, FleetRehearsalCluster } from './rehearsal-sim.ts';
import { formatDuration, plural } from '../render/format.ts';
import { escapeHtml, clipEnd } from '../render/vocabulary.ts';
import { waitText } from '../render/rehearsal-windows.ts';
import { durationHtml, countHtml, pluralHtml, classHtml } from '../render/html/text.ts';
import { W, LABEL_W, X0, X1, AXIS_H, LANE_H, BEYOND, f, niceTicks, endMarks, gridSvg } from '../render/html/chart.ts';

/** The outcomes a bar is coloured by (anything else draws as `other`). */
const OUTCOMES = ['done', 'nothing-to-do', 'already-done', 'failed', 'timed-out', 'interrupted', 'not-started'] as const;
const BATCH_OUTCOMES = ['done', 'failed', 'timed-out', 'interrupted', 'not-started'] as const;

/** The chart's own colours, after the report's stylesheet. */
export const FLEET_CSS = `
svg .bar.done,svg .bar.nothing-to-do,svg .bar.already-done,.sw.done{fill:var(--soft);background:var(--soft)}svg .bar.failed,.sw.failed{fill:var(--bad);background:var(--bad);border:0}
svg .bar.interrupted,.sw.interrupted{fill:var(--warn);background:var(--warn)}svg .bar.timed-out,.sw.timed-out{fill:var(--stage);background:var(--stage)}
svg .bar.other{fill:var(--dim)}svg .overlaid{opacity:.45}
svg .overrun{fill:none;stroke:var(--stage);stroke-dasharray:3 3}
svg .soak,.sw.soak{fill:var(--staging);background:var(--staging);opacity:.8}
svg .lane-span.failed,svg .lane-span.timed-out{stroke:var(--bad)}
svg .timeout,.sw.timeout{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:6 3;background:var(--bad);width:3px}
svg .not-started{font-size:10px;fill:var(--dim);font-style:italic}
td.outcome.failed,td.outcome.timed-out,td.outcome.interrupted,td.outcome.unplanned{color:var(--bad);font-weight:600}td.outcome.done,td.outcome.nothing-to-do,td.outcome.already-done{color:var(--ok)}
`;

export interface FleetChartOptions {
  /** Most cluster rows before the chart draws one row per batch (default 150). */
  maxRows?: number;
}

/** A finite number, or null (a crafted timeline may hold anything where a time belongs). */
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export function fleetChart(r: FleetRehearsal, opts: FleetChartOptions = {}): string {
  const batches = Array.isArray(r.batches) ? r.batches : [];
  const clusters = Array.isArray(r.clusters) ? r.clusters : [];
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const times = [num(r.makespanSeconds), ...batches.flatMap((b) => [num(b.end), num(b.soak?.end)]), ...clusters.map((c) => num(c.end))];
  const total = Math.max(0, ...times.filter((t): t is number => t !== null));
  if (!batches.length || total <= 0) {
    return `<section id="timeline"><h2>Fleet timeline</h2><p class="dim">No batch ran: nothing to draw.</p></section>`;
  }
  const estimate = num(r.estimatedSeconds) !== null && r.estimatedSeconds > 0 ? r.estimatedSeconds : null;
  const beyond = estimate !== null && estimate > total * BEYOND;
  const domain = beyond ? total : Math.max(total, estimate ?? 0);
  const x = (t: number) => X0 + (t * (X1 - X0)) / domain;
  const inBatches = batches.reduce((s, b) => s + (Array.isArray(b.clusters) ? b.clusters.length : 0), 0);
  const perCluster = inBatches <= Math.max(1, opts.maxRows ?? 150);
  const rowH = 20;
  const parts: string[] = [];
  let y = AXIS_H;
  for (const b of batches) {
    const members = (Array.isArray(b.clusters) ? b.clusters : []).map((n) => byName.get(n)).filter((c): c is FleetRehearsalCluster => !!c);
    const rows = perCluster ? members.length : 1;
    const laneH = LANE_H + rows * rowH;
    parts.push(batchLane(b, members, y, laneH, x, domain));
    let ry = y + LANE_H;
    if (perCluster)
      for (const c of members) {
        parts.push(clusterRow(c, b, ry, rowH, x));
        ry += rowH;
      }
    else parts.push(overlaidRow(b, members, ry, rowH, x));
    const timeoutAt = num(b.timeoutAt);
    if (timeoutAt !== null && timeoutAt <= domain) {
      parts.push(
        `<line class="timeout" x1="${f(x(timeoutAt))}" y1="${f(y + 2)}" x2="${f(x(timeoutAt))}" y2="${f(y + laneH - 2)}"><title>batch ${escapeHtml(b.index)} timeout at ${durationHtml(timeoutAt)} (${escapeHtml(r.strategy?.batchTimeoutAction)})</title></line>`,
      );
    }
    y += laneH;
  }
  const ticks = niceTicks(domain);
  const grid = gridSvg(ticks, x, y);
  const height = y + AXIS_H + (beyond ? AXIS_H : 0);
  const svg = `<svg id="fleet-chart" class="chart rehearsal" viewBox="0 0 ${W} ${f(height)}" width="${W}" height="${f(height)}" role="img" aria-label="Fleet timeline: ${pluralHtml(batches.length, 'batch', 'batches')}, ${pluralHtml(inBatches, 'cluster')}, ${durationHtml(total)}" xmlns="http://www.w3.org/2000/svg">
${grid}
${parts.join('\n')}
${endMarks(x, y, total, estimate, beyond)}
</svg>`;
  return `<section id="timeline">
<h2>Fleet timeline (rehearsal) <span class="count">${durationHtml(total)}</span></h2>
<p class="dim">${intro(r, batches.length, inBatches, total, perCluster, beyond)}</p>
<div class="legend">${legend(r, clusters)}</div>
<div class="chart-wrap">${svg}</div>
</section>`;
}

function intro(r: FleetRehearsal, batches: number, inBatches: number, total: number, perCluster: boolean, beyond: boolean): string {
  const s: Partial<FleetRehearsal['strategy']> = r.strategy ?? {};
  return (
    `${pluralHtml(batches, 'batch', 'batches')} of ${pluralHtml(inBatches, 'cluster')} in ${durationHtml(total)} against the fleet plan's estimate of ${durationHtml(r.estimatedSeconds)} (${beyond ? 'far beyond this run: the arrow points on to it' : 'dashed line'}); ` +
    `soak ${durationHtml(s.batchSoakSeconds)} between batches${num(s.batchTimeoutSeconds) !== null ? `, batch timeout ${durationHtml(s.batchTimeoutSeconds)} (${escapeHtml(s.batchTimeoutAction)})` : ', no batch timeout'}; ` +
    `${perCluster ? 'one row per cluster, its bar from its start to its end' : "one row per batch, its clusters' bars overlaid (they start together)"}. Hover a bar for details.`
  );
}

function legend(r: FleetRehearsal, clusters: FleetRehearsalCluster[]): string {
  const seen = new Set<string>(clusters.map((c) => c.outcome));
  const keys: [string, string][] = [
    ['done', 'done'],
    ['failed', 'failed'],
    ['timed-out', 'timed out (dashed: the time its rehearsal needed)'],
    ['interrupted', 'interrupted'],
  ];
  return [
    ...keys.filter(([k]) => k === 'done' || seen.has(k)),
    ['soak', 'soak between batches'],
    ...(clusters.some((c) => c.windows?.fleetWaits.length) ? [['window-wait', 'wait for a maintenance window (counted in the makespan)']] : []),
    ...(num(r.strategy?.batchTimeoutSeconds) !== null ? [['timeout', 'batch timeout']] : []),
    ['end', 'fleet end'],
    ['estimate', 'fleet plan estimate'],
  ]
    .map(([k, label]) => `<span class="key"><span class="sw ${k}"></span>${label}</span>`)
    .join('');
}

/** A batch's lane: its background, its label, its span, the soak after it and a summary. */
function batchLane(b: FleetRehearsalBatch, members: FleetRehearsalCluster[], top: number, laneH: number, x: (t: number) => number, domain: number): string {
  const out: string[] = [`<rect class="lane" x="0" y="${f(top)}" width="${W}" height="${f(laneH)}"/>`];
  const label = `batch ${b.index}${b.kind === 'canary' ? ' (canary)' : ''}`;
  out.push(`<text class="pool-label" x="8" y="${f(top + 17)}">${escapeHtml(clipEnd(label, 26))}</text>`);
  const start = num(b.start);
  const end = num(b.end) ?? start;
  const outcome = classHtml(b.outcome, BATCH_OUTCOMES);
  const tally = outcomeTally(members);
  if (start !== null && end !== null) {
    out.push(
      `<rect class="lane-span ${outcome}" x="${f(x(start))}" y="${f(top + 3)}" width="${f(Math.max(1, x(end) - x(start)))}" height="${LANE_H - 8}" rx="3"><title>${escapeHtml(`${label}: ${b.outcome}, ${formatDuration(start)} to ${formatDuration(end)} (${formatDuration(end - start)}; estimate ${formatDuration(b.estimatedSeconds)}); ${tally}`)}</title></rect>`,
    );
  }
  const soakStart = num(b.soak?.start);
  const soakEnd = num(b.soak?.end);
  if (soakStart !== null && soakEnd !== null && soakEnd > soakStart) {
    out.push(
      `<rect class="soak" x="${f(x(soakStart))}" y="${f(top + 6)}" width="${f(Math.max(1, x(soakEnd) - x(soakStart)))}" height="${LANE_H - 14}" rx="2"><title>soak after ${escapeHtml(label)}: ${durationHtml(soakStart)} to ${durationHtml(soakEnd)} (${durationHtml(soakEnd - soakStart)})</title></rect>`,
    );
  }
  const summary = start === null ? `not started (${plural(members.length, 'cluster')})` : `${tally}, ${formatDuration((end ?? start) - start)}`;
  const sumX = start === null ? X0 + 6 : x(Math.min(domain, Math.max(end ?? start, soakEnd ?? 0))) + 6;
  const fits = sumX + summary.length * 6.2 < W - 4;
  out.push(`<text class="lane-sum" x="${f(fits ? sumX : start === null ? X0 + 6 : x(start) + 6)}" y="${f(top + 17)}">${escapeHtml(summary)}</text>`);
  return out.join('');
}

/** "2 clusters: 1 done, 1 failed". */
function outcomeTally(members: FleetRehearsalCluster[]): string {
  const counts = new Map<string, number>();
  for (const c of members) counts.set(String(c.outcome), (counts.get(String(c.outcome)) ?? 0) + 1);
  return `${plural(members.length, 'cluster')}: ${[...counts].map(([k, n]) => `${n} ${k}`).join(', ')}`;
}

function clusterTitle(c: FleetRehearsalCluster): string {
  const start = num(c.start);
  const end = num(c.end);
  const when =
    start === null
      ? 'not started'
      : `${formatDuration(start)} to ${formatDuration(end ?? start)} (${formatDuration((end ?? start) - start)}; estimate ${formatDuration(c.estimatedSeconds ?? NaN)})`;
  return `${c.name}${c.canary ? ' (canary)' : ''}: ${c.outcome}, ${when}${c.message ? `: ${c.message}` : ''}`;
}

function clusterRow(c: FleetRehearsalCluster, b: FleetRehearsalBatch, y: number, rowH: number, x: (t: number) => number): string {
  const out: string[] = [`<g class="row node">`];
  const title = escapeHtml(clusterTitle(c));
  out.push(
    `<text class="row-label" x="${LABEL_W}" y="${f(y + rowH / 2 + 4)}" text-anchor="end">${escapeHtml(clipEnd(c.name, 28))}<title>${title}</title></text>`,
  );
  const start = num(c.start);
  const end = num(c.end) ?? start;
  const top = y + 3;
  const barH = rowH - 6;
  if (start === null || end === null) {
    out.push(
      `<text class="not-started" x="${f(x(num(b.start) ?? 0) + 4)}" y="${f(y + rowH / 2 + 4)}">${escapeHtml(c.outcome === 'not-started' ? 'not started' : String(c.outcome))}<title>${title}</title></text>`,
    );
  } else {
    out.push(
      `<rect class="bar ${classHtml(c.outcome, OUTCOMES)}" x="${f(x(start))}" y="${f(top)}" width="${f(Math.max(1.5, x(end) - x(start)))}" height="${f(barH)}" rx="2"><title>${title}</title></rect>`,
    );
    // Its waits for its maintenance windows (docs/apply.md "Rehearsal and maintenance windows"), over its bar.
    for (const [i, w] of (c.windows?.fleetWaits ?? []).entries()) {
      const [a, z] = [num(w.start), num(w.end)];
      const wait = c.windows?.waits[i];
      if (a === null || z === null || z <= a || !wait) continue;
      out.push(
        `<rect class="bar window-wait" data-start="${f(a)}" data-seconds="${f(z - a)}" x="${f(x(a))}" y="${f(top)}" width="${f(Math.max(1.5, x(z) - x(a)))}" height="${f(barH)}" rx="2"><title>${escapeHtml(`${c.name}: ${waitText(wait)} (${formatDuration(a)} to ${formatDuration(z)})`)}</title></rect>`,
      );
    }
    const own = num(c.durationSeconds);
    if (c.outcome === 'timed-out' && own !== null && start + own > end) {
      out.push(
        `<rect class="overrun" x="${f(x(end))}" y="${f(top)}" width="${f(Math.max(1, Math.min(X1, x(start + own)) - x(end)))}" height="${f(barH)}" rx="2"><title>${escapeHtml(`${c.name}: its own rehearsal needed ${formatDuration(own)}; the batch timeout cut it at ${formatDuration(end - start)}`)}</title></rect>`,
      );
    }
  }
  out.push('</g>');
  return out.join('');
}

/** One row for a whole batch: each cluster's bar, translucent, over the others. */
function overlaidRow(b: FleetRehearsalBatch, members: FleetRehearsalCluster[], y: number, rowH: number, x: (t: number) => number): string {
  const out: string[] = [`<g class="row waves" data-nodes="${countHtml(members.length)}">`];
  const label = `${plural(members.length, 'cluster')}`;
  out.push(
    `<text class="row-label" x="${LABEL_W}" y="${f(y + rowH / 2 + 4)}" text-anchor="end">${escapeHtml(label)}<title>${escapeHtml(`batch ${b.index}: ${outcomeTally(members)}`)}</title></text>`,
  );
  const sorted = [...members].sort((p, q) => (num(q.end) ?? 0) - (num(p.end) ?? 0));
  for (const c of sorted) {
    const start = num(c.start);
    const end = num(c.end) ?? start;
    if (start === null || end === null) continue;
    out.push(
      `<rect class="bar overlaid ${classHtml(c.outcome, OUTCOMES)}" x="${f(x(start))}" y="${f(y + 3)}" width="${f(Math.max(1.5, x(end) - x(start)))}" height="${f(rowH - 6)}"><title>${escapeHtml(clusterTitle(c))}</title></rect>`,
    );
  }
  out.push('</g>');
  return out.join('');
}
