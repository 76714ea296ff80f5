/**
 * Builders of realistic Node and BootcNode objects and of the pools that roll them
 * (BootcNodePool; MachineConfigPool with its rendered MachineConfig and the MCO's node
 * annotations), as the API server stores them. Used by the generated clusters
 * (src/sim/generate.ts), the bundled example, property tests and rehearsals.
 */
import { createHash } from 'node:crypto';
import type { KObject } from '../cluster/types.ts';
import { ZONE_LABEL, MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE, BOOTC_MANAGED_LABEL, ROLE_LABEL_PREFIX } from '../domain/labels.ts';
import { fakeDigest, uidOf } from './fake-ids.ts';

const T0 = '2026-09-14T08:00:00Z';
const cond = (type: string, status: string, reason: string, message = '') => ({ type, status, reason, message, lastTransitionTime: T0 });

interface NodeOptions {
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
    spec: {
      providerID: `aws:///${o.zone}/i-${createHash('sha1').update(o.name).digest('hex').slice(0, 17)}`,
      ...(o.cordoned ? { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] } : {}),
    },
    status: {
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID'),
        ready
          ? cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status')
          : cond('Ready', 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.'),
      ],
      nodeInfo: { architecture: 'amd64', kubeletVersion: 'v1.35.3', operatingSystem: 'linux', containerRuntimeVersion: 'cri-o://1.35.2' },
    },
  };
}

interface ImageEntry {
  image: string;
  version?: string;
  softRebootCapable?: boolean;
}

interface BootcNodeOptions {
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

export function bootcNodePoolObject(name: string, image: string, rollout: Record<string, unknown>, selector: Record<string, string>): KObject {
  return {
    apiVersion: 'node.bootc.dev/v1alpha1',
    kind: 'BootcNodePool',
    metadata: { name, uid: uidOf(`bnp/${name}`), generation: 4 },
    spec: { nodeSelector: { matchLabels: selector }, image: { ref: image }, rollout, disruption: { rebootPolicy: 'RebootOnly' } },
    status: {},
  };
}

export function machineConfigPoolObject(
  name: string,
  maxUnavailable: number | string | undefined,
  renderedConfig: string,
  selector: Record<string, string>,
  paused = false,
): KObject {
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
      annotations: {
        'machineconfiguration.openshift.io/generated-by-controller-version': '4.22.3',
        'machineconfiguration.openshift.io/release-image-version': '4.22.3',
      },
    },
    spec: { osImageURL, config: { ignition: { version: '3.5.0' } } },
  };
}

export function mcoAnnotations(rendered: string, state = 'Done'): Record<string, string> {
  return { [MCO_CURRENT_CONFIG]: rendered, [MCO_DESIRED_CONFIG]: rendered, [MCO_STATE]: state };
}
