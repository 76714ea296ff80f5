/**
 * Fleet rehearsal output (`fleet rehearse`): text and JSON of the fleet timeline
 * (src/fleet/rehearsal-sim.ts). Pure. The text reads the timeline through `forDisplay`
 * (cluster names and messages come from the Fleet file and the clusters: docs/safety.md "What is masked in outputs").
 */
import type { FleetRehearsal } from './rehearsal-sim.ts';
import { colors, formatDuration, padTable, plural, toAscii } from '../render/format.ts';
import { waitText, windowsZone } from '../render/rehearsal-windows.ts';
import { localTime } from '../render/local-time.ts';
import { forDisplay } from '../render/secrets.ts';
import { jsonText } from '../base/json-text.ts';

/** Outcomes of a cluster that went well, and those where nothing was tried (src/fleet/run-events.ts). */
export const OK: ReadonlySet<string> = new Set(['done', 'nothing-to-do', 'already-done', 'unchanged']);
export const QUIET: ReadonlySet<string> = new Set(['not-started', 'unchanged']);

/** The fleet timeline as JSON: the object itself (each cluster's figures, not its events). */
export function fleetRehearsalJson(r: FleetRehearsal): string {
  return jsonText(r, 2) + '\n';
}

/** The last line: how the fleet ended, its makespan against the fleet plan's estimate. */
export function fleetOutcomeLine(r: FleetRehearsal): string {
  const diff = r.estimatedSeconds > 0 ? Math.round(((r.makespanSeconds - r.estimatedSeconds) / r.estimatedSeconds) * 1000) / 10 : null;
  const against = `fleet plan estimate ${formatDuration(r.estimatedSeconds)}${diff === null ? '' : `, ${diff >= 0 ? '+' : ''}${diff}%`}`;
  const counts = new Map<string, number>();
  for (const c of r.clusters) counts.set(String(c.outcome), (counts.get(String(c.outcome)) ?? 0) + 1);
  const tally = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  if (!r.stopped)
    return `Fleet rehearsal: ${r.exitCode === 0 ? 'done' : 'finished with failures'} in ${formatDuration(r.makespanSeconds)} (${r.makespanSeconds}s; ${against}); ${plural(r.clusters.length, 'cluster')}: ${tally}.`;
  return `Fleet rehearsal: stopped after ${formatDuration(r.makespanSeconds)} (${against}): ${r.message ?? r.stopped}; ${plural(r.clusters.length, 'cluster')}: ${tally}.`;
}

/**
 * The maintenance windows each cluster kept (docs/apply.md "Rehearsal and maintenance windows"):
 * the rule once, then per cluster its windows, its waits on the fleet's axis and its first wave
 * in its own time zone. Empty when no cluster has windows.
 */
export function fleetWindowsLines(r: FleetRehearsal): string[] {
  const withWindows = r.clusters.flatMap((x) => (x.windows ? [{ name: x.name, w: x.windows }] : []));
  if (!withWindows.length) return [];
  const out = [`Windows (each cluster its own, in its time zone); rule: ${withWindows[0].w.rule}:`];
  for (const { name, w } of withWindows) {
    const list = w.windows.map((v) => `${v.schedule} for ${v.duration} (${v.timezone})`).join(', ');
    const waits = w.waits.map((v, i) => `${waitText(v)} (${formatDuration(w.fleetWaits[i].start)} to ${formatDuration(w.fleetWaits[i].end)})`);
    const first = w.firstWave ? `first wave ${localTime(w.firstWave.at, windowsZone(w))} (${formatDuration(w.firstWave.fleetSeconds)})` : 'no wave started';
    out.push(`${name}: ${list}; ${[...waits, first].join('; ')}`);
  }
  return out;
}

const span = (start: number | null, end: number | null) =>
  start === null ? ['', '', ''] : [formatDuration(start), end === null ? '(open)' : formatDuration(end), end === null ? '' : formatDuration(end - start)];

export const BATCH_HEAD = ['batch', 'kind', 'start', 'end', 'took', 'estimate', 'outcome', 'clusters'];
export const CLUSTER_HEAD = ['cluster', 'batch', 'outcome', 'start', 'end', 'took', 'estimate', 'exit', 'note'];

/** The batches table's rows (text and Markdown alike): each batch, and its soak as a row of its own. */
export function batchRows(r: FleetRehearsal, c: ReturnType<typeof colors>): string[][] {
  const rows: string[][] = [];
  for (const b of r.batches) {
    const paint = b.outcome === 'done' ? c.green : b.outcome === 'not-started' ? c.dim : c.red;
    rows.push([String(b.index), b.kind, ...span(b.start, b.end), formatDuration(b.estimatedSeconds), paint(b.outcome), b.clusters.join(', ')]);
    if (b.soak) rows.push(['', c.dim('soak'), formatDuration(b.soak.start), formatDuration(b.soak.end), formatDuration(b.soak.end - b.soak.start), '', '', '']);
  }
  return rows;
}

/** The clusters table's rows: each cluster's batch, outcome, span on the fleet's axis, estimate, exit code and a note. */
export function clusterRows(r: FleetRehearsal, c: ReturnType<typeof colors>): string[][] {
  return r.clusters.map((x) => {
    const paint = OK.has(x.outcome) ? c.green : QUIET.has(x.outcome) ? c.dim : c.red;
    const note = [
      x.summary
        ? `${plural(x.summary.nodes, 'node')}, ${plural(x.summary.waves, 'wave')}${x.summary.failedNodes ? `, ${x.summary.failedNodes} failed` : ''}`
        : '',
      x.message ?? '',
    ]
      .filter(Boolean)
      .join('; ');
    const took =
      x.outcome === 'timed-out' && x.durationSeconds !== null
        ? `${span(x.start, x.end)[2]} (needed ${formatDuration(x.durationSeconds)})`
        : span(x.start, x.end)[2];
    return [
      x.name,
      x.batch === null ? '-' : `${x.batch}${x.canary ? ' canary' : ''}`,
      paint(x.outcome),
      span(x.start, x.end)[0],
      span(x.start, x.end)[1],
      took,
      x.estimatedSeconds === null ? '' : formatDuration(x.estimatedSeconds),
      String(x.exitCode),
      note,
    ];
  });
}

/** The simulation line: the durations, the seed, jitter and faults. */
export function fleetSimulationLine(r: FleetRehearsal): string {
  const o = r.options;
  const d = o.durations;
  return `on simulated clusters (stage ${d.stage}s, drain ${d.drain}s, reboot ${d.reboot}s, soft-reboot ${d.softReboot}s, ready ${d.ready}s; seed ${o.seed}, each cluster its own${o.jitter ? `; jitter ±${Math.round(o.jitter * 100)}% per node` : ''}${o.failRate ? `; reboot fail rate ${o.failRate}` : ''})`;
}

/** "Strategy: soak 30m between batches, batch timeout 7d (halt)." */
export function fleetStrategyLine(r: FleetRehearsal): string {
  const st = r.strategy;
  return `Strategy: soak ${formatDuration(st.batchSoakSeconds)} between batches, ${st.batchTimeoutSeconds === null ? 'no batch timeout' : `batch timeout ${formatDuration(st.batchTimeoutSeconds)} (${st.batchTimeoutAction})`}.`;
}

/** Text: the batches (with their soaks), then every cluster, then the outcome line. */
export function renderFleetRehearsalText(input: FleetRehearsal, opts: { color: boolean; ascii?: boolean }): string {
  const r = forDisplay(input);
  const c = colors(opts.color);
  const out: string[] = [];
  out.push(c.bold(`Rehearsal of fleet ${r.fleetName} (fleet plan ${r.fleetPlanId})`) + ` ${fleetSimulationLine(r)}`);
  out.push(fleetStrategyLine(r));
  out.push('');
  out.push(...padTable([BATCH_HEAD, ...batchRows(r, c)]), '');
  out.push(...padTable([CLUSTER_HEAD, ...clusterRows(r, c)]).map((l) => l.trimEnd()), '');
  const windows = fleetWindowsLines(r);
  if (windows.length) out.push(...windows.map((l, i) => (i ? `  ${l}` : l)), '');
  const line = fleetOutcomeLine(r);
  out.push(r.exitCode === 0 && !r.stopped ? c.green(line) : c.red(line));
  const text = out.join('\n') + '\n';
  return opts.ascii ? toAscii(text) : text;
}
