/**
 * Writes examples/cluster.yaml: an OpenShift 4.22 cluster on AWS (us-east-1) with the
 * bootc-operator, and the three stores of examples/fleet: the same cluster moved to another
 * region under another name, each with an identity of its own (ClusterVersion clusterID,
 * kube-system Namespace uid, API server), as three sites installed from one template are.
 * Regenerate with `npx tsx scripts/gen-example.ts` after changing builders.
 */
import { writeFileSync } from 'node:fs';
import { KUBE_SYSTEM_NAMESPACE, SNAPSHOT_SERVER_ANNOTATION } from '../src/cluster/identity.ts';
import { stringify } from 'yaml';
import { imageRef, fakeDigest, uidOf } from '../src/sim/fake-ids.ts';
import { nodeObject, bootcNodeObject, bootcNodePoolObject, machineConfigPoolObject, renderedMachineConfig, mcoAnnotations } from '../src/sim/node-objects.ts';
import { machineSetObject, clusterSingletons, OLD_AMI } from '../src/sim/cluster-objects.ts';
import type { KObject } from '../src/cluster/types.ts';
import { hasShapeOf } from '../src/cluster/kinds.ts';

const region = 'us-east-1';
const zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const current = imageRef('os-43.20260901.0');
const target = imageRef('os-43.20261115.0');
const rhcos = 'quay.io/openshift-release-dev/ocp-v4.0-art-dev@' + fakeDigest('rhcos-4.22.3');
const renderedMaster = 'rendered-master-5d1c0f7a9be2d4c6a8f0e1b3d5c7a9e2';
const renderedWorker = 'rendered-worker-3a7e9c1b5d2f4a6c8e0b2d4f6a8c0e1d';
const renderedInfra = 'rendered-infra-8b2d4f6a0c1e3a5c7e9b1d3f5a7c9e0b';
const role = (r: string) => ({ [`node-role.kubernetes.io/${r}`]: '' });

const objects: KObject[] = [];
zones.forEach((zone, i) =>
  objects.push(nodeObject({ name: `master-${i}`, role: 'master', zone, region, instanceType: 'm6i.2xlarge', annotations: mcoAnnotations(renderedMaster) })),
);

// worker: 9 nodes over 3 zones. The pool already points at the new image from an earlier
// run, so three nodes have it staged (two of them soft-reboot capable); worker-b-1 was
// cordoned by an administrator for hardware checks.
for (const [zi, zone] of zones.entries()) {
  for (let n = 0; n < 3; n++) {
    const name = `worker-${zone.slice(-1)}-${n}`;
    const cordoned = name === 'worker-b-1';
    objects.push(
      nodeObject({
        name,
        role: 'worker',
        zone,
        region,
        cordoned,
        bootc: true,
        annotations: mcoAnnotations(renderedWorker),
        createdAt: `2026-0${3 + n}-1${zi}T10:00:00Z`,
      }),
    );
    const staged = n === 2;
    objects.push(
      bootcNodeObject({
        name,
        pool: 'worker',
        desiredImage: target,
        booted: { image: current, version: '43.20260901.0' },
        staged: staged ? { image: target, version: '43.20261115.0', softRebootCapable: zone !== 'us-east-1c' } : null,
        idle: staged ? 'Staged' : 'Idle',
      }),
    );
  }
}
// infra: 3 nodes, one per zone, still on the current image.
zones.forEach((zone) => {
  const name = `infra-${zone.slice(-1)}-0`;
  objects.push(nodeObject({ name, role: 'infra', zone, region, instanceType: 'r6i.xlarge', bootc: true, annotations: mcoAnnotations(renderedInfra) }));
  objects.push(bootcNodeObject({ name, pool: 'infra', desiredImage: current, booted: { image: current, version: '43.20260901.0' } }));
});

objects.push(machineConfigPoolObject('master', 1, renderedMaster, role('master')));
objects.push(machineConfigPoolObject('worker', 1, renderedWorker, role('worker')));
objects.push(machineConfigPoolObject('infra', 1, renderedInfra, role('infra')));
objects.push(renderedMachineConfig(renderedMaster, 'master', rhcos));
objects.push(renderedMachineConfig(renderedWorker, 'worker', rhcos));
objects.push(renderedMachineConfig(renderedInfra, 'infra', rhcos));
// The bootc-operator has no precedence between pools (unlike the MCO's custom pools over
// worker): infra nodes keep the worker role label, so the worker pool leaves them out, or both
// pools would claim them (Degraded/NodeConflict).
const workerPool = bootcNodePoolObject('worker', target, { maxUnavailable: 1, paused: true }, role('worker'));
if (hasShapeOf(workerPool, 'BootcNodePool') && workerPool.spec?.nodeSelector)
  workerPool.spec.nodeSelector.matchExpressions = [{ key: 'node-role.kubernetes.io/infra', operator: 'DoesNotExist' }];
objects.push(workerPool);
objects.push(bootcNodePoolObject('infra', current, { maxUnavailable: 1, paused: true }, role('infra')));

for (const zone of zones) objects.push(machineSetObject(`prod-east-x7k2p-worker-${zone}`, zone, region, OLD_AMI));
objects.push(machineSetObject('prod-east-x7k2p-infra-us-east-1a', 'us-east-1a', region, OLD_AMI, { role: 'infra', replicas: 1 }));
objects.push(
  machineSetObject('prod-east-x7k2p-gpu-us-east-1b', 'us-east-1b', region, 'ami-0gpuc0ffee5ca1ab1e', {
    replicas: 0,
    ownerReferences: [
      { apiVersion: 'hive.openshift.io/v1', kind: 'MachinePool', name: 'prod-east-gpu', uid: '5c3f0a2e-7b41-4d8e-9a6c-1f2e3d4c5b6a', controller: true },
    ],
  }),
);
objects.push(
  machineSetObject('prod-east-x7k2p-win-us-east-1c', 'us-east-1c', region, 'ami-0w1nd0w5b00t1mage', {
    replicas: 0,
    templateLabels: { 'machine.openshift.io/os-id': 'Windows' },
  }),
);
objects.push(...clusterSingletons({ region, zones, platform: 'AWS', version: '4.22.3', machineManagers: [] }));

const header = `# An OpenShift 4.22 cluster on AWS (us-east-1) running the bootc-operator, as
# \`bootcplan snapshot\` would write it. Generated by scripts/gen-example.ts.
# - master: 3 nodes, MCO pool
# - worker: 9 nodes over 3 zones, BootcNodePool; 3 nodes have the new image staged;
#   worker-b-1 is cordoned by an administrator
# - infra: 3 nodes, BootcNodePool
# - MachineConfiguration/cluster holds the legacy opt-out \`machineManagers: []\`
`;

/** One site: the objects above with its identity, as `bootcplan snapshot` writes them (src/cli/commands-cluster.ts). */
function siteYaml(name: string, clusterID: string, kubeSystemUid: string): string {
  const own = structuredClone(objects);
  const version = own.find((o) => o.kind === 'ClusterVersion');
  if (version && hasShapeOf(version, 'ClusterVersion')) (version.spec ??= {}).clusterID = clusterID;
  own.push({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: KUBE_SYSTEM_NAMESPACE,
      uid: kubeSystemUid,
      creationTimestamp: '2026-03-02T08:41:17Z',
      labels: { 'kubernetes.io/metadata.name': KUBE_SYSTEM_NAMESPACE },
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
  const metadata = { annotations: { 'bootcplan.dev/source': `live:${name}`, [SNAPSHOT_SERVER_ANNOTATION]: `https://api.${name}.example.com:6443` } };
  return stringify({ apiVersion: 'v1', kind: 'List', metadata, items: own }, { lineWidth: 0 });
}

writeFileSync(new URL('../examples/cluster.yaml', import.meta.url), header + siteYaml('prod-east', uidOf('cluster'), uidOf('kube-system/prod-east')));
console.log(`wrote examples/cluster.yaml with ${objects.length + 1} objects`);

// The stores of examples/fleet/fleet.yaml: identical sites (the same node names, pools and
// images) that only their identity and region tell apart.
const stores = [
  ['store-nyc', 'us-east-1'],
  ['store-berlin', 'eu-central-1'],
  ['store-singapore', 'ap-southeast-1'],
];
for (const [name, storeRegion] of stores) {
  const text = siteYaml('prod-east', uidOf(`cluster/${name}`), uidOf(`kube-system/${name}`))
    .replaceAll(region, storeRegion)
    .replaceAll('prod-east', name);
  const storeHeader = `# examples/fleet: examples/cluster.yaml moved to ${storeRegion} and named ${name}, with an identity of its own
# (ClusterVersion clusterID, kube-system uid, API server), one cluster of fleet.yaml. Generated by scripts/gen-example.ts.
`;
  writeFileSync(new URL(`../examples/fleet/${name}.yaml`, import.meta.url), storeHeader + header.replaceAll(region, storeRegion) + text);
  console.log(`wrote examples/fleet/${name}.yaml`);
}

// examples/health/kubernetes-cluster.yaml: plain Kubernetes with the bootc-operator (no
// OpenShift: no ClusterVersion, no MachineConfigPools), for the health-check example of a
// cluster whose Prometheus comes from the Prometheus Operator (docs/spec.md "Health checks").
const kube: KObject[] = [];
for (const [i, zone] of zones.entries()) {
  for (let n = 0; n < 2; n++) {
    const name = `node-${zone.slice(-1)}-${n}`;
    kube.push(nodeObject({ name, role: 'worker', zone, region, bootc: true, createdAt: `2026-05-1${i}T10:00:00Z` }));
    kube.push(bootcNodeObject({ name, pool: 'worker', desiredImage: current, booted: { image: current, version: '43.20260901.0' } }));
  }
}
kube.push(bootcNodePoolObject('worker', current, { maxUnavailable: 1, paused: true }, role('worker')));
kube.push({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: {
    name: KUBE_SYSTEM_NAMESPACE,
    uid: uidOf('kube-system/lab'),
    creationTimestamp: '2026-05-01T08:00:00Z',
    labels: { 'kubernetes.io/metadata.name': KUBE_SYSTEM_NAMESPACE },
  },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active' },
});
const kubeHeader = `# A plain Kubernetes cluster (no OpenShift) running the bootc-operator, as \`bootcplan snapshot\`
# would write it: 6 nodes over 3 zones in the BootcNodePool worker. Generated by scripts/gen-example.ts.
`;
writeFileSync(
  new URL('../examples/health/kubernetes-cluster.yaml', import.meta.url),
  kubeHeader +
    stringify(
      {
        apiVersion: 'v1',
        kind: 'List',
        metadata: { annotations: { 'bootcplan.dev/source': 'live:lab', [SNAPSHOT_SERVER_ANNOTATION]: 'https://api.lab.example.com:6443' } },
        items: kube,
      },
      { lineWidth: 0 },
    ),
);
console.log('wrote examples/health/kubernetes-cluster.yaml');
