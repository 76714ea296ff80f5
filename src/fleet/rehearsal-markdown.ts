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
import { inlineHtml, markerKey, MARKDOWN_LIMIT, tableHead, tableRow } from '../render/markdown.ts';
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

export function renderFleetRehearsalMarkdown(input: FleetRehearsal, opts: { limit?: number } = {}): string {
  const r = forDisplay(input);
  const limit = opts.limit ?? MARKDOWN_LIMIT;
  const head = [
    `<!-- bootcplan:fleet-rehearsal fleet=${markerKey(r.fleetName)} -->`,
    `### Rehearsal of fleet \`${inlineHtml(r.fleetName)}\` (fleet plan \`${inlineHtml(r.fleetPlanId)}\`)`,
    '',
    inlineHtml(`${fleetSimulationLine(r).replace(/^on/, 'On')}.`),
    '',
    inlineHtml(fleetStrategyLine(r)),
    '',
    `**${inlineHtml(fleetOutcomeLine(r))}**`,
    '',
    ...tableHead(BATCH_HEAD),
    ...batchRows(r, plain).map(tableRow),
  ].join('\n');
  const [rule, ...clusters] = fleetWindowsLines(r);
  const windows = rule ? [inlineHtml(rule), '', ...clusters.map((l) => `- ${inlineHtml(l)}`)].join('\n') : '';
  // The cluster rows while they fit, each counted once (with its newline) against what is left.
  const rows = clusterRows(r, plain).map(tableRow);
  const clusterHead = tableHead(CLUSTER_HEAD).join('\n');
  let left = limit - (head.length + windows.length + 200) - clusterHead.length;
  let shown = 0;
  while (shown < rows.length && left >= rows[shown].length + 1) left -= rows[shown++].length + 1;
  const cut =
    rows.length - shown ? `_${plural(rows.length - shown, 'more cluster')} left out to fit the comment: see \`fleet rehearse -o html\` or \`-o json\`._` : '';
  return [head, [clusterHead, ...rows.slice(0, shown)].join('\n'), cut, windows].filter(Boolean).join('\n\n') + '\n';
}
