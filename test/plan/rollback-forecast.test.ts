/**
 * The way back in a forward plan (docs/apply.md "Rollback", "The way back in every plan"): every
 * pool the plan updates nodes of says where a rollback of this run would take it (the image its
 * nodes boot now, by which lever, downloaded again or not), or which refusal a rollback would meet;
 * text, the PR comment and the HTML report show it; the forecast is what the rollback planner then
 * does; it is sealed with the plan and read back.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, OLD, nodes } from '../support/cluster.ts';
import { planWith, newSim } from '../support/apply.ts';
import { stepOnce, rollbackOf } from '../support/rollback.ts';
import { demoPlan } from '../support/render.ts';
import { cli } from '../support/cli.ts';
import { renderText } from '../../src/render/text.ts';
import { renderMarkdown } from '../../src/render/markdown.ts';
import { renderHtml } from '../../src/render/html/report.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import { parsePlanFile } from '../../src/plan/saved/reader.ts';
import { planFileText } from '../../src/plan/saved/writer.ts';
import { tamperedId } from '../../src/plan/saved/seal.ts';
import type { Plan } from '../../src/plan/types.ts';

const t = suite('rollback forecast: the way back in a forward plan');
const OTHER = imageRef('test-other');
const OTHER_DIGEST = OTHER.slice(OTHER.indexOf('@') + 1);
const DEMO_ORIGIN = 'quay.io/example/fedora-bootc-node@sha256:2d2adc237056fb0b22f8a3a0360fa70d8d7a68601f8dbf17afeec32f402ab22a';

/** A bootc pool of 6 whose node w-05 boots another image (mixed origins when it is scheduled). */
function mixedCluster(cordonOther = false) {
  const b = new ClusterBuilder().bootcPool(
    'worker',
    nodes('w', 6).map((n) => (cordonOther && n.name === 'w-05' ? { ...n, cordoned: true } : n)),
  );
  const bn = b.object('BootcNode', 'w-05');
  bn.status.booted = { ...bn.status.booted, image: OTHER, imageDigest: OTHER_DIGEST };
  delete bn.status.rollback;
  return b.snapshot();
}
const workerSpec = specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]);

t('the demo: each pool with nodes to update goes back to the image its nodes boot, by its BootcNodePool, without a download', async () => {
  const plan = demoPlan();
  assert.equal(
    plan.pools.map((p) => [p.name, p.rollback]),
    [
      ['infra', { available: true, to: DEMO_ORIGIN, via: 'BootcNodePool/infra spec.image.ref', download: false, why: null }],
      ['worker', { available: true, to: DEMO_ORIGIN, via: 'BootcNodePool/worker spec.image.ref', download: false, why: null }],
    ],
  );
  // What ships: the built CLI's text, on the demo files.
  const { code, out, err } = await cli(['plan', '-f', 'examples/rollout.yaml', '--cluster', 'examples/cluster.yaml']);
  assert.is(code, 0, err);
  for (const pool of ['infra', 'worker']) {
    assert.match(
      out,
      new RegExp(
        `^  rollback: back to quay\\.io/example/fedora-bootc-node@sha256:2d2adc237056\\.\\.\\. via BootcNodePool/${pool} spec\\.image\\.ref \\(the rollback deployment's image: no download\\)$`,
        'm',
      ),
    );
  }
  const md = renderMarkdown(plan);
  assert.match(md, /\*\*Way back: where a rollback of this run would take each pool/);
  assert.match(md, /^\| infra \| `quay\.io\/example\/fedora-bootc-node@sha256:2d2adc237056…` \| BootcNodePool\/infra spec\.image\.ref \| no \|$/m);
  assert.match(
    renderHtml(plan),
    /<section id="rollback">\n<h2>Way back: where a rollback of this run would take each pool[^<]*<\/h2>\n<table>.*<tr><td>worker<\/td><td><span class="mono">quay\.io\/example\/fedora-bootc-node@sha256:2d2adc237056…<\/span><\/td>/s,
  );
});

t("an MCO pool goes back to its rendered config's image by bootcplan's MachineConfig, downloaded again", () => {
  const snap = new ClusterBuilder().mcoPool('infra', nodes('i', 2)).snapshot();
  const { plan } = planWith(specYaml([{ name: 'infra', image: NEW, maxUnavailable: 1 }]), snap);
  assert.equal(plan.pools[0].rollback, {
    available: true,
    to: OLD,
    via: 'MachineConfig/99-infra-zz-bootcplan-os-image deleted (rendered-infra-0001 again)',
    download: true,
    why: null,
  });
  assert.match(
    renderText(plan),
    /^ {2}rollback: back to .* via MachineConfig\/99-infra-zz-bootcplan-os-image deleted \(rendered-infra-0001 again\) \(downloaded again: the MCO removed the rollback deployment\)$/m,
  );
});

t('a pool whose nodes boot different images: no way back, rollback-mixed-origins, in every output', () => {
  const { plan } = planWith(workerSpec, mixedCluster());
  const rb = plan.pools[0].rollback!;
  assert.equal([rb.available, rb.to, rb.refusedBy, rb.via], [false, null, 'rollback-mixed-origins', 'BootcNodePool/worker spec.image.ref']);
  assert.match(rb.why!, /its nodes boot 2 different images now \(sha256:[0-9a-f]{12}, sha256:[0-9a-f]{12}\)/);
  assert.is(plan.summary.errors, 0, 'a forecast, not an error: the forward plan still applies');
  assert.match(renderText(plan), /^ {2}rollback: none \(rollback-mixed-origins\): its nodes boot 2 different images now/m);
  assert.match(renderMarkdown(plan), /^\| worker \| ⚠️ none: rollback-mixed-origins: its nodes boot 2 different images now/m);
  assert.match(renderHtml(plan), /<td><b>none<\/b>: rollback-mixed-origins: its nodes boot 2 different images now/);
});

t('a member left out of the plan on a third image it never booted the origin from: rollback-would-stage-unbooted', () => {
  const { plan } = planWith(workerSpec, mixedCluster(true));
  const rb = plan.pools[0].rollback!;
  assert.equal([rb.available, rb.refusedBy], [false, 'rollback-would-stage-unbooted']);
  assert.match(rb.why!, /^w-05 boots neither sha256:.{12} nor the plan's image and never booted/);
});

t('pools the plan updates no node of carry no way back', () => {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 3, undefined, { current: true })).snapshot();
  const { plan } = planWith(workerSpec, snap);
  assert.is(plan.pools[0].nodes.length, 0);
  assert.is(plan.pools[0].rollback, undefined);
  assert.not.match(renderText(plan), /rollback:/);
});

t('the forecast is what the rollback planner then does (after a wave): same image, lever and download; the same refusal', async () => {
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
  const { plan: back } = await rollbackOf(sim);
  for (const p of back.pools) assert.equal(p.rollback, fwd.plan.pools.find((f) => f.name === p.name)!.rollback, p.name);

  const mixed = planWith(workerSpec, mixedCluster());
  const msim = newSim(mixedCluster());
  assert.is(await stepOnce(msim, mixed.plan, mixed.replan), 'stepped');
  const { plan: refused } = await rollbackOf(msim);
  assert.equal(
    refused.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code),
    [mixed.plan.pools[0].rollback!.refusedBy],
  );
});

t('sealed and read back: the way back is part of the id; an unknown refusal is refused by the reader', () => {
  const { plan } = planWith(workerSpec, mixedCluster());
  const text = planFileText(plan);
  assert.equal(parsePlanFile(text, 'p.json').plan!.pools[0].rollback, plan.pools[0].rollback);
  const edited: Plan = JSON.parse(text);
  edited.pools[0].rollback = { available: true, to: OLD, via: 'BootcNodePool/worker spec.image.ref', download: false, why: null };
  assert.ok(tamperedId(edited), 'a way back edited into the file breaks the seal');
  const bad = JSON.parse(text);
  bad.pools[0].rollback.refusedBy = 'rollback-because';
  const r = parsePlanFile(JSON.stringify(bad), 'p.json');
  assert.is(r.plan, null);
  assert.match(r.diagnostics[0].path ?? '', /pools\[0\]\.rollback\.refusedBy/);
});

t.run();
