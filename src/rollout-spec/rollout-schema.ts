/**
 * The Rollout schema (docs/design.md §4) as data. Static rules only: rules that need the cluster
 * (feature gates, platform, skew-enforcement status) are checked by the planner.
 */
import { type ObjectSchema, type Ctx, INT32_MAX, countOrPercentSchema, firstIndexByName } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';
import { REBOOT_POLICIES, ROLLOUTS, CPMS_STRATEGIES, SPEC_API_VERSION, SPEC_KIND } from './types.ts';
import { parseMaxUnavailable, MAX_UNAVAILABLE_EXPECTED } from '../domain/budget.ts';
import { checkCron, isValidTimeZone, parseDurationSeconds } from '../domain/windows.ts';
import { managedBootImagesSchema, bootImageSkewEnforcementSchema } from './bootimages-schema.ts';
import { healthChecksSchema, checkPoolDrops } from './health-schema.ts';
import { silencesSchema } from './silence-schema.ts';
import { concurrencyFields } from './concurrency-schema.ts';
import { drainSchema, checkDrainAlias, checkSkippedWithoutSkip } from './drain-schema.ts';

/** `@sha256:` followed by exactly 64 lowercase hex characters (OCI digest, sha256 algorithm). */
const DIGEST_REF_RE = /^[a-z0-9][a-z0-9._\-/:]*[a-z0-9]@sha256:[0-9a-f]{64}$/;
/** A fully qualified image name with a tag (only with allowTags: true). */
// eslint-disable-next-line no-useless-escape -- published as written in schema/rollout.schema.json (its .source)
const TAG_REF_RE = /^[a-z0-9][a-z0-9._\-]*(?::\d+)?(?:\/[a-z0-9][a-z0-9._\-]*)+:[A-Za-z0-9_][A-Za-z0-9._\-]{0,127}$/;

export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

// parseMaxUnavailable (domain/budget.ts): an int32 >= 1, or digits then "%" for 1..100 percent.
const maxUnavailableSchema = countOrPercentSchema({
  expected: MAX_UNAVAILABLE_EXPECTED,
  parse: parseMaxUnavailable,
  description:
    'How many nodes of the pool may be out of service at once: a count, or a percentage of the pool rounded down (at least 1), as the MCO resolves it. Written to the MachineConfigPool and the BootcNodePool. The control plane takes one node at a time whatever this says.',
  default: 1,
});

export const poolSchema: ObjectSchema = {
  type: 'object',
  required: ['name', 'image'],
  fields: {
    name: {
      type: 'string',
      pattern: DNS_SUBDOMAIN,
      maxLength: 253,
      patternText: 'a pool name: lowercase letters, digits, "-" and "."',
      description: 'The BootcNodePool and/or MachineConfigPool of this name (bootcplan changes pools, it does not create them).',
    },
    image: {
      type: 'string',
      minLength: 1,
      description: 'The OS image the pool rolls to, pinned by digest (registry/repository@sha256:<64 hex>); a tag only with allowTags: true.',
    },
    allowTags: {
      type: 'boolean',
      default: false,
      description:
        'Accept an image by tag (registry/repository:tag, registry and tag explicit). The tag is planned against the digest the BootcNodePool resolved; the plan is then only as reproducible as the tag.',
    },
    maxUnavailable: maxUnavailableSchema,
    rebootPolicy: {
      type: 'string',
      enum: REBOOT_POLICIES,
      default: 'RebootOnly',
      description: 'RebootOnly: every update reboots the node. AllowSoftReboot: bootc pools may soft-reboot (userspace only) when the update allows it.',
    },
    drainTimeoutSeconds: {
      type: 'integer',
      min: 0,
      max: INT32_MAX,
      defaultText: 'no limit',
      description:
        'Longest drain of one node (PodDisruptionBudget refusals are retried until then); a drain still blocked then halts the rollout. Unset or 0: wait without limit. Also written to the BootcNodePool. The older name of drain.timeoutSeconds (set one of them).',
    },
    drain: drainSchema,
    stagingTimeoutSeconds: {
      type: 'integer',
      min: 1,
      max: INT32_MAX,
      default: 600,
      description:
        'bootc pools: a node staging the image (BootcNode Idle=False/Staging) for longer than this, or not starting to stage within it, halts the pool. Counted from the Staging transition, or from when bootcplan first saw the node staging (kept in the run record, so the limit holds across apply --step runs).',
    },
    soakSeconds: {
      type: 'integer',
      min: 0,
      max: INT32_MAX,
      default: 0,
      description: 'Wait after each wave of this pool before its next wave starts.',
    },
    paused: {
      type: 'boolean',
      default: false,
      description:
        'Hold the pool back: no node of it is updated, and no new image is written to it, so nothing stages. Written as false, it also lifts a pause an administrator set on the MachineConfigPool (a disruptive change in the plan); left out, such a pause is kept.',
    },
    rollout: {
      type: 'string',
      enum: ROLLOUTS,
      default: 'waves',
      description:
        "waves: the pool rolls wave by wave (soakSeconds between waves). slots: a node is admitted, in the plan's order, as soon as the budget has room (no soak; bootc pools only).",
    },
    priority: {
      type: 'integer',
      min: -1000,
      max: 1000,
      defaultText: '10 (custom pools), 20 (worker), 30 (control plane)',
      description:
        'Pools roll in ascending priority, one pool at a time (ties by name); with spec.maxUnavailable, spec.spread or spec.onPoolFailure set, pools of equal priority are planned to roll at the same time.',
    },
    healthChecks: healthChecksSchema(true),
    silences: silencesSchema(true),
  },
  // checkImage below: a digest always; with allowTags: true also a fully qualified tag.
  json: {
    if: { properties: { allowTags: { const: true } }, required: ['allowTags'] },
    then: { properties: { image: { anyOf: [{ pattern: DIGEST_REF_RE.source }, { pattern: TAG_REF_RE.source }] } } },
    else: { properties: { image: { pattern: DIGEST_REF_RE.source } } },
  },
  check(pool, path, ctx) {
    checkImage(pool, path, ctx);
    checkSlotsSoak(pool, path, ctx);
    checkDrainAlias(pool, path, ctx);
    checkSkippedWithoutSkip(pool, path, ctx);
  },
};

function checkImage(pool: Record<string, unknown>, path: string, ctx: Ctx) {
  const image = pool.image;
  if (typeof image !== 'string' || image.length === 0) return;
  const at = joinPath(path, 'image');
  if (DIGEST_REF_RE.test(image)) return;
  const hasDigestMarker = image.includes('@');
  if (hasDigestMarker) {
    ctx.report({
      code: 'image-digest-invalid',
      path: at,
      message: `"${image}" has a malformed digest`,
      expected: 'registry/repository@sha256:<64 lowercase hex characters>',
      hint: 'copy the digest from `skopeo inspect` or your registry; it must be the full sha256',
    });
    return;
  }
  if (pool.allowTags === true) {
    if (!TAG_REF_RE.test(image)) {
      ctx.report({
        code: 'image-ref-invalid',
        path: at,
        message: `"${image}" is not a fully qualified image reference with a tag`,
        expected: 'registry.example.com/repository:tag',
        hint: 'name the registry and the tag explicitly; short names and implied "latest" are ambiguous',
      });
    }
    return;
  }
  ctx.report({
    code: 'image-not-pinned',
    path: at,
    message: `"${image}" is not pinned to a digest`,
    expected: 'registry/repository@sha256:<64 hex>',
    hint: 'pin the image by digest so the plan is reproducible, or set `allowTags: true` on this pool to accept a tag knowingly',
  });
}

/**
 * `soakSeconds` is the wait between two waves; a slots pool has no waves to wait between (a
 * node is admitted as soon as another is done), so a soak there would be silently ignored.
 */
function checkSlotsSoak(pool: Record<string, unknown>, path: string, ctx: Ctx) {
  if (pool.rollout !== 'slots' || typeof pool.soakSeconds !== 'number' || pool.soakSeconds === 0) return;
  ctx.report({
    code: 'soak-with-slots',
    path: joinPath(path, 'soakSeconds'),
    message: `soakSeconds ${pool.soakSeconds} waits between waves, and a pool with rollout: slots has no waves: a node is admitted as soon as another is done`,
    expected: 'no soakSeconds (or 0) with rollout: slots',
    hint: 'remove soakSeconds, or use rollout: waves to soak between waves',
  });
}

/** A window longer than a week would overlap the next one of any weekly schedule. */
const MAX_WINDOW_SECONDS = 7 * 24 * 3600;

export const windowSchema: ObjectSchema = {
  type: 'object',
  required: ['schedule', 'duration'],
  fields: {
    schedule: {
      type: 'string',
      description: 'When a window opens: a 5-field cron expression (minute hour day-of-month month day-of-week), e.g. "0 22 * * 1-5".',
      // checkCron (domain/windows.ts) also checks each field's values.
      json: { pattern: '^\\s*\\S+(\\s+\\S+){4}\\s*$' },
      check(v: string, path, ctx) {
        const err = checkCron(v);
        if (err)
          ctx.report({
            code: 'cron-invalid',
            path,
            message: err,
            expected: 'a 5-field cron expression, e.g. "0 22 * * 1-5"',
            hint: 'fields are minute hour day-of-month month day-of-week',
          });
      },
    },
    duration: {
      type: 'string',
      description:
        'How long each window stays open: hours, minutes and seconds such as "4h", "90m", "1h30m"; at most 168h. A wave starts only if its estimate ends inside the window.',
      // parseDurationSeconds (domain/windows.ts); zero and more than 7 days are the hook's.
      json: { pattern: '^\\s*([0-9]+h([0-9]+m)?([0-9]+s)?|[0-9]+m([0-9]+s)?|[0-9]+s)\\s*$' },
      check(v: string, path, ctx) {
        const seconds = parseDurationSeconds(v);
        if (seconds === null) {
          ctx.report({
            code: 'duration-invalid',
            path,
            message: `"${v}" is not a positive duration`,
            expected: 'hours, minutes and seconds such as "4h", "90m", "1h30m"',
          });
        } else if (seconds > MAX_WINDOW_SECONDS) {
          ctx.report({
            code: 'duration-invalid',
            path,
            message: `"${v}" is longer than 7 days`,
            expected: 'at most 168h',
            hint: 'a window that never closes is no window: drop maintenanceWindows to apply at any time',
          });
        }
      },
    },
    timezone: {
      type: 'string',
      default: 'UTC',
      description: 'The IANA time zone of schedule, e.g. "Europe/Berlin".',
      check(v: string, path, ctx) {
        if (!isValidTimeZone(v)) {
          ctx.report({
            code: 'timezone-invalid',
            path,
            message: `"${v}" is not an IANA time zone`,
            expected: 'an IANA zone name such as "Europe/Berlin" or "UTC"',
            hint: 'abbreviations like CET are ambiguous; use Region/City',
          });
        }
      },
    },
  },
};

/**
 * The document of a bootcplan spec, the Rollout's below and the Fleet's (src/fleet/spec-schema.ts):
 * apiVersion, kind, metadata and spec, all required.
 */
export function specDocumentSchema(kind: string, metadata: ObjectSchema, spec: ObjectSchema): ObjectSchema {
  return {
    type: 'object',
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    fields: {
      apiVersion: { type: 'string', enum: [SPEC_API_VERSION], description: "The spec's version." },
      kind: { type: 'string', enum: [kind], description: `Always ${kind}.` },
      metadata,
      spec,
    },
  };
}

export const rolloutSchema: ObjectSchema = specDocumentSchema(
  SPEC_KIND,
  {
    type: 'object',
    required: ['name'],
    description: 'Names the rollout; plans, saved plan files and the apply lock carry the name.',
    fields: {
      name: {
        type: 'string',
        pattern: DNS_SUBDOMAIN,
        maxLength: 253,
        patternText: 'a name: lowercase letters, digits, "-" and "."',
        description: "The rollout's name.",
      },
      labels: { type: 'map', values: { type: 'string' }, description: 'Free-form labels; bootcplan does not read them.' },
      annotations: { type: 'map', values: { type: 'string' }, description: 'Free-form annotations; bootcplan does not read them.' },
    },
  },
  {
    type: 'object',
    description: 'What the cluster should run. Every section is optional; a section left out is left as the cluster has it.',
    fields: {
      pools: {
        type: 'array',
        items: poolSchema,
        description: 'The pools to roll to an image, each once (by name).',
        check(pools: unknown[], path, ctx) {
          firstIndexByName(pools, (name, i, first) =>
            ctx.report({
              code: 'duplicate-pool',
              path: joinPath(joinPath(path, i), 'name'),
              message: `pool "${name}" is listed twice (first at ${path}[${first}])`,
              expected: 'each pool name once',
              hint: 'merge the two entries',
            }),
          );
        },
      },
      managedBootImages: managedBootImagesSchema,
      bootImageSkewEnforcement: bootImageSkewEnforcementSchema,
      controlPlaneMachineSet: {
        type: 'object',
        description: 'The ControlPlaneMachineSet openshift-machine-api/cluster.',
        fields: {
          strategy: {
            type: 'string',
            enum: CPMS_STRATEGIES,
            defaultText: 'as the cluster has it (RollingUpdate when unset there)',
            description: 'RollingUpdate: control-plane machines that differ from the template are replaced one at a time. OnDelete: only when you delete them.',
          },
          allowReplacement: {
            type: 'boolean',
            default: false,
            description: 'Accept a plan that replaces control-plane machines; without it such a plan has an error and cannot be applied.',
          },
        },
      },
      maintenanceWindows: {
        type: 'array',
        items: windowSchema,
        description: 'When apply may start a wave; none: at any time. apply outside every window exits 6.',
      },
      healthChecks: healthChecksSchema(false),
      silences: silencesSchema(false),
      ...concurrencyFields,
    },
    check: checkPoolDrops,
  },
);
