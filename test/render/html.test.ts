import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderHtml } from '../../src/render/html/report.ts';
import { buildTimeline } from '../../src/render/timeline.ts';
import { nodeWindowSeconds } from '../../src/domain/timing.ts';
import type { Plan } from '../../src/plan/types.ts';
import { demoPlan, bigPlan } from '../support/render.ts';

const s = suite('render-html');

function selfContained(html: string) {
  assert.ok(html.startsWith('<!doctype html>'));
  assert.match(
    html,
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">/,
  );
  assert.not.match(html, /<script|<link|<iframe|<img|@import|url\(|@font-face/i);
  // The only URL is the SVG namespace (an identifier, never fetched).
  const urls = (html.match(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"'<)]*/gi) ?? []).filter((u) => u !== 'http://www.w3.org/2000/svg');
  assert.equal(urls, []);
}

/** A bootc-operator whose daemon performs soft reboots (the installed one does not). */
const SOFT_OPERATOR = { softReboot: true };

s('the demo report is one self-contained file with summary, risks, diffs and the chart', () => {
  const html = renderHtml(demoPlan());
  selfContained(html);
  for (const id of ['summary', 'risks', 'timeline', 'changes', 'pools', 'timeline-chart', 'planline']) assert.match(html, new RegExp(`id="${id}"`));
  assert.match(html, /Plan: \d+ to create, \d+ to change, \d+ to delete; 11 nodes in 7 waves/);
  assert.match(html, /<span class="del">-\s+maxUnavailable: 1<\/span>/);
  // One row per node, with its phases.
  assert.is((html.match(/<g class="row node"/g) ?? []).length, 11);
  assert.is((html.match(/<g class="row staging"/g) ?? []).length, 1);
  // The installed bootc-operator performs no soft reboots (src/domain/bootc-daemon.ts): no soft bar;
  // with an operator that does, the staged soft-capable nodes get one.
  assert.not.match(html, /class="bar soft-reboot"/);
  assert.match(renderHtml(demoPlan(undefined, SOFT_OPERATOR)), /class="bar soft-reboot"/);
});

s('timeline: same arithmetic as the planner, one row per node when small', () => {
  const plan = demoPlan(undefined, SOFT_OPERATOR);
  const tl = buildTimeline(plan);
  assert.is(tl.granularity, 'node');
  assert.is(tl.totalSeconds, plan.summary.estimatedSeconds);
  assert.is(tl.nodes, plan.summary.nodes);
  for (const lane of tl.pools) {
    const pool = plan.pools.find((p) => p.name === lane.name)!;
    assert.is(lane.end - lane.start, pool.estimatedSeconds, `pool ${lane.name}`);
  }
  // A node's bar runs from the start of its drain until it is back in service.
  const row = tl.rows.find((r) => r.kind === 'node' && r.label === 'worker-a-2')!;
  const sp = row.spans[0];
  assert.is(sp.end - sp.start, nodeWindowSeconds(plan.durations, 'bootc', 'soft'));
  assert.equal(
    sp.phases!.map((p) => p.kind),
    ['drain', 'soft-reboot', 'ready'],
  );
});

s('timeline at 10,000 nodes aggregates rows: per wave, then per run of waves', () => {
  const plan = bigPlan();
  const tl = buildTimeline(plan);
  assert.is(tl.granularity, 'wave');
  assert.is(tl.totalSeconds, plan.summary.estimatedSeconds);
  assert.is(tl.rows.filter((r) => r.kind === 'waves').length, 11);
  assert.is(
    tl.rows.reduce((n, r) => n + (r.kind === 'waves' ? r.nodes : 0), 0),
    9995,
  );
  const many = buildTimeline(plan, { maxRows: 4 });
  assert.is(many.granularity, 'waves');
  assert.ok(many.rows.filter((r) => r.kind === 'waves').length <= 4);
  assert.is(many.totalSeconds, plan.summary.estimatedSeconds);
});

s('the 10,000-node report stays small and fast, and the chart stays a few hundred shapes', () => {
  const plan = bigPlan(10_000, 10);
  const html = renderHtml(plan);
  selfContained(html);
  assert.ok(html.length < 1_500_000, `${html.length} bytes`);
  const chart = html.slice(html.indexOf('<svg id="timeline-chart"'), html.indexOf('</svg>'));
  assert.ok((chart.match(/<rect/g) ?? []).length < 1500, `${(chart.match(/<rect/g) ?? []).length} rects`);
  assert.ok((chart.match(/<g class="row waves"/g) ?? []).length <= 60);
  assert.match(html, /All 9,995 nodes by wave/);
});

s('everything from the cluster is escaped', () => {
  const plan = structuredClone(demoPlan()) as Plan;
  plan.pools[0].nodes[0].name = '<img src=x onerror=alert(1)>';
  plan.pools[0].waves[0][0] = '<img src=x onerror=alert(1)>';
  plan.diagnostics.push({ severity: 'error', code: 'x', message: '<script>alert(1)</script>', path: null, file: null, line: null, column: null });
  const html = renderHtml(plan);
  assert.not.match(html, /<img|<script/);
  assert.match(html, /&lt;script&gt;/);
});

s.run();
