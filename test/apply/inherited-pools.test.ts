/**
 * docs/spec.md "Inherited pools and the merge order", in a simulated apply: the simulated MCO
 * renders a MachineConfig into every pool whose machineConfigSelector selects it and merges in the
 * MCO's order (src/domain/mco-render.ts), so an inheriting pool reboots when worker's
 * MachineConfig is written. The nodes that reboot are exactly the plan's, the inheriting pool
 * waits for its own turn, and a MachineConfig that wins the merge mid-apply is a halt at once.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ClusterBuilder, specYaml, NEW, OLD, nodes } from '../support/cluster.ts';
import { newSim, planWith, runApply } from '../support/apply.ts';
import { seeded } from '../support/seeds.ts';
import { MCO_ROLE_LABEL } from '../../src/domain/labels.ts';

const s = suite('inherited pools in a simulated apply');

const D = { stage: 100, drain: 10, reboot: 50, softReboot: 5, ready: 3 };

function cluster(workers: number, infras: number) {
  return new ClusterBuilder()
    .mcoPool('worker', nodes('w', workers))
    .mcoPool('infra', nodes('i', infras), { configRoles: ['worker', 'infra'] })
    .snapshot();
}

s('worker and an inheriting infra pool after it: every node rebooted is in the plan, once, and infra waits for its turn', async () => {
  const snap = cluster(4, 2);
  const { plan, replan } = planWith(
    specYaml([
      { name: 'worker', image: NEW, maxUnavailable: 2 },
      { name: 'infra', image: NEW, maxUnavailable: 1, priority: 30 },
    ]),
    snap,
    D,
  );
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  const sim = newSim(snap, { durations: D, renderSeconds: 5 });
  const run = await runApply(sim, plan, replan);
  assert.is(run.code, 0, String(run.error));
  const rebooted = sim.reboots.map((r) => r.node);
  assert.equal([...rebooted].sort(), plan.pools.flatMap((p) => p.waves.flat()).sort());
  const lastWorker = Math.max(...sim.reboots.filter((r) => r.node.startsWith('w-')).map((r) => r.t));
  const firstInfra = Math.min(...sim.reboots.filter((r) => r.node.startsWith('i-')).map((r) => r.t));
  assert.ok(firstInfra > lastWorker, `infra rebooted at ${firstInfra}, before worker's last at ${lastWorker}`);
});

s('property: the nodes a simulated apply reboots are the nodes of the plan, each once, pool after pool', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: 1, max: 2 }),
      fc.boolean(),
      async (workers, infras, wMax, iMax, infraFirst) => {
        const snap = cluster(workers, infras);
        const { plan, replan } = planWith(
          specYaml([
            { name: 'worker', image: NEW, maxUnavailable: wMax },
            { name: 'infra', image: NEW, maxUnavailable: iMax, priority: infraFirst ? 10 : 30 },
          ]),
          snap,
          D,
        );
        const sim = newSim(snap, { durations: D, renderSeconds: 5 });
        const run = await runApply(sim, plan, replan);
        assert.is(run.code, 0, String(run.error));
        const rebooted = sim.reboots.map((r) => r.node);
        assert.equal([...rebooted].sort(), plan.pools.flatMap((p) => p.waves.flat()).sort());
        assert.is(new Set(rebooted).size, rebooted.length, 'no node rebooted twice');
        const order = rebooted.map((n) => n[0]);
        const first = infraFirst ? 'i' : 'w';
        assert.equal(
          order,
          [...order].sort((a, b) => (a === b ? 0 : a === first ? -1 : 1)),
          `pools interleaved: ${rebooted.join(' ')}`,
        );
      },
    ),
    seeded(3417, 12),
  );
});

s('a MachineConfig that wins the merge appears mid-apply: a halt at once naming it, not a wait until the timeout', async () => {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('w', 3)).snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'worker', image: NEW }]), snap, D);
  const sim = newSim(snap, { durations: D, renderSeconds: 120 });
  const start = sim.now;
  let injected = false;
  const run = await runApply(sim, plan, replan, {
    onEventHook: (e) => {
      if (e.type !== 'wave-start' || injected) return;
      injected = true;
      sim.mutate(({ add }) =>
        add({
          apiVersion: 'machineconfiguration.openshift.io/v1',
          kind: 'MachineConfig',
          metadata: { name: '99-worker-zzz-pinned-os', labels: { [MCO_ROLE_LABEL]: 'worker' } },
          spec: { osImageURL: OLD },
        }),
      );
    },
  });
  assert.ok(injected);
  assert.is(run.code, 5, String(run.error));
  assert.match(String((run.error as Error).message), 'MachineConfig 99-worker-zzz-pinned-os sets osImageURL');
  assert.ok(sim.now - start < 60, `halted after ${sim.now - start}s`);
  assert.equal(sim.reboots, []);
});

s.run();
