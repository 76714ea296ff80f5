/**
 * A rollback plan as the reviewers see it (docs/apply.md "Rollback"): text, the pull-request
 * comment and the HTML report say what it reverses, why, and each pool's way back (goldens);
 * a rehearsal of it draws the rollback apart (its own lanes, a rule where it starts) and says
 * how many nodes went back, in how many waves, the most out of service, the most reboots.
 * Update the goldens with: UPDATE_GOLDEN=1 npx tsx test/run.ts test/render/rollback.test.ts
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../support/cluster.ts';
import { planWith, newSim } from '../support/apply.ts';
import { stepOnce, rollbackOf } from '../support/rollback.ts';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { rehearse } from '../../src/sim/rehearse.ts';
import { rehearsalReport, renderRehearsalText, rehearsalJson } from '../../src/render/rehearsal.ts';
import { golden } from '../support/render.ts';

const t = suite('render: rollback plans and their rehearsal');

/** An MCO pool of 2 (1 per wave, first by priority) and a bootc pool of 6 (2 per wave): the run stopped after infra's two waves and worker's first. */
async function scenario() {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 6)).mcoPool('infra', nodes('i', 2)).snapshot();
  const fwd = planWith(
    specYaml([
      { name: 'worker', image: NEW, maxUnavailable: 2 },
      { name: 'infra', image: NEW, maxUnavailable: 1 },
    ]),
    snap,
  );
  const sim = newSim(snap);
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  assert.is(await stepOnce(sim, fwd.plan, fwd.replan), 'stepped');
  return { sim, ...(await rollbackOf(sim)) };
}

t("text, Markdown and HTML of a rollback plan (goldens): what it reverses, why, each pool's way back", async () => {
  const { plan } = await scenario();
  assert.equal(
    plan.pools.map((p) => [p.name, p.nodes.length, p.rollback?.download]),
    [
      ['worker', 2, false],
      ['infra', 2, true],
    ],
  );
  const text = renderText(plan, {});
  assert.match(text, /^Rollback of plan [0-9a-f]{16} \(scope run\): 4 nodes back to .* in 3 waves/m);
  assert.match(text, /pool infra: back to .* via MachineConfig\/99-infra-zz-bootcplan-os-image deleted \(rendered-infra-0001 again\) \(downloaded again/);
  golden('rollback-demo.txt', text);
  const md = renderMarkdown(plan);
  assert.match(md, /#### ⏪ Rollback of plan `[0-9a-f]{16}`/);
  golden('rollback-demo.md', md);
  const html = renderHtml(plan);
  assert.match(html, /<section id="rollback">/);
  golden('rollback-demo.html', html);
});

t('a rehearsal of it: the rollback lanes, the rule where it starts, its figures', async () => {
  const { sim, plan, replan } = await scenario();
  const { rehearsal, error } = await rehearse({ plan, replan, snapshot: sim.snapshotCopy() });
  assert.is(error, null, String(error));
  const rb = rehearsal.rollback!;
  assert.equal([rb.nodes, rb.waves, rb.end !== null], [4, 3, true]);
  assert.ok(rb.peakUnavailable >= 1 && rb.peakUnavailable <= 2, `peak ${rb.peakUnavailable}`);
  assert.is(rehearsal.maxRebootsPerNode, 1, 'the rehearsal starts after the run: one reboot each, back');
  assert.ok(rehearsal.pools.every((p) => p.rollback === true));
  const report = rehearsalReport(rehearsal, error);
  const text = renderRehearsalText(report, { color: false });
  assert.match(text, /^worker rollback \(bootc\)/m);
  assert.match(
    text,
    /Rollback at 0s \(planned with plan --rollback[^)]*\): 4 nodes in 3 waves \(\d+m\d*s?\), peak \d out of service; at most 1 reboots per node\./,
  );
  assert.equal(JSON.parse(rehearsalJson(report)).rollback, rb);
  const html = renderHtml(plan, { rehearsal: report });
  assert.match(html, /pool worker \(rollback\)/);
  assert.match(html, /<line class="rollback-rule"/);
  assert.match(html, /svg \.lane\.rollback\{/);
  assert.not.match(renderHtml(plan), /svg \.lane\.rollback\{/, 'the rollback styles only where a rollback is drawn');
});

t.run();
