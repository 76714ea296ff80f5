/** Builders for the boot-image tests: a cluster in a few options, a spec in a few lines. */
import { stringify } from 'yaml';
import type { KObject, ClusterSnapshot } from '../../src/cluster/types.ts';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { clusterSingletons, machineSetObject, OLD_AMI, NEW_AMI } from '../../src/sim/cluster-objects.ts';
import { parseRolloutSpec, type LoadedSpec } from '../../src/rollout-spec/load.ts';
import { planBootImages, type BootImagesResult } from '../../src/plan/bootimages.ts';
import { buildPlan } from '../../src/plan/planner.ts';
import type { Plan } from '../../src/plan/types.ts';
import type { Diagnostic } from '../../src/base/diagnostics.ts';
import type { TestObject } from './cluster.ts';

export { OLD_AMI, NEW_AMI };
export const REGION = 'us-east-1';
export const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
export const MS = (mode: string, partial?: unknown) => ({
  resource: 'machinesets',
  apiGroup: 'machine.openshift.io',
  selection: { mode, ...(partial ? { partial } : {}) },
});
export const CP = (mode: string) => ({ resource: 'controlplanemachinesets', apiGroup: 'machine.openshift.io', selection: { mode } });

export interface ClusterOpts {
  platform?: string;
  version?: string;
  /** Enabled gates; null: no FeatureGate object in the snapshot. */
  gates?: string[] | null;
  /** MachineConfiguration spec.managedBootImages.machineManagers; null: field absent. */
  machineManagers?: unknown[] | null;
  /** status.managedBootImagesStatus.machineManagers; undefined: same as spec; null: absent. */
  statusManagers?: unknown[] | null;
  skewStatus?: unknown;
  /** MachineConfiguration spec.bootImageSkewEnforcement */
  specSkew?: unknown;
  machineSets?: KObject[];
  /** Changes to the ControlPlaneMachineSet (spec/status merged shallowly). */
  cpms?: {
    strategy?: string | null;
    state?: string;
    updatedReplicas?: number;
    providerSpec?: unknown;
    ownerReferences?: KObject['metadata']['ownerReferences'];
  } | null;
  noConfigMap?: boolean;
  noMachineConfiguration?: boolean;
  multiArch?: boolean;
}

export function clusterObjects(o: ClusterOpts = {}): KObject[] {
  const version = o.version ?? '4.22.3';
  const objs = clusterSingletons({
    region: REGION,
    zones: ZONES,
    platform: o.platform ?? 'AWS',
    version,
    machineManagers: o.machineManagers === undefined ? null : o.machineManagers,
    skewStatus: o.skewStatus,
    featureGatesEnabled: o.gates ?? undefined,
  });
  const out: KObject[] = [];
  for (const obj of objs as TestObject[]) {
    if (obj.kind === 'FeatureGate' && o.gates === null) continue;
    if (obj.kind === 'ConfigMap' && o.noConfigMap) continue;
    if (obj.kind === 'MachineConfiguration') {
      if (o.noMachineConfiguration) continue;
      if (o.statusManagers === null) delete obj.status.managedBootImagesStatus;
      else if (o.statusManagers !== undefined) obj.status.managedBootImagesStatus = { machineManagers: o.statusManagers };
      if (o.specSkew !== undefined) obj.spec.bootImageSkewEnforcement = o.specSkew;
    }
    if (obj.kind === 'ClusterVersion' && o.multiArch) obj.status.desired.architecture = 'Multi';
    if (obj.kind === 'ControlPlaneMachineSet') {
      if (o.cpms === null) continue;
      const c = o.cpms ?? {};
      if (c.strategy === null) delete obj.spec.strategy;
      else if (c.strategy) obj.spec.strategy = { type: c.strategy };
      if (c.state) obj.spec.state = c.state;
      if (c.updatedReplicas !== undefined) obj.status.updatedReplicas = c.updatedReplicas;
      if (c.providerSpec) obj.spec.template.machines_v1beta1_machine_openshift_io.spec.providerSpec.value = c.providerSpec;
      if (c.ownerReferences) obj.metadata.ownerReferences = c.ownerReferences;
    }
    out.push(obj);
  }
  out.push(...(o.machineSets ?? [machineSetObject('w-us-east-1a', 'us-east-1a', REGION, OLD_AMI)]));
  return out;
}

export function cluster(o: ClusterOpts = {}): ClusterSnapshot {
  return snapshotFromObjects(clusterObjects(o), 'test');
}

/** A Rollout spec (YAML text) with the given spec fields. */
export function specText(spec: Record<string, unknown>): string {
  return stringify({ apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 'bi' }, spec });
}

export function load(spec: Record<string, unknown> | string): LoadedSpec {
  const text = typeof spec === 'string' ? spec : specText(spec);
  return parseRolloutSpec(text, 'bi.yaml');
}

/** planBootImages on a valid spec (throws on spec errors, so tests state what they expect). */
export function plan(spec: Record<string, unknown>, o: ClusterOpts | ClusterSnapshot = {}): BootImagesResult {
  const loaded = load(spec);
  if (!loaded.spec) throw new Error('spec invalid: ' + loaded.diagnostics.map((d) => `${d.path}: ${d.message}`).join('; '));
  const snapshot = 'fingerprint' in o ? o : cluster(o);
  return planBootImages({ spec: loaded.spec, specMap: loaded.map, snapshot });
}

export function fullPlan(spec: Record<string, unknown>, o: ClusterOpts = {}): Plan {
  const loaded = load(spec);
  if (!loaded.spec) throw new Error('spec invalid');
  return buildPlan({
    spec: loaded.spec,
    specMap: loaded.map,
    snapshot: cluster(o),
    specDiagnostics: loaded.diagnostics,
    specInfo: { name: 'bi', path: 'bi.yaml', ref: null, commit: null, sha256: loaded.sha256, dirty: null },
  });
}

export const codes = (ds: readonly Diagnostic[], severity?: 'error' | 'warning') =>
  ds
    .filter((d) => !severity || d.severity === severity)
    .map((d) => d.code)
    .sort();
export const errors = (ds: readonly Diagnostic[]) => ds.filter((d) => d.severity === 'error');

export function gcpProviderSpec(image: string) {
  return {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'GCPMachineProviderSpec',
    zone: 'us-central1-a',
    region: 'us-central1',
    disks: [
      { boot: true, image, sizeGb: 128 },
      { boot: false, image: 'projects/x/global/images/data' },
    ],
  };
}
export function azureProviderSpec(image: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'machine.openshift.io/v1beta1', kind: 'AzureMachineProviderSpec', location: 'eastus', image, ...extra };
}
export function vsphereProviderSpec(template: string) {
  return {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'VSphereMachineProviderSpec',
    template,
    workspace: { server: 'vcenter.example.com', datacenter: 'dc1' },
  };
}

/** A MachineSet with the given providerSpec (any platform). */
export function machineSetWith(
  name: string,
  providerSpec: unknown,
  opts: Parameters<typeof machineSetObject>[4] & { annotations?: Record<string, string> } = {},
): KObject {
  const ms: TestObject = machineSetObject(name, 'us-east-1a', REGION, OLD_AMI, opts);
  ms.spec.template.spec.providerSpec.value = providerSpec;
  if (opts.annotations) ms.metadata.annotations = opts.annotations;
  return ms;
}
