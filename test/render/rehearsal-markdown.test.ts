/**
 * `rehearse -o markdown` (src/render/rehearsal-markdown.ts; docs/apply.md "Rehearsal and
 * maintenance windows"): the rehearsal for a pull-request comment, each wait for a window a
 * row of its pool's timeline and counted in "done in", data escaped, within the comment limit.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { golden } from '../support/render.ts';
import { MONDAY, sundayRehearsal } from '../support/sunday.ts';
import { renderRehearsalMarkdown } from '../../src/render/rehearsal-markdown.ts';
import { renderRehearsalText } from '../../src/render/rehearsal.ts';

const s = suite('rehearsal Markdown (render/rehearsal-markdown.ts)');

/** The cells of the table rows of a Markdown text whose first cell is `first`. */
const rowsStarting = (md: string, first: string) =>
  md
    .split('\n')
    .filter((l) => l.startsWith(`| ${first} |`))
    .map((l) => l.slice(2, -2).split(' | '));

s('from a Monday: the wait before the first write listed, counted in "done in", the marker first', async () => {
  const { plan, report } = await sundayRehearsal();
  const md = renderRehearsalMarkdown(plan, report);
  golden('sunday-rehearsal.md', md);
  assert.is(md.split('\n')[0], '<!-- bootcplan:rehearsal spec=examples/sunday.yaml -->');
  assert.match(md, /^- 0s: waited 5d7h before the first write \(outside the windows\) until Sun 2026-12-13 01:00 Asia\/Singapore$/m);
  assert.match(md, /\*\*Rehearsal: done in 5d8h\d*m? \(\d+s, of which 5d7h waiting for windows; plan estimate 1h11m\)/);
  assert.match(md, /Windows: started Mon 2026-12-07 18:00 Asia\/Singapore/);
});

s('a wave that would overrun the window: a window row in its pool, between the waves, with its length', async () => {
  // 20 minutes before the window ends: infra's waves fit, worker's first would overrun.
  const { plan, report } = await sundayRehearsal(Date.parse('2026-12-13T08:20:00+08:00'));
  const md = renderRehearsalMarkdown(plan, report);
  const wait = report.windows!.waits.find((w) => w.pool === 'worker')!;
  assert.ok(wait, 'the rehearsal waited before a wave of worker');
  const [row] = rowsStarting(md, 'window');
  assert.equal(row.slice(0, 4), ['window', '39m30s', '6d16h40m', '6d16h']);
  assert.match(row[4], /^waited 6d16h before wave 1 of worker \(the wave would overrun the open window\) until Sun 2026-12-20 01:00/);
  // The row sits in worker's table, before its wave 1; the text has the same row.
  const worker = md.slice(md.indexOf('#### worker'));
  assert.ok(worker.indexOf('| window |') < worker.indexOf('| 1 |'));
  assert.match(renderRehearsalText(report, { color: false }), /window\s+39m30s\s+6d16h40m\s+6d16h\s+waited 6d16h before wave 1 of worker/);
});

s('names with a pipe, backticks and HTML cannot break the table or the comment', async () => {
  const { plan, report } = await sundayRehearsal();
  const evil = 'w|1`x`<script>alert(1)</script>@team';
  const hostile = { ...report, pools: report.pools.map((p) => ({ ...p, waves: p.waves.map((w) => ({ ...w, nodes: [evil, ...w.nodes.slice(1)] })) })) };
  const md = renderRehearsalMarkdown(plan, hostile);
  assert.not.match(md, /<script>|@team/);
  for (const row of md.split('\n').filter((l) => /^\| \d+ \|/.test(l))) assert.is(row.split('|').length, 7, row);
});

s('over the limit: whole pools left out from the end with a note, never over', async () => {
  const { plan, report } = await sundayRehearsal(MONDAY);
  const full = renderRehearsalMarkdown(plan, report);
  const limit = full.indexOf('#### worker') + 100;
  const cut = renderRehearsalMarkdown(plan, report, { limit });
  assert.ok(cut.length <= limit, `${cut.length} <= ${limit}`);
  assert.match(cut, /#### infra/);
  assert.not.match(cut, /#### worker/);
  assert.match(cut, /_1 more pool left out to fit the comment: see `rehearse -o html` or `-o json`._/);
});

s.run();
