/**
 * The rehearsal's HTML chart draws each wait for a maintenance window as a bar of its own,
 * counted in the makespan (docs/apply.md "Rehearsal and maintenance windows"): the Sunday-only
 * example started on a Monday waits 5d7h for Sunday 01:00 in Singapore.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { golden } from '../support/render.ts';
import { MONDAY, sundayRehearsal } from '../support/sunday.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { X0, X1 } from '../../src/render/html/chart.ts';

const s = suite('window-wait bars on the rehearsal chart (render/html/chart.ts)');

// Monday 2026-12-07 10:00 UTC; the window opens on Sunday 01:00 Asia/Singapore (2026-12-12T17:00Z).
const WAIT = (Date.parse('2026-12-12T17:00:00Z') - MONDAY) / 1000;

async function sundayReport(startMs = MONDAY) {
  const { plan, report } = await sundayRehearsal(startMs);
  return { html: renderHtml(plan, { rehearsal: report }), report };
}

s('the Sunday-only example: one wait bar from 0 for 5d7h, labelled with the window, in the legend, in the makespan', async () => {
  const { html, report: json } = await sundayReport();
  golden('sunday-rehearsal.html', html);
  const bars = [...html.matchAll(/<rect class="bar window-wait" data-start="([\d.]+)" data-seconds="([\d.]+)" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)];
  assert.is(bars.length, 1, 'one bar per wait');
  const [, start, seconds, x, width] = bars[0].map(Number);
  assert.equal([start, seconds], [0, WAIT]);
  // The axis spans the makespan (the wait included): the bar's share of it is the wait's.
  const domain = Math.max(json.durationSeconds, json.estimatedSeconds);
  assert.ok(json.durationSeconds > WAIT, 'the makespan counts the wait');
  assert.ok(Math.abs(x - X0) < 0.1, `starts at the axis origin (${x})`);
  assert.ok(Math.abs(width - (WAIT / domain) * (X1 - X0)) < 0.2, `width ${width} is ${WAIT}s of ${domain}s`);
  assert.match(html, /<text class="wait-label"[^>]*>waited 5d7h for Sun 2026-12-13 01:00 Asia\/Singapore<\/text>/);
  assert.match(html, /<span class="sw window-wait"><\/span>wait for a maintenance window/);
  assert.match(html, /<title>waited 5d7h before the first write \(outside the windows\) until Sun 2026-12-13 01:00 Asia\/Singapore/);
  assert.match(html, /of which 5d7h waiting for maintenance windows/);
});

s('started inside the window: no wait, no bar, no legend key', async () => {
  const { html } = await sundayReport(Date.parse('2026-12-13T01:00:00+08:00'));
  assert.not.match(html, /class="bar window-wait"|class="sw window-wait"/);
});

s.run();
