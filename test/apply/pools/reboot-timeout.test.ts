/**
 * The BootcNodePool's spec.rollout.rebootTimeoutSeconds (docs/apply.md "Reboot timeout"): read
 * from the snapshot, shown in the plan only when set, and the end of the reboot wait when it is
 * shorter than bootcplan's own bound; the failure names both bounds.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { renderText } from '../../../src/render/text.ts';
import { NODE_WAIT_SECONDS, rebootWait } from '../../../src/domain/bootc-daemon.ts';

const s = suite('rebootTimeoutSeconds of a BootcNodePool');
// A reboot of 15 minutes: within bootcplan's own 30m bound, beyond a pool's 5m.
const SLOW = { stage: 60, drain: 10, reboot: 900, softReboot: 10, ready: 0 };

function cluster(rebootTimeoutSeconds: number | undefined) {
  const snap = new ClusterBuilder().bootcPool('worker', nodes('w', 2)).snapshot();
  if (rebootTimeoutSeconds !== undefined) {
    const bnp = snap.bootcNodePools[0];
    bnp.spec = { ...bnp.spec, rollout: { ...bnp.spec?.rollout, rebootTimeoutSeconds } };
  }
  return { snap, ...planWith(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 1 }]), snap, SLOW) };
}

s('unset: no field in the plan and no line in its text (old plans stay the same)', () => {
  const { plan } = cluster(undefined);
  assert.not.ok('rebootTimeoutSeconds' in plan.pools[0]);
  assert.not.match(renderText(plan, { color: false }), /reboot wait/);
});

s('set: the plan carries it and its text names both bounds', () => {
  const { plan } = cluster(300);
  assert.is(plan.pools[0].rebootTimeoutSeconds, 300);
  const text = renderText(plan, { color: false });
  assert.match(text, /reboot wait: 5m: the BootcNodePool's spec\.rollout\.rebootTimeoutSeconds \(300s\), shorter than bootcplan's own bound \(30m\)/);
});

s('a pool bound shorter than the reboot: the node fails at the pool bound, and the failure names both', async () => {
  const { snap, plan, replan } = cluster(300);
  const sim = newSim(snap, { durations: SLOW });
  const r = await runApply(sim, plan, replan);
  assert.is.not(r.code, 0, 'the apply waited past the pool bound');
  const failed = r.events.find((e) => e.type === 'node-failed');
  assert.ok(failed && failed.type === 'node-failed', 'no node-failed event');
  assert.match(failed.message, /within 5m: the BootcNodePool's spec\.rollout\.rebootTimeoutSeconds \(300s\), shorter than bootcplan's own bound \(30m\)/);
  const reboot = r.events.find((e) => e.type === 'reboot')!;
  assert.ok(failed.t - reboot.t <= 300 + 30, `failed ${failed.t - reboot.t}s after the reboot request`);
});

s("a pool bound longer than bootcplan's own: the own bound ends the wait, both named", () => {
  const w = rebootWait(NODE_WAIT_SECONDS, 3600);
  assert.is(w.seconds, NODE_WAIT_SECONDS);
  assert.match(w.words, /^30m: bootcplan's own bound, shorter than the BootcNodePool's spec\.rollout\.rebootTimeoutSeconds \(3600s\)$/);
  assert.equal(rebootWait(NODE_WAIT_SECONDS, undefined), { seconds: 1800, words: '30m' });
});

s("unset, the same slow reboot: the node comes back within bootcplan's own bound", async () => {
  const { snap, plan, replan } = cluster(undefined);
  const r = await runApply(newSim(snap, { durations: SLOW }), plan, replan);
  assert.is(r.code, 0, String(r.error));
});

s.run();
