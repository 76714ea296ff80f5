/**
 * The demo report in headless Chromium (test/support/browser.ts): what a reviewer sees, the
 * summary and the wave timeline chart laid out, nothing overflowing, nothing fetched, at a wide
 * window and at a narrow one. A screenshot is taken as well.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { renderHtml } from '../../src/render/html/report.ts';
import { demoPlan } from '../support/render.ts';
import { checkLayout, cleanUp, haveChromium, pngSize, probe } from '../support/browser.ts';

const s = suite('browser: the demo report');

s('the demo report renders in headless Chromium: summary and chart laid out', async () => {
  if (!haveChromium()) return;
  const plan = demoPlan();
  const { probe: p, png, dir } = await probe(renderHtml(plan), 'demo');
  try {
    checkLayout(p, plan.summary.nodes + 1 /* the staging row */);
    assert.ok(
      p.cards.some((c) => /^Nodes 11\b/i.test(c.text)),
      JSON.stringify(p.cards.map((c) => c.text)),
    );
    const size = pngSize(png);
    assert.is(size.width, 1280);
    assert.ok(statSync(png).size > 20_000, 'the screenshot is not blank');
  } finally {
    cleanUp(dir, true);
  }
});

s('a narrow window: the chart scrolls inside its box, the page does not', async () => {
  if (!haveChromium()) return;
  const { probe: p, dir } = await probe(renderHtml(demoPlan()), 'narrow', 700, false);
  try {
    assert.ok(p.pageScrollWidth <= p.viewportWidth, `page scrolls sideways: ${p.pageScrollWidth} > ${p.viewportWidth}`);
    assert.ok(p.chart && p.chart.w >= 700, 'the chart keeps a legible width');
  } finally {
    cleanUp(dir);
  }
});

s.run();
