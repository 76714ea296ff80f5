/**
 * A fleet run (`fleet apply`) for people and machines. Pure: reads only the runner's events and
 * result (src/fleet/run-result.ts), through `forDisplay` (secrets masked, invisible characters
 * visible). Text: one line per fleet event as it happens (stderr), the cluster's own halts and
 * failed nodes prefixed with its name, then a summary table (stdout). JSON: each event as one
 * NDJSON line, the clusters' apply events wrapped in `fleet-cluster-event`. Also the progress
 * of a long `fleet rehearse` (`FleetRehearseProgress`), from the same events.
 */
import type { FleetEvent } from './run-events.ts';
import type { FleetRunResult } from './run-result.ts';
import { forDisplay } from '../render/secrets.ts';
import { maskSecrets } from '../base/secret-mask.ts';
import { jsonText } from '../base/json-text.ts';
import { clockOf } from '../render/events.ts';
import { formatDuration, padTable, plural, colors, clipVisible } from '../render/format.ts';

export function fleetEventToNdjson(e: FleetEvent): string {
  return jsonText(maskSecrets(e)) + '\n';
}

/** The progress line of an event, or null for those not worth a line (most cluster apply events). */
export function fleetEventLine(input: FleetEvent): string | null {
  const e = forDisplay(input);
  const at = clockOf(e.t);
  switch (e.type) {
    case 'fleet-start':
      return `${at} fleet plan ${e.fleetPlanId}: ${plural(e.clusters, 'cluster')} in ${plural(e.batches, 'batch', 'batches')}`;
    case 'fleet-batch-start':
      return `${at} batch ${e.batch} (${e.kind}): ${e.clusters.join(', ')}`;
    case 'fleet-cluster-start':
      return `${at}   ${e.cluster}: apply${e.attempt > 1 ? ` (attempt ${e.attempt}, its window is open)` : ''}`;
    case 'fleet-cluster-waiting':
      return `${at}   ${e.cluster}: outside its maintenance window until ${e.until}; the batch waits for it`;
    case 'fleet-cluster-event': {
      const a = e.event;
      if (a.type === 'halt') return `${at}   ${e.cluster}: pool ${a.pool} halted: ${a.message}`;
      if (a.type === 'node-failed') return `${at}   ${e.cluster}: node ${a.node} failed: ${a.message}`;
      if (a.type === 'wave-start') return `${at}   ${e.cluster}: pool ${a.pool} wave ${a.wave}/${a.waves}: ${a.nodes.join(', ')}`;
      if (a.type === 'gate-fail')
        return `${at}   ${e.cluster}: health check ${a.check} failed (${a.point}${a.pool ? ` ${a.pool}` : ''}${a.wave !== null ? ` wave ${a.wave}` : ''}): ${a.observed}`;
      // A check on trial (mode: observe) that would have failed: said, never acted on.
      if (a.type === 'gate-observe' && a.result === 'failed')
        return `${at}   ${e.cluster}: observing ${a.check} (mode: observe, not enforced) would have failed (${a.point}${a.pool ? ` ${a.pool}` : ''}${a.wave !== null ? ` wave ${a.wave}` : ''}): ${a.observed}`;
      return null;
    }
    case 'fleet-batch-gate':
      return `${at}   ${e.cluster}: batch gate ${e.result}${e.check ? `: ${e.check}: ${e.observed}` : ''} (${formatDuration(e.seconds)})`;
    case 'fleet-cluster-done':
      return `${at}   ${e.cluster}: ${e.outcome}${e.exitCode ? ` (exit ${e.exitCode})` : ''}${e.message ? `: ${e.message}` : ''}`;
    case 'fleet-batch-timeout':
      return `${at} batch ${e.batch} timed out: stopping ${e.clusters.join(', ') || 'nothing'} at a safe point (then ${e.action})`;
    case 'fleet-batch-done':
      return `${at} batch ${e.batch} finished${e.failed.length ? `; failed: ${e.failed.join(', ')}` : ''}${e.timedOut.length ? `; timed out: ${e.timedOut.join(', ')}` : ''}`;
    case 'fleet-soak':
      return `${at} soaking ${formatDuration(e.seconds)} before batch ${e.next}`;
    case 'fleet-halted':
      return `${at} fleet halted (${e.reason}): ${e.message}`;
    case 'fleet-record-warning':
      return `${at}   ${e.cluster}: warning: ${e.message}`;
    case 'fleet-done':
      return `${at} fleet done (exit ${e.exitCode})`;
  }
}

/** The summary after a run: a row per cluster, then the fleet line. */
export function renderFleetRunText(input: FleetRunResult, opts: { color?: boolean } = {}): string {
  const r = forDisplay(input);
  const c = colors(!!opts.color);
  const rows = r.clusters.map((x) => [
    `  ${x.name}${x.canary ? ' (canary)' : ''}`,
    x.batch === null ? '-' : String(x.batch),
    x.outcome,
    String(x.exitCode),
    x.startedAt === null || x.finishedAt === null ? '-' : formatDuration(x.finishedAt - x.startedAt),
    x.message ?? '',
  ]);
  const lines = [
    c.bold(`Fleet apply of fleet plan ${r.fleetPlanId} (${r.fleet}):`),
    ...padTable([['  cluster', 'batch', 'outcome', 'exit', 'took', 'message'], ...rows]).map((l) => l.trimEnd()),
    '',
  ];
  const done = r.clusters.filter((x) => ['done', 'nothing-to-do', 'already-done'].includes(x.outcome)).length;
  const rolled = r.clusters.filter((x) => x.batch !== null).length;
  const head = `${done} of ${plural(rolled, 'cluster')} in batches finished in ${formatDuration(r.durationSeconds)}`;
  lines.push(
    r.halted
      ? c.red(`${head}; halted in batch ${r.halted.batch}: ${r.halted.message}. Exit ${r.exitCode}.`)
      : r.exitCode
        ? c.yellow(`${head}. Exit ${r.exitCode} (the worst cluster's).`)
        : c.green(`${head}.`),
  );
  return lines.join('\n') + '\n';
}

/**
 * The progress of `fleet rehearse` on stderr (its report follows on stdout), from the runner's
 * events: on a terminal one live line (clusters done of those in batches, the batch running,
 * fleet time, wall clock) redrawn in place at each batch and cluster event and erased at the
 * end; else one line per batch as it ends. Pure: returns what to write.
 */
export class FleetRehearseProgress {
  private done = 0;
  private batch: { index: number; what: string } | null = null;
  private drawn = false;
  private readonly start: number;
  constructor(private readonly o: { terminal: boolean; clusters: number; batches: number; color: boolean; width: number; clock: () => number }) {
    this.start = o.clock();
  }

  update(input: FleetEvent): string {
    const e = forDisplay(input);
    if (e.type === 'fleet-batch-start')
      this.batch = { index: e.batch, what: e.kind === 'canary' ? `canary ${e.clusters.join(', ')}` : plural(e.clusters.length, 'cluster') };
    else if (e.type === 'fleet-cluster-done') this.done += ['done', 'nothing-to-do', 'already-done'].includes(e.outcome) ? 1 : 0;
    else if (e.type === 'fleet-batch-done' && !this.o.terminal && this.batch) {
      const failed = [...e.failed, ...e.timedOut.filter((x) => !e.failed.includes(x))];
      return (
        colors(this.o.color).dim(
          `fleet rehearse: batch ${this.batch.index}/${this.o.batches} (${this.batch.what}) ended${failed.length ? `, failed: ${failed.join(', ')}` : ''}; ${this.counts(e.t)}`,
        ) + '\n'
      );
    }
    if (!this.o.terminal || !this.batch || !['fleet-batch-start', 'fleet-cluster-done'].includes(e.type)) return '';
    this.drawn = true;
    const line = `rehearsing fleet: ${this.done}/${this.o.clusters} clusters done; batch ${this.batch.index}/${this.o.batches} (${this.batch.what}); ${this.counts(e.t).replace(/^\d+\/\d+ clusters done; /, '')}`;
    return '\r\x1b[K' + colors(this.o.color).dim(clipVisible(line, this.o.width));
  }

  /** Erases the live line. */
  finish(): string {
    if (!this.drawn) return '';
    this.drawn = false;
    return '\r\x1b[K';
  }

  private counts(t: number): string {
    return `${this.done}/${this.o.clusters} clusters done; fleet time ${formatDuration(t)}; ${formatDuration((this.o.clock() - this.start) / 1000)} wall clock`;
  }
}
