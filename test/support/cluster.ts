/** Builders for test snapshots and specs: a few lines describe a cluster. */
import { stringify } from 'yaml';
import type { KObject, ClusterSnapshot, Condition } from '../../src/cluster/types.ts';
import { MCO_ROLE_LABEL, MCO_CURRENT_CONFIG, MCO_DESIRED_CONFIG, MCO_STATE } from '../../src/domain/labels.ts';
import { snapshotFromObjects } from '../../src/cluster/snapshot.ts';
import { imageRef } from '../../src/sim/fake-ids.ts';
import {
  nodeObject,
  bootcNodeObject,
  bootcNodePoolObject,
  machineConfigPoolObject,
  renderedMachineConfig,
  mcoAnnotations,
} from '../../src/sim/node-objects.ts';
import { clusterSingletons } from '../../src/sim/cluster-objects.ts';
import { simResolve } from '../../src/sim/bootc-operator.ts';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { buildPlan } from '../../src/plan/planner.ts';
import type { Plan } from '../../src/plan/types.ts';

/**
 * An object as tests build and adjust it: any field, odd values included (the readers are
 * tested against exactly such data), so spec and status are open.
 */
export type TestObject = KObject<any, any>;

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
  /** Node metadata.creationTimestamp (the MCO takes older nodes first). */
  createdAt?: string;
  /** Extra Node labels (e.g. a label another pool selects). */
  labels?: Record<string, string>;
  /** bootc pools: the Node exists but the bootc-operator has not created its BootcNode. */
  noBootcNode?: boolean;
  /** Node conditions set over the defaults, e.g. `{ DiskPressure: 'True' }` (a new type is added). */
  conditions?: Record<string, string>;
  /**
   * MCO node annotations set as given (currentConfig, desiredConfig, state), for bootc pools
   * too; `null` removes one. MCO-only pools start from the builder's own annotations.
   */
  mco?: { currentConfig?: string | null; desiredConfig?: string | null; state?: string | null };
}

const MCO_ANNOTATION = { currentConfig: MCO_CURRENT_CONFIG, desiredConfig: MCO_DESIRED_CONFIG, state: MCO_STATE } as const;

/** Applies a TestNode's extra conditions and MCO annotations to its Node object. */
function adjustNode(node: TestObject, n: TestNode): TestObject {
  for (const [type, status] of Object.entries(n.conditions ?? {})) {
    const list: Condition[] = (node.status.conditions ??= []);
    const c = list.find((x) => x.type === type);
    if (c) {
      c.status = status;
      c.reason = `Test${type}${status}`;
    } else list.push({ type, status, reason: `Test${type}${status}` });
  }
  for (const [k, v] of Object.entries(n.mco ?? {}) as [keyof typeof MCO_ANNOTATION, string | null][]) {
    const ann = (node.metadata.annotations ??= {});
    if (v === null) delete ann[MCO_ANNOTATION[k]];
    else ann[MCO_ANNOTATION[k]] = v;
  }
  return node;
}

export interface LabelSelectorLike {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

export class ClusterBuilder {
  objects: TestObject[] = [];
  constructor(withSingletons = true) {
    if (withSingletons)
      this.objects.push(
        ...clusterSingletons({
          region: 'us-east-1',
          zones: ['us-east-1a', 'us-east-1b', 'us-east-1c'],
          platform: 'AWS',
          version: '4.22.3',
          machineManagers: null,
        }),
      );
  }
  /**
   * A BootcNodePool (and its nodes). `selector` replaces the default role selector;
   * `ownerReferences` and `conditions` go on the pool as given.
   */
  bootcPool(
    name: string,
    nodes: TestNode[],
    opts: {
      role?: string;
      image?: string;
      maxUnavailable?: number | string;
      selector?: LabelSelectorLike;
      ownerReferences?: KObject['metadata']['ownerReferences'];
      conditions?: Condition[];
      /**
       * spec.image.ref is this tag, resolved as the simulator resolves it (status.targetDigest, and
       * every BootcNode's desiredImage name@digest), unless `tagUnresolved`.
       */
      tag?: string;
      tagUnresolved?: boolean;
    } = {},
  ): this {
    const role = opts.role ?? name;
    const pool: TestObject = bootcNodePoolObject(
      name,
      opts.tag ?? opts.image ?? OLD,
      { maxUnavailable: opts.maxUnavailable ?? 1, paused: true },
      { [`node-role.kubernetes.io/${role}`]: '' },
    );
    let desiredImage = opts.image ?? OLD;
    if (opts.tag && !opts.tagUnresolved) {
      pool.status.targetDigest = simResolve(opts.tag);
      pool.status.observedGeneration = pool.metadata.generation;
      desiredImage = `${opts.tag.replace(/:[^/:]+$/, '')}@${pool.status.targetDigest}`;
    }
    if (opts.selector) pool.spec.nodeSelector = opts.selector;
    // Infra nodes keep the worker role label (generate.ts nodeObject), and the bootc-operator
    // has no precedence between pools: a worker pool leaves them out, as a real one must.
    else if (role === 'worker') pool.spec.nodeSelector.matchExpressions = [{ key: 'node-role.kubernetes.io/infra', operator: 'DoesNotExist' }];
    if (opts.ownerReferences) pool.metadata.ownerReferences = opts.ownerReferences;
    if (opts.conditions) pool.status.conditions = opts.conditions;
    this.objects.push(pool);
    for (const n of nodes) {
      this.objects.push(
        adjustNode(
          nodeObject({
            name: n.name,
            role,
            zone: n.zone ?? 'us-east-1a',
            cordoned: n.cordoned,
            ready: !n.notReady,
            bootc: true,
            extraLabels: n.labels,
            createdAt: n.createdAt,
          }),
          n,
        ),
      );
      if (n.noBootcNode) continue;
      this.objects.push(
        bootcNodeObject({
          name: n.name,
          pool: name,
          desiredImage,
          booted: { image: n.current ? NEW : OLD },
          staged: n.staged ? { image: NEW, softRebootCapable: n.softRebootCapable } : null,
          idle: n.rebooting ? 'Rebooting' : n.staged ? 'Staged' : 'Idle',
          degraded: n.degraded ? 'bootc stage failed' : null,
        }),
      );
    }
    return this;
  }
  /** A MachineConfigPool driven by the MCO only (and its nodes). */
  mcoPool(
    name: string,
    nodes: TestNode[],
    opts: {
      role?: string;
      maxUnavailable?: number | string;
      paused?: boolean;
      /** The MachineConfig roles the pool renders (`role In [...]`): a custom pool inherits worker with ['worker', name]. */
      configRoles?: string[];
    } = {},
  ): this {
    const role = opts.role ?? name;
    const rendered = `rendered-${name}-0001`;
    const renderedNew = `rendered-${name}-0002`;
    const mcp: TestObject = machineConfigPoolObject(name, opts.maxUnavailable ?? 1, rendered, { [`node-role.kubernetes.io/${role}`]: '' }, opts.paused);
    if (opts.configRoles) mcp.spec.machineConfigSelector = { matchExpressions: [{ key: MCO_ROLE_LABEL, operator: 'In', values: opts.configRoles }] };
    this.objects.push(mcp);
    this.objects.push(renderedMachineConfig(rendered, name, OLD));
    this.objects.push(renderedMachineConfig(renderedNew, name, NEW));
    for (const n of nodes) {
      const ann = mcoAnnotations(n.current ? renderedNew : rendered, n.degraded ? 'Degraded' : n.rebooting ? 'Working' : 'Done');
      this.objects.push(
        adjustNode(
          nodeObject({
            name: n.name,
            role,
            zone: n.zone ?? 'us-east-1a',
            cordoned: n.cordoned,
            ready: !n.notReady,
            annotations: ann,
            extraLabels: n.labels,
            createdAt: n.createdAt,
          }),
          n,
        ),
      );
    }
    return this;
  }
  /**
   * The MachineConfigPool next to a bootc pool (OpenShift has one for every role): it selects
   * the same role and has rolled out `rendered-<name>-0001`.
   */
  machineConfigPool(name: string, opts: { role?: string } = {}): this {
    const rendered = `rendered-${name}-0001`;
    this.objects.push(machineConfigPoolObject(name, 1, rendered, { [`node-role.kubernetes.io/${opts.role ?? name}`]: '' }));
    if (!this.objects.some((o) => o.kind === 'MachineConfig' && o.metadata.name === rendered)) this.objects.push(renderedMachineConfig(rendered, name, OLD));
    return this;
  }
  /**
   * A MachineConfigPool in the middle of a rollout: the render controller wrote `rendered`
   * to spec.configuration.name (a rendered MachineConfig with `osImageURL` is added when it
   * does not exist) while status.configuration still names the old one; with
   * `updating: true` also Updated=False / Updating=True. `rendered: null` keeps spec and
   * status equal and only sets the conditions.
   */
  mcpRollout(name: string, rendered: string | null, opts: { osImageURL?: string; updating?: boolean } = {}): this {
    const mcp = this.object('MachineConfigPool', name);
    if (rendered !== null) {
      mcp.spec.configuration = { name: rendered };
      if (!this.objects.some((o) => o.kind === 'MachineConfig' && o.metadata.name === rendered))
        this.objects.push(renderedMachineConfig(rendered, name, opts.osImageURL ?? OLD));
    }
    if (opts.updating) {
      const to = mcp.spec.configuration.name;
      mcp.status.conditions = [
        { type: 'Updated', status: 'False', reason: '', message: '' },
        { type: 'Updating', status: 'True', reason: '', message: `All nodes are updating to MachineConfig ${to}` },
        { type: 'Degraded', status: 'False', reason: '', message: '' },
      ];
    }
    return this;
  }
  /** Adds labels to a Node already built. */
  labelNode(name: string, labels: Record<string, string>): this {
    const n = this.objects.find((o) => o.kind === 'Node' && o.metadata.name === name);
    if (!n) throw new Error(`no Node ${name} in the builder`);
    Object.assign((n.metadata.labels ??= {}), labels);
    return this;
  }
  /** A MachineConfig with `spec.osImageURL` for a MachineConfigPool's role: the MCO rolls that image on the pool. */
  osImageMachineConfig(pool: string, image = NEW, name = `99-${pool}-custom-os-image`): this {
    this.objects.push({
      apiVersion: 'machineconfiguration.openshift.io/v1',
      kind: 'MachineConfig',
      metadata: { name, labels: { [MCO_ROLE_LABEL]: pool } },
      spec: { osImageURL: image },
    });
    return this;
  }
  /** The first object of a kind (and name), to adjust it in a test. */
  object(kind: string, name?: string): TestObject {
    const o = this.objects.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
    if (!o) throw new Error(`no ${kind}${name ? ` ${name}` : ''} in the builder`);
    return o;
  }
  /** ClusterVersion status.desired.version (and the FeatureGate entry that goes with it). */
  version(v: string): this {
    this.object('ClusterVersion').status.desired.version = v;
    for (const e of this.object('FeatureGate').status.featureGates) e.version = v;
    return this;
  }
  /** Infrastructure status.platformStatus: Azure, with the given cloudName (AzureStackCloud is Azure Stack Hub). */
  azure(cloudName = 'AzurePublicCloud'): this {
    const infra = this.object('Infrastructure');
    infra.spec.platformSpec = { type: 'Azure' };
    infra.status.platform = 'Azure';
    infra.status.platformStatus = { type: 'Azure', azure: { cloudName, resourceGroupName: 'prod-east-x7k2p-rg' } };
    return this;
  }
  /** MachineConfiguration/cluster metadata.generation and status.observedGeneration (null: absent). */
  machineConfigurationGenerations(generation: number, observedGeneration: number | null): this {
    const mc = this.object('MachineConfiguration');
    mc.metadata.generation = generation;
    if (observedGeneration === null) delete mc.status.observedGeneration;
    else mc.status.observedGeneration = observedGeneration;
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

/** `bootcOperator`: what the bootc-operator can do (PlanInput.bootcOperator); default the installed one. */
export function planFor(specText: string, snapshot: ClusterSnapshot, bootcOperator?: { softReboot: boolean }): Plan {
  const loaded = parseRolloutSpec(specText, 'spec.yaml');
  if (!loaded.spec) throw new Error('spec invalid: ' + JSON.stringify(loaded.diagnostics, null, 1));
  return buildPlan({
    spec: loaded.spec,
    specMap: loaded.map,
    snapshot,
    specDiagnostics: loaded.diagnostics,
    specInfo: { name: 'test', path: 'spec.yaml', ref: null, commit: null, sha256: loaded.sha256, dirty: null },
    bootcOperator,
  });
}

export function nodes(prefix: string, count: number, zones = ['us-east-1a', 'us-east-1b', 'us-east-1c'], extra: Partial<TestNode> = {}): TestNode[] {
  return Array.from({ length: count }, (_, i) => ({ name: `${prefix}-${String(i).padStart(2, '0')}`, zone: zones[i % zones.length], ...extra }));
}
