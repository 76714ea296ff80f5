/**
 * One figure of nodes out of service (src/domain/budget.ts outOfServiceFigure): the plan text,
 * the Markdown summary and the HTML report's Waves card count the same nodes, those already
 * cordoned included. The example cluster's worker-b-1 is cordoned by an administrator.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { demoPlan } from '../support/render.ts';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { outOfServiceFigure, outOfServiceAtOnce } from '../../src/domain/budget.ts';

const s = suite('nodes out of service: one figure in every format');

s('the demo plan with a node already cordoned: text, Markdown and HTML give the same figure', () => {
  const plan = demoPlan();
  const worker = plan.pools.find((p) => p.unavailableNow.length)!;
  assert.ok(worker, 'the demo has a pool with a node already out of service');
  const fig = outOfServiceFigure(plan.pools);
  assert.ok(fig.already >= 1);
  assert.is(fig.atOnce, Math.max(...plan.pools.map(outOfServiceAtOnce)));
  const words = `at most ${fig.atOnce} nodes out of service at once (${fig.already} already out of service included)`;
  const md = renderMarkdown(plan);
  assert.ok(md.includes(words), `Markdown summary lacks "${words}"`);
  const html = renderHtml(plan).replace(/<[^>]+>/g, '');
  assert.ok(html.includes(words), `HTML Waves card lacks "${words}"`);
  // The text says it per pool: the pool's own figure, its cordoned node included.
  const text = renderText(plan, { color: false });
  const own = outOfServiceAtOnce(worker);
  assert.ok(own > Math.max(...worker.waves.map((w) => w.length)), 'the cordoned node is counted');
  assert.ok(
    text.includes(`at most ${own} nodes out of service at once (${worker.unavailableNow.length} already out of service included)`),
    `text lacks pool ${worker.name}'s figure ${own}`,
  );
});

s.run();
