/**
 * Typed views of the kinds bootcplan reads, and the check that makes them true. Each view types
 * the fields bootcplan reads of a kind, as the upstream API defines them (k8s.io/api core/v1,
 * openshift/api, bootc-dev/bootc-operator api/v1alpha1); `null` stands where a file or an answer
 * may write it for an absent value. Fields read only through guards of their own (a
 * providerSpec, FeatureGate status) stay `unknown`.
 *
 * An object is narrowed to its view only after `objectShapeProblem` found nothing wrong: where
 * a snapshot file is read (src/cluster/snapshot-file.ts) and where an API answer or a watch event
 * comes in (src/kube/answers.ts). Past those two doors the types hold.
 */
import type { MachineManager } from '../base/api-types.ts';
import { type Ctx, type ObjectSchema, type Schema, isPlainObject, validate } from '../base/schema.ts';
import type { Condition, KObject } from './objects.ts';

/** metav1.LabelSelector as an object of the cluster holds it (null stands for absent). */
export interface ClusterLabelSelector {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: { key: string; operator: string; values?: string[] | null }[] | null;
}

/** core/v1 Node. */
interface NodeSpec {
  unschedulable?: boolean | null;
  taints?: unknown;
}
interface NodeStatus {
  conditions?: Condition[] | null;
}
export type NodeObject = KObject<NodeSpec, NodeStatus>;

/** bootc-operator BootcNode (api/v1alpha1 bootcnode_types.go): one per node, named after it. */
export interface BootEntry {
  image?: string | null;
  imageDigest?: string | null;
  softRebootCapable?: boolean | null;
  /** The entry has local mutations bootc cannot manage, e.g. rpm-ostree package layering (BootEntryStatus.incompatible). */
  incompatible?: boolean | null;
  [k: string]: unknown;
}
interface BootcNodeSpec {
  desiredImage?: string | null;
  desiredImageState?: string | null;
}
interface BootcNodeStatus {
  booted?: BootEntry | null;
  staged?: BootEntry | null;
  rollback?: BootEntry | null;
  conditions?: Condition[] | null;
}
export type BootcNodeObject = KObject<BootcNodeSpec, BootcNodeStatus>;

/** bootc-operator BootcNodePool (api/v1alpha1 bootcnodepool_types.go). */
interface BootcNodePoolSpec {
  image?: { ref?: string | null } | null;
  nodeSelector?: ClusterLabelSelector | null;
  rollout?: {
    paused?: boolean | null;
    maxUnavailable?: number | string | null;
    drainTimeoutSeconds?: number | null;
    rebootTimeoutSeconds?: number | null;
  } | null;
  disruption?: { rebootPolicy?: string | null } | null;
}
interface BootcNodePoolStatus {
  targetDigest?: string | null;
  observedGeneration?: number | null;
  conditions?: Condition[] | null;
}
export type BootcNodePoolObject = KObject<BootcNodePoolSpec, BootcNodePoolStatus>;

/** machineconfiguration.openshift.io/v1 MachineConfigPool. */
interface MachineConfigPoolSpec {
  paused?: boolean | null;
  maxUnavailable?: number | string | null;
  nodeSelector?: ClusterLabelSelector | null;
  machineConfigSelector?: ClusterLabelSelector | null;
  configuration?: { name?: string | null } | null;
}
interface MachineConfigPoolStatus {
  configuration?: { name?: string | null } | null;
  conditions?: Condition[] | null;
}
export type MachineConfigPoolObject = KObject<MachineConfigPoolSpec, MachineConfigPoolStatus>;

/** machineconfiguration.openshift.io/v1 MachineConfig (only its OS image is read). */
interface MachineConfigSpec {
  osImageURL?: string | null;
  [k: string]: unknown;
}
export type MachineConfigObject = KObject<MachineConfigSpec, unknown>;

/** machine.openshift.io/v1beta1 MachineSet: the providerSpec is the platform's own (domain/bootimages-platform.ts). */
interface MachineSetSpec {
  replicas?: number | null;
  template?: { metadata?: { labels?: Record<string, string> | null } | null; spec?: { providerSpec?: { value?: unknown } | null } | null } | null;
}
interface MachineSetStatus {
  authoritativeAPI?: string | null;
}
export type MachineSetObject = KObject<MachineSetSpec, MachineSetStatus>;

/** machine.openshift.io/v1 ControlPlaneMachineSet `openshift-machine-api/cluster`. */
interface ControlPlaneMachineSetSpec {
  state?: string | null;
  replicas?: number | null;
  strategy?: { type?: string | null } | null;
  template?: {
    machines_v1beta1_machine_openshift_io?: {
      metadata?: { labels?: Record<string, string> | null } | null;
      spec?: { providerSpec?: { value?: unknown } | null } | null;
    } | null;
  } | null;
}
interface ControlPlaneMachineSetStatus {
  replicas?: number | null;
  updatedReplicas?: number | null;
  authoritativeAPI?: string | null;
}
export type ControlPlaneMachineSetObject = KObject<ControlPlaneMachineSetSpec, ControlPlaneMachineSetStatus>;

/** operator.openshift.io/v1 MachineConfiguration `cluster`: boot images and skew enforcement. */
interface MachineConfigurationSpec {
  managedBootImages?: { machineManagers?: MachineManager[] | null } | null;
  bootImageSkewEnforcement?: { mode?: string | null; [k: string]: unknown } | null;
}
interface MachineConfigurationStatus {
  observedGeneration?: number | null;
  managedBootImagesStatus?: { machineManagers?: MachineManager[] | null } | null;
  bootImageSkewEnforcementStatus?: { mode?: string | null; [k: string]: unknown } | null;
}
export type MachineConfigurationObject = KObject<MachineConfigurationSpec, MachineConfigurationStatus>;

/** config.openshift.io/v1 FeatureGate `cluster`: status.featureGates is read through guards (bootimages-cluster.ts). */
interface FeatureGateStatus {
  featureGates?: unknown;
}
export type FeatureGateObject = KObject<unknown, FeatureGateStatus>;

/** config.openshift.io/v1 Infrastructure `cluster`. */
interface InfrastructureStatus {
  platform?: string | null;
  platformStatus?: { type?: string | null; azure?: { cloudName?: string | null } | null } | null;
  infrastructureName?: string | null;
}
export type InfrastructureObject = KObject<unknown, InfrastructureStatus>;

/** config.openshift.io/v1 ClusterVersion `version`. */
interface ClusterVersionSpec {
  clusterID?: string | null;
}
interface ClusterVersionStatus {
  desired?: { version?: string | null; architecture?: string | null } | null;
  /** Newest first (config/v1 UpdateHistory): the oldest Completed entry is the install version. */
  history?: { state?: string | null; version?: string | null }[] | null;
}
export type ClusterVersionObject = KObject<ClusterVersionSpec, ClusterVersionStatus>;

/** coordination.k8s.io/v1 Lease (bootcplan's lock). */
interface LeaseSpec {
  holderIdentity?: string | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseDurationSeconds?: number | null;
  leaseTransitions?: number | null;
}
export type LeaseObject = KObject<LeaseSpec, unknown>;

/** core/v1 ConfigMap: string values (binaryData is not read). */
export type ConfigMapObject = KObject<unknown, unknown>;

/** Any object whose status carries conditions (metav1.Condition or the MCO's own). */
export type ObjectWithConditions = KObject<unknown, { conditions?: Condition[] | null }>;

/** The views by kind. Kinds not listed are read as plain KObjects (metadata only). */
export interface KindViews {
  Node: NodeObject;
  BootcNode: BootcNodeObject;
  BootcNodePool: BootcNodePoolObject;
  MachineConfigPool: MachineConfigPoolObject;
  MachineConfig: MachineConfigObject;
  MachineSet: MachineSetObject;
  ControlPlaneMachineSet: ControlPlaneMachineSetObject;
  MachineConfiguration: MachineConfigurationObject;
  FeatureGate: FeatureGateObject;
  Infrastructure: InfrastructureObject;
  ClusterVersion: ClusterVersionObject;
  Lease: LeaseObject;
  ConfigMap: ConfigMapObject;
}
export type ViewOf<K extends string> = K extends keyof KindViews ? KindViews[K] : KObject;

// ---- what each view promises, as a schema (base/schema.ts): open mappings, absent or null allowed

const opt = <S extends Schema>(s: S): S => ({ ...s, nullable: true });
const str = opt({ type: 'string' } as const);
const bool = opt({ type: 'boolean' } as const);
const num = opt({ type: 'number' } as const);
const intOrString: Schema = {
  type: 'any',
  nullable: true,
  expected: 'a whole number or a string',
  check: (v, path, ctx) => {
    if (typeof v !== 'string' && !Number.isInteger(v))
      ctx.report({ code: 'wrong-type', path, message: 'expected a whole number or a string', expected: 'a whole number or "N%"' });
  },
};
const fields = (f: Record<string, Schema>, required?: readonly string[]): ObjectSchema => ({ type: 'object', open: true, nullable: true, fields: f, required });
const stringMap: Schema = opt({ type: 'map', values: { type: 'string' } } as const);
const conditions: Schema = opt({
  type: 'array',
  items: fields({ type: { type: 'string' }, status: { type: 'string' }, reason: str, message: str, lastTransitionTime: str }, ['type', 'status']),
} as const);
const selector = fields({
  matchLabels: stringMap,
  matchExpressions: opt({
    type: 'array',
    items: fields({ key: { type: 'string' }, operator: { type: 'string' }, values: opt({ type: 'array', items: { type: 'string' } } as const) }, [
      'key',
      'operator',
    ]),
  } as const),
});
const bootEntry = fields({ image: str, imageDigest: str, softRebootCapable: bool, incompatible: bool });
// machineManagers entries as openshift/api writes them: pointers with omitempty, so never null inside.
const strictSelector: ObjectSchema = {
  type: 'object',
  open: true,
  fields: {
    matchLabels: { type: 'map', values: { type: 'string' } },
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        open: true,
        required: ['key', 'operator'],
        fields: { key: { type: 'string' }, operator: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } },
      },
    },
  },
};
const managers = fields({
  machineManagers: opt({
    type: 'array',
    items: {
      type: 'object',
      open: true,
      required: ['resource', 'apiGroup', 'selection'],
      fields: {
        resource: { type: 'string' },
        apiGroup: { type: 'string' },
        selection: {
          type: 'object',
          open: true,
          required: ['mode'],
          fields: {
            mode: { type: 'string' },
            partial: { type: 'object', open: true, required: ['machineResourceSelector'], fields: { machineResourceSelector: strictSelector } },
          },
        },
      },
    },
  } as const),
});
const providerSpec = fields({ providerSpec: fields({ value: { type: 'any', nullable: true, expected: 'the providerSpec', check: () => {} } }) });
const kind = (spec: Record<string, Schema> | null, status: Record<string, Schema> | null, extra: Record<string, Schema> = {}): ObjectSchema => ({
  type: 'object',
  open: true,
  fields: { ...(spec ? { spec: fields(spec) } : {}), ...(status ? { status: fields(status) } : {}), ...extra },
});

const SHAPES: Record<keyof KindViews, ObjectSchema> = {
  Node: kind({ unschedulable: bool }, { conditions }),
  BootcNode: kind({ desiredImage: str, desiredImageState: str }, { booted: bootEntry, staged: bootEntry, rollback: bootEntry, conditions }),
  BootcNodePool: kind(
    {
      image: fields({ ref: str }),
      nodeSelector: selector,
      rollout: fields({ paused: bool, maxUnavailable: intOrString, drainTimeoutSeconds: num, rebootTimeoutSeconds: num }),
      disruption: fields({ rebootPolicy: str }),
    },
    { targetDigest: str, observedGeneration: num, conditions },
  ),
  MachineConfigPool: kind(
    { paused: bool, maxUnavailable: intOrString, nodeSelector: selector, machineConfigSelector: selector, configuration: fields({ name: str }) },
    { configuration: fields({ name: str }), conditions },
  ),
  MachineConfig: kind({ osImageURL: str }, null),
  MachineSet: kind({ replicas: num, template: fields({ metadata: fields({ labels: stringMap }), spec: providerSpec }) }, { authoritativeAPI: str }),
  ControlPlaneMachineSet: kind(
    {
      state: str,
      replicas: num,
      strategy: fields({ type: str }),
      template: fields({ machines_v1beta1_machine_openshift_io: fields({ metadata: fields({ labels: stringMap }), spec: providerSpec }) }),
    },
    { replicas: num, updatedReplicas: num, authoritativeAPI: str },
  ),
  MachineConfiguration: kind(
    { managedBootImages: managers, bootImageSkewEnforcement: fields({ mode: str }) },
    { observedGeneration: num, managedBootImagesStatus: managers, bootImageSkewEnforcementStatus: fields({ mode: str }) },
  ),
  FeatureGate: kind(null, {}),
  Infrastructure: kind(null, { platform: str, platformStatus: fields({ type: str, azure: fields({ cloudName: str }) }), infrastructureName: str }),
  ClusterVersion: kind(
    { clusterID: str },
    { desired: fields({ version: str, architecture: str }), history: opt({ type: 'array', items: fields({ state: str, version: str }) } as const) },
  ),
  Lease: kind({ holderIdentity: str, acquireTime: str, renewTime: str, leaseDurationSeconds: num, leaseTransitions: num }, null),
  ConfigMap: kind(null, null, { data: stringMap }),
};

/** apiVersion, kind and metadata.name, each a string that is not empty: what makes a Kubernetes object. */
export function isKObject(o: unknown): o is KObject {
  if (!isPlainObject(o)) return false;
  const meta = o.metadata;
  return (
    typeof o.apiVersion === 'string' &&
    o.apiVersion !== '' &&
    typeof o.kind === 'string' &&
    o.kind !== '' &&
    isPlainObject(meta) &&
    typeof meta.name === 'string' &&
    meta.name !== ''
  );
}

/** The schema a kind's view promises (what objectShapeProblem checks). */
export function shapeSchema(kind: keyof KindViews): ObjectSchema {
  return SHAPES[kind];
}

/** What is wrong with an object of a known kind, as the first field that is not what its view says. */
interface ShapeProblem {
  /** The field, from the object's root: `spec.unschedulable`, `status.conditions[2].type`. */
  path: string;
  message: string;
  expected: string;
}

const isKnownKind = (k: string): k is keyof KindViews => Object.hasOwn(SHAPES, k);

/**
 * The first field of `o` that is not what the view of `kind` says (null: none, or a kind
 * without a view). `spec` and `status` are mappings when present; every field a view names is
 * absent, null, or of its type.
 */
export function objectShapeProblem(o: Record<string, unknown>, kind: string): ShapeProblem | null {
  if (!isKnownKind(kind) || fits(SHAPES[kind], o)) return null;
  // Something is wrong: the validator says what, with the path (the slow path, rare).
  let first: ShapeProblem | null = null;
  const ctx: Ctx = {
    map: null,
    report: (d) => {
      first ??= { path: d.path ?? '', message: d.message, expected: d.expected ?? '' };
    },
  };
  validate(SHAPES[kind], o, '', ctx);
  return first;
}

/**
 * True only when `v` passes `schema` as validate (base/schema.ts) passes it, without building a
 * path per field: 20,000 objects of a big snapshot are checked in a few tens of milliseconds. A
 * node with a rule this does not know (enums, bounds, hooks) answers false, and the validator
 * decides.
 */
function fits(schema: Schema, v: unknown): boolean {
  switch (schema.type) {
    case 'object': {
      if (!isPlainObject(v) || schema.check) return false;
      for (const r of schema.required ?? []) if (!Object.hasOwn(v, r)) return false;
      for (const k in schema.fields) {
        if (!Object.hasOwn(v, k)) continue;
        const field = schema.fields[k];
        const x = v[k];
        if (x === null ? !field.nullable : x === undefined || !fits(field, x)) return false;
      }
      return true;
    }
    case 'array':
      if (schema.check || schema.maxItems !== undefined || schema.minItems !== undefined) return false;
      if (!Array.isArray(v)) return false;
      // Loops, not every() with a closure: this runs on every field of 20,000 objects, cold.
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (x === null || x === undefined || !fits(schema.items, x)) return false;
      }
      return true;
    case 'map':
      if (!isPlainObject(v)) return false;
      for (const k in v) if (!fits(schema.values, v[k])) return false;
      return true;
    case 'string':
      if (schema.check || schema.enum || schema.pattern || schema.minLength !== undefined || schema.maxLength !== undefined) return false;
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) && schema.min === undefined && schema.max === undefined;
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v) && !schema.check && schema.min === undefined && schema.max === undefined;
    case 'any': {
      let ok = true;
      schema.check(v, '', {
        map: null,
        report: () => {
          ok = false;
        },
      });
      return ok;
    }
  }
}

/**
 * Narrows `o` to the view of `kind` when it is of that kind and nothing is wrong with it
 * (objectShapeProblem): for a caller that picks one object out of many checked ones.
 */
export function hasShapeOf<K extends string>(o: KObject, kind: K): o is ViewOf<K> {
  return o.kind === kind && objectShapeProblem(o, kind) === null;
}
