/**
 * Odd cluster data (docs/safety.md "Sharing the cluster"): read through the snapshot reader as the CLI
 * does, each case ends in a plan or in clean diagnostics; neither throws.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterBuilder, specYaml, planFor, NEW, nodes } from '../support/cluster.ts';
import { parseSnapshot } from '../../src/cluster/snapshot-file.ts';

const s = suite('odd cluster data ends in a plan or a clean snapshot error');
type Mut = [string, (b: ClusterBuilder) => void];
const muts: Mut[] = [
  [
    'node status without conditions',
    (b) => {
      b.object('Node', 'w-00').status = {};
    },
  ],
  [
    'node conditions not an array',
    (b) => {
      b.object('Node', 'w-00').status.conditions = { Ready: 'True' } as any;
    },
  ],
  [
    'node condition null',
    (b) => {
      b.object('Node', 'w-00').status.conditions.push(null);
    },
  ],
  [
    'node without status',
    (b) => {
      delete (b.object('Node', 'w-00') as any).status;
    },
  ],
  [
    'node without spec',
    (b) => {
      delete (b.object('Node', 'w-00') as any).spec;
    },
  ],
  [
    'labels null',
    (b) => {
      (b.object('Node', 'w-00').metadata as any).labels = null;
    },
  ],
  [
    'annotations numeric',
    (b) => {
      (b.object('Node', 'w-00').metadata as any).annotations = {
        'machineconfiguration.openshift.io/state': 5,
        'machineconfiguration.openshift.io/desiredConfig': {},
      };
    },
  ],
  [
    'ownerReferences null',
    (b) => {
      (b.object('BootcNode', 'w-00').metadata as any).ownerReferences = null;
    },
  ],
  [
    'ownerReferences not array',
    (b) => {
      (b.object('BootcNode', 'w-00').metadata as any).ownerReferences = { kind: 'BootcNodePool', name: 'worker' };
    },
  ],
  [
    'ownerReference to missing pool',
    (b) => {
      b.object('BootcNode', 'w-00').metadata.ownerReferences = [{ apiVersion: 'x/v1', kind: 'BootcNodePool', name: 'gone', uid: 'u', controller: true }];
    },
  ],
  [
    'owner ref entry null',
    (b) => {
      (b.object('BootcNode', 'w-00').metadata as any).ownerReferences = [null];
    },
  ],
  [
    'pool ownerRefs not array',
    (b) => {
      (b.object('BootcNodePool', 'worker').metadata as any).ownerReferences = 'MachineConfigPool/worker';
    },
  ],
  [
    'pool owned by missing MCP',
    (b) => {
      b.object('BootcNodePool', 'worker').metadata.ownerReferences = [
        { apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: 'nope', uid: 'u', controller: true },
      ];
    },
  ],
  [
    'bootcnode without status',
    (b) => {
      delete (b.object('BootcNode', 'w-00') as any).status;
    },
  ],
  [
    'bootcnode status.booted null',
    (b) => {
      b.object('BootcNode', 'w-00').status.booted = null;
    },
  ],
  [
    'bootcnodepool without spec',
    (b) => {
      delete (b.object('BootcNodePool', 'worker') as any).spec;
    },
  ],
  [
    'bootcnodepool without status',
    (b) => {
      delete (b.object('BootcNodePool', 'worker') as any).status;
    },
  ],
  [
    'pool selector matchExpressions not array',
    (b) => {
      b.object('BootcNodePool', 'worker').spec.nodeSelector = { matchExpressions: { key: 'a' } };
    },
  ],
  [
    'pool selector matchExpressions [null]',
    (b) => {
      b.object('BootcNodePool', 'worker').spec.nodeSelector = { matchExpressions: [null] };
    },
  ],
  [
    'pool selector matchLabels null',
    (b) => {
      b.object('BootcNodePool', 'worker').spec.nodeSelector = { matchLabels: null };
    },
  ],
  [
    'In with values null',
    (b) => {
      b.object('BootcNodePool', 'worker').spec.nodeSelector = { matchExpressions: [{ key: 'k', operator: 'NotIn', values: null }] };
    },
  ],
  [
    'pool conditions not array',
    (b) => {
      b.object('BootcNodePool', 'worker').status.conditions = 'Degraded';
    },
  ],
  [
    'pool Degraded NodeConflict',
    (b) => {
      b.object('BootcNodePool', 'worker').status.conditions = [{ type: 'Degraded', status: 'True', reason: 'NodeConflict' }];
    },
  ],
  [
    'mcp status null',
    (b) => {
      b.object('MachineConfigPool', 'worker').status = null;
    },
  ],
  [
    'mcp spec.configuration null',
    (b) => {
      b.object('MachineConfigPool', 'worker').spec.configuration = null;
    },
  ],
  [
    'mcp conditions [null]',
    (b) => {
      b.object('MachineConfigPool', 'worker').status.conditions = [null];
    },
  ],
  [
    'mcp machineConfigSelector weird',
    (b) => {
      b.object('MachineConfigPool', 'worker').spec.machineConfigSelector = { matchExpressions: 7 };
    },
  ],
  [
    'mcp nodeSelector null',
    (b) => {
      b.object('MachineConfigPool', 'worker').spec.nodeSelector = null;
    },
  ],
  [
    'mc osImageURL with mc labels null',
    (b) => {
      b.osImageMachineConfig('worker', NEW);
      (b.objects[b.objects.length - 1].metadata as any).labels = null;
    },
  ],
  [
    'mc ownerReferences not array',
    (b) => {
      b.osImageMachineConfig('worker', NEW);
      (b.objects[b.objects.length - 1].metadata as any).ownerReferences = {};
    },
  ],
  [
    'pool with no nodes',
    (b) => {
      b.objects = b.objects.filter((o) => !(o.kind === 'Node' || o.kind === 'BootcNode'));
    },
  ],
  [
    'pool paused string',
    (b) => {
      b.object('MachineConfigPool', 'worker').spec.paused = 'true';
    },
  ],
  [
    'pool annotations null',
    (b) => {
      (b.object('MachineConfigPool', 'worker').metadata as any).annotations = null;
      b.object('MachineConfigPool', 'worker').spec.paused = true;
    },
  ],
  [
    'node name collides with Object proto',
    (b) => {
      b.object('Node', 'w-00').metadata.name = '__proto__';
      b.object('BootcNode', 'w-00').metadata.name = '__proto__';
    },
  ],
];
for (const [name, mut] of muts) {
  s(name, () => {
    const b = new ClusterBuilder().bootcPool('worker', nodes('w', 3)).machineConfigPool('worker').mcoPool('infra', nodes('i', 2));
    mut(b);
    const read = parseSnapshot(b.yaml(), 'odd.yaml');
    if (!read.snapshot) {
      // Refused by the reader: a positioned error naming the field.
      assert.ok(read.diagnostics.length > 0);
      for (const d of read.diagnostics) assert.ok(d.path && d.line !== null && d.code === 'snapshot-invalid', JSON.stringify(d));
      return;
    }
    const plan = planFor(
      specYaml([
        { name: 'worker', image: NEW },
        { name: 'infra', image: NEW },
      ]),
      read.snapshot,
    );
    assert.ok(Array.isArray(plan.pools));
  });
}
s.run();
