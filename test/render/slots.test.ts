import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { demoPlan, golden } from '../support/render.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { generateCluster } from '../../src/sim/generate.ts';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { planFor } from '../support/cluster.ts';
import { renderPlan } from '../../src/render/formats.ts';

const s = suite('render: slots pools');
/** The demo with its worker pool in slots (soakSeconds would be an error there). */
const slotsDemo = () => demoPlan((t) => t.replace('      soakSeconds: 120\n', '      rollout: slots\n'));

s('golden: text and markdown of the demo with the worker pool in slots (new goldens)', async () => {
  const plan = slotsDemo();
  assert.is(plan.pools.find((p) => p.name === 'worker')!.rollout, 'slots');
  golden('slots-demo.txt', await renderPlan(plan, 'text', { color: false }));
  golden('slots-demo.md', renderMarkdown(plan));
});

s('text: the admission order numbered, the estimate beside the waves one, the plan line counts nodes in slots', async () => {
  const out = await renderPlan(slotsDemo(), 'text', { color: false });
  assert.match(out, /in slots: at most 2 nodes out at once, the next admitted as one is back/);
  assert.match(out, /\n {2}# {2}node {8}zone/);
  assert.match(out, /\n {2}1 {2}worker-a-2 /);
  assert.match(out, /in slots, in this order \(re-planned every 2 admissions: 4 batches\), est\. \S+ \(in waves: \S+\)/);
  assert.match(out, /Plan: .*; 11 nodes: 3 in 3 waves, 8 in slots \(est\. /);
  // The installed bootc-operator performs no soft reboots: the staged nodes share the hard group.
  assert.match(out, /hard reboot, 3 staged, batches 1-4: /);
});

s('markdown and HTML: slots instead of a wave count, the order numbered, both estimates', async () => {
  const plan = slotsDemo();
  const md = renderMarkdown(plan);
  assert.match(md, /\| `worker` \| BootcNodePool \| 8 of 9 \| slots \| 2 \|/);
  assert.match(md, /8 nodes in slots, at most 2 out at once, est\. \S+ \(in waves: \S+\)<\/summary>/);
  assert.match(md, /\| # \| Node \| Zone \| Reboot \| Staged \|\n\|--:\|---\|---\|---\|---\|\n\| 1 \| `worker-a-2` \|/);
  const html = renderHtml(plan);
  assert.match(html, /in slots: at most 2 nodes out at once, each admitted in the order below as soon as one is back/);
  assert.match(html, /<th class="n">#<\/th><th>Node<\/th>/);
  assert.match(html, /<td class="n">slots<\/td>/);
});

s('text of a 3,000-node slots pool stays short: batches folded, the order named once', async () => {
  const objs = generateCluster({ workers: 3000, stagedFraction: 0.3, softRebootCapableFraction: 0.5, cordoned: 5, bootc: true });
  const spec = `apiVersion: bootcplan.dev/v1alpha1\nkind: Rollout\nmetadata:\n  name: big\nspec:\n  pools:\n    - name: worker\n      image: ${imageRef('os-43.20261115.0')}\n      maxUnavailable: "10%"\n      rollout: slots\n`;
  const plan = planFor(spec, snapshotFromObjects(objs, 'gen'));
  const out = await renderPlan(plan, 'text', { color: false });
  assert.ok(out.split('\n').length < 80, `${out.split('\n').length} lines`);
  assert.match(out, / {2}batches 1-\d+ +\d+ nodes each/);
  const md = renderMarkdown(plan);
  assert.match(md, /\| Batches \| Nodes \|/);
  const html = renderHtml(plan);
  assert.match(html, /All 2,?995 nodes in admission order/);
});

s.run();
