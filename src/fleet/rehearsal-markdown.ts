/**
 * `fleet rehearse -o markdown`: the fleet rehearsal for a pull-request comment or a change
 * review (docs/apply.md "Rehearsal and maintenance windows"). Pure. The same figures as the
 * text (./rehearsal-text.ts): the batches with their soaks, every cluster on the fleet's axis,
 * and each cluster's maintenance windows in its own time zone with each wait for a window
 * (counted in the makespan), then the outcome.
 *
 * - The first line is a hidden marker (`<!-- bootcplan:fleet-rehearsal fleet=NAME -->`), so a
 *   bot keeps one sticky comment per Fleet.
 * - Data is text: read through `forDisplay`, every cell and line written with `inlineHtml`.
 * - Never over `MARKDOWN_LIMIT`: cluster rows past what fits are left out with a note (the
 *   head, the batches, the windows and the outcome are never cut).
 */
import type { FleetRehearsal } from './rehearsal-sim.ts';
import { forDisplay } from '../render/secrets.ts';
import { colors, plural } from '../render/format.ts';
import { inlineHtml, MARKDOWN_LIMIT } from '../render/markdown.ts';
import {
  BATCH_HEAD,
  CLUSTER_HEAD,
  batchRows,
  clusterRows,
  fleetOutcomeLine,
  fleetSimulationLine,
  fleetStrategyLine,
  fleetWindowsLines,
} from './rehearsal-text.ts';

const plain = colors(false);

const row = (cells: readonly string[]) => `| ${cells.map((x) => inlineHtml(x.trim())).join(' | ')} |`;
const table = (head: readonly string[], rows: readonly string[][]) => [row(head), `|${head.map(() => ' --- |').join('')}`, ...rows.map(row)];

export function renderFleetRehearsalMarkdown(input: FleetRehearsal, opts: { limit?: number } = {}): string {
  const r = forDisplay(input);
  const limit = opts.limit ?? MARKDOWN_LIMIT;
  const marker = `<!-- bootcplan:fleet-rehearsal fleet=${String(r.fleetName)
    .replace(/[^A-Za-z0-9._/-]/g, '_')
    .replace(/-{2,}/g, '-')} -->`;
  const head = [
    marker,
    `### Rehearsal of fleet \`${inlineHtml(r.fleetName)}\` (fleet plan \`${inlineHtml(r.fleetPlanId)}\`)`,
    '',
    inlineHtml(`${fleetSimulationLine(r).replace(/^on/, 'On')}.`),
    '',
    inlineHtml(fleetStrategyLine(r)),
    '',
    `**${inlineHtml(fleetOutcomeLine(r))}**`,
    '',
    ...table(BATCH_HEAD, batchRows(r, plain)),
  ].join('\n');
  const [rule, ...clusters] = fleetWindowsLines(r);
  const windows = rule ? [inlineHtml(rule), '', ...clusters.map((l) => `- ${inlineHtml(l)}`)].join('\n') : '';
  const rows = clusterRows(r, plain);
  const fixed = head.length + windows.length + 200;
  let shown = rows.length;
  const size = (n: number) => table(CLUSTER_HEAD, rows.slice(0, n)).join('\n').length;
  while (shown > 0 && fixed + size(shown) > limit) shown--;
  const cut =
    rows.length - shown ? `_${plural(rows.length - shown, 'more cluster')} left out to fit the comment: see \`fleet rehearse -o html\` or \`-o json\`._` : '';
  return [head, table(CLUSTER_HEAD, rows.slice(0, shown)).join('\n'), cut, windows].filter(Boolean).join('\n\n') + '\n';
}
