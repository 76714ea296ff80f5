/**
 * src/domain/mco-render.ts: which pools render a MachineConfig (machine-config-operator
 * render_controller.go getMachineConfigsForPool) and the osImageURL the MCO merges for a pool
 * (helpers.go MergeMachineConfigs: worker-role configs first, then the others, each by name; the
 * last non-empty osImageURL wins).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { mergeOrder, mergedOsImage, overriddenTarget, poolSelectsLabels, poolsRendering } from '../../src/domain/mco-render.ts';
import { MCO_ROLE_LABEL } from '../../src/domain/labels.ts';
import type { ClusterLabelSelector, MachineConfigObject, MachineConfigPoolObject } from '../../src/cluster/kinds.ts';
import { seeded } from '../support/seeds.ts';

const s = suite('MCO rendering and merge order');

const mcp = (name: string, selector: ClusterLabelSelector | undefined): MachineConfigPoolObject => ({
  apiVersion: 'machineconfiguration.openshift.io/v1',
  kind: 'MachineConfigPool',
  metadata: { name },
  spec: selector === undefined ? {} : { machineConfigSelector: selector },
});
const mc = (name: string, role: string, osImageURL?: string, rendered = false): MachineConfigObject => ({
  apiVersion: 'machineconfiguration.openshift.io/v1',
  kind: 'MachineConfig',
  metadata: {
    name,
    labels: rendered ? {} : { [MCO_ROLE_LABEL]: role },
    ...(rendered ? { ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: role, controller: true }] } : {}),
  },
  spec: osImageURL === undefined ? {} : { osImageURL },
});
const worker = mcp('worker', { matchLabels: { [MCO_ROLE_LABEL]: 'worker' } });
const infra = mcp('infra', { matchExpressions: [{ key: MCO_ROLE_LABEL, operator: 'In', values: ['worker', 'infra'] }] });

s('a custom pool selecting role In [worker, infra] renders worker configs; an empty selector renders nothing', () => {
  assert.equal(poolsRendering([worker, infra], { [MCO_ROLE_LABEL]: 'worker' }), ['infra', 'worker']);
  assert.equal(poolsRendering([worker, infra], { [MCO_ROLE_LABEL]: 'infra' }), ['infra']);
  assert.not.ok(poolSelectsLabels(mcp('odd', {}), { [MCO_ROLE_LABEL]: 'odd' }), 'selector.Empty() matches nothing');
  assert.ok(poolSelectsLabels(mcp('plain', undefined), { [MCO_ROLE_LABEL]: 'plain' }), 'no selector in the snapshot: its own role');
});

s('merge order: worker-role configs by name, then the others by name; the last osImageURL wins; rendered configs skipped', () => {
  const configs = [
    mc('99-infra-zz-bootcplan-os-image', 'infra', 'B'),
    mc('zz-worker-late', 'worker', 'A'),
    mc('00-worker', 'worker'),
    mc('rendered-infra-1', 'infra', 'R', true),
  ];
  assert.equal(
    mergeOrder(configs.slice(0, 3)).map((c) => c.metadata.name),
    ['00-worker', 'zz-worker-late', '99-infra-zz-bootcplan-os-image'],
  );
  const m = mergedOsImage(infra, configs);
  assert.equal([m.winner, m.osImageURL, m.sources], ['99-infra-zz-bootcplan-os-image', 'B', 3]);
  assert.equal(mergedOsImage(worker, configs).winner, 'zz-worker-late');
  assert.equal(mergedOsImage(worker, [mc('00-worker', 'worker')]).osImageURL, null, "none sets it: the release's image");
});

s('overriddenTarget: only once ours carries the target and another config wins with another image', () => {
  const ours = '99-worker-zz-bootcplan-os-image';
  assert.is(overriddenTarget(worker, [mc(ours, 'worker', 'OLD'), mc('99-worker-zzz', 'worker', 'X')], ours, 'NEW'), null, 'ours not written yet');
  assert.is(overriddenTarget(worker, [mc(ours, 'worker', 'NEW')], ours, 'NEW'), null);
  assert.match(
    overriddenTarget(worker, [mc(ours, 'worker', 'NEW'), mc('99-worker-zzz', 'worker', 'X')], ours, 'NEW') ?? '',
    'MachineConfig 99-worker-zzz sets osImageURL X',
  );
});

s('property: the winner is the last setter of the merge order, whatever order the configs come in', () => {
  const arb = fc.uniqueArray(
    fc.record({
      name: fc.stringMatching(/^[0-9a-z-]{1,8}$/),
      role: fc.constantFrom('worker', 'infra'),
      url: fc.option(fc.constantFrom('A', 'B', 'C'), { nil: undefined }),
    }),
    { selector: (r) => r.name, maxLength: 8 },
  );
  fc.assert(
    fc.property(arb, (rows) => {
      const configs = rows.map((r) => mc(r.name, r.role, r.url));
      const m = mergedOsImage(infra, configs);
      const reversed = mergedOsImage(infra, [...configs].reverse());
      assert.equal(m, reversed);
      const sorted = [...rows].sort((a, b) => (a.role === b.role ? (a.name < b.name ? -1 : 1) : a.role === 'worker' ? -1 : 1)).filter((r) => r.url);
      assert.is(m.winner, sorted.at(-1)?.name ?? null);
    }),
    seeded(5177, 100),
  );
});

s.run();
