/**
 * `rehearse -o markdown`: the rehearsal for a pull-request comment or a change review, beside
 * the plan's comment (docs/apply.md "Rehearsal and maintenance windows"). Pure: reads only the
 * plan and the rehearsal. The same figures as the text (src/render/rehearsal.ts) in tables:
 * the windows rule and each wait for a window as a row of the timeline, counted in the
 * makespan; the waves per pool; the gates, silences, rollback and the result.
 *
 * - The first line is a hidden marker (`<!-- bootcplan:rehearsal spec=PATH -->`, the plan
 *   comment's key with its own kind), so a bot keeps one sticky rehearsal comment per spec.
 * - Data is text (docs/safety.md "What is masked in outputs"): read through `forDisplay`, every
 *   cell written with `inlineHtml` (a `|` or a backtick in a name cannot break the table).
 * - Never over `MARKDOWN_LIMIT`: waves fold past 12 per pool and names past 6 per wave as the
 *   text folds them; whole pools are left out from the end, with a note, if it still does not fit.
 */
import type { Plan } from '../plan/types.ts';
import { forDisplay } from './secrets.ts';
import { colors, formatDuration, plural } from './format.ts';
import { inlineHtml, markerKey, MARKDOWN_LIMIT, tableHead, tableRow } from './markdown.ts';
import { waitText, windowsSummary } from './rehearsal-windows.ts';
import { gatesLine, poolWaveRows, rehearsalOutcome, rollbackLine, silencesLine, slotsLine, type RehearsalReport } from './rehearsal.ts';

const plain = colors(false);

/** One pool's waves as a table, its waits for windows and its gates as rows of their own. */
function poolSection(r: RehearsalReport, p: RehearsalReport['pools'][number]): string {
  const peak = p.peakUnavailable > p.maxUnavailable ? `**${p.peakUnavailable}** (over the budget)` : String(p.peakUnavailable);
  const head = `#### ${inlineHtml(p.name)}${p.rollback ? ' (rollback)' : ''}\n\n${inlineHtml(p.backend)}: maxUnavailable ${p.maxUnavailable}, peak out of service ${peak}${
    p.failedNodes.length ? `, failed: ${inlineHtml(p.failedNodes.join(', '))}` : ''
  }`;
  if (!p.waves.length) return `${head}\n\nnot started`;
  const { rows, fold } = poolWaveRows(r, p, plain);
  const lines = rows.map(tableRow);
  if (fold.hidden) lines.splice(fold.at, 0, `| … | | | | ${plural(fold.hidden, 'more wave')} |`);
  return [head, '', ...tableHead(['wave', 'start', 'end', 'took', 'nodes']), ...lines].join('\n');
}

export function renderRehearsalMarkdown(input: Plan, report: RehearsalReport, opts: { limit?: number } = {}): string {
  const r = forDisplay(report);
  const limit = opts.limit ?? MARKDOWN_LIMIT;
  const d = r.durations;
  const head = [
    `<!-- bootcplan:rehearsal spec=${markerKey(input.spec.path)} -->`,
    `### Rehearsal of plan \`${inlineHtml(r.planId)}\``,
    '',
    `On a simulated cluster: stage ${d.stage}s, drain ${d.drain}s, reboot ${d.reboot}s, soft-reboot ${d.softReboot}s, ready ${d.ready}s${
      r.jitter ? `; jitter ±${Math.round(r.jitter.fraction * 100)}% per node, seed ${r.jitter.seed}` : ''
    }${r.faults ? `; reboot fail rate ${r.faults.rebootFailRate ?? 0}, seed ${r.faults.seed ?? 1}` : ''}.`,
    '',
    `**${inlineHtml(rehearsalOutcome(r, plain))}**`,
  ];
  if (r.windows) {
    head.push('', inlineHtml(windowsSummary(r.windows)), '');
    for (const w of r.windows.waits.filter((x) => x.pool === null)) head.push(`- ${formatDuration(w.start)}: ${inlineHtml(waitText(w))}`);
  }
  const tail = [gatesLine(r), silencesLine(r), r.rollback ? rollbackLine(r, r.rollback, plain) : null, slotsLine(r)]
    .filter((x): x is string => x !== null)
    .map((x) => inlineHtml(x));
  const pools = r.pools.map((p) => poolSection(r, p));
  const size = (n: number) => [...head, ...pools.slice(0, n), ...tail].join('\n\n').length + 80;
  let shown = pools.length;
  while (shown > 0 && size(shown) > limit) shown--;
  const cut =
    pools.length - shown ? [`_${plural(pools.length - shown, 'more pool')} left out to fit the comment: see \`rehearse -o html\` or \`-o json\`._`] : [];
  return [head.join('\n'), ...pools.slice(0, shown), ...cut, ...tail].join('\n\n') + '\n';
}
