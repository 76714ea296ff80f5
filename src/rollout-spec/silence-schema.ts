/**
 * The `silences` schema (docs/design.md §11; docs/spec.md "Silences"): the Alertmanager bootcplan silences
 * the nodes in flight on (URL, auth and CA exactly as a health check's endpoint:
 * health-endpoint-schema.ts), the matcher templates (src/domain/silences.ts), and the TTL. Used by
 * the Rollout (spec.silences, and each pool's, which replaces it whole) and so by the Fleet's.
 */
import type { ObjectSchema, Schema } from '../base/schema.ts';
import { joinPath } from '../base/diagnostics.ts';
import { endpointFields, checkEndpoint } from './health-endpoint-schema.ts';
import { parseSilenceTemplate, SILENCE_TEMPLATE_EXPECTED, TTL_DEFAULT_MINUTES, TTL_MAX_MINUTES, TTL_MIN_MINUTES } from '../domain/silences.ts';

const alertmanagerSchema: ObjectSchema = {
  type: 'object',
  description: 'The Alertmanager the silences are made on: its API v2 (POST /api/v2/silences, DELETE /api/v2/silence/{id}).',
  fields: {
    ...endpointFields,
    url: {
      ...endpointFields.url,
      defaultText: 'OpenShift: https://alertmanager-main.openshift-monitoring.svc:9094; elsewhere required',
      description:
        'The Alertmanager base URL; a path is a route prefix. https, or http only with auth: none or to a loopback address. No credentials, query or fragment.',
    },
  },
  check: checkEndpoint,
};

const templateSchema: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 1200,
  check(v: string, path, ctx) {
    const r = parseSilenceTemplate(v);
    if (!r.ok)
      ctx.report({
        code: 'silence-matcher-invalid',
        path,
        offset: r.offset,
        message: `silence matcher ${JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}...` : v)}, at character ${r.offset + 1}: ${r.message}`,
        expected: SILENCE_TEMPLATE_EXPECTED,
        hint: r.hint,
      });
  },
};

/** spec.silences, or a pool's (`inPool`: its entry replaces the Rollout's whole). */
export function silencesSchema(inPool: boolean): ObjectSchema {
  return {
    type: 'object',
    description: inPool
      ? "Silences for this pool's nodes: replaces spec.silences whole for the pool; enabled: false makes none."
      : 'Silences for the nodes in flight (docs/spec.md "Silences"): while a node is out of service, bootcplan keeps one Alertmanager silence per matcher for it, short-lived and extended, and expires them when the node is back and its soak is over, on a halt and on a stop.',
    fields: {
      alertmanager: alertmanagerSchema,
      matchers: {
        type: 'array',
        minItems: 1,
        maxItems: 16,
        items: templateSchema,
        description:
          'Matcher templates, each one silence per node: label="value" or label=~"RE2", the value naming {node} (and optionally {pool}); e.g. node="{node}", instance=~"{node}(:.*)?". A name is regex-quoted inside =~.',
      },
      ttlMinutes: {
        type: 'integer',
        min: TTL_MIN_MINUTES,
        max: TTL_MAX_MINUTES,
        default: TTL_DEFAULT_MINUTES,
        description:
          'How long a silence lasts unless extended: bootcplan extends it every third of this while the node is in flight, so a crashed apply leaves silences that lapse within this long.',
      },
      enabled: { type: 'boolean', default: true, description: inPool ? 'false: no silences for this pool.' : 'false keeps the section written but off.' },
    },
    check(v, path, ctx) {
      if (v.enabled === false || Object.hasOwn(v, 'matchers')) return;
      ctx.report({
        code: 'required-field',
        path: joinPath(path, 'matchers'),
        message: 'required field "matchers" is missing',
        expected: SILENCE_TEMPLATE_EXPECTED,
        hint: inPool ? 'or enabled: false for no silences in this pool' : 'e.g. matchers: [\'node="{node}"\']',
      });
    },
  };
}
