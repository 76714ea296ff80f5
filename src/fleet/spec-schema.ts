/**
 * The Fleet schema (docs/design.md §10) as data, in the Rollout schema's style: `spec.rollout` is the
 * Rollout spec's `spec` block (same schema), clusters, label and cluster overrides, strategy.
 * Rules across fields (names once, exactly one of context and snapshot, canaries and override
 * pools that exist) are check hooks here; the effective spec of each cluster is validated as a
 * Rollout spec by spec-load.ts.
 */
import {
  type Schema,
  type ObjectSchema,
  type Ctx,
  isPlainObject,
  objectFieldOf,
  INT32_MAX,
  firstIndexByName,
  countOrPercentSchema,
  namesOf,
} from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';
import { rolloutSchema, poolSchema, windowSchema, DNS_SUBDOMAIN, specDocumentSchema } from '../rollout-spec/rollout-schema.ts';
import { labelSelectorSchema } from '../rollout-spec/bootimages-schema.ts';
import { healthChecksSchema } from '../rollout-spec/health-schema.ts';
import { silencesSchema } from '../rollout-spec/silence-schema.ts';
import { HEALTH_CHECK_KINDS } from '../rollout-spec/types.ts';
import { FLEET_KIND, BATCH_TIMEOUT_ACTIONS } from './spec-types.ts';
import { parseMaxConcurrency, MAX_CONCURRENCY_EXPECTED } from './batches.ts';

/** A Kubernetes label selector over the clusters' labels (metav1.LabelSelector); an empty one matches every cluster. */
const clusterSelectorSchema = labelSelectorSchema(
  'Which clusters the override applies to, by their labels (matchLabels and/or matchExpressions, as Kubernetes label selectors). An empty selector matches every cluster.',
  'a cluster',
);

/** A pool field as an override has it: no default (left out, the shared value stays). */
function overrideField(name: string): Schema {
  const { default: _d, defaultText: _t, ...field } = poolSchema.fields[name];
  return name === 'name' ? field : { ...field, defaultText: "the shared pool's" };
}
const pick = (names: readonly string[]): Record<string, Schema> => Object.fromEntries(names.map((n) => [n, overrideField(n)]));

/** The pool fields an override may change, matched to a shared pool by name. */
const poolOverrideSchema: ObjectSchema = {
  type: 'object',
  required: ['name'],
  description: 'Changes to one shared pool (spec.rollout.pools, by name); fields left out keep the shared value.',
  fields: pick(['name', 'image', 'allowTags', 'maxUnavailable', 'rollout', 'soakSeconds', 'paused']),
};

/** The window's time-zone check, without its default (an override without timezone changes none). */
const { default: _utc, ...siteTimezone } = windowSchema.fields.timezone;

const overrideFields: Record<string, Schema> = {
  pools: { type: 'array', items: poolOverrideSchema, description: 'Pool fields to change, by pool name; every name must be a pool of spec.rollout.pools.' },
  maintenanceWindows: { type: 'array', items: windowSchema, description: 'Replaces the shared maintenance windows (the last override that sets it wins).' },
  timezone: {
    ...siteTimezone,
    description: "The site's IANA time zone: every window of the effective spec that names none gets it (the last override that sets it wins).",
  },
  healthChecks: {
    ...healthChecksSchema(true),
    description:
      'Health checks merged by name into spec.rollout.healthChecks, in override order: an entry replaces the check of its name whole, enabled: false drops it, new names are added.',
  },
  silences: {
    ...silencesSchema(false),
    description: 'Replaces spec.rollout.silences whole (the last override that sets it wins); enabled: false makes none for the cluster.',
  },
};

const overrideSchema: ObjectSchema = {
  type: 'object',
  description: 'What this cluster changes in the shared spec, after every label override.',
  fields: overrideFields,
};

const labelOverrideSchema: ObjectSchema = {
  type: 'object',
  required: ['clusterSelector'],
  description: 'Applied, in file order, to every cluster whose labels the selector matches.',
  fields: { clusterSelector: clusterSelectorSchema, ...overrideFields },
};

/** The longest cluster name the fleet spec admits. */
const CLUSTER_NAME_MAX = 63;

/**
 * A name the fleet spec admits for a cluster (`clusters[].name` below), so the only kind a fleet
 * plan bootcplan wrote holds; completion offers no other (docs/safety.md "Completion never
 * evaluates data").
 */
export function isFleetClusterName(s: unknown): s is string {
  return typeof s === 'string' && s.length <= CLUSTER_NAME_MAX && DNS_SUBDOMAIN.test(s);
}

const clusterSchema: ObjectSchema = {
  type: 'object',
  required: ['name'],
  fields: {
    name: {
      type: 'string',
      pattern: DNS_SUBDOMAIN,
      maxLength: CLUSTER_NAME_MAX,
      patternText: 'a cluster name: lowercase letters, digits, "-" and ".", at most 63 characters',
      description: "The cluster's name in the fleet (batches, plans, the Argo CD Application), each once.",
    },
    context: { type: 'string', minLength: 1, description: 'A kubeconfig context: the live cluster. Exactly one of context and snapshot.' },
    snapshot: {
      type: 'string',
      minLength: 1,
      description: 'A snapshot file (`bootcplan snapshot --out`), relative to the Fleet file. Exactly one of context and snapshot.',
    },
    kubeconfig: {
      type: 'string',
      minLength: 1,
      defaultText: '--kubeconfig, else KUBECONFIG, else ~/.kube/config',
      description:
        "The kubeconfig file of this cluster's context, relative to the Fleet file and inside its repository (with --ref: read at that revision). Inline credentials only: no exec plugin, auth-provider, token-file or certificate/key file path unless the fleet command gets --trust-fleet-kubeconfigs.",
    },
    labels: { type: 'map', values: { type: 'string' }, description: "The cluster's labels: label overrides select on them, and batches are ordered by them." },
    overrides: overrideSchema,
    destination: {
      type: 'object',
      description: "The Argo CD destination of this cluster's Application.",
      defaultText: "name: the cluster's name",
      fields: {
        name: { type: 'string', minLength: 1, description: 'The Argo CD cluster name.' },
        server: { type: 'string', minLength: 1, description: 'The API server URL.' },
      },
    },
  },
  check(c, path, ctx) {
    const has = (k: string) => Object.hasOwn(c, k);
    if (has('context') === has('snapshot')) {
      ctx.report({
        code: 'cluster-source',
        path: joinPath(path, has('context') ? 'snapshot' : 'name'),
        atKey: has('context'),
        message: has('context') ? 'a cluster has a context or a snapshot, not both' : 'the cluster names neither a context nor a snapshot',
        expected: 'exactly one of context (a live cluster) and snapshot (a file)',
        hint: has('context') ? 'remove one of them' : 'add `context: NAME` (kubeconfig) or `snapshot: FILE`',
      });
    }
    if (has('kubeconfig') && has('snapshot') && !has('context')) {
      ctx.report({
        code: 'kubeconfig-without-context',
        path: joinPath(path, 'kubeconfig'),
        atKey: true,
        message: 'kubeconfig is read only for a context; this cluster is a snapshot file',
        expected: 'kubeconfig only with context',
        hint: 'remove kubeconfig',
      });
    }
  },
};

const strategySchema: ObjectSchema = {
  type: 'object',
  description: 'How the clusters roll: canaries first, each alone, then batches (TALM ClusterGroupUpgrade remediationStrategy, Argo CD RollingSync).',
  fields: {
    canaries: {
      type: 'array',
      items: { type: 'string' },
      description: 'Cluster names; each rolls in a batch of its own, in this order, before the others. A canary failure stops the fleet.',
    },
    maxConcurrency: countOrPercentSchema({
      expected: MAX_CONCURRENCY_EXPECTED,
      parse: parseMaxConcurrency,
      default: 1,
      description: 'Clusters per batch after the canaries: a count, or a percentage of the non-canary clusters that roll (floor, at least 1).',
    }),
    batchSoakSeconds: { type: 'integer', min: 0, max: INT32_MAX, default: 0, description: 'Wait after each batch before the next one starts.' },
    batchTimeoutSeconds: {
      type: 'integer',
      min: 1,
      max: INT32_MAX,
      defaultText: 'no timeout',
      description: 'A batch not finished after this long times out (TALM remediationStrategy.timeout).',
    },
    batchTimeoutAction: {
      type: 'string',
      enum: BATCH_TIMEOUT_ACTIONS,
      default: 'abort',
      description: 'abort: a timed-out batch stops the fleet; continue: the next batch starts (TALM batchTimeoutAction).',
    },
  },
};

const rolloutSpecSchema = objectFieldOf(rolloutSchema, 'spec');
const metadataSchema = objectFieldOf(rolloutSchema, 'metadata');

export const fleetSchema: ObjectSchema = specDocumentSchema(
  FLEET_KIND,
  {
    ...metadataSchema,
    description: "Names the fleet; the fleet plan and each cluster's plan carry the name.",
    fields: { ...metadataSchema.fields, name: { ...metadataSchema.fields.name, description: "The fleet's name." } },
  },
  {
    type: 'object',
    required: ['rollout', 'clusters'],
    description: 'The shared Rollout spec, the clusters, overrides and the batch strategy.',
    fields: {
      rollout: { ...rolloutSpecSchema, description: "The Rollout spec's `spec` block every cluster shares (same fields, same validation)." },
      clusters: { type: 'array', items: clusterSchema, minItems: 1, description: 'The clusters of the fleet, each once by name.' },
      overrides: {
        type: 'array',
        items: labelOverrideSchema,
        description: "Per-label overrides, applied in file order to the clusters they select, before each cluster's own overrides.",
      },
      strategy: strategySchema,
    },
    check: checkFleetNames,
  },
);

/** Names across the file: clusters once, canaries known and once, override pools shared. */
function checkFleetNames(spec: Record<string, unknown>, path: string, ctx: Ctx): void {
  const clusters = Array.isArray(spec.clusters) ? spec.clusters : [];
  const seen = firstIndexByName(clusters, (name, i, first) =>
    ctx.report({
      code: 'duplicate-cluster',
      path: joinPath(joinPath(joinPath(path, 'clusters'), i), 'name'),
      message: `cluster "${name}" is listed twice (first at ${path}.clusters[${first}])`,
      expected: 'each cluster name once',
      hint: 'merge the two entries or rename one',
    }),
  );
  checkCanaries(spec, path, seen, ctx);
  const rollout = isPlainObject(spec.rollout) ? spec.rollout : {};
  const shared = new Set(namesOf(rollout.pools));
  const overridePaths: [unknown, string][] = [];
  if (Array.isArray(spec.overrides)) spec.overrides.forEach((o, i) => overridePaths.push([o, joinPath(joinPath(path, 'overrides'), i)]));
  clusters.forEach((c, i) => {
    if (isPlainObject(c)) overridePaths.push([c.overrides, joinPath(joinPath(joinPath(path, 'clusters'), i), 'overrides')]);
  });
  for (const [o, at] of overridePaths) checkOverridePools(o, at, shared, ctx);
  checkOverrideDrops(rollout, overridePaths, ctx);
}

/**
 * An override entry that drops (`enabled: false`, no kind) a check neither the shared spec nor any
 * override has: a typo that would leave the check running where the reviewer reads it as off.
 */
function checkOverrideDrops(rollout: Record<string, unknown>, overrides: [unknown, string][], ctx: Ctx): void {
  const hasKind = (c: Record<string, unknown>) => HEALTH_CHECK_KINDS.some((k) => Object.hasOwn(c, k));
  const known = new Set(namesOf(rollout.healthChecks));
  for (const [o] of overrides)
    if (isPlainObject(o) && Array.isArray(o.healthChecks))
      for (const c of o.healthChecks) if (isPlainObject(c) && hasKind(c) && typeof c.name === 'string') known.add(c.name);
  for (const [o, at] of overrides) {
    if (!isPlainObject(o) || !Array.isArray(o.healthChecks)) continue;
    o.healthChecks.forEach((c, j) => {
      if (!isPlainObject(c) || typeof c.name !== 'string' || c.enabled !== false || hasKind(c) || known.has(c.name)) return;
      ctx.report({
        code: 'health-check-unknown',
        path: joinPath(joinPath(joinPath(at, 'healthChecks'), j), 'name'),
        message: `enabled: false drops check "${c.name}", and neither spec.rollout.healthChecks nor an override has one of that name`,
        expected: known.size ? `one of: ${[...known].join(', ')}` : 'a check of spec.rollout.healthChecks (there is none)',
        hint: 'check the name',
      });
    });
  }
}

function checkCanaries(spec: Record<string, unknown>, path: string, clusters: Map<string, number>, ctx: Ctx): void {
  const strategy = isPlainObject(spec.strategy) ? spec.strategy : {};
  if (!Array.isArray(strategy.canaries)) return;
  const listed = new Set<string>();
  const known = [...clusters.keys()];
  strategy.canaries.forEach((name, i) => {
    if (typeof name !== 'string') return;
    const at = joinPath(joinPath(joinPath(path, 'strategy'), 'canaries'), i);
    if (!clusters.has(name)) {
      const near = known.find((k) => k.toLowerCase() === name.toLowerCase());
      ctx.report({
        code: 'unknown-canary',
        path: at,
        message: `canary "${name}" is not a cluster of this fleet`,
        expected: 'the name of a cluster in spec.clusters',
        hint: near ? `did you mean "${near}"?` : 'add the cluster to spec.clusters, or remove it from canaries',
      });
    } else if (listed.has(name)) {
      ctx.report({
        code: 'duplicate-canary',
        path: at,
        message: `canary "${name}" is listed twice`,
        expected: 'each canary once',
        hint: 'remove the second entry',
      });
    }
    listed.add(name);
  });
}

function checkOverridePools(o: unknown, at: string, shared: ReadonlySet<string>, ctx: Ctx): void {
  if (!isPlainObject(o) || !Array.isArray(o.pools)) return;
  const seen = new Set<string>();
  o.pools.forEach((p, j) => {
    if (!isPlainObject(p) || typeof p.name !== 'string') return;
    const path = joinPath(joinPath(joinPath(at, 'pools'), j), 'name');
    if (!shared.has(p.name)) {
      ctx.report({
        code: 'unknown-pool-override',
        path,
        message: `pool "${p.name}" is not a pool of spec.rollout.pools`,
        expected: `one of: ${[...shared].join(', ') || '(spec.rollout has no pools)'}`,
        hint: 'an override changes a shared pool; add the pool to spec.rollout.pools first',
      });
    } else if (seen.has(p.name)) {
      ctx.report({
        code: 'duplicate-pool',
        path,
        message: `pool "${p.name}" is overridden twice in the same override`,
        expected: 'each pool once per override',
        hint: 'merge the two entries',
      });
    }
    seen.add(p.name);
  });
}
