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
import { renderStatus } from '../../src/render/status.ts';
import type { NodeProgress } from '../../src/cluster/progress.ts';

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

s('status: the nodes of the run out of service now, per pool, a node an administrator had cordoned included', () => {
  const node = (pool: string, step: NodeProgress['step'], wasCordoned = false): NodeProgress => ({ planId: 'p', pool, wave: 1, step, wasCordoned });
  const nodes = { 'w-1': node('worker', 'reboot'), 'w-2': node('worker', 'drain', true), 'w-3': node('worker', 'done'), 'i-1': node('infra', 'cordon') };
  const pools = {
    worker: { wavesDone: 0, done: false, halted: null, lastWaveEnd: null },
    infra: { wavesDone: 0, done: false, halted: null, lastWaveEnd: null },
  };
  const out = renderStatus(null, false, {
    run: { planId: 'p', startedAt: 'a', updatedAt: 'b', done: false, changesApplied: true, pools },
    version: '1',
    nodes,
  });
  // The same function as the plan's figure: bootcplan's nodes in flight as the wave, the administrator's cordon as already out.
  const worker = outOfServiceFigure([{ waves: [['w-1']], unavailableNow: ['w-2'] }]);
  assert.equal(worker, { atOnce: 2, already: 1 });
  assert.match(out, /\n {2}out of service now: 2 nodes of pool worker \(1 already out of service included\); 1 node of pool infra\n/);
  // Only a node an administrator had cordoned: still out of service, counted.
  const only = renderStatus(null, false, {
    run: { planId: 'p', startedAt: 'a', updatedAt: 'b', done: false, changesApplied: true, pools },
    version: '1',
    nodes: { 'w-2': node('worker', 'drain', true) },
  });
  assert.match(only, /\n {2}out of service now: 1 node of pool worker \(1 already out of service included\)\n/);
  const none = renderStatus(null, false, {
    run: { planId: 'p', startedAt: 'a', updatedAt: 'b', done: false, changesApplied: true, pools },
    version: '1',
    nodes: {},
  });
  assert.not.match(none, /out of service now/);
});

s.run();
