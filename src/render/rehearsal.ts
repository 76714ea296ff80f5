/**
 * Rehearsal output: text (timeline summary) and JSON. Pure. The text reads the rehearsal
 * through `forDisplay` (its pools, nodes and events carry cluster data: docs/safety.md "What is masked in outputs").
 */
import type { Rehearsal } from '../sim/rehearse.ts';
import { EXIT, exitCodeOf } from '../base/errors.ts';
import { colors, formatDuration, padTable, foldNames, foldWaves, withFold, plural, toAscii } from './format.ts';
import { formatEventLine } from './events.ts';
import { waitText, windowsSummary } from './rehearsal-windows.ts';
import { forDisplay } from './secrets.ts';
import { jsonText } from '../base/json-text.ts';

/** A rehearsal as `rehearse -o json` and the HTML report show it: with the exit code of the error that stopped it. */
export interface RehearsalReport extends Rehearsal {
  exitCode: number;
}

export function rehearsalReport(rehearsal: Rehearsal, error: unknown): RehearsalReport {
  return { ...rehearsal, exitCode: error ? exitCodeOf(error) : EXIT.ok };
}

/** `{durationSeconds, halted, pools: [{name, maxUnavailable, peakUnavailable, waves, failedNodes}], events}` and a few more fields. */
export function rehearsalJson(r: RehearsalReport): string {
  return (
    jsonText(
      {
        planId: r.planId,
        durationSeconds: r.durationSeconds,
        estimatedSeconds: r.estimatedSeconds,
        ...(r.windows ? { windows: r.windows } : {}),
        halted: r.halted,
        stopped: r.stopped,
        exitCode: r.exitCode,
        durations: r.durations,
        faults: r.faults,
        ...(r.jitter ? { jitter: r.jitter } : {}),
        ...(r.wavesComparison ? { wavesComparison: r.wavesComparison } : {}),
        reboots: r.reboots,
        ...(r.rollback ? { rollback: r.rollback, maxRebootsPerNode: r.maxRebootsPerNode } : {}),
        pools: r.pools,
        ...(r.gates ? { gates: r.gates, healthFaults: r.healthFaults ?? null } : {}),
        events: r.events,
      },
      2,
    ) + '\n'
  );
}

/** The gates of a rehearsal in one line: how many passed and their time, the one that failed (null without gates). */
export function gatesLine(r: Pick<Rehearsal, 'gates'>): string | null {
  const gates = r.gates ?? [];
  if (!gates.length) return null;
  const passed = gates.filter((g) => g.result === 'passed');
  const time = gates.reduce((s, g) => s + ((g.end ?? g.start) - g.start), 0);
  const failed = gates.find((g) => g.result === 'failed');
  const where = (g: NonNullable<Rehearsal['gates']>[number]) =>
    g.point === 'preflight' ? 'before the first write' : g.point === 'afterNode' ? `after node ${g.node} of ${g.pool}` : `after wave ${g.wave} of ${g.pool}`;
  // Checks on trial (mode: observe): each would-have-failed verdict, never acted on.
  const trial = gates.flatMap((g) => (g.observing ?? []).filter((o) => o.result === 'failed').map((o) => `${o.check} would have failed ${where(g)}`));
  const observing = trial.length
    ? `; observing (not enforced): ${trial.length > 3 ? `${trial.slice(0, 3).join(', ')} and ${trial.length - 3} more` : trial.join(', ')}`
    : '';
  return `Health gates: ${plural(passed.length, 'passed', 'passed')} (${formatDuration(time)} in total)${failed ? `; ${failed.check} failed ${where(failed)} at ${formatDuration(failed.end ?? failed.start)}: ${failed.observed}` : ''}${observing}.`;
}

/** "; observing slo would have failed" for a gate row: its checks on trial that would have failed. */
function observingNote(g: NonNullable<Rehearsal['gates']>[number], c: ReturnType<typeof colors>): string {
  const failed = (g.observing ?? []).filter((o) => o.result === 'failed').map((o) => o.check);
  return failed.length ? c.yellow(`; observing ${failed.join(', ')} would have failed`) : '';
}

/**
 * The silences of the rehearsal (docs/apply.md "Silences"), from its events: how many nodes were
 * silenced, how many silences were created, extended and expired, failures, and any still active
 * at the end; null for a plan without silences.
 */
export function silencesLine(r: Pick<Rehearsal, 'events'>): string | null {
  const did = silencesSummary(r);
  return did ? `Silences: ${did}` : null;
}

/** silencesLine without its label (the HTML report's silences section has its own heading). */
export function silencesSummary(r: Pick<Rehearsal, 'events'>): string | null {
  const events = r.events.filter((e) => e.type === 'silence');
  if (!events.length) return null;
  const count = (a: string) => events.filter((e) => e.action === a).reduce((s, e) => s + e.ids.length, 0);
  const live = new Set<string>();
  for (const e of events)
    for (const id of e.ids) {
      if (e.action === 'expire') live.delete(id);
      else live.add(id);
    }
  const nodes = new Set(events.flatMap((e) => (e.action === 'create' && e.node ? [e.node] : [])));
  const errors = events.filter((e) => e.action === 'error').length;
  return `${plural(nodes.size, 'node')} silenced while out of service; ${count('create')} created, ${count('extend')} extensions, ${count('expire')} expired${errors ? `, ${plural(errors, 'error')}` : ''}; ${live.size ? `${live.size} still active at the end (they lapse within the TTL)` : 'none left at the end'}.`;
}

/**
 * The rows of a pool's waves table (text and Markdown alike): each wave, with a row for each wait
 * for a window before it (or inside it, after it) and one for the health gate after its soak.
 * Waves past 12 fold as `foldWaves` folds them; `fold.at` is the row the "… more waves" line
 * goes before (the rows of the waves shown before it: waits and gates included).
 */
export function poolWaveRows(
  r: RehearsalReport,
  p: RehearsalReport['pools'][number],
  c: ReturnType<typeof colors>,
): { rows: string[][]; fold: { hidden: number; at: number } } {
  const waits = r.windows?.waits ?? [];
  const rows: string[][] = [];
  const fold = foldWaves(p.waves);
  const waveGates = (r.gates ?? []).filter((g) => g.pool === p.name && g.point === 'afterWave');
  let at = 0;
  fold.items.forEach((w, i) => {
    if (i === fold.at) at = rows.length;
    // A wait for a window before this wave (or inside it, after its row): a row of its own, counted in the timeline.
    const waitRows = (inside: boolean) => {
      for (const x of p.rollback ? [] : waits.filter((y) => y.pool === p.name && y.wave === w.wave && (y.reason === 'window-closed') === inside))
        rows.push(['    window', formatDuration(x.start), formatDuration(x.end), formatDuration(x.end - x.start), c.yellow(waitText(x))]);
    };
    waitRows(false);
    rows.push([
      `  ${w.wave}`,
      formatDuration(w.start),
      w.end === null ? c.red('(stopped)') : formatDuration(w.end),
      w.end === null ? '' : formatDuration(w.end - w.start),
      `${w.nodes.length}: ${foldNames(w.nodes, 6)}`,
    ]);
    waitRows(true);
    // The health gate after the wave (after its soak): a row of its own, so the time it took shows.
    const g = waveGates.find((x) => x.wave === w.wave);
    if (g)
      rows.push([
        '    gate',
        formatDuration(g.start),
        g.end === null ? c.red('(stopped)') : formatDuration(g.end),
        g.end === null ? '' : formatDuration(g.end - g.start),
        (g.result === 'failed' ? c.red(`failed: ${g.check}`) : g.result) + observingNote(g, c),
      ]);
  });
  return { rows, fold: { hidden: fold.hidden, at } };
}

/** Text: per pool its waves (folded past 12: the first 5, "… N more waves …", the last), the events with `events`. */
export function renderRehearsalText(rehearsal: RehearsalReport, opts: { color: boolean; events?: boolean; ascii?: boolean }): string {
  const r = forDisplay(rehearsal);
  const c = colors(opts.color);
  const out: string[] = [];
  const d = r.durations;
  out.push(
    c.bold(`Rehearsal of plan ${r.planId}`) +
      ` on a simulated cluster (stage ${d.stage}s, drain ${d.drain}s, reboot ${d.reboot}s, soft-reboot ${d.softReboot}s, ready ${d.ready}s${r.jitter ? `; jitter ±${Math.round(r.jitter.fraction * 100)}% per node, seed ${r.jitter.seed}` : ''}${r.faults ? `; faults: reboot fail rate ${r.faults.rebootFailRate ?? 0}, seed ${r.faults.seed ?? 1}` : ''}${r.healthFaults ? `; health faults: ${[...r.healthFaults.failChecks.map((t) => `--fail-check ${t}`), ...(r.healthFaults.failRate ? [`--fail-check-rate ${r.healthFaults.failRate}, seed ${r.healthFaults.seed}`] : [])].join(', ')}` : ''})`,
  );
  out.push('');
  if (r.windows) {
    const waits = r.windows.waits;
    out.push(windowsSummary(r.windows));
    for (const w of waits.filter((x) => x.pool === null)) out.push(c.yellow(`  ${formatDuration(w.start)}: ${waitText(w)}`));
    out.push('');
  }
  for (const p of r.pools) {
    out.push(
      `${c.bold(p.name)}${p.rollback ? c.red(' rollback') : ''} (${p.backend}): maxUnavailable ${p.maxUnavailable}, peak unavailable ${p.peakUnavailable <= p.maxUnavailable ? p.peakUnavailable : c.red(String(p.peakUnavailable))}${p.failedNodes.length ? c.red(`, failed: ${p.failedNodes.join(', ')}`) : ''}`,
    );
    if (!p.waves.length) {
      out.push('  not started');
      continue;
    }
    const { rows, fold } = poolWaveRows(r, p, c);
    out.push(...withFold(padTable([['  wave', 'start', 'end', 'took', 'nodes'], ...rows]), { hidden: fold.hidden, at: fold.at + 1 }, '  ', c.dim));
  }
  out.push('');
  if (opts.events) {
    for (const e of r.events) out.push(formatEventLine(e, { color: opts.color }));
    out.push('');
  }
  const gates = gatesLine(r);
  if (gates) out.push((r.gates ?? []).some((g) => g.result === 'failed') ? c.red(gates) : gates, '');
  const silences = silencesLine(r);
  if (silences) out.push(silences, '');
  if (r.rollback) out.push(rollbackLine(r, r.rollback, c), '');
  const gain = slotsLine(r);
  if (gain) out.push(gain, '');
  out.push(rehearsalOutcome(r, c));
  const text = out.join('\n') + '\n';
  return opts.ascii ? toAscii(text) : text;
}

/** The gain of slots: this rehearsal against the same plan with its slots pools in waves (src/sim/rehearse.ts). */
function slotsGain(
  slots: number,
  slotsEstimate: number,
  waves: { durationSeconds: number; estimatedSeconds: number; stopped: string | null },
  done: boolean,
): string {
  const head = `Slots: ${formatDuration(slots)} (estimate ${formatDuration(slotsEstimate)}); the same plan in waves: ${formatDuration(waves.durationSeconds)} (estimate ${formatDuration(waves.estimatedSeconds)})`;
  if (!done || waves.stopped)
    return `${head}; no gain measured (${waves.stopped ? `the waves rehearsal stopped: ${waves.stopped}` : 'this rehearsal stopped'}).`;
  const gain = waves.durationSeconds - slots;
  const pct = waves.durationSeconds > 0 ? Math.round((gain / waves.durationSeconds) * 1000) / 10 : 0;
  return `${head}: slots ${gain >= 0 ? `${formatDuration(gain)} faster (${pct}%)` : `${formatDuration(-gain)} slower`}.`;
}

/** "Rollback at 1h05m (why): 4 nodes in 2 waves (18m), peak 2 unavailable; at most 2 reboots per node." */
export function rollbackLine(r: RehearsalReport, rb: NonNullable<RehearsalReport['rollback']>, c: ReturnType<typeof colors>): string {
  const took = rb.end === null ? 'stopped before its end' : formatDuration(rb.end - rb.start);
  return c.yellow(
    `Rollback at ${formatDuration(rb.start)} (${rb.why}): ${plural(rb.nodes, 'node')} in ${plural(rb.waves, 'wave')} (${took}), peak ${rb.peakUnavailable} out of service; at most ${r.maxRebootsPerNode ?? '?'} reboots per node.`,
  );
}

/** The gain of slots against waves, when the rehearsal measured one (null otherwise). */
export function slotsLine(r: RehearsalReport): string | null {
  return r.wavesComparison ? slotsGain(r.durationSeconds, r.estimatedSeconds, r.wavesComparison, r.exitCode === 0) : null;
}

/** The last line: "Rehearsal: done in 5d8h (…, of which 5d7h waiting for windows; plan estimate 52m); 4 hard reboots, …". */
export function rehearsalOutcome(r: RehearsalReport, c: ReturnType<typeof colors>): string {
  const reboots = `${plural(r.reboots.hard, 'hard reboot')}, ${plural(r.reboots.soft, 'soft reboot')}${r.reboots.failed ? c.red(`, ${r.reboots.failed} failed`) : ''}`;
  if (r.exitCode === 0)
    return c.green(
      `Rehearsal: done in ${formatDuration(r.durationSeconds)} (${r.durationSeconds}s${r.windows?.waitedSeconds ? `, of which ${formatDuration(r.windows.waitedSeconds)} waiting for windows` : ''}; plan estimate ${formatDuration(r.estimatedSeconds)}); ${reboots}.`,
    );
  return c.red(`Rehearsal: ${r.halted ? 'halted' : 'stopped'} after ${formatDuration(r.durationSeconds)}: ${r.stopped}`) + `; ${reboots}.`;
}
