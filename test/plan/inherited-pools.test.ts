/**
 * docs/spec.md "Inherited pools and the merge order": a custom MachineConfigPool whose
 * machineConfigSelector selects role worker renders bootcplan's worker MachineConfig too, so its
 * nodes reboot: the plan names it (planned when the spec names it, an error listing its nodes and
 * the spec lines to add otherwise). The merged osImageURL of every pool that gets a MachineConfig
 * is computed in the MCO's order, and a MachineConfig that would win over the target is an error.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, OLD, nodes } from '../support/cluster.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import type { Plan } from '../../src/plan/types.ts';
import { inheritingPools } from '../../src/plan/inherited-pools.ts';
import { renderText } from '../../src/render/text.ts';

const s = suite('inherited pools and the merged osImageURL');

const OTHER = imageRef('test-other');
/** worker (4 nodes) and infra (2), infra inheriting worker's MachineConfigs (MCO docs/custom-pools.md). */
const inheriting = () =>
  new ClusterBuilder().mcoPool('worker', nodes('w', 4)).mcoPool('infra', nodes('i', 2), { configRoles: ['worker', 'infra'], maxUnavailable: 1 });
const errorsOf = (plan: Plan, code: string) => plan.diagnostics.filter((d) => d.code === code && d.severity === 'error');
const pool = (plan: Plan, name: string) => plan.pools.find((p) => p.name === name);

s('an inheriting pool the spec does not name: an error naming the pool and its nodes, with the spec lines to add', () => {
  const plan = planFor(specYaml([{ name: 'worker', image: NEW, maxUnavailable: 2 }]), inheriting().snapshot());
  const ds = errorsOf(plan, 'inherited-pool-not-in-spec');
  assert.is(ds.length, 1, JSON.stringify(plan.diagnostics, null, 1));
  const d = ds[0];
  assert.is(d.path, 'spec.pools[0].name');
  assert.match(d.message, '99-worker-zz-bootcplan-os-image');
  assert.match(d.message, 'infra (i-00, i-01)');
  assert.match(d.hint ?? '', `- name: infra\n  image: ${NEW}\n  maxUnavailable: 1`);
  assert.ok(plan.summary.errors >= 1);
});

s("inheritingPools: the other pools whose machineConfigSelector selects the role of the pool's MachineConfig", () => {
  const snap = inheriting().mcoPool('storage', nodes('s', 1)).snapshot();
  assert.equal(inheritingPools(snap, 'worker'), ['infra']);
  assert.equal(inheritingPools(snap, 'infra'), []);
  assert.equal(inheritingPools(snap, 'storage'), []);
});

s('an inheriting pool the spec names: planned with its own nodes, waves and budget; the worker pool records it', () => {
  const plan = planFor(
    specYaml([
      { name: 'worker', image: NEW, maxUnavailable: 2 },
      { name: 'infra', image: NEW, maxUnavailable: 1 },
    ]),
    inheriting().snapshot(),
  );
  assert.equal(
    plan.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  assert.equal(pool(plan, 'worker')?.inheritedBy, ['infra']);
  assert.equal(pool(plan, 'infra')?.inheritedBy, undefined);
  assert.equal(pool(plan, 'infra')?.waves, [['i-00'], ['i-01']]);
  assert.equal(pool(plan, 'worker')?.waves.flat().sort(), ['w-00', 'w-01', 'w-02', 'w-03']);
  assert.match(renderText(plan, { color: false }), 'its MachineConfig is rendered by pool(s) infra too: paused until their own turn below');
  // Every node the two MachineConfigs reboot is in the plan, once.
  assert.equal(plan.pools.flatMap((p) => p.waves.flat()).sort(), ['i-00', 'i-01', 'w-00', 'w-01', 'w-02', 'w-03']);
});

s('a custom pool that selects only its own role does not inherit: no diagnostic, no inheritedBy', () => {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('w', 4)).mcoPool('infra', nodes('i', 2)).snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), snap);
  assert.equal(
    plan.diagnostics.filter((d) => d.code === 'inherited-pool-not-in-spec'),
    [],
  );
  assert.is(pool(plan, 'worker')?.inheritedBy, undefined);
});

s('an inheriting pool without nodes is a warning, not an error: nothing reboots', () => {
  const snap = new ClusterBuilder()
    .mcoPool('worker', nodes('w', 2))
    .mcoPool('infra', [], { configRoles: ['worker', 'infra'] })
    .snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), snap);
  const ds = plan.diagnostics.filter((d) => d.code === 'inherited-pool-not-in-spec');
  assert.equal(
    ds.map((d) => d.severity),
    ['warning'],
  );
  assert.match(ds[0].message, 'infra (no nodes)');
});

s("a worker MachineConfig that sorts after bootcplan's and sets osImageURL: an error naming it and where it sorts", () => {
  const snap = new ClusterBuilder().mcoPool('worker', nodes('w', 3)).osImageMachineConfig('worker', OLD, '99-worker-zzz-pinned-os').snapshot();
  const plan = planFor(specYaml([{ name: 'worker', image: NEW }]), snap);
  const ds = errorsOf(plan, 'os-image-overridden');
  assert.is(ds.length, 1, JSON.stringify(plan.diagnostics, null, 1));
  assert.is(ds[0].path, 'spec.pools[0].image');
  assert.match(ds[0].message, 'MachineConfig 99-worker-zzz-pinned-os sets osImageURL');
  assert.match(ds[0].message, '99-worker-zz-bootcplan-os-image is number 1 and 99-worker-zzz-pinned-os number 2 of the 2');
  assert.match(ds[0].hint ?? '', 'oc delete machineconfig 99-worker-zzz-pinned-os');
  // One that sorts before bootcplan's loses: no error.
  const before = new ClusterBuilder().mcoPool('worker', nodes('w', 3)).osImageMachineConfig('worker', OLD, '50-worker-os').snapshot();
  assert.equal(errorsOf(planFor(specYaml([{ name: 'worker', image: NEW }]), before), 'os-image-overridden'), []);
  // One that wins but sets the target image is harmless.
  const same = new ClusterBuilder().mcoPool('worker', nodes('w', 3)).osImageMachineConfig('worker', NEW, '99-worker-zzz-pinned-os').snapshot();
  assert.equal(errorsOf(planFor(specYaml([{ name: 'worker', image: NEW }]), same), 'os-image-overridden'), []);
});

s("for a custom pool the worker-role configs merge first: a late worker config loses to infra's own, a late infra config wins", () => {
  const spec = specYaml([
    { name: 'worker', image: NEW },
    { name: 'infra', image: OTHER },
  ]);
  // zz-worker-late sorts after 99-infra-zz-bootcplan-os-image by name, but is worker-role: merged first for infra.
  const late = inheriting().osImageMachineConfig('worker', OLD, 'zz-worker-late').snapshot();
  const plan = planFor(spec, late);
  const ds = errorsOf(plan, 'os-image-overridden');
  assert.equal(
    ds.map((d) => d.path),
    ['spec.pools[0].image'],
    'only worker is overridden: ' + JSON.stringify(ds),
  );
  // An infra-role config after infra's own wins there.
  const infraLate = inheriting().osImageMachineConfig('infra', OLD, '99-infra-zzz-pinned').snapshot();
  const p2 = planFor(spec, infraLate);
  assert.equal(
    errorsOf(p2, 'os-image-overridden').map((d) => d.path),
    ['spec.pools[1].image'],
  );
  assert.match(errorsOf(p2, 'os-image-overridden')[0].message, 'role worker first');
});

s.run();
