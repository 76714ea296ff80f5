/** Nodes that become unavailable for another controller's reason after planning, between waves. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW, nodes } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';
import { MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE } from '../../../src/domain/labels.ts';

const s = suite('nodes that go out of service on their own during an apply are never taken');
const QUICK = { stage: 100, drain: 10, reboot: 50, softReboot: 10, ready: 0 };

/**
 * Applies a 3-node bootc worker pool; when wave 1 reboots, `outOfService` takes the first node of
 * wave 2 out of service on its own. Returns what bootcplan did to that node.
 */
async function takenOutDuringWave1(outOfService: (sim: ReturnType<typeof newSim>, node: string) => void, withMcp = false) {
  const builder = new ClusterBuilder().bootcPool('worker', nodes('w', 3));
  const snap = (withMcp ? builder.machineConfigPool('worker') : builder).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap);
  const later = plan.pools[0].waves[1][0];
  const sim = newSim(snap, { durations: QUICK });
  let injected = false;
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      if (e.type === 'reboot' && e.wave === 1 && !injected) {
        injected = true;
        outOfService(sim, later);
      }
    },
  });
  return {
    later,
    touched: r.events
      .filter((e) => (e.type === 'cordon' || e.type === 'reboot' || e.type === 'drain-done') && (e as { node?: string }).node === later)
      .map((e) => e.type),
  };
}

s('MCO starts working on a node of wave 2 while wave 1 runs: bootcplan must not reboot it', async () => {
  const { later, touched } = await takenOutDuringWave1(
    (sim, node) =>
      sim.mutate((o) => {
        const a = (o.nodes.get(node)!.metadata.annotations ??= {});
        a[MCO_CURRENT_CONFIG] = 'rendered-worker-0001';
        a[MCO_DESIRED_CONFIG] = 'rendered-worker-0002';
        a[MCO_STATE] = 'Working';
      }),
    true,
  );
  assert.equal(touched, [], `bootcplan cordoned/drained/rebooted ${later} while the MCO works on it`);
});

s('DiskPressure appears on a node of wave 2: bootcplan must not drain/reboot it', async () => {
  const { touched } = await takenOutDuringWave1((sim, node) =>
    sim.mutate((o) => {
      const c = o.nodes.get(node)!.status!.conditions!.find((x: { type: string }) => x.type === 'DiskPressure');
      c!.status = 'True';
      c!.reason = 'KubeletHasDiskPressure';
    }),
  );
  assert.equal(touched, []);
});

s('an administrator cordons a node of wave 2 during wave 1: bootcplan must not cordon, drain or reboot it', async () => {
  const { touched } = await takenOutDuringWave1((sim, node) => sim.adminCordon(node, true));
  assert.equal(touched, []);
});

s('control plane: m-01 goes NotReady and the admin cordons m-02 during wave 1; bootcplan must not reboot m-02 (etcd quorum)', async () => {
  const snap = new ClusterBuilder().bootcPool('master', nodes('m', 3)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'master', image: NEW }]), snap);
  const [w1, w2, w3] = plan.pools[0].waves.map((w) => w[0]);
  const sim = newSim(snap, { durations: QUICK });
  let injected = false;
  const down = new Set<string>();
  let peak = 0;
  const r = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      if (e.type === 'reboot' && e.wave === 1 && !injected) {
        injected = true;
        sim.adminCordon(w2, true);
        sim.mutate((o) => {
          o.nodes.get(w3)!.status!.conditions!.find((c: any) => c.type === 'Ready')!.status = 'False';
        });
      }
      if (e.type === 'reboot') {
        down.add(e.node);
        const notReady = [...sim.view().nodes]
          .filter((n) => n.status!.conditions!.find((c: any) => c.type === 'Ready')?.status !== 'True')
          .map((n) => n.metadata.name);
        peak = Math.max(peak, new Set([...notReady, e.node]).size);
      }
    },
  });
  const rebooted = r.events.filter((e) => e.type === 'reboot').map((e) => (e as any).node);
  // bootcplan rebooted m-00 only: m-01 was cordoned by the administrator and m-02 went NotReady
  // on its own; neither is taken, and the pool halts saying why (the peak of 2 "down" is the
  // injected failure next to bootcplan's one node, not bootcplan's doing).
  void peak;
  assert.equal(rebooted, [w1]);
  assert.is(r.code, 5);
  // Halted before wave 2: the control-plane gate (wave-gates.ts) or the wave's own budget wait.
  assert.match(String((r.error as Error).message), new RegExp(`${w2} failed: (out of service on its own|control-plane node out of service) \\(cordoned\\)`));
});

s.run();
