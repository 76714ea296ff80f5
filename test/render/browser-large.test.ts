/**
 * The 10,000-node report in headless Chromium (test/support/browser.ts): the timeline's rows
 * aggregated per wave, the summary legible, a screenshot that is not blank.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { renderHtml } from '../../src/render/html/report.ts';
import { bigPlan } from '../support/render.ts';
import { checkLayout, cleanUp, haveChromium, probe } from '../support/browser.ts';

const s = suite('browser: the 10,000-node report');

s('the 10,000-node report renders in headless Chromium: rows aggregated, legible', async () => {
  if (!haveChromium()) return;
  const plan = bigPlan();
  const { probe: p, png, dir } = await probe(renderHtml(plan), 'big');
  try {
    checkLayout(p, plan.summary.waves + 1);
    assert.ok(
      p.cards.some((c) => /^Nodes 9,995\b/i.test(c.text)),
      JSON.stringify(p.cards.map((c) => c.text)),
    );
    assert.ok(statSync(png).size > 20_000, 'the screenshot is not blank');
  } finally {
    cleanUp(dir, true);
  }
});

s.run();
