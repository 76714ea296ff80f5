/**
 * docs/safety.md rule 4: a BootcNodePool owned by a MachineConfigPool (ownerReference with
 * controller: true) is the MCO's; bootcplan does not write its spec.image.ref. Decision:
 * refuse with an error that explains the ownership (no upstream controller routes an image
 * this way today, so bootcplan does not guess a route through a MachineConfig).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, OLD, nodes } from '../support/cluster.ts';

const s = suite('ownership: a BootcNodePool owned by a MachineConfigPool');

const mcpOwner = (controller: boolean | 'absent') => [
  {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfigPool',
    name: 'worker',
    uid: 'u-1',
    ...(controller === 'absent' ? {} : { controller }),
  },
];

function owned(image = OLD, controller: boolean | 'absent' = true) {
  return new ClusterBuilder()
    .mcoPool('worker', [])
    .bootcPool('worker', nodes('w', 4), { image, ownerReferences: mcpOwner(controller) })
    .snapshot();
}

s('a new image for an MCP-owned pool is refused: an error at the spec image explains the owner; nothing is written to the pool; no waves', () => {
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), owned());
  const d = plan.diagnostics.find((x) => x.code === 'pool-owned-by-machineconfigpool')!;
  assert.ok(d, JSON.stringify(plan.diagnostics));
  assert.is(d.severity, 'error');
  assert.equal([d.path, d.line, d.column], ['spec.pools[0].image', 8, 14]);
  assert.match(d.message, /owned by MachineConfigPool worker/);
  assert.match(d.message, /controller: true/);
  assert.match(d.message, /spec\.image\.ref/);
  assert.match(d.hint!, /osImageURL/);
  assert.is(
    plan.changes.find((c) => c.kind === 'BootcNodePool'),
    undefined,
    'no change to the owned BootcNodePool',
  );
  assert.equal(plan.pools[0].waves, []);
  assert.ok(plan.pools[0].nodes.every((n) => n.blockedBy === 'pool-owned'));
  assert.is(plan.summary.nodes, 0);
});

s('the owned pool already has the spec image: a warning, and the pool and its nodes are left to the owner', () => {
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), owned(NEW));
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  const d = plan.diagnostics.find((x) => x.code === 'pool-left-to-owner')!;
  assert.is(d.severity, 'warning');
  assert.match(d.message, /no change, no waves/);
  assert.is(
    plan.changes.find((c) => c.kind === 'BootcNodePool'),
    undefined,
  );
  assert.equal(plan.pools[0].waves, []);
});

s('an ownerReference without controller: true is not ownership: the plan is as usual', () => {
  for (const controller of [false, 'absent'] as const) {
    const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), owned(OLD, controller));
    assert.equal(
      plan.diagnostics.filter((d) => d.severity === 'error'),
      [],
      String(controller),
    );
    assert.is(plan.changes.find((c) => c.kind === 'BootcNodePool')!.reason, 'pool-image');
    assert.is(plan.pools[0].waves.flat().length, 4);
  }
});

s.run();
