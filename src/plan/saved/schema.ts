/**
 * The shape of a plan file (docs/design.md §6, formatVersion "1.0"), for reading plans back:
 * `show`, `apply` and `rehearse` take a file that may have been edited or crafted, and the
 * renderers and the applier must only ever see the types src/plan/types.ts promises. Fields a
 * later 1.x may add are allowed (objects are open); every field bootcplan reads is checked.
 */
import { validate, type ObjectSchema, type Schema } from '../../base/schema.ts';
import { CLUSTER_IDENTITY_KINDS } from '../../cluster/identity.ts';
import {
  PLAN_FORMAT_VERSIONS,
  CHANGE_ACTIONS,
  RISKS,
  BLOCKED_BY,
  CHANGE_REASONS,
  BACKENDS,
  REBOOT_KINDS,
  GATE_POINTS,
  ON_FAILURE,
  HEALTH_CHECK_MODES,
  ROLLBACK_SCOPES,
  HEALTH_CHECK_KINDS,
  ROLLBACK_REFUSED_BY,
  POOL_FAILURE_POLICIES,
} from '../types.ts';
import { CONDITION_OPS, CONDITION_SUBJECTS } from '../../domain/health-condition.ts';
import { originProblem } from '../../cluster/run-record.ts';
import { parseSilenceTemplate } from '../../domain/silences.ts';
import { DRAIN_CLASSES } from '../../domain/drain-forecast.ts';
import { ON_BLOCKED } from '../../rollout-spec/types.ts';

const str: Schema = { type: 'string' };
const strOrNull: Schema = { type: 'string', nullable: true };
const int: Schema = { type: 'integer' };
const count: Schema = { type: 'integer', min: 0 };
const num: Schema = { type: 'number', min: 0 };
const bool: Schema = { type: 'boolean' };
const anyJson: Schema = { type: 'any', expected: 'any JSON value', check: () => {}, nullable: true };
const list = (items: Schema): Schema => ({ type: 'array', items });
const obj = (fields: Record<string, Schema>, required: string[] = Object.keys(fields)): ObjectSchema => ({ type: 'object', open: true, fields, required });
const nullable = (s: Schema): Schema => ({ ...s, nullable: true });

const condition = obj({ type: str, status: str, reason: str, message: str, lastTransitionTime: str }, ['type', 'status']);

const diagnostic = obj(
  {
    severity: { type: 'string', enum: ['error', 'warning'] },
    code: str,
    message: str,
    path: strOrNull,
    file: strOrNull,
    line: nullable(count),
    column: nullable(count),
    expected: str,
    hint: str,
  },
  ['severity', 'code', 'message'],
);

const operation = obj({ op: { type: 'string', enum: ['add', 'remove', 'replace', 'move', 'copy', 'test'] }, path: str, value: anyJson, from: str }, [
  'op',
  'path',
]);

const change = obj(
  {
    address: str,
    apiVersion: str,
    kind: str,
    namespace: strOrNull,
    name: str,
    action: { type: 'string', enum: CHANGE_ACTIONS },
    reason: { type: 'string', enum: CHANGE_REASONS },
    patch: list(operation),
    before: anyJson,
    after: anyJson,
    object: anyJson,
    risk: { type: 'string', enum: RISKS },
    order: { type: 'integer', min: 1 },
    pool: strOrNull,
    waitAfter: nullable(
      obj({ kind: { type: 'string', enum: ['skew-enforcement-not-automatic', 'pool-rendered'] }, description: str, pool: str, rendered: str }, [
        'kind',
        'description',
      ]),
    ),
    description: str,
  },
  ['address', 'apiVersion', 'kind', 'namespace', 'name', 'action', 'reason', 'patch', 'risk', 'order'],
);

// docs/apply.md "Drain forecast": explanatory, but checked so that the renderers can trust it.
const drainFinding = obj(
  {
    class: { type: 'string', enum: DRAIN_CLASSES.filter((c) => c !== 'ok') },
    reason: str,
    nodes: list(str),
    pods: list(str),
    budget: strOrNull,
    numbers: nullable(obj({ currentHealthy: int, desiredHealthy: int, disruptionsAllowed: int, expectedPods: int, evictions: count })),
    rounds: nullable({ type: 'integer', min: 1 }),
    message: str,
    hint: str,
  },
  ['class', 'reason', 'nodes', 'pods', 'budget', 'numbers', 'rounds', 'message', 'hint'],
);
const drainForecast = obj({
  class: { type: 'string', enum: DRAIN_CLASSES },
  rounds: { type: 'integer', min: 1 },
  findings: list(drainFinding),
  effects: list(obj({ pod: str, node: str, effect: { type: 'string', enum: ['deleted-unmanaged', 'emptydir-lost'] } })),
});

const node = obj(
  {
    name: str,
    zone: strOrNull,
    from: strOrNull,
    to: str,
    reboot: { type: 'string', enum: REBOOT_KINDS },
    wave: nullable({ type: 'integer', min: 1 }),
    staged: bool,
    blockedBy: nullable({ type: 'string', enum: BLOCKED_BY }),
    conditions: list(condition),
    runsBootcplan: bool,
    spreadValue: strOrNull,
    drainForecast,
  },
  ['name', 'zone', 'from', 'to', 'reboot', 'wave', 'staged', 'blockedBy'],
);

const names = list(str);
const gates = obj({ preflight: names, afterWave: names, afterNode: names, minSeconds: num });

const keyRef = obj({ namespace: str, name: str, key: str });
const authOrCa: Schema = {
  type: 'any',
  expected: 'a string or a ConfigMap/Secret reference',
  check: (v, path, ctx) => {
    if (typeof v === 'string') return;
    const o = v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
    const ref = o ? (o.bearerTokenSecret ?? o.configMap ?? o.secret) : undefined;
    if (ref === undefined || !o || Object.keys(o).length !== 1)
      ctx.report({
        code: 'wrong-type',
        path,
        message: 'expected a string or one object reference',
        expected: 'ServiceAccount, none, system, {bearerTokenSecret|configMap|secret: {namespace, name, key}}',
      });
    else validate(keyRef, ref, path, ctx);
  },
};
const endpoint = { url: str, auth: authOrCa, ca: authOrCa };
const parsedCondition = obj(
  { subject: { type: 'string', enum: ['empty', 'not-empty', ...CONDITION_SUBJECTS] }, op: { type: 'string', enum: CONDITION_OPS }, value: { type: 'number' } },
  ['subject'],
);
/** A silence template the applier will instantiate: checked as the spec checks it (a crafted plan cannot smuggle one that covers every node). */
const silenceTemplate: Schema = {
  type: 'string',
  check(v: string, path, ctx) {
    const r = parseSilenceTemplate(v);
    if (!r.ok)
      ctx.report({
        code: 'plan-silence-matcher',
        path,
        message: `silence matcher ${JSON.stringify(v.slice(0, 60))}: ${r.message}`,
        expected: 'a silence matcher template',
      });
  },
};
const silences = obj({ alertmanager: obj(endpoint), matchers: list(silenceTemplate), ttlMinutes: { type: 'integer', min: 1 }, pools: list(str) });
const healthCheck = obj(
  {
    name: str,
    kind: { type: 'string', enum: HEALTH_CHECK_KINDS },
    prometheus: obj({ ...endpoint, query: str, condition: str, parsed: parsedCondition, onEmpty: { type: 'string', enum: ['fail', 'pass'] } }),
    alerts: obj({
      ...endpoint,
      source: { type: 'string', enum: ['prometheus', 'alertmanager'] },
      matchers: names,
      ignore: names,
      states: list({ type: 'string', enum: ['firing', 'pending'] }),
      heartbeat: str,
    }),
    clusterOperators: obj({ names, ignore: names }),
    condition: obj({
      apiVersion: str,
      kind: str,
      namespace: strOrNull,
      name: str,
      type: str,
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      reason: strOrNull,
    }),
    when: list({ type: 'string', enum: GATE_POINTS }),
    intervalSeconds: { type: 'integer', min: 1 },
    successes: { type: 'integer', min: 1 },
    failureLimit: count,
    timeoutSeconds: { type: 'integer', min: 1 },
    requestTimeoutSeconds: { type: 'integer', min: 1 },
    mode: { type: 'string', enum: HEALTH_CHECK_MODES },
    onFailure: { type: 'string', enum: ON_FAILURE },
    scope: { type: 'string', enum: ROLLBACK_SCOPES },
    pools: names,
  },
  ['name', 'kind', 'when', 'intervalSeconds', 'successes', 'failureLimit', 'timeoutSeconds', 'requestTimeoutSeconds', 'onFailure', 'scope', 'pools'],
);

const pool = obj(
  {
    name: str,
    backend: { type: 'string', enum: BACKENDS },
    targetImage: str,
    targetDigest: strOrNull,
    controlPlane: bool,
    priority: int,
    paused: bool,
    rebootPolicy: { type: 'string', enum: ['RebootOnly', 'AllowSoftReboot'] },
    drainTimeoutSeconds: nullable(count),
    soakSeconds: count,
    maxUnavailable: obj({ value: { type: 'any', expected: 'a count or a percentage', check: () => {} }, resolved: { type: 'integer', min: 1 }, rule: str }),
    nodeCount: count,
    upToDate: count,
    unavailableNow: list(str),
    waveSize: count,
    nodes: list(node),
    waves: list(list(str)),
    estimatedSeconds: num,
    rollout: { type: 'string', enum: ['slots'] },
    wavesEstimatedSeconds: num,
    stagingTimeoutSeconds: { type: 'integer', min: 1 },
    rebootTimeoutSeconds: { type: 'integer', min: 1 },
    inheritedBy: list(str),
    drain: obj({ timeoutSeconds: nullable(count), onBlocked: { type: 'string', enum: ON_BLOCKED }, maxSkippedNodes: count }),
    gates,
    rollback: obj({ available: bool, to: strOrNull, via: str, download: bool, why: strOrNull, refusedBy: { type: 'string', enum: ROLLBACK_REFUSED_BY } }, [
      'available',
      'to',
      'via',
      'download',
      'why',
    ]),
  },
  [
    'name',
    'backend',
    'targetImage',
    'targetDigest',
    'controlPlane',
    'priority',
    'paused',
    'rebootPolicy',
    'drainTimeoutSeconds',
    'soakSeconds',
    'maxUnavailable',
    'nodeCount',
    'upToDate',
    'unavailableNow',
    'waveSize',
    'nodes',
    'waves',
    'estimatedSeconds',
  ],
);

/** A pool's origin, checked by the run record's own rules (src/cluster/run-record.ts). */
const origin: Schema = {
  type: 'any',
  expected: 'a pool origin (kind bootc or mco)',
  check: (v, path, ctx) => {
    const bad = originProblem(v);
    if (bad) ctx.report({ code: 'plan-invalid', path, message: `an origin ${bad}` });
  },
};
const rollbackSection = obj(
  {
    of: obj({ planId: str, startedAt: str, run: obj({ id: str, planIds: list(str) }) }),
    scope: { type: 'string', enum: ROLLBACK_SCOPES },
    pool: strOrNull,
    wave: nullable({ type: 'integer', min: 1 }),
    trigger: obj({ kind: { type: 'string', enum: ['health-check', 'manual'] }, check: strOrNull, observed: strOrNull, at: str }),
    source: obj({
      origins: { type: 'map', values: origin },
      targets: { type: 'map', values: str },
      order: list(str),
      scopeWave: nullable(obj({ planId: str, pool: str, wave: { type: 'integer', min: 1 } })),
    }),
    leftovers: list(obj({ node: str, pool: str, what: { type: 'string', enum: ['target-still-staged', 'stages-origin', 'kept-on-target'] } })),
    excluded: list(obj({ node: str, pool: str, why: str })),
    continues: list({ type: 'string', pattern: /^[0-9a-f]{16}$/, patternText: '16 lowercase hex digits' }),
  },
  ['of', 'scope', 'pool', 'wave', 'trigger', 'source', 'leftovers', 'excluded'],
);

const concurrency = obj(
  {
    maxUnavailable: nullable(
      obj({ value: { type: 'any', expected: 'a count or a percentage', check: () => {} }, resolved: { type: 'integer', min: 1 }, rule: str }),
    ),
    spread: nullable(obj({ key: str, maxPerValue: { type: 'integer', min: 1 } })),
    onPoolFailure: { type: 'string', enum: POOL_FAILURE_POLICIES },
    groups: list(list(str)),
  },
  ['maxUnavailable', 'spread', 'onPoolFailure', 'groups'],
);

const windowInfo = nullable(obj({ start: str, end: str, timezone: str, wavesThatFit: count }));

export const planFileSchema: ObjectSchema = obj(
  {
    formatVersion: { type: 'string', enum: PLAN_FORMAT_VERSIONS },
    id: { type: 'string', pattern: /^[0-9a-f]{16}$/, patternText: '16 lowercase hex digits' },
    spec: obj(
      {
        name: str,
        path: str,
        ref: strOrNull,
        commit: strOrNull,
        sha256: { type: 'string', pattern: /^[0-9a-f]{64}$/, patternText: '64 lowercase hex digits' },
        dirty: nullable(bool),
        fleetCluster: str,
      },
      ['name', 'path', 'ref', 'commit', 'sha256', 'dirty'],
    ),
    cluster: obj(
      {
        source: str,
        fingerprint: str,
        version: strOrNull,
        platform: strOrNull,
        identity: obj({ kind: { type: 'string', enum: CLUSTER_IDENTITY_KINDS }, id: str }),
        server: str,
      },
      ['source', 'fingerprint', 'version', 'platform'],
    ),
    changes: list(change),
    bootImages: obj({
      machineSets: list(obj({ name: str, from: strOrNull, to: strOrNull, skipped: strOrNull })),
      controlPlaneMachineSet: nullable(obj({ from: strOrNull, to: strOrNull, replacement: bool, why: str })),
    }),
    pools: list(pool),
    healthChecks: list(healthCheck),
    silences: list(silences),
    diagnostics: list(diagnostic),
    durations: obj({ stage: num, drain: num, reboot: num, softReboot: num, ready: num }),
    summary: obj(
      {
        create: count,
        update: count,
        delete: count,
        nodes: count,
        waves: count,
        softReboots: count,
        hardReboots: count,
        blocked: count,
        estimatedSeconds: num,
        errors: count,
        warnings: count,
        healthChecks: count,
        gates: count,
      },
      ['create', 'update', 'delete', 'nodes', 'waves', 'softReboots', 'hardReboots', 'blocked', 'estimatedSeconds', 'errors', 'warnings'],
    ),
    specChanges: nullable(obj({ base: str, baseCommit: str, path: str, unified: str, added: count, removed: count })),
    schedule: nullable(obj({ evaluatedAt: str, open: windowInfo, next: windowInfo, totalWaves: count })),
    reviewOnly: bool,
    rollback: rollbackSection,
    concurrency,
  },
  ['formatVersion', 'id', 'spec', 'cluster', 'changes', 'bootImages', 'pools', 'diagnostics', 'durations', 'summary'],
);
