/**
 * Builders of the cluster-wide objects of a generated OpenShift 4.22 cluster on AWS: its
 * singletons (ControlPlaneMachineSet, MachineConfiguration, the coreos-bootimages ConfigMap,
 * FeatureGate, Infrastructure, ClusterVersion), its MachineSets with their AWS providerSpecs,
 * and the boot-image stream. The boot-image rules read them (src/domain/bootimages*.ts).
 * Deterministic: the same options give the same objects.
 */
import { createHash } from 'node:crypto';
import type { KObject } from '../cluster/types.ts';
import { fakeDigest, uidOf } from './fake-ids.ts';

interface SingletonOptions {
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

export function machineSetObject(
  name: string,
  zone: string,
  region: string,
  ami: string,
  opts: {
    role?: string;
    replicas?: number;
    labels?: Record<string, string>;
    templateLabels?: Record<string, string>;
    ownerReferences?: KObject['metadata']['ownerReferences'];
  } = {},
): KObject {
  const role = opts.role ?? 'worker';
  return {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'MachineSet',
    metadata: {
      name,
      namespace: 'openshift-machine-api',
      labels: { 'machine.openshift.io/cluster-api-cluster': 'prod-east-x7k2p', ...(opts.labels ?? {}) },
      ...(opts.ownerReferences ? { ownerReferences: opts.ownerReferences } : {}),
    },
    spec: {
      replicas: opts.replicas ?? 3,
      selector: { matchLabels: { 'machine.openshift.io/cluster-api-machineset': name } },
      template: {
        metadata: {
          labels: {
            'machine.openshift.io/cluster-api-machine-role': role,
            'machine.openshift.io/cluster-api-machine-type': role,
            'machine.openshift.io/cluster-api-machineset': name,
            ...(opts.templateLabels ?? {}),
          },
        },
        spec: { providerSpec: { value: awsProviderSpec(zone, region, ami, role === 'infra' ? 'r6i.xlarge' : 'm6i.xlarge') } },
      },
    },
    status: { replicas: opts.replicas ?? 3, readyReplicas: opts.replicas ?? 3 },
  };
}

export function bootImagesStream(region: string, zones: string[], ami: string, version = '9.6.20261020-0') {
  const regions: Record<string, { release: string; image: string }> = {};
  for (const r of [region, 'us-west-2', 'eu-central-1'])
    regions[r] = { release: version, image: r === region ? ami : `ami-0${createHash('sha1').update(r).digest('hex').slice(0, 16)}` };
  void zones;
  return {
    stream: 'rhcos-4.22',
    metadata: { 'last-modified': '2026-10-21T09:00:00Z', generator: 'plume cosa2stream' },
    architectures: {
      x86_64: {
        artifacts: {
          aws: { release: version, formats: {} },
          vmware: {
            release: version,
            formats: {
              ova: {
                disk: {
                  location: `https://rhcos.example.com/${version}/rhcos-${version}-vmware.x86_64.ova`,
                  sha256: createHash('sha256').update('ova').digest('hex'),
                },
              },
            },
          },
        },
        images: {
          aws: { regions },
          gcp: { release: version, project: 'rhcos-cloud', name: `rhcos-${version.replace(/\./g, '-')}-gcp-x86-64` },
        },
        'rhel-coreos-extensions': {
          marketplace: {
            azure: {
              'no-purchase-plan': {
                hyperVGen1: { publisher: 'azureopenshift', offer: 'aro4', sku: '422-v1', version: '422.96.20261020' },
                hyperVGen2: { publisher: 'azureopenshift', offer: 'aro4', sku: '422-v2', version: '422.96.20261020' },
              },
            },
          },
        },
      },
    },
  };
}

/** The cluster singletons bootcplan reads, in the order a snapshot lists them. */
export function clusterSingletons(o: SingletonOptions): KObject[] {
  return [
    controlPlaneMachineSetObject(o),
    machineConfigurationObject(o),
    bootImagesConfigMap(o),
    featureGateObject(o),
    infrastructureObject(o),
    clusterVersionObject(o),
  ];
}

/** The ControlPlaneMachineSet `cluster`: three masters on AWS, the old boot image in its template. */
function controlPlaneMachineSetObject(o: SingletonOptions): KObject {
  return {
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
          metadata: {
            labels: {
              'machine.openshift.io/cluster-api-cluster': 'prod-east-x7k2p',
              'machine.openshift.io/cluster-api-machine-role': 'master',
              'machine.openshift.io/cluster-api-machine-type': 'master',
            },
          },
          spec: { providerSpec: { value: { ...awsProviderSpec(o.zones[0], o.region, OLD_AMI, 'm6i.2xlarge'), placement: { region: o.region } } } },
        },
      },
    },
    status: { replicas: 3, readyReplicas: 3, updatedReplicas: 3 },
  };
}

/** The MachineConfiguration `cluster`: its managed boot images (absent when `machineManagers` is null) and skew enforcement. */
function machineConfigurationObject(o: SingletonOptions): KObject {
  return {
    apiVersion: 'operator.openshift.io/v1',
    kind: 'MachineConfiguration',
    metadata: { name: 'cluster' },
    spec: {
      logLevel: 'Normal',
      operatorLogLevel: 'Normal',
      ...(o.machineManagers !== null ? { managedBootImages: { machineManagers: o.machineManagers ?? [] } } : {}),
    },
    status: {
      ...(o.machineManagers !== null ? { managedBootImagesStatus: { machineManagers: o.machineManagers ?? [] } } : {}),
      bootImageSkewEnforcementStatus: o.skewStatus ?? { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.22.0' } },
    },
  };
}

/** The `coreos-bootimages` ConfigMap: the release and the stream the MCO takes boot images from (docs/design.md §7). */
function bootImagesConfigMap(o: SingletonOptions): KObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'coreos-bootimages', namespace: 'openshift-machine-config-operator' },
    data: { releaseVersion: o.version, stream: JSON.stringify(bootImagesStream(o.region, o.zones, NEW_AMI)) },
  };
}

/** The FeatureGate `cluster`: the boot-image gates enabled by default. */
function featureGateObject(o: SingletonOptions): KObject {
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'FeatureGate',
    metadata: { name: 'cluster' },
    spec: { featureSet: '' },
    status: {
      featureGates: [
        {
          version: o.version,
          enabled: (o.featureGatesEnabled ?? ['ManagedBootImagesCPMS', 'BootImageSkewEnforcement']).map((name) => ({ name })),
          disabled: [{ name: 'ManagedBootImagesAWSCAPI' }],
        },
      ],
    },
  };
}

/** The Infrastructure `cluster`: the platform and its region. */
function infrastructureObject(o: SingletonOptions): KObject {
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'Infrastructure',
    metadata: { name: 'cluster' },
    spec: { platformSpec: { type: o.platform } },
    status: {
      infrastructureName: 'prod-east-x7k2p',
      platform: o.platform,
      platformStatus: { type: o.platform, aws: { region: o.region } },
      controlPlaneTopology: 'HighlyAvailable',
      infrastructureTopology: 'HighlyAvailable',
    },
  };
}

/** The ClusterVersion `version`: its clusterID (a cluster's identity) and its update history. */
function clusterVersionObject(o: SingletonOptions): KObject {
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'ClusterVersion',
    metadata: { name: 'version' },
    spec: { channel: 'stable-4.22', clusterID: uidOf('cluster') },
    status: {
      desired: { version: o.version, image: `quay.io/openshift-release-dev/ocp-release@${fakeDigest('ocp-' + o.version)}` },
      history: [
        { state: 'Completed', version: o.version, startedTime: '2026-10-30T02:00:00Z', completionTime: '2026-10-30T03:10:00Z' },
        { state: 'Completed', version: '4.22.0', startedTime: '2026-03-02T09:00:00Z', completionTime: '2026-03-02T10:00:00Z' },
      ],
    },
  };
}
