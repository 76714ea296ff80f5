/**
 * The Rollout schema (DESIGN §4) as data. Static rules only: rules that need the cluster
 * (feature gates, platform, skew-enforcement status) are checked by the planner.
 */
import { type Schema, type ObjectSchema, type Ctx, isPlainObject, INT32_MAX } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';
import { REBOOT_POLICIES, ROLLOUTS, CPMS_STRATEGIES, SPEC_API_VERSION, SPEC_KIND } from './types.ts';
import { parseMaxUnavailable, MAX_UNAVAILABLE_EXPECTED } from '../domain/budget.ts';
import { checkCron, isValidTimeZone, parseDurationSeconds } from '../domain/windows.ts';
import { managedBootImagesSchema, bootImageSkewEnforcementSchema } from './bootimages-schema.ts';

/** `@sha256:` followed by exactly 64 lowercase hex characters (OCI digest, sha256 algorithm). */
export const DIGEST_REF_RE = /^[a-z0-9][a-z0-9._\-/:]*[a-z0-9]@sha256:[0-9a-f]{64}$/;
/** A fully qualified image name with a tag (only with allowTags: true). */
export const TAG_REF_RE = /^[a-z0-9][a-z0-9._\-]*(?::\d+)?(?:\/[a-z0-9][a-z0-9._\-]*)+:[A-Za-z0-9_][A-Za-z0-9._\-]{0,127}$/;

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const maxUnavailableSchema: Schema = {
  type: 'any',
  expected: MAX_UNAVAILABLE_EXPECTED,
  check(value, path, ctx) {
    const r = parseMaxUnavailable(value);
    if (!r.ok) ctx.report({ code: r.code, path, message: r.message, expected: r.expected, hint: r.hint });
  },
};

const poolSchema: ObjectSchema = {
  type: 'object',
  required: ['name', 'image'],
  fields: {
    name: { type: 'string', pattern: DNS_SUBDOMAIN, maxLength: 253, patternText: 'a pool name: lowercase letters, digits, "-" and "."' },
    image: { type: 'string', minLength: 1 },
    allowTags: { type: 'boolean' },
    maxUnavailable: maxUnavailableSchema,
    rebootPolicy: { type: 'string', enum: REBOOT_POLICIES },
    drainTimeoutSeconds: { type: 'integer', min: 0, max: INT32_MAX },
    soakSeconds: { type: 'integer', min: 0, max: INT32_MAX },
    paused: { type: 'boolean' },
    priority: { type: 'integer', min: -1000, max: 1000 },
    rollout: { type: 'string', enum: ROLLOUTS },
  },
  check(pool, path, ctx) {
    checkImage(pool, path, ctx);
    checkSlotsSoak(pool, path, ctx);
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
      code: 'image-digest-invalid', path: at,
      message: `"${image}" has a malformed digest`,
      expected: 'registry/repository@sha256:<64 lowercase hex characters>',
      hint: 'copy the digest from `skopeo inspect` or your registry; it must be the full sha256',
    });
    return;
  }
  if (pool.allowTags === true) {
    if (!TAG_REF_RE.test(image)) {
      ctx.report({
        code: 'image-ref-invalid', path: at,
        message: `"${image}" is not a fully qualified image reference with a tag`,
        expected: 'registry.example.com/repository:tag',
        hint: 'name the registry and the tag explicitly; short names and implied "latest" are ambiguous',
      });
    }
    return;
  }
  ctx.report({
    code: 'image-not-pinned', path: at,
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
    code: 'soak-with-slots', path: joinPath(path, 'soakSeconds'),
    message: `soakSeconds ${pool.soakSeconds} waits between waves, and a pool with rollout: slots has no waves: a node is admitted as soon as another is done`,
    expected: 'no soakSeconds (or 0) with rollout: slots',
    hint: 'remove soakSeconds, or use rollout: waves to soak between waves',
  });
}

/** A window longer than a week would overlap the next one of any weekly schedule. */
const MAX_WINDOW_SECONDS = 7 * 24 * 3600;

const windowSchema: ObjectSchema = {
  type: 'object',
  required: ['schedule', 'duration'],
  fields: {
    schedule: {
      type: 'string',
      check(v: string, path, ctx) {
        const err = checkCron(v);
        if (err) ctx.report({ code: 'cron-invalid', path, message: err, expected: 'a 5-field cron expression, e.g. "0 22 * * 1-5"', hint: 'fields are minute hour day-of-month month day-of-week' });
      },
    },
    duration: {
      type: 'string',
      check(v: string, path, ctx) {
        const seconds = parseDurationSeconds(v);
        if (seconds === null) {
          ctx.report({ code: 'duration-invalid', path, message: `"${v}" is not a positive duration`, expected: 'hours, minutes and seconds such as "4h", "90m", "1h30m"' });
        } else if (seconds > MAX_WINDOW_SECONDS) {
          ctx.report({ code: 'duration-invalid', path, message: `"${v}" is longer than 7 days`, expected: 'at most 168h', hint: 'a window that never closes is no window: drop maintenanceWindows to apply at any time' });
        }
      },
    },
    timezone: {
      type: 'string',
      check(v: string, path, ctx) {
        if (!isValidTimeZone(v)) {
          ctx.report({ code: 'timezone-invalid', path, message: `"${v}" is not an IANA time zone`, expected: 'an IANA zone name such as "Europe/Berlin" or "UTC"', hint: 'abbreviations like CET are ambiguous; use Region/City' });
        }
      },
    },
  },
};

export const rolloutSchema: ObjectSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  fields: {
    apiVersion: { type: 'string', enum: [SPEC_API_VERSION] },
    kind: { type: 'string', enum: [SPEC_KIND] },
    metadata: {
      type: 'object',
      required: ['name'],
      fields: {
        name: { type: 'string', pattern: DNS_SUBDOMAIN, maxLength: 253, patternText: 'a name: lowercase letters, digits, "-" and "."' },
        labels: { type: 'map', values: { type: 'string' } },
        annotations: { type: 'map', values: { type: 'string' } },
      },
    },
    spec: {
      type: 'object',
      fields: {
        pools: {
          type: 'array',
          items: poolSchema,
          check(pools: unknown[], path, ctx) {
            const seen = new Map<string, number>();
            pools.forEach((p, i) => {
              if (!isPlainObject(p) || typeof p.name !== 'string') return;
              const first = seen.get(p.name);
              if (first !== undefined) {
                ctx.report({
                  code: 'duplicate-pool', path: joinPath(joinPath(path, i), 'name'),
                  message: `pool "${p.name}" is listed twice (first at ${path}[${first}])`,
                  expected: 'each pool name once', hint: 'merge the two entries',
                });
              } else seen.set(p.name, i);
            });
          },
        },
        managedBootImages: managedBootImagesSchema,
        bootImageSkewEnforcement: bootImageSkewEnforcementSchema,
        controlPlaneMachineSet: {
          type: 'object',
          fields: {
            strategy: { type: 'string', enum: CPMS_STRATEGIES },
            allowReplacement: { type: 'boolean' },
          },
        },
        maintenanceWindows: { type: 'array', items: windowSchema },
      },
    },
  },
};
