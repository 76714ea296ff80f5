/**
 * The wave timeline chart of the HTML report (docs/design.md §8): inline SVG, pools x time, one bar
 * per node from drain to back in service; rows aggregate per wave or per run of waves on
 * large plans. With a rehearsal, the rows come from its events and a dashed line marks the
 * plan's estimate. Pure: reads only the plan, the timeline and the rehearsal.
 *
 * Text goes through escapeHtml (names and titles come from the plan or the rehearsal, which a
 * crafted file controls), and every coordinate through `f`, which writes only a finite number:
 * a plan's durations may be strings, or 1e400 (which JSON.parse reads as Infinity).
 */
import type { Plan, PhaseDurations, Backend } from '../../plan/types.ts';
import type { Rehearsal } from '../../sim/rehearse.ts';
import { formatDuration, formatCount, plural } from '../format.ts';
import { nodePhases, type Timeline, type TimelineRow, type RowSpan, type PhaseKind, type TimelineGate, type PoolLane, type TimelineWait } from '../timeline.ts';
import { escapeHtml, clipEnd } from '../vocabulary.ts';
import { durationHtml, countHtml, pluralHtml, classHtml } from './text.ts';

/** Layout in SVG user units: the chart's width, the label column, the time axis from X0 to X1 (the fleet chart shares it). */
export const W = 1120;
export const LABEL_W = 190;
export const X0 = LABEL_W + 10;
export const X1 = W - 56;
export const AXIS_H = 26;
export const LANE_H = 26;

export function timelineChart(plan: Plan, tl: Timeline, r: Rehearsal | null = null): string {
  if (!tl.rows.length || tl.totalSeconds <= 0) {
    return `<section id="timeline"><h2>Wave timeline</h2><p class="dim">No node changes: nothing to draw.</p></section>`;
  }
  if (!(Number.isFinite(tl.totalSeconds) && tl.totalSeconds > 0)) {
    return `<section id="timeline"><h2>Wave timeline</h2><p class="dim">The plan's durations are not finite numbers: nothing to draw.</p></section>`;
  }
  const rowH = tl.granularity === 'node' ? 20 : 24;
  const barH = rowH - 6;
  // A rehearsal's chart also marks the plan's estimate: the axis covers both while the estimate
  // is within BEYOND x the run; past that (a halted run: 17 minutes of a 13-hour plan) the axis
  // is the run's, and the estimate is an arrow past its right edge (`beyondMark`).
  const estimate = r && r.estimatedSeconds > 0 && Number.isFinite(r.estimatedSeconds) ? r.estimatedSeconds : null;
  const beyond = estimate !== null && estimate > tl.totalSeconds * BEYOND;
  const domain = beyond ? tl.totalSeconds : Math.max(tl.totalSeconds, estimate ?? 0);
  const scale = (X1 - X0) / domain;
  const x = (t: number) => X0 + t * scale;
  const ticks = niceTicks(domain);
  const parts: string[] = [];
  const failRules: TimelineGate[] = [];
  let y = AXIS_H;
  if (tl.windowWaits?.length) {
    parts.push(waitLaneSvg(tl.windowWaits, y, rowH, barH, x));
    y += LANE_H + rowH;
  }
  for (const lane of tl.pools) {
    if (!lane.rows.length) continue;
    const laneTop = y;
    parts.push(laneHeaderSvg(lane, laneTop, rowH, x));
    failRules.push(...(lane.gates ?? []).filter((g) => g.result === 'failed'));
    y += LANE_H;
    for (const row of lane.rows) {
      parts.push(rowSvg(row, y, rowH, barH, x, plan.durations, lane.backend));
      y += rowH;
    }
  }
  const height = y + AXIS_H + (beyond ? AXIS_H : 0);
  const grid = gridSvg(ticks, x, y);
  const end = endMarks(x, y, tl.totalSeconds, r ? estimate : undefined, beyond) + failRules.map((g) => failRule(g, x, y)).join('') + rollbackRule(tl, x, y);
  const svg = `<svg id="timeline-chart" class="chart${r ? ' rehearsal' : ''}" viewBox="0 0 ${W} ${f(height)}" width="${W}" height="${f(height)}" role="img" aria-label="${r ? 'Rehearsal' : 'Wave'} timeline: ${pluralHtml(tl.nodes, 'node')} in ${pluralHtml(tl.waves, 'wave')}, ${durationHtml(tl.totalSeconds)}" xmlns="http://www.w3.org/2000/svg">
${grid}
${parts.join('\n')}
${end}
</svg>`;
  const legend = legendHtml(plan, tl, r, failRules.length > 0);
  const intro = chartIntro(tl, r, beyond);
  return `<section id="timeline">
<h2>Wave timeline${r ? ' (rehearsal)' : ''} <span class="count">${durationHtml(tl.totalSeconds)}</span></h2>
<p class="dim">${intro}</p>
<div class="legend">${legend}</div>
<div class="chart-wrap">${svg}</div>
</section>`;
}

/** A pool's lane behind its rows, and its header: the pool's span, its label, its summary, its health gates. */
function laneHeaderSvg(lane: PoolLane, laneTop: number, rowH: number, x: (t: number) => number): string {
  const out = [`<rect class="lane${lane.rollback ? ' rollback' : ''}" x="0" y="${f(laneTop)}" width="${W}" height="${f(LANE_H + lane.rows.length * rowH)}"/>`];
  if (lane.waves.length)
    out.push(
      `<rect class="lane-span" x="${f(x(lane.start))}" y="${f(laneTop + 3)}" width="${f(Math.max(1, x(lane.end) - x(lane.start)))}" height="${LANE_H - 8}" rx="3"><title>pool ${escapeHtml(lane.name)}: ${durationHtml(lane.start)} to ${durationHtml(lane.end)}</title></rect>`,
    );
  out.push(`<text class="pool-label" x="8" y="${f(laneTop + 17)}">${escapeHtml(clipEnd(`pool ${lane.name}${lane.rollback ? ' (rollback)' : ''}`, 26))}</text>`);
  const laneSummary = lane.waves.length
    ? `${plural(
        lane.waves.reduce((s, w) => s + w.nodes, 0),
        'node',
      )}, ${plural(lane.waves.length, 'wave')}, ${formatDuration(lane.end - lane.start)}`
    : 'no wave started';
  // The lane summary goes right of the pool's span when there is room, else inside it
  // (left-aligned), else left of it; never over the label column.
  const textW = laneSummary.length * 6.2;
  const sumX = x(lane.end) + 6;
  const inside = x(lane.end) - x(lane.start) >= textW + 12;
  out.push(
    sumX + textW < W - 4
      ? `<text class="lane-sum" x="${f(sumX)}" y="${f(laneTop + 17)}">${escapeHtml(laneSummary)}</text>`
      : inside || x(lane.start) - textW - 6 < X0
        ? `<text class="lane-sum" x="${f(x(lane.start) + 6)}" y="${f(laneTop + 17)}">${escapeHtml(laneSummary)}</text>`
        : `<text class="lane-sum" x="${f(x(lane.start) - 6)}" y="${f(laneTop + 17)}" text-anchor="end">${escapeHtml(laneSummary)}</text>`,
  );
  for (const g of lane.gates ?? []) out.push(gateSvg(g, laneTop, x));
  return out.join('\n');
}

/**
 * The waits for maintenance windows (a rehearsal's): a lane of their own above the pools, one bar
 * per wait from its start to the window's opening, labelled with the wait and the window
 * (docs/apply.md "Rehearsal and maintenance windows"). data-start/data-seconds for readers.
 */
function waitLaneSvg(waits: readonly TimelineWait[], laneTop: number, rowH: number, barH: number, x: (t: number) => number): string {
  const y = laneTop + LANE_H;
  const top = y + (rowH - barH) / 2;
  const out = [
    `<rect class="lane windows" x="0" y="${f(laneTop)}" width="${W}" height="${f(LANE_H + rowH)}"/>`,
    `<text class="pool-label" x="8" y="${f(laneTop + 17)}">maintenance windows</text>`,
    `<g class="row window-waits"><text class="row-label" x="${LABEL_W}" y="${f(y + rowH / 2 + 4)}" text-anchor="end">window waits</text>`,
  ];
  for (const w of waits) {
    const x0 = x(w.start);
    const width = Math.max(1.5, x(w.end) - x0);
    out.push(
      `<rect class="bar window-wait" data-start="${f(w.start)}" data-seconds="${f(w.end - w.start)}" x="${f(x0)}" y="${f(top)}" width="${f(width)}" height="${f(barH)}" rx="2"><title>${escapeHtml(`${w.title} (${formatDuration(w.start)} to ${formatDuration(w.end)})`)}</title></rect>`,
    );
    // The label inside the bar when it fits, else right of it (left of it at the right edge).
    const textW = w.label.length * 6.2;
    const ty = f(top + barH / 2 + 4);
    out.push(
      width >= textW + 12
        ? `<text class="wait-label" x="${f(x0 + 6)}" y="${ty}">${escapeHtml(w.label)}</text>`
        : x(w.end) + 6 + textW < W - 4
          ? `<text class="wait-label outside" x="${f(x(w.end) + 6)}" y="${ty}">${escapeHtml(w.label)}</text>`
          : `<text class="wait-label outside" x="${f(x0 - 6)}" y="${ty}" text-anchor="end">${escapeHtml(w.label)}</text>`,
    );
  }
  out.push('</g>');
  return out.join('\n');
}

/** The sentence above the chart: what it is drawn from, its totals, and what a row is. */
function chartIntro(tl: Timeline, r: Rehearsal | null, beyond: boolean): string {
  const gran =
    tl.granularity === 'node'
      ? 'one row per node'
      : tl.granularity === 'wave'
        ? `one row per wave (bar: ${r ? 'wave-start to wave-end, phases of its slowest node' : 'first drain to the slowest node back in service'})`
        : 'one row per run of waves';
  const waited = (tl.windowWaits ?? []).reduce((s, w) => s + (w.end - w.start), 0);
  const waits = waited > 0 ? ` (of which ${durationHtml(waited)} waiting for maintenance windows, the bars of the first lane)` : '';
  return r
    ? `From the rehearsal's events: ${pluralHtml(tl.nodes, 'node')} in ${pluralHtml(tl.waves, 'wave')}, ${durationHtml(tl.totalSeconds)}${waits} against the plan's estimate of ${durationHtml(r.estimatedSeconds)} (${beyond ? 'far beyond this run: the axis ends with the run, the arrow points on to the estimate' : 'dashed line'}); at most <span data-out-of-service="${tl.peakUnavailable}">${countHtml(tl.peakUnavailable)}</span> out of service at once; ${gran}. A node's bar runs from its cordon to its uncordon. Hover a bar for details.`
    : `Estimated from the plan's phase durations: ${pluralHtml(tl.nodes, 'node')} in ${pluralHtml(tl.waves, 'wave')}, at most <span data-out-of-service="${tl.peakUnavailable}">${countHtml(tl.peakUnavailable)}</span> out of service at once; ${gran}. Hover a bar for details.`;
}

/** The chart's legend: the phases drawn, and the rehearsal's marks. */
function legendHtml(plan: Plan, tl: Timeline, r: Rehearsal | null, failedGate: boolean): string {
  return [
    ['drain', 'cordon + drain'],
    ...(plan.pools.some((p) => p.backend === 'mco' && p.waves.length) ? [['stage', 'pull image (MCO)']] : []),
    ['reboot', 'reboot'],
    ['soft-reboot', 'soft reboot'],
    ['ready', 'until Ready'],
    ...(tl.rows.some((row) => row.kind === 'staging')
      ? [['staging', r ? 'bootc staging (stage-start to staged)' : 'bootc staging, all nodes in parallel']]
      : []),
    ...(r
      ? [
          ['end', `rehearsal end`],
          ['estimate', 'plan estimate'],
        ]
      : []),
    ...(tl.windowWaits?.length ? [['window-wait', 'wait for a maintenance window (counted in the duration)']] : []),
    ...(r && tl.rows.some((row) => row.spans.some((s) => s.failed)) ? [['failed', 'failed node']] : []),
    ...(tl.pools.some((l) => l.gates?.length) ? [['gate passed', 'health gate passed'], ...(failedGate ? [['gate failed', 'health gate failed']] : [])] : []),
    ...(tl.rollbackAt ? [['rollback', 'rollback (its own lanes)']] : []),
  ]
    .map(([k, label]) => `<span class="key"><span class="sw ${k}"></span>${label}</span>`)
    .join('');
}

/** A health gate in its lane's header: a bar for its duration, a diamond at its end (green passed, red failed). */
function gateSvg(g: TimelineGate, laneTop: number, x: (t: number) => number): string {
  const cls = `gate ${classHtml(g.result, ['passed', 'failed', 'stopped'])}`;
  const cy = laneTop + LANE_H / 2 + 6;
  const cx = x(g.end);
  const bar = `<rect class="${cls}" x="${f(x(g.start))}" y="${f(cy - 1.5)}" width="${f(Math.max(1, cx - x(g.start)))}" height="3"/>`;
  return `${bar}<path class="${cls}" d="M${f(cx)} ${f(cy - 5)}L${f(cx + 5)} ${f(cy)}L${f(cx)} ${f(cy + 5)}L${f(cx - 5)} ${f(cy)}Z"><title>${escapeHtml(g.title)} (${durationHtml(g.start)} to ${durationHtml(g.end)})</title></path>`;
}

/** A failed gate: a red rule across the chart, labelled with the check. */
function failRule(g: TimelineGate, x: (t: number) => number, bottom: number): string {
  const at = f(x(g.end));
  return `<line class="gate-rule" x1="${at}" y1="${AXIS_H}" x2="${at}" y2="${f(bottom)}"/><text class="failed-label" x="${f(x(g.end) + 4)}" y="${AXIS_H + 10}">${escapeHtml(clipEnd(`${g.check ?? 'gate'} failed`, 40))}</text>`;
}

function rowSvg(row: TimelineRow, y: number, rowH: number, barH: number, x: (t: number) => number, d: PhaseDurations, backend: Backend): string {
  const out: string[] = [];
  const top = y + (rowH - barH) / 2;
  out.push(`<g class="row ${classHtml(row.kind, ['node', 'waves', 'staging'] as const)}" data-nodes="${escapeHtml(row.nodes)}">`);
  out.push(
    `<text class="row-label" x="${LABEL_W}" y="${f(y + rowH / 2 + 4)}" text-anchor="end">${escapeHtml(clipEnd(row.label, 28))}<title>${escapeHtml(row.title)}</title></text>`,
  );
  if (row.kind === 'staging') {
    const s = row.spans[0];
    out.push(
      `<rect class="bar staging" x="${f(x(s.start))}" y="${f(top)}" width="${f(Math.max(1.5, x(s.end) - x(s.start)))}" height="${f(barH)}" rx="2"><title>${escapeHtml(row.title)} (${durationHtml(s.end - s.start)})</title></rect>`,
    );
  } else if (row.kind === 'node') {
    const s = row.spans[0];
    if (s.staging)
      out.push(
        `<rect class="bar staging" x="${f(x(s.staging.start))}" y="${f(top + barH / 4)}" width="${f(Math.max(0.8, x(s.staging.end) - x(s.staging.start)))}" height="${f(barH / 2)}" rx="2"><title>${escapeHtml(row.label)}: staging ${durationHtml(s.staging.start)}–${durationHtml(s.staging.end)}</title></rect>`,
      );
    for (const p of s.phases ?? []) {
      out.push(
        `<rect class="bar ${classHtml(p.kind, PHASES)}" x="${f(x(p.start))}" y="${f(top)}" width="${f(Math.max(0.8, x(p.end) - x(p.start)))}" height="${f(barH)}"><title>${escapeHtml(`${row.label}: ${phaseName(p.kind)} ${formatDuration(p.start)}–${formatDuration(p.end)}`)}</title></rect>`,
      );
    }
    out.push(
      `<rect class="bar-outline${s.failed ? ' failed' : ''}" x="${f(x(s.start))}" y="${f(top)}" width="${f(Math.max(1, x(s.end) - x(s.start)))}" height="${f(barH)}" rx="2"><title>${escapeHtml(`${row.title}: ${formatDuration(s.start)} to ${formatDuration(s.end)}`)}</title></rect>`,
    );
    if (s.failed) out.push(`<text class="failed-label" x="${f(x(s.end) + 5)}" y="${f(y + rowH / 2 + 4)}">failed</text>`);
  } else {
    for (const s of mergeSpans(row.spans, x)) {
      const x0 = x(s.start);
      const w = Math.max(1.5, x(s.end) - x0);
      const waves = s.waveFrom === s.waveTo ? `wave ${s.waveFrom}` : `waves ${s.waveFrom}-${s.waveTo}`;
      const tip = `${waves}: ${plural(s.nodes, 'node')} (${s.soft} soft, ${s.hard} hard, ${s.unknown} ${s.phases ? 'not rebooted' : 'not yet known'}${s.failed ? `, ${s.failed} failed` : ''}), ${formatDuration(s.start)} to ${formatDuration(s.end)}`;
      const allSoft = s.soft === s.nodes;
      if (s.waveFrom !== s.waveTo || w < 12) {
        // Several waves in one band, or too narrow for phases: one shape.
        out.push(
          `<rect class="bar ${allSoft ? 'soft-reboot' : 'reboot'}${s.waveFrom !== s.waveTo ? ' merged' : ''}${s.failed ? ' failed' : ''}" x="${f(x0)}" y="${f(top)}" width="${f(w)}" height="${f(barH)}" rx="2"><title>${escapeHtml(tip)}</title></rect>`,
        );
      } else {
        // One wave: the phases of its slowest node; the soft-rebooted share (back earlier) as a band on top.
        const slow = s.phases ?? nodePhases(d, backend, allSoft ? 'soft' : 'hard', s.start);
        for (const p of slow)
          out.push(
            `<rect class="bar ${classHtml(p.kind, PHASES)}" x="${f(x(p.start))}" y="${f(top)}" width="${f(Math.max(0.8, x(p.end) - x(p.start)))}" height="${f(barH)}"><title>${escapeHtml(`${tip}; slowest node: ${phaseName(p.kind)} ${formatDuration(p.start)}–${formatDuration(p.end)}`)}</title></rect>`,
          );
        if (s.softEnd !== null) {
          const sh = Math.max(3, Math.round((barH * s.soft) / s.nodes));
          for (const p of s.softPhases ?? nodePhases(d, backend, 'soft', s.start)) {
            out.push(
              `<rect class="bar ${classHtml(p.kind, PHASES)} softband" x="${f(x(p.start))}" y="${f(top)}" width="${f(Math.max(0.8, x(p.end) - x(p.start)))}" height="${f(sh)}"><title>${escapeHtml(`${waves}: ${s.soft} soft-rebooted nodes back at ${formatDuration(s.softEnd)}`)}</title></rect>`,
            );
          }
        }
        out.push(
          `<rect class="bar-outline${s.failed ? ' failed' : ''}" x="${f(x0)}" y="${f(top)}" width="${f(w)}" height="${f(barH)}" rx="2"><title>${escapeHtml(tip)}</title></rect>`,
        );
      }
      const label = formatCount(s.nodes);
      if (w > label.length * 6.5 + 8)
        out.push(`<text class="bar-label" x="${f(x0 + w / 2)}" y="${f(top + barH / 2 + 4)}" text-anchor="middle">${escapeHtml(label)}</text>`);
    }
    const last = row.spans[row.spans.length - 1];
    out.push(`<text class="row-count" x="${f(x(last.end) + 5)}" y="${f(y + rowH / 2 + 4)}">${escapeHtml(formatCount(row.nodes))}</text>`);
  }
  out.push('</g>');
  return out.join('');
}

/** Spans closer than ~2px on screen merge into one band, so 10,000 waves stay a few hundred shapes. */
function mergeSpans(spans: RowSpan[], x: (t: number) => number): RowSpan[] {
  const out: RowSpan[] = [];
  for (const s of spans) {
    const prev = out[out.length - 1];
    if (prev && x(s.start) - x(prev.end) < 2 && (x(prev.end) - x(prev.start) < 4 || x(s.end) - x(s.start) < 4)) {
      out[out.length - 1] = {
        start: prev.start,
        end: Math.max(prev.end, s.end),
        softEnd: null,
        nodes: prev.nodes + s.nodes,
        soft: prev.soft + s.soft,
        hard: prev.hard + s.hard,
        unknown: prev.unknown + s.unknown,
        waveFrom: prev.waveFrom,
        waveTo: s.waveTo,
      };
    } else out.push({ ...s });
  }
  return out;
}

/**
 * The end line (the rehearsal's or the estimate's end) and, for a rehearsal, the plan's estimate:
 * a dashed line on the axis, or `beyondMark` below it when it lies beyond the axis.
 */
/** The time grid: a line per tick down to `y`, its label above the lanes and again below them. */
export function gridSvg(ticks: number[], x: (t: number) => number, y: number): string {
  return ticks
    .map(
      (t) =>
        `<line class="grid" x1="${f(x(t))}" y1="${AXIS_H - 4}" x2="${f(x(t))}" y2="${f(y)}"/>` +
        `<text class="tick" x="${f(x(t))}" y="${AXIS_H - 9}" text-anchor="middle">${durationHtml(t)}</text>` +
        `<text class="tick" x="${f(x(t))}" y="${f(y + 16)}" text-anchor="middle">${durationHtml(t)}</text>`,
    )
    .join('');
}

export function endMarks(x: (t: number) => number, y: number, total: number, estimate: number | null | undefined, beyond: boolean): string {
  const end = `<line class="end" x1="${f(x(total))}" y1="${AXIS_H - 4}" x2="${f(x(total))}" y2="${f(y)}"><title>${estimate !== undefined ? 'rehearsal' : 'estimate'}: ${durationHtml(total)}</title></line>`;
  if (estimate === null || estimate === undefined) return end;
  return (
    end +
    (beyond
      ? beyondMark(x(total), y + AXIS_H + 14, estimate)
      : `<line class="estimate" x1="${f(x(estimate))}" y1="${AXIS_H - 4}" x2="${f(x(estimate))}" y2="${f(y)}"><title>plan estimate: ${durationHtml(estimate)}</title></line>`)
  );
}

/** The axis covers the estimate too while it is at most this many times the run. */
export const BEYOND = 1.5;

/**
 * The plan's estimate beyond the axis: a dashed arrow from the run's end to the chart's right
 * edge, labelled "plan estimate 13h, beyond this axis", below the bottom axis.
 */
function beyondMark(x0: number, y: number, estimate: number): string {
  const tip = W - 4;
  return (
    `<g class="estimate-beyond" data-estimate="${f(estimate)}"><line class="estimate" x1="${f(x0)}" y1="${f(y)}" x2="${f(tip - 8)}" y2="${f(y)}"/>` +
    `<path class="estimate-arrow" style="fill:var(--accent)" d="M${f(tip - 10)} ${f(y - 5)} L${f(tip)} ${f(y)} L${f(tip - 10)} ${f(y + 5)} Z"/>` +
    `<text class="estimate-label" style="fill:var(--accent);font-size:11px" x="${f(tip - 14)}" y="${f(y - 6)}" text-anchor="end">plan estimate ${durationHtml(estimate)}, beyond this axis</text>` +
    `<title>plan estimate: ${durationHtml(estimate)} (the axis ends with the run)</title></g>`
  );
}

export function niceTicks(total: number): number[] {
  if (!(Number.isFinite(total) && total > 0)) return [0];
  const steps = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];
  const step = steps.find((s) => total / s <= 10) ?? Math.ceil(total / 10);
  const out: number[] = [];
  for (let t = 0; t <= total; t += step) out.push(t);
  return out;
}

function phaseName(k: PhaseKind): string {
  return { drain: 'drain', stage: 'pull image', reboot: 'reboot', 'soft-reboot': 'soft reboot', ready: 'until Ready', staging: 'staging' }[k];
}

/** The phase kinds, the class names of the bars. */
const PHASES = ['drain', 'stage', 'reboot', 'soft-reboot', 'ready', 'staging'] as const;

/**
 * SVG coordinates to a tenth of a pixel: enough on screen, and short. Always a finite number
 * within ±10,000,000 user units (NaN reads 0), whatever a crafted plan made of the arithmetic.
 */
export function f(n: number): string {
  const v = Number(n);
  if (!Number.isFinite(v)) return '0';
  return (Math.round(Math.max(-1e7, Math.min(1e7, v)) * 10) / 10).toString();
}

/** A rehearsal's rollback: a red rule across the chart where it started, labelled with why. */
function rollbackRule(tl: Timeline, x: (t: number) => number, bottom: number): string {
  const at = tl.rollbackAt;
  if (!at) return '';
  return (
    `<line class="rollback-rule" x1="${f(x(at.t))}" y1="${AXIS_H - 4}" x2="${f(x(at.t))}" y2="${f(bottom)}"><title>${escapeHtml(at.label)}</title></line>` +
    `<text class="rollback-label" x="${f(x(at.t) + 4)}" y="${AXIS_H + 10}">${escapeHtml(clipEnd(at.label, 60))}</text>`
  );
}
