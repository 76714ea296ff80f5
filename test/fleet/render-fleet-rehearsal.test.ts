/**
 * The fleet rehearsal's outputs (docs/fleets.md "Rehearsing a fleet"): text, JSON, and the HTML report with its chart of
 * batches over time, drawn from a fleet timeline built by hand. Cluster names come from the
 * Fleet file (anyone who can open a pull request writes them): every one is escaped.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderFleetRehearsalHtml } from '../../src/fleet/rehearsal-html.ts';
import { renderFleetRehearsalText, fleetRehearsalJson } from '../../src/fleet/rehearsal-text.ts';
import { renderFleetRehearsalMarkdown } from '../../src/fleet/rehearsal-markdown.ts';
import type { FleetRehearsal } from '../../src/fleet/rehearsal-sim.ts';
import { golden } from '../support/render.ts';
import { PAYLOAD, CREDENTIALS, hostile, firstUnsafe, markupProblems } from '../support/hostile.ts';
import { fleetTimelineFixture } from '../support/fleet-rehearsal.ts';

const s = suite('render-fleet-rehearsal');

function assertClean(html: string, what: string) {
  const problems = markupProblems(html);
  assert.equal(problems.slice(0, 5), [], `${what}: ${problems.length} problems`);
  assert.not.match(html, /<base|<form|<meta http-equiv="refresh"|<img|<script/i);
  assert.is((html.match(/<meta /g) ?? []).length, 4, `${what}: the report's own four meta elements`);
  assert.is(firstUnsafe(html), null, `${what}: a control or bidi character reached the report`);
  assert.not.ok(html.includes(CREDENTIALS), `${what}: credentials are masked`);
}

/** The fixture with every cluster named PAYLOAD + a suffix (names stay distinct), batches naming them. */
function hostileNames(): FleetRehearsal {
  const r = structuredClone(fleetTimelineFixture());
  const rename = new Map(r.clusters.map((c, i) => [c.name, `${PAYLOAD}-${i}`]));
  for (const c of r.clusters) {
    c.name = rename.get(c.name)!;
    c.message = PAYLOAD;
  }
  for (const b of r.batches) b.clusters = b.clusters.map((n) => rename.get(n)!);
  r.fleetName = PAYLOAD;
  r.fleetPlanId = PAYLOAD;
  r.message = PAYLOAD;
  return r;
}

s('attack: cluster names (and the fleet name, plan id, messages) with markup are escaped in the HTML report', () => {
  const html = renderFleetRehearsalHtml(hostileNames());
  assertClean(html, 'hostile names');
  assert.match(html, /&lt;base href=&quot;\/\/evil\.example\/&quot;&gt;/, 'the name is shown, as text');
  assertClean(renderFleetRehearsalHtml(hostileNames(), { maxRows: 2 }), 'hostile names, rows per batch');
});

s("attack: every field hostile (outcomes, kinds and numbers too): still only the report's own markup, finite geometry", () => {
  for (const mode of ['strings', 'everything'] as const) {
    const r = hostile(fleetTimelineFixture(), mode);
    const html = renderFleetRehearsalHtml(r);
    assertClean(html, mode);
    const chart = html.slice(html.indexOf('<svg'), html.indexOf('</svg>'));
    assert.not.match(chart, /="[^"]*(NaN|Infinity)[^"]*"/, `${mode}: coordinates are finite`);
    assertClean(renderFleetRehearsalHtml(r, { maxRows: 1 }), `${mode}, rows per batch`);
  }
});

s('attack: hostile names in the text output reach the terminal as visible escapes', () => {
  const text = renderFleetRehearsalText(hostileNames(), { color: false });
  assert.is(firstUnsafe(text), null);
  assert.not.ok(text.includes(CREDENTIALS));
  assert.not.match(text, /\nFORGED/);
});

s('golden: the fleet timeline as text, JSON and HTML (chart of batches over time)', () => {
  const r = fleetTimelineFixture();
  golden('fleet-rehearsal.txt', renderFleetRehearsalText(r, { color: false }));
  golden('fleet-rehearsal.json', fleetRehearsalJson(r));
  golden('fleet-rehearsal.html', renderFleetRehearsalHtml(r));
  golden('fleet-rehearsal.md', renderFleetRehearsalMarkdown(r));
});

s('attack: hostile names in the Markdown (fleet rehearse -o markdown) stay text: no markup, no mention, no credentials, tables whole', () => {
  const md = renderFleetRehearsalMarkdown(hostileNames());
  assert.not.match(md, /<base|<form|<meta|<img|<svg|<script|<\/details>|!\[i\]/i);
  assert.not.match(md, /(^|[^&#\w])@octo-team/);
  assert.not.ok(md.includes(CREDENTIALS));
  assert.is(firstUnsafe(md), null);
  // Each table keeps its header's columns: no name's pipe starts a cell of its own.
  const tables = md
    .trimEnd()
    .split('\n\n')
    .filter((b) => b.startsWith('| '));
  assert.is(tables.length, 2);
  for (const t of tables) for (const line of t.split('\n')) assert.is(line.split('|').length, t.split('\n')[0].split('|').length, line);
  assert.is(md.split('\n')[0].startsWith('<!-- bootcplan:fleet-rehearsal fleet='), true);
  assert.not.match(md.split('\n')[0].slice(4, -3), /--|>/);
});

s('Markdown over the limit: cluster rows left out with a note, never over; the batches and outcome stay', () => {
  const r = structuredClone(fleetTimelineFixture());
  const base = r.clusters[0];
  r.clusters = Array.from({ length: 2000 }, (_, i) => ({ ...base, name: `store-${String(i).padStart(4, '0')}` }));
  const md = renderFleetRehearsalMarkdown(r, { limit: 20_000 });
  assert.ok(md.length <= 20_000, `${md.length}`);
  assert.match(md, /\| batch \| kind \|/);
  assert.match(md, /\*\*Fleet rehearsal: stopped after/);
  const shown = md.split('\n').filter((l) => l.startsWith('| store-')).length;
  assert.ok(shown > 10 && shown < 2000, `${shown} rows`);
  assert.match(md, new RegExp(`_${2000 - shown} more clusters left out to fit the comment: see \`fleet rehearse -o html\` or \`-o json\`._`));
});

s('the chart: one row per cluster grouped by batch, bars coloured by outcome, soaks, the timeout line, end and estimate', () => {
  const html = renderFleetRehearsalHtml(fleetTimelineFixture());
  const chart = html.slice(html.indexOf('<svg id="fleet-chart"'), html.indexOf('</svg>', html.indexOf('<svg id="fleet-chart"')));
  const labels = [...chart.matchAll(/class="(?:pool|row)-label"[^>]*>([^<]*)/g)].map((m) => m[1]);
  assert.equal(
    labels,
    ['batch 1 (canary)', 'canary-1', 'batch 2', 'east-1', 'west-1', 'batch 3', 'east-2', 'west-2', 'batch 4', 'west-3'],
    'batches in order, their clusters under them; the cluster in no batch is not drawn',
  );
  assert.is((chart.match(/class="bar done"/g) ?? []).length, 3);
  assert.is((chart.match(/class="bar failed"/g) ?? []).length, 1);
  assert.is((chart.match(/class="bar timed-out"/g) ?? []).length, 1);
  assert.is((chart.match(/class="overrun"/g) ?? []).length, 1, "the timed-out cluster's own rehearsal runs on, dashed");
  assert.is((chart.match(/class="soak"/g) ?? []).length, 2, 'a soak after batches 1 and 2, none after the last that ran');
  assert.is((chart.match(/class="timeout"/g) ?? []).length, 3, 'a timeout line in each batch that started');
  assert.match(chart, /class="not-started"[^>]*>not started/);
  assert.match(chart, /<line class="end"/);
  assert.match(chart, /<line class="estimate"/);
  // the bar of west-2 (batch 3: 2h to 2h30m of a 4h axis) sits where its times say
  const m = /<rect class="bar done" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"[^>]*><title>west-2/.exec(chart);
  assert.ok(m, 'west-2 has a bar');
  const x = (t: number) => 200 + (t * (1064 - 200)) / 14400;
  assert.ok(Math.abs(Number(m![1]) - x(7200)) < 0.2 && Math.abs(Number(m![2]) - (x(9000) - x(7200))) < 0.2, `${m![1]} ${m![2]}`);
});

s("large fleets: one row per batch past maxRows, the clusters' bars overlaid", () => {
  const html = renderFleetRehearsalHtml(fleetTimelineFixture(), { maxRows: 3 });
  const chart = html.slice(html.indexOf('<svg id="fleet-chart"'), html.indexOf('</svg>', html.indexOf('<svg id="fleet-chart"')));
  assert.is((chart.match(/class="row waves"/g) ?? []).length, 4);
  assert.is((chart.match(/class="bar overlaid /g) ?? []).length, 5, 'every cluster that ran has its bar');
  assert.match(html, /one row per batch/);
});

s('text: batches with their soaks, every cluster, the makespan against the estimate', () => {
  const text = renderFleetRehearsalText(fleetTimelineFixture(), { color: false });
  assert.match(text, /Fleet rehearsal: stopped after 4h \(fleet plan estimate 3h40m, \+9.1%\): batch 3 did not finish within 7200 s/);
  assert.match(text, /east-2 +3 +timed-out +2h +4h +2h \(needed 2h30m\)/);
  assert.match(text, /broken +- +unplanned/);
});

s.run();
