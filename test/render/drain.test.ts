/**
 * The drain forecast in the outputs (docs/apply.md "Drain forecast"): the text plan's drain line
 * per wave and its findings with hints, the PR comment's risks (blocked drains and outages first),
 * the HTML report's findings; goldens of a plan with one of each class.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { golden } from '../support/render.ts';
import { NEW, planFor, specYaml } from '../support/cluster.ts';
import { budget, pod, snapshotWith } from '../support/drain.ts';
import { renderPlan } from '../../src/render/formats.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { drainItems, drainItemWords, hasDrainForecast } from '../../src/render/drain.ts';

const s = suite('render: drain forecast');

/** 6 workers, 3 per wave: a serialized PDB, a blocked one, a lone replica, a bare pod with emptyDir. */
function drainPlan(onBlocked: 'halt' | 'skip' = 'halt') {
  const snap = snapshotWith(
    {
      pods: [
        pod('api-1', 'w-00'),
        pod('api-2', 'w-00'),
        pod('api-3', 'w-01'),
        pod('db-0', 'w-03', { labels: { app: 'db' }, controller: { kind: 'StatefulSet', name: 'db' } }),
        pod('db-1', 'w-04', { labels: { app: 'db' }, controller: { kind: 'StatefulSet', name: 'db' } }),
        pod('cache-0', 'w-02', { labels: { app: 'cache' }, controller: { kind: 'StatefulSet', name: 'cache' } }),
        pod('debug', 'w-05', { labels: { app: 'debug' }, controller: null, emptyDir: true }),
      ],
      budgets: [
        budget('api', { minAvailable: 2 }),
        {
          ...budget('db', { maxUnavailable: 0 }, { currentHealthy: 2, desiredHealthy: 2, disruptionsAllowed: 0, expectedPods: 2 }),
          selector: { matchLabels: { app: 'db' } },
        },
      ],
    },
    6,
    3,
  );
  return planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 3, drain: { onBlocked } }]), snap);
}

s('golden: text, markdown and the drain part of the HTML of a plan with every class', async () => {
  const plan = drainPlan();
  golden('drain-forecast.txt', await renderPlan(plan, 'text', { color: false }));
  golden('drain-forecast.md', renderMarkdown(plan));
  const html = renderHtml(plan);
  golden('drain-forecast.html-section', /<section id="drain">[\s\S]*?<\/section>/.exec(html)?.[0] ?? '');
});

s('text: a drain line per wave with a finding, the findings with numbers and hints', async () => {
  const out = await renderPlan(drainPlan(), 'text', { color: false });
  assert.match(out, /drain wave 1: 1 blocked \(will halt\), 1 outage, 1 serialized by PDB payments\/api\n/);
  assert.match(out, /drain wave 2: 1 blocked \(will halt\), 1 bare pod deleted, emptyDir data of 1 pod lost\n/);
  assert.match(
    out,
    /blocked, will halt: wave 1, w-03 \(payments\/db-0\): PDB payments\/db \(maxUnavailable 0\) allows no disruption \(2 healthy, 2 desired, 0 allowed, 2 expected; 1 eviction\)/,
  );
  assert.match(out, /hint: set maxUnavailable: 1/);
  const skip = await renderPlan(drainPlan('skip'), 'text', { color: false });
  assert.match(skip, /1 blocked \(will be skipped\)/);
});

s('markdown: blocked drains and outages first among the risks', () => {
  const md = renderMarkdown(drainPlan());
  const risks = md.slice(md.indexOf('#### Risks'));
  const items = risks.split('\n').filter((l) => l.startsWith('- '));
  assert.match(items[0], /^- \*\*blocked drain, will halt\*\*: pool worker wave 1, w-03/);
  assert.match(items[1], /^- \*\*blocked drain, will halt\*\*: pool worker wave 2, w-04/);
  assert.match(items[2], /^- \*\*outage\*\*: /);
  assert.match(items[3], /^- \*\*disruptive\*\*: /);
  assert.ok(items.some((l) => l.startsWith('- **serialized**')));
});

s('findings once per wave, worst first; nothing without a forecast', () => {
  const plan = drainPlan();
  const items = drainItems(plan);
  assert.equal(
    items.map((i) => [i.finding.class, i.wave]),
    [
      ['blocked', 1],
      ['blocked', 2],
      ['outage', 1],
      ['serialized', 1],
    ],
  );
  assert.match(drainItemWords(items[0]), /^pool worker wave 1, w-03 /);
  assert.ok(hasDrainForecast(plan));
  const plain = planFor(specYaml([{ name: 'worker', image: NEW }]), snapshotWith(null));
  assert.not.ok(hasDrainForecast(plain));
  assert.equal(drainItems(plain), []);
  assert.not.match(renderHtml(plain), /id="drain"/);
});

s.run();
