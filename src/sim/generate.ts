/**
 * Builders for realistic cluster objects, and a generator of whole clusters. Used for the
 * bundled example, the 1k/10k/50k benchmark snapshots, property tests and rehearsals.
 * Deterministic: the same options give the same objects.
 */
import { createHash } from 'node:crypto';
import type { KObject } from '../cluster/types.ts';
import { ZONE_LABEL, MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE, BOOTC_MANAGED_LABEL, ROLE_LABEL_PREFIX } from '../domain/labels.ts';

export const REGISTRY = 'quay.io/example/fedora-bootc-node';

/** A stable fake sha256 digest derived from a label. */
export function fakeDigest(label: string): string {
  return `sha256:${createHash('sha256').update(label).digest('hex')}`;
}
export function imageRef(label: string, repo = REGISTRY): string {
  return `${repo}@${fakeDigest(label)}`;
}

const T0 = '2026-09-14T08:00:00Z';
const cond = (type: string, status: string, reason: string, message = '') => ({ type, status, reason, message, lastTransitionTime: T0 });

export interface NodeOptions {
  name: string;
  role: string;
  zone: string;
  region?: string;
  ready?: boolean;
  cordoned?: boolean;
  instanceType?: string;
  createdAt?: string;
  annotations?: Record<string, string>;
  extraLabels?: Record<string, string>;
  bootc?: boolean;
}

export function nodeObject(o: NodeOptions): KObject {
  const region = o.region ?? o.zone.replace(/[a-z]$/, '');
  const labels: Record<string, string> = {
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': o.name,
    'kubernetes.io/os': 'linux',
    [`${ROLE_LABEL_PREFIX}${o.role}`]: '',
    'node.kubernetes.io/instance-type': o.instanceType ?? 'm6i.xlarge',
    'topology.kubernetes.io/region': region,
    [ZONE_LABEL]: o.zone,
    ...(o.bootc ? { [BOOTC_MANAGED_LABEL]: '' } : {}),
    ...(o.extraLabels ?? {}),
  };
  if (o.role === 'infra') labels[`${ROLE_LABEL_PREFIX}worker`] = '';
  if (o.role === 'master') labels[`${ROLE_LABEL_PREFIX}control-plane`] = '';
  const ready = o.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: o.name,
      labels,
      annotations: { 'machine.openshift.io/machine': `openshift-machine-api/${o.name}`, ...(o.annotations ?? {}) },
      creationTimestamp: o.createdAt ?? '2026-03-02T10:00:00Z',
    },
    spec: { providerID: `aws:///${o.zone}/i-${createHash('sha1').update(o.name).digest('hex').slice(0, 17)}`, ...(o.cordoned ? { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] } : {}) },
    status: {
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID'),
        ready ? cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status') : cond('Ready', 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.'),
      ],
      nodeInfo: { architecture: 'amd64', kubeletVersion: 'v1.35.3', operatingSystem: 'linux', containerRuntimeVersion: 'cri-o://1.35.2' },
    },
  };
}

export interface ImageEntry {
  image: string;
  version?: string;
  softRebootCapable?: boolean;
}

export interface BootcNodeOptions {
  name: string;
  pool: string;
  desiredImage: string;
  desiredImageState?: 'Staged' | 'Booted';
  booted: ImageEntry;
  staged?: ImageEntry | null;
  /** Idle condition reason: Idle (True) or Staging/Staged/Rebooting (False). */
  idle?: 'Idle' | 'Staging' | 'Staged' | 'Rebooting';
  degraded?: string | null;
  annotations?: Record<string, string>;
}

function imageInfo(e: ImageEntry) {
  const at = e.image.indexOf('@');
  return {
    image: e.image,
    imageDigest: at >= 0 ? e.image.slice(at + 1) : fakeDigest(e.image),
    version: e.version ?? '43.20260901.0',
    timestamp: '2026-09-01T06:12:00Z',
    architecture: 'amd64',
    softRebootCapable: e.softRebootCapable ?? false,
    incompatible: false,
  };
}

export function bootcNodeObject(o: BootcNodeOptions): KObject {
  const idle = o.idle ?? 'Idle';
  return {
    apiVersion: 'node.bootc.dev/v1alpha1',
    kind: 'BootcNode',
    metadata: {
      name: o.name,
      ownerReferences: [{ apiVersion: 'node.bootc.dev/v1alpha1', kind: 'BootcNodePool', name: o.pool, uid: uidOf(`bnp/${o.pool}`), controller: true }],
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: { desiredImage: o.desiredImage, desiredImageState: o.desiredImageState ?? 'Staged' },
    status: {
      booted: imageInfo(o.booted),
      ...(o.staged ? { staged: imageInfo(o.staged) } : {}),
      conditions: [
        idle === 'Idle' ? cond('Idle', 'True', 'Idle') : cond('Idle', 'False', idle),
        o.degraded ? cond('Degraded', 'True', 'Error', o.degraded) : cond('Degraded', 'False', 'Healthy'),
      ],
    },
  };
}

export function uidOf(s: string): string {
  const h = createHash('sha1').update(s).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export function bootcNodePoolObject(name: string, image: string, rollout: Record<string, unknown>, selector: Record<string, string>): KObject {
  return {
    apiVersion: 'node.bootc.dev/v1alpha1',
    kind: 'BootcNodePool',
    metadata: { name, uid: uidOf(`bnp/${name}`), generation: 4 },
    spec: { nodeSelector: { matchLabels: selector }, image: { ref: image }, rollout, disruption: { rebootPolicy: 'RebootOnly' } },
    status: {},
  };
}

export function machineConfigPoolObject(name: string, maxUnavailable: number | string | undefined, renderedConfig: string, selector: Record<string, string>, paused = false): KObject {
  return {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfigPool',
    metadata: { name, labels: { [`pools.operator.machineconfiguration.openshift.io/${name}`]: '' } },
    spec: {
      machineConfigSelector: { matchLabels: { 'machineconfiguration.openshift.io/role': name } },
      nodeSelector: { matchLabels: selector },
      paused,
      ...(maxUnavailable !== undefined ? { maxUnavailable } : {}),
      configuration: { name: renderedConfig },
    },
    status: {
      configuration: { name: renderedConfig },
      conditions: [cond('Updated', 'True', ''), cond('Updating', 'False', ''), cond('Degraded', 'False', '')],
    },
  };
}

export function renderedMachineConfig(name: string, pool: string, osImageURL: string): KObject {
  return {
    apiVersion: 'machineconfiguration.openshift.io/v1',
    kind: 'MachineConfig',
    metadata: {
      name,
      ownerReferences: [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: pool, controller: true }],
      annotations: { 'machineconfiguration.openshift.io/generated-by-controller-version': '4.22.3', 'machineconfiguration.openshift.io/release-image-version': '4.22.3' },
    },
    spec: { osImageURL, config: { ignition: { version: '3.5.0' } } },
  };
}

export function mcoAnnotations(rendered: string, state = 'Done'): Record<string, string> {
  return { [MCO_CURRENT_CONFIG]: rendered, [MCO_DESIRED_CONFIG]: rendered, [MCO_STATE]: state };
}

export interface GenerateOptions {
  workers: number;
  zones?: string[];
  region?: string;
  /** Fraction of workers already staged with the target (0..1). */
  stagedFraction?: number;
  softRebootCapableFraction?: number;
  cordoned?: number;
  notReady?: number;
  degraded?: number;
  /** Workers driven by bootc-operator (true) or MCO only (false). */
  bootc?: boolean;
  targetLabel?: string;
  currentLabel?: string;
}

/** A whole cluster: 3 MCO masters and N workers across zones, with the cluster singletons. */
export function generateCluster(o: GenerateOptions): KObject[] {
  const zones = o.zones ?? ['us-east-1a', 'us-east-1b', 'us-east-1c'];
  const region = o.region ?? 'us-east-1';
  const bootc = o.bootc ?? true;
  const current = imageRef(o.currentLabel ?? 'os-43.20260901.0');
  const target = imageRef(o.targetLabel ?? 'os-43.20261115.0');
  const rhcos = 'quay.io/openshift-release-dev/ocp-v4.0-art-dev@' + fakeDigest('rhcos-4.22.3');
  const renderedMaster = 'rendered-master-' + createHash('md5').update('m').digest('hex');
  const renderedWorker = 'rendered-worker-' + createHash('md5').update('w').digest('hex');
  const objs: KObject[] = [];
  for (let i = 0; i < 3; i++) {
    objs.push(nodeObject({ name: `master-${i}`, role: 'master', zone: zones[i % zones.length], region, instanceType: 'm6i.2xlarge', annotations: mcoAnnotations(renderedMaster) }));
  }
  const staged = Math.round((o.stagedFraction ?? 0) * o.workers);
  const soft = o.softRebootCapableFraction ?? 0;
  const width = String(o.workers).length;
  for (let i = 0; i < o.workers; i++) {
    const zone = zones[i % zones.length];
    const name = `worker-${zone.slice(-1)}-${String(Math.floor(i / zones.length)).padStart(width, '0')}`;
    const cordoned = i < (o.cordoned ?? 0);
    const notReady = i >= (o.cordoned ?? 0) && i < (o.cordoned ?? 0) + (o.notReady ?? 0);
    const degradedStart = (o.cordoned ?? 0) + (o.notReady ?? 0);
    const degraded = i >= degradedStart && i < degradedStart + (o.degraded ?? 0);
    const createdAt = new Date(Date.parse('2026-01-01T00:00:00Z') + (i * 7919 % o.workers) * 60000).toISOString().replace('.000', '');
    objs.push(nodeObject({
      name, role: 'worker', zone, region, cordoned, ready: !notReady, createdAt, bootc,
      annotations: bootc ? {} : mcoAnnotations(renderedWorker, degraded ? 'Degraded' : 'Done'),
    }));
    if (bootc) {
      const isStaged = i >= o.workers - staged;
      objs.push(bootcNodeObject({
        name, pool: 'worker', desiredImage: current,
        booted: { image: current },
        staged: isStaged ? { image: target, softRebootCapable: (i * 37) % 100 < soft * 100 } : null,
        idle: isStaged ? 'Staged' : 'Idle',
        degraded: degraded ? 'bootc stage failed: writing layer: no space left on device' : null,
      }));
    }
  }
  objs.push(machineConfigPoolObject('master', 1, renderedMaster, { [`${ROLE_LABEL_PREFIX}master`]: '' }));
  objs.push(machineConfigPoolObject('worker', 1, renderedWorker, { [`${ROLE_LABEL_PREFIX}worker`]: '' }));
  objs.push(renderedMachineConfig(renderedMaster, 'master', rhcos));
  objs.push(renderedMachineConfig(renderedWorker, 'worker', bootc ? rhcos : current));
  if (bootc) objs.push(bootcNodePoolObject('worker', current, { maxUnavailable: 1, paused: true }, { [`${ROLE_LABEL_PREFIX}worker`]: '' }));
  objs.push(...clusterSingletons({ region, zones, platform: 'AWS', version: '4.22.3' }));
  return objs;
}

export interface SingletonOptions {
  region: string;
  zones: string[];
  platform: string;
  version: string;
  machineManagers?: unknown[] | null;
  skewStatus?: unknown;
  featureGatesEnabled?: string[];
}

export const OLD_AMI = 'ami-0c5e8a3f1b2d4e6a7';
export const NEW_AMI = 'ami-09f3b1c7d5e2a8b46';

export function awsProviderSpec(zone: string, region: string, ami: string, instanceType: string) {
  return {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'AWSMachineProviderConfig',
    ami: { id: ami },
    instanceType,
    placement: { availabilityZone: zone, region },
    iamInstanceProfile: { id: 'prod-east-x7k2p-worker-profile' },
    credentialsSecret: { name: 'aws-cloud-credentials' },
    userDataSecret: { name: 'worker-user-data' },
    blockDevices: [{ ebs: { volumeSize: 120, volumeType: 'gp3', encrypted: true } }],
  };
}

export function machineSetObject(name: string, zone: string, region: string, ami: string, opts: { role?: string; replicas?: number; labels?: Record<string, string>; templateLabels?: Record<string, string>; ownerReferences?: KObject['metadata']['ownerReferences'] } = {}): KObject {
  const role = opts.role ?? 'worker';
  return {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'MachineSet',
    metadata: {
      name, namespace: 'openshift-machine-api',
      labels: { 'machine.openshift.io/cluster-api-cluster': 'prod-east-x7k2p', ...(opts.labels ?? {}) },
      ...(opts.ownerReferences ? { ownerReferences: opts.ownerReferences } : {}),
    },
    spec: {
      replicas: opts.replicas ?? 3,
      selector: { matchLabels: { 'machine.openshift.io/cluster-api-machineset': name } },
      template: {
        metadata: { labels: { 'machine.openshift.io/cluster-api-machine-role': role, 'machine.openshift.io/cluster-api-machine-type': role, 'machine.openshift.io/cluster-api-machineset': name, ...(opts.templateLabels ?? {}) } },
        spec: { providerSpec: { value: awsProviderSpec(zone, region, ami, role === 'infra' ? 'r6i.xlarge' : 'm6i.xlarge') } },
      },
    },
    status: { replicas: opts.replicas ?? 3, readyReplicas: opts.replicas ?? 3 },
  };
}

export function bootImagesStream(region: string, zones: string[], ami: string, version = '9.6.20261020-0') {
  const regions: Record<string, { release: string; image: string }> = {};
  for (const r of [region, 'us-west-2', 'eu-central-1']) regions[r] = { release: version, image: r === region ? ami : `ami-0${createHash('sha1').update(r).digest('hex').slice(0, 16)}` };
  void zones;
  return {
    stream: 'rhcos-4.22',
    metadata: { 'last-modified': '2026-10-21T09:00:00Z', generator: 'plume cosa2stream' },
    architectures: {
      x86_64: {
        artifacts: { aws: { release: version, formats: {} }, vmware: { release: version, formats: { ova: { disk: { location: `https://rhcos.example.com/${version}/rhcos-${version}-vmware.x86_64.ova`, sha256: createHash('sha256').update('ova').digest('hex') } } } } },
        images: {
          aws: { regions },
          gcp: { release: version, project: 'rhcos-cloud', name: `rhcos-${version.replace(/\./g, '-')}-gcp-x86-64` },
        },
        'rhel-coreos-extensions': {
          marketplace: { azure: { 'no-purchase-plan': { hyperVGen1: { publisher: 'azureopenshift', offer: 'aro4', sku: '422-v1', version: '422.96.20261020' }, hyperVGen2: { publisher: 'azureopenshift', offer: 'aro4', sku: '422-v2', version: '422.96.20261020' } } } },
        },
      },
    },
  };
}

export function clusterSingletons(o: SingletonOptions): KObject[] {
  const cpms: KObject = {
    apiVersion: 'machine.openshift.io/v1',
    kind: 'ControlPlaneMachineSet',
    metadata: { name: 'cluster', namespace: 'openshift-machine-api' },
    spec: {
      replicas: 3,
      state: 'Active',
      strategy: { type: 'RollingUpdate' },
      selector: { matchLabels: { 'machine.openshift.io/cluster-api-machine-role': 'master', 'machine.openshift.io/cluster-api-machine-type': 'master' } },
      template: {
        machineType: 'machines_v1beta1_machine_openshift_io',
        machines_v1beta1_machine_openshift_io: {
          metadata: { labels: { 'machine.openshift.io/cluster-api-cluster': 'prod-east-x7k2p', 'machine.openshift.io/cluster-api-machine-role': 'master', 'machine.openshift.io/cluster-api-machine-type': 'master' } },
          spec: { providerSpec: { value: { ...awsProviderSpec(o.zones[0], o.region, OLD_AMI, 'm6i.2xlarge'), placement: { region: o.region } } } },
        },
      },
    },
    status: { replicas: 3, readyReplicas: 3, updatedReplicas: 3 },
  };
  const mc: KObject = {
    apiVersion: 'operator.openshift.io/v1',
    kind: 'MachineConfiguration',
    metadata: { name: 'cluster' },
    spec: {
      logLevel: 'Normal', operatorLogLevel: 'Normal',
      ...(o.machineManagers !== null ? { managedBootImages: { machineManagers: o.machineManagers ?? [] } } : {}),
    },
    status: {
      ...(o.machineManagers !== null ? { managedBootImagesStatus: { machineManagers: o.machineManagers ?? [] } } : {}),
      bootImageSkewEnforcementStatus: o.skewStatus ?? { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.22.0' } },
    },
  };
  return [
    cpms,
    mc,
    {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: 'coreos-bootimages', namespace: 'openshift-machine-config-operator' },
      data: { releaseVersion: o.version, stream: JSON.stringify(bootImagesStream(o.region, o.zones, NEW_AMI)) },
    },
    {
      apiVersion: 'config.openshift.io/v1', kind: 'FeatureGate', metadata: { name: 'cluster' },
      spec: { featureSet: '' },
      status: { featureGates: [{ version: o.version, enabled: (o.featureGatesEnabled ?? ['ManagedBootImagesCPMS', 'BootImageSkewEnforcement']).map((name) => ({ name })), disabled: [{ name: 'ManagedBootImagesAWSCAPI' }] }] },
    },
    {
      apiVersion: 'config.openshift.io/v1', kind: 'Infrastructure', metadata: { name: 'cluster' },
      spec: { platformSpec: { type: o.platform } },
      status: { infrastructureName: 'prod-east-x7k2p', platform: o.platform, platformStatus: { type: o.platform, aws: { region: o.region } }, controlPlaneTopology: 'HighlyAvailable', infrastructureTopology: 'HighlyAvailable' },
    },
    {
      apiVersion: 'config.openshift.io/v1', kind: 'ClusterVersion', metadata: { name: 'version' },
      spec: { channel: 'stable-4.22', clusterID: uidOf('cluster') },
      status: {
        desired: { version: o.version, image: `quay.io/openshift-release-dev/ocp-release@${fakeDigest('ocp-' + o.version)}` },
        history: [{ state: 'Completed', version: o.version, startedTime: '2026-10-30T02:00:00Z', completionTime: '2026-10-30T03:10:00Z' }, { state: 'Completed', version: '4.22.0', startedTime: '2026-03-02T09:00:00Z', completionTime: '2026-03-02T10:00:00Z' }],
      },
    },
  ];
}
