/**
 * The control plane's budget counts control-plane nodes across the cluster, not per pool
 * (docs/safety.md rule 2): etcd counts members.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, NEW } from '../../support/cluster.ts';
import { planWith, runApply, newSim } from '../../support/apply.ts';

const s = suite('control plane: one node out of service across the cluster');
const QUICK = { stage: 100, drain: 10, reboot: 50, softReboot: 10, ready: 0 };

s('two bootc pools each take part of the masters; one master is NotReady; the other pool reboots a second master', async () => {
  const sel = (op: string) => ({
    matchLabels: { 'node-role.kubernetes.io/master': '' },
    matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: op, values: ['us-east-1a'] }],
  });
  const snap = new ClusterBuilder()
    .bootcPool('cp-a', [{ name: 'm-a', zone: 'us-east-1a', notReady: true }], { role: 'master', selector: sel('In') })
    .bootcPool(
      'cp-b',
      [
        { name: 'm-b', zone: 'us-east-1b' },
        { name: 'm-c', zone: 'us-east-1c' },
      ],
      { role: 'master', selector: sel('NotIn') },
    )
    .snapshot();
  const { plan, replan } = planWith(
    specYaml([
      { name: 'cp-a', image: NEW },
      { name: 'cp-b', image: NEW },
    ]),
    snap,
  );
  const sim = newSim(snap, { durations: QUICK });
  const r = await runApply(sim, plan, replan);
  const rebooted = r.events.filter((e) => e.type === 'reboot').map((e) => (e as any).node);
  assert.equal(rebooted, [], 'a second control-plane node was rebooted while m-a is NotReady');
});

s('MCO master pool, and a NotReady control-plane node outside it (control-plane label only)', async () => {
  const b = new ClusterBuilder().mcoPool('master', [{ name: 'm-0' }, { name: 'm-1' }]);
  b.mcoPool('cp-extra', [{ name: 'm-2', notReady: true }], { role: 'control-plane' });
  b.objects.splice(
    b.objects.findIndex((o) => o.kind === 'MachineConfigPool' && o.metadata.name === 'cp-extra'),
    1,
  ); // node in no pool
  const snap = b.snapshot();
  const { plan } = planWith(specYaml([{ name: 'master', image: NEW }]), snap);
  assert.equal(plan.pools[0].waves, [], 'master pool scheduled while another control-plane node is NotReady');
});
s('an MCO master pool does not start a wave while a control-plane node outside it is out of service; it halts saying why', async () => {
  const b = new ClusterBuilder().mcoPool('master', [{ name: 'm-0' }, { name: 'm-1' }]);
  b.mcoPool('cp-extra', [{ name: 'm-2' }], { role: 'control-plane' });
  b.objects.splice(
    b.objects.findIndex((o) => o.kind === 'MachineConfigPool' && o.metadata.name === 'cp-extra'),
    1,
  ); // a node in no pool
  const snap = b.snapshot();
  const { plan, replan } = planWith(specYaml([{ name: 'master', image: NEW }]), snap);
  assert.ok(plan.pools[0].waves.length > 0, 'planned while the control plane was in service');
  const sim = newSim(snap, { durations: QUICK });
  sim.mutate((o) => {
    o.nodes.get('m-2')!.status!.conditions!.find((c: any) => c.type === 'Ready')!.status = 'False';
  });
  const r = await runApply(sim, plan, replan);
  assert.is(r.code, 5, String(r.error));
  assert.match(String((r.error as Error).message), /m-2 failed: control-plane node out of service \(not-ready\)/);
  assert.equal(
    r.events.filter((e) => e.type === 'reboot').map((e) => (e as { node: string }).node),
    [],
  );
});

s.run();
