/**
 * The HTML report of a fleet rehearsal (`fleet rehearse -o html`): one self-contained file like
 * the plan report (render/html/report.ts's page: CSP, inline CSS, no script, no network). The outcome, the
 * fleet makespan against the fleet plan's estimate, the chart of batches over time
 * (./rehearsal-chart.ts), the batches, and every cluster's outcome and duration. Pure: reads only
 * the fleet timeline; every interpolation is escaped (cluster names come from the Fleet file).
 */
import type { FleetRehearsal, FleetRehearsalCluster } from './rehearsal-sim.ts';
import { forDisplay } from '../render/secrets.ts';
import { formatDuration } from '../render/format.ts';
import { escapeHtml } from '../render/vocabulary.ts';
import { fleetOutcomeLine, fleetWindowsLines } from './rehearsal-text.ts';
import { durationHtml, countHtml, pluralHtml, classHtml } from '../render/html/text.ts';
import { htmlDocument } from '../render/html/report.ts';
import { fleetChart, FLEET_CSS, type FleetChartOptions } from './rehearsal-chart.ts';

const OUTCOMES = ['done', 'nothing-to-do', 'already-done', 'failed', 'timed-out', 'interrupted', 'not-started', 'unplanned', 'unchanged'] as const;

export function renderFleetRehearsalHtml(input: FleetRehearsal, opts: FleetChartOptions = {}): string {
  const r = forDisplay(input);
  const body = [header(r), cards(r), fleetChart(r, opts), batchTable(r), clusterTable(r), footer(r)].join('\n');
  return htmlDocument(`bootcplan rehearsal of fleet ${r.fleetName} (${r.fleetPlanId})`, body, FLEET_CSS);
}

function header(r: FleetRehearsal): string {
  const o: Partial<FleetRehearsal['options']> = r.options ?? {};
  const status = r.stopped ? 'bad' : r.exitCode === 0 ? 'ok' : 'warn';
  return `<header>
<h1>bootcplan rehearsal of fleet <span class="mono">${escapeHtml(r.fleetName)}</span></h1>
<p class="meta">fleet plan <span class="mono">${escapeHtml(r.fleetPlanId)}</span> · simulated clusters · seed ${escapeHtml(o.seed)} (each cluster its own)${o.jitter ? ` · jitter ±${escapeHtml(Math.round(o.jitter * 100))}% per node` : ''}${o.failRate ? ` · reboot fail rate ${escapeHtml(o.failRate)}` : ''}</p>
<p class="planline ${status}" id="planline">${escapeHtml(fleetOutcomeLine(r))}</p>
${windowsHtml(r)}</header>`;
}

/** The windows each cluster kept and its waits (rehearsal-text.ts fleetWindowsLines), or nothing. */
function windowsHtml(r: FleetRehearsal): string {
  const [head, ...lines] = Array.isArray(r.clusters) ? fleetWindowsLines(r) : [];
  if (!head) return '';
  return `<p id="windows">${escapeHtml(head)}</p><ul class="windows">${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>\n`;
}

function cards(r: FleetRehearsal): string {
  const clusters = Array.isArray(r.clusters) ? r.clusters : [];
  const batches = Array.isArray(r.batches) ? r.batches : [];
  const count = (o: string) => clusters.filter((c) => c.outcome === o).length;
  const failed = count('failed') + count('timed-out') + count('interrupted');
  const diff = typeof r.makespanSeconds === 'number' && typeof r.estimatedSeconds === 'number' ? r.makespanSeconds - r.estimatedSeconds : NaN;
  const card = (label: string, value: string, sub: string, cls = '') =>
    `<div class="card${cls ? ` ${cls}` : ''}"><div class="label">${label}</div><div class="value">${value}</div><div class="sub">${sub}</div></div>`;
  return `<section id="summary"><h2>Summary</h2><div class="cards">
${card('fleet makespan', durationHtml(r.makespanSeconds), `fleet plan estimate ${durationHtml(r.estimatedSeconds)}${Number.isFinite(diff) ? ` (${diff >= 0 ? '+' : '−'}${durationHtml(Math.abs(diff))})` : ''}`)}
${card('batches', `${countHtml(batches.filter((b) => b.start !== null).length)} <small>of ${countHtml(batches.length)}</small>`, 'started', r.stopped ? 'bad' : '')}
${card('clusters done', `${countHtml(count('done') + count('nothing-to-do'))} <small>of ${countHtml(clusters.length)}</small>`, `${countHtml(count('not-started'))} not started; in no batch: ${countHtml(count('unplanned'))} unplanned, ${countHtml(count('unchanged'))} unchanged`)}
${card('failed', countHtml(failed), `${countHtml(count('failed'))} failed, ${countHtml(count('timed-out'))} timed out, ${countHtml(count('interrupted'))} interrupted`, failed ? 'bad' : '')}
${card('exit code', escapeHtml(r.exitCode), 'the worst of the clusters')}
</div></section>`;
}

function batchTable(r: FleetRehearsal): string {
  const rows = (Array.isArray(r.batches) ? r.batches : []).map((b) => {
    const cells = [
      `<td class="n">${escapeHtml(b.index)}</td>`,
      `<td>${escapeHtml(b.kind)}</td>`,
      `<td class="outcome ${classHtml(b.outcome, OUTCOMES)}">${escapeHtml(b.outcome)}</td>`,
      ...times(b.start, b.end),
      `<td class="n">${durationHtml(b.estimatedSeconds)}</td>`,
      `<td class="n">${b.timeoutAt === null ? '' : durationHtml(b.timeoutAt)}</td>`,
      `<td class="n">${b.soak ? durationHtml(b.soak.end - b.soak.start) : ''}</td>`,
      `<td class="mono">${escapeHtml((Array.isArray(b.clusters) ? b.clusters : []).join(', '))}</td>`,
    ];
    return `<tr>${cells.join('')}</tr>`;
  });
  return `<section id="batches"><h2>Batches <span class="count">${pluralHtml(rows.length, 'batch', 'batches')}</span></h2><div class="scroll"><table>
<thead><tr><th class="n">#</th><th>kind</th><th>outcome</th><th class="n">start</th><th class="n">end</th><th class="n">took</th><th class="n">estimate</th><th class="n">timeout at</th><th class="n">soak after</th><th>clusters</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table></div></section>`;
}

function times(start: unknown, end: unknown): string[] {
  if (typeof start !== 'number') return ['<td class="n"></td>', '<td class="n"></td>', '<td class="n"></td>'];
  const e = typeof end === 'number' ? end : null;
  return [
    `<td class="n">${durationHtml(start)}</td>`,
    `<td class="n">${e === null ? '(open)' : durationHtml(e)}</td>`,
    `<td class="n">${e === null ? '' : durationHtml(e - start)}</td>`,
  ];
}

function clusterRow(c: FleetRehearsalCluster): string {
  const s = c.summary;
  const took = c.outcome === 'timed-out' && typeof c.durationSeconds === 'number' ? ` <small>(needed ${durationHtml(c.durationSeconds)})</small>` : '';
  const cells = [
    `<td class="mono">${escapeHtml(c.name)}</td>`,
    `<td class="n">${c.batch === null ? '–' : escapeHtml(c.batch)}${c.canary ? ' <span class="tag">canary</span>' : ''}</td>`,
    `<td class="outcome ${classHtml(c.outcome, OUTCOMES)}">${escapeHtml(c.outcome)}</td>`,
    ...times(c.start, c.end).map((td, i) => (i === 2 && took ? td.replace('</td>', `${took}</td>`) : td)),
    `<td class="n">${c.estimatedSeconds === null ? '' : durationHtml(c.estimatedSeconds)}</td>`,
    `<td class="n">${s ? countHtml(s.nodes) : ''}</td>`,
    `<td class="n">${s ? `${countHtml(s.reboots?.hard)} hard, ${countHtml(s.reboots?.soft)} soft${s.failedNodes ? `, <span class="fail">${countHtml(s.failedNodes)} failed</span>` : ''}` : ''}</td>`,
    `<td class="n">${escapeHtml(c.exitCode)}</td>`,
    `<td>${c.message ? escapeHtml(c.message) : ''}</td>`,
  ];
  return `<tr>${cells.join('')}</tr>`;
}

function clusterTable(r: FleetRehearsal): string {
  const clusters = Array.isArray(r.clusters) ? r.clusters : [];
  return `<section id="clusters"><h2>Clusters <span class="count">${pluralHtml(clusters.length, 'cluster')}</span></h2><div class="scroll"><table>
<thead><tr><th>cluster</th><th class="n">batch</th><th>outcome</th><th class="n">start</th><th class="n">end</th><th class="n">took</th><th class="n">estimate</th><th class="n">nodes</th><th class="n">reboots</th><th class="n">exit</th><th>message</th></tr></thead>
<tbody>${clusters.map(clusterRow).join('\n')}</tbody></table></div></section>`;
}

function footer(r: FleetRehearsal): string {
  const d: Partial<FleetRehearsal['options']['durations']> = r.options?.durations ?? {};
  return `<footer>bootcplan · fleet plan ${escapeHtml(r.fleetPlanId)} · rehearsal durations: stage ${durationHtml(d.stage)}, drain ${durationHtml(d.drain)}, reboot ${durationHtml(d.reboot)}, soft reboot ${durationHtml(d.softReboot)}, ready ${durationHtml(d.ready)} · ${escapeHtml(formatDuration(r.makespanSeconds))} fleet makespan</footer>`;
}
