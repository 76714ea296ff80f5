/** Builders for test snapshots and specs: a few lines describe a cluster. */
import { stringify } from 'yaml';
import type { KObject, ClusterSnapshot } from '../src/cluster/types.ts';
import { snapshotFromObjects } from '../src/cluster/snapshot.ts';
import {
  nodeObject, bootcNodeObject, bootcNodePoolObject, machineConfigPoolObject, renderedMachineConfig, mcoAnnotations,
  clusterSingletons, imageRef,
} from '../src/sim/generate.ts';
import { parseRolloutSpec } from '../src/spec/load.ts';
import { buildPlan } from '../src/plan/planner.ts';
import type { Plan } from '../src/plan/types.ts';

export const OLD = imageRef('test-old');
export const NEW = imageRef('test-new');
export const NEW_DIGEST = NEW.slice(NEW.indexOf('@') + 1);

export interface TestNode {
  name: string;
  zone?: string;
  cordoned?: boolean;
  notReady?: boolean;
  degraded?: boolean;
  /** already running the target */
  current?: boolean;
  staged?: boolean;
  softRebootCapable?: boolean;
  rebooting?: boolean;
}

export class ClusterBuilder {
  objects: KObject[] = [];
  constructor(withSingletons = true) {
    if (withSingletons) this.objects.push(...clusterSingletons({ region: 'us-east-1', zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'], platform: 'AWS', version: '4.22.3', machineManagers: null }));
  }
  /** A BootcNodePool (and its nodes). */
  bootcPool(name: string, nodes: TestNode[], opts: { role?: string; image?: string; maxUnavailable?: number | string } = {}): this {
    const role = opts.role ?? name;
    this.objects.push(bootcNodePoolObject(name, opts.image ?? OLD, { maxUnavailable: opts.maxUnavailable ?? 1, paused: true }, { [`node-role.kubernetes.io/${role}`]: '' }));
    for (const n of nodes) {
      this.objects.push(nodeObject({ name: n.name, role, zone: n.zone ?? 'us-east-1a', cordoned: n.cordoned, ready: !n.notReady, bootc: true }));
      this.objects.push(bootcNodeObject({
        name: n.name, pool: name, desiredImage: opts.image ?? OLD,
        booted: { image: n.current ? NEW : OLD },
        staged: n.staged ? { image: NEW, softRebootCapable: n.softRebootCapable } : null,
        idle: n.rebooting ? 'Rebooting' : n.staged ? 'Staged' : 'Idle',
        degraded: n.degraded ? 'bootc stage failed' : null,
      }));
    }
    return this;
  }
  /** A MachineConfigPool driven by the MCO only (and its nodes). */
  mcoPool(name: string, nodes: TestNode[], opts: { role?: string; maxUnavailable?: number | string; paused?: boolean } = {}): this {
    const role = opts.role ?? name;
    const rendered = `rendered-${name}-0001`;
    const renderedNew = `rendered-${name}-0002`;
    this.objects.push(machineConfigPoolObject(name, opts.maxUnavailable ?? 1, rendered, { [`node-role.kubernetes.io/${role}`]: '' }, opts.paused));
    this.objects.push(renderedMachineConfig(rendered, name, OLD));
    this.objects.push(renderedMachineConfig(renderedNew, name, NEW));
    for (const n of nodes) {
      const ann = mcoAnnotations(n.current ? renderedNew : rendered, n.degraded ? 'Degraded' : n.rebooting ? 'Working' : 'Done');
      this.objects.push(nodeObject({ name: n.name, role, zone: n.zone ?? 'us-east-1a', cordoned: n.cordoned, ready: !n.notReady, annotations: ann }));
    }
    return this;
  }
  add(...objs: KObject[]): this {
    this.objects.push(...objs);
    return this;
  }
  snapshot(): ClusterSnapshot {
    return snapshotFromObjects(this.objects, 'test');
  }
  yaml(): string {
    return stringify({ apiVersion: 'v1', kind: 'List', items: this.objects });
  }
}

export function specYaml(pools: Record<string, unknown>[], extra: Record<string, unknown> = {}): string {
  return stringify({ apiVersion: 'bootcplan.dev/v1alpha1', kind: 'Rollout', metadata: { name: 'test' }, spec: { pools, ...extra } });
}

export function planFor(specText: string, snapshot: ClusterSnapshot): Plan {
  const loaded = parseRolloutSpec(specText, 'spec.yaml');
  if (!loaded.spec) throw new Error('spec invalid: ' + JSON.stringify(loaded.diagnostics, null, 1));
  return buildPlan({ spec: loaded.spec, specMap: loaded.map, snapshot, specDiagnostics: loaded.diagnostics, specInfo: { name: 'test', path: 'spec.yaml', ref: null, commit: null, sha256: loaded.sha256, dirty: null } });
}

export function nodes(prefix: string, count: number, zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'], extra: Partial<TestNode> = {}): TestNode[] {
  return Array.from({ length: count }, (_, i) => ({ name: `${prefix}-${String(i).padStart(2, '0')}`, zone: zones[i % zones.length], ...extra }));
}
