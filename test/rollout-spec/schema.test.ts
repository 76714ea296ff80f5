/**
 * The published JSON Schema (schema/rollout.schema.json) and the spec reference (docs/spec.md) are
 * generated from the validator's own schema, are up to date, and agree with the validator:
 * ajv (a JSON Schema validator editors' YAML servers behave like) accepts every example and
 * rejects every spec of the bad-spec corpus that bootcplan rejects; where the schema is
 * knowingly looser (rules a JSON Schema cannot state), the corpus says so case by case.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { parseRolloutSpec } from '../../src/rollout-spec/load.ts';
import { renderJsonSchema, withSpecReference, SCHEMA_FILE, rolloutJsonSchema } from '../../src/rollout-spec/reference.ts';
import { seeded } from '../support/seeds.ts';

const s = suite('JSON Schema of the spec');

const EXAMPLES = ['examples/rollout.yaml', 'examples/argocd/clusters/prod-east/bootcplan.yaml', 'examples/flux/clusters/prod-east/bootcplan.yaml'];
const D = 'quay.io/example/os@sha256:' + 'a'.repeat(64);
/** Rules only bootcplan checks (a JSON Schema cannot state them): the schema accepts these. */
const VALIDATOR_ONLY = new Set(['duplicate-pool', 'duplicate-machine-manager', 'cron-invalid', 'timezone-invalid', 'duration-invalid']);

const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
const schemaValid = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));

function validatorErrors(text: string): string[] {
  return parseRolloutSpec(text, 'spec.yaml')
    .diagnostics.filter((d) => d.severity === 'error')
    .map((d) => d.code);
}
const text = (doc: unknown) => stringify(doc, { lineWidth: 0 });

s("schema/rollout.schema.json is what the validator's schema generates (npm run schema:update)", () => {
  assert.is(readFileSync(SCHEMA_FILE, 'utf8'), renderJsonSchema(), 'run `npm run schema:update` and commit the result');
});

s("docs/spec.md's spec reference is what the schema generates, with every field, type and default", () => {
  const readme = readFileSync('docs/spec.md', 'utf8');
  assert.is(withSpecReference(readme), readme, 'run `npm run schema:update` and commit the result');
  for (const row of [
    '`spec.pools[].allowTags` | boolean | `false`',
    '`spec.pools[].drainTimeoutSeconds` | integer 0..2147483647 | no limit',
    '`spec.pools[].maxUnavailable` |',
    '`spec.maintenanceWindows[].timezone` | string | `UTC`',
  ]) {
    assert.ok(readme.includes(row), row);
  }
});

s('every field carries a description, and the schema compiles under ajv strict mode', () => {
  const missing: string[] = [];
  const walk = (node: any, path: string) => {
    for (const [k, v] of Object.entries<any>(node.properties ?? {})) {
      if (!v.description) missing.push(`${path}${k}`);
      walk(v, `${path}${k}.`);
      if (v.items) walk(v.items, `${path}${k}[].`);
    }
  };
  walk(rolloutJsonSchema(), '');
  assert.equal(missing, []);
});

s('every example spec names the schema with a yaml-language-server modeline, and both accept it', () => {
  for (const file of EXAMPLES) {
    const src = readFileSync(file, 'utf8');
    const m = /^# yaml-language-server: \$schema=(\S+)$/m.exec(src);
    assert.ok(m, `${file}: modeline`);
    assert.is(resolve(dirname(file), m![1]), resolve(SCHEMA_FILE), `${file}: the modeline points at ${SCHEMA_FILE}`);
    assert.equal(validatorErrors(src), [], file);
    assert.ok(schemaValid(parse(src)), `${file}: ${JSON.stringify(schemaValid.errors)}`);
  }
});

// ---- the bad-spec corpus ----

const base = () => ({
  apiVersion: 'bootcplan.dev/v1alpha1',
  kind: 'Rollout',
  metadata: { name: 'prod' },
  spec: {
    pools: [
      {
        name: 'worker',
        image: D,
        maxUnavailable: '25%',
        rebootPolicy: 'AllowSoftReboot',
        drainTimeoutSeconds: 600,
        soakSeconds: 60,
        paused: false,
        priority: 5,
      },
    ],
    managedBootImages: {
      machineManagers: [
        {
          resource: 'machinesets',
          apiGroup: 'machine.openshift.io',
          selection: {
            mode: 'Partial',
            partial: { machineResourceSelector: { matchLabels: { a: 'b' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
          },
        },
      ],
    },
    bootImageSkewEnforcement: { mode: 'Manual', manual: { mode: 'OCPVersion', ocpVersion: '4.20.0' } },
    controlPlaneMachineSet: { strategy: 'RollingUpdate', allowReplacement: false },
    maintenanceWindows: [{ schedule: '0 22 * * 1-5', duration: '4h', timezone: 'Europe/Berlin' }],
  },
});
type Spec = ReturnType<typeof base> & Record<string, any>;
const edit = (f: (d: any) => void) => () => {
  const d = base() as Spec;
  f(d);
  return d;
};
const pool = (d: any) => d.spec.pools[0];
const mm = (d: any) => d.spec.managedBootImages.machineManagers[0];
const skew = (d: any) => d.spec.bootImageSkewEnforcement;
const win = (d: any) => d.spec.maintenanceWindows[0];

/** Specs both must reject. */
const BAD: Record<string, () => unknown> = {
  'not a mapping': () => ['a'],
  'wrong apiVersion': edit((d) => {
    d.apiVersion = 'bootcplan.dev/v1';
  }),
  'no kind': edit((d) => {
    delete d.kind;
  }),
  'no metadata.name': edit((d) => {
    d.metadata = {};
  }),
  'metadata.name with capitals': edit((d) => {
    d.metadata.name = 'Prod';
  }),
  'label value a number': edit((d) => {
    d.metadata.labels = { a: 1 };
  }),
  'unknown top-level field': edit((d) => {
    d.specs = {};
  }),
  'unknown spec field': edit((d) => {
    d.spec.pool = [];
  }),
  'unknown pool field (typo)': edit((d) => {
    pool(d).rebootPolcy = 'RebootOnly';
  }),
  'pools not a list': edit((d) => {
    d.spec.pools = { worker: {} };
  }),
  'null pool entry': edit((d) => {
    d.spec.pools.push(null);
  }),
  'pool without image': edit((d) => {
    delete pool(d).image;
  }),
  'pool without name': edit((d) => {
    delete pool(d).name;
  }),
  'image by tag without allowTags': edit((d) => {
    pool(d).image = 'quay.io/example/os:43';
  }),
  'image by tag, allowTags false': edit((d) => {
    pool(d).image = 'quay.io/example/os:43';
    pool(d).allowTags = false;
  }),
  'short image name with allowTags': edit((d) => {
    pool(d).image = 'os:43';
    pool(d).allowTags = true;
  }),
  'malformed digest': edit((d) => {
    pool(d).image = 'quay.io/example/os@sha256:abc';
  }),
  'malformed digest with allowTags': edit((d) => {
    pool(d).image = 'quay.io/example/os@sha256:ABC';
    pool(d).allowTags = true;
  }),
  'empty image': edit((d) => {
    pool(d).image = '';
  }),
  'allowTags as a string': edit((d) => {
    pool(d).allowTags = 'true';
  }),
  'maxUnavailable 0': edit((d) => {
    pool(d).maxUnavailable = 0;
  }),
  'maxUnavailable "0%"': edit((d) => {
    pool(d).maxUnavailable = '0%';
  }),
  'maxUnavailable "101%"': edit((d) => {
    pool(d).maxUnavailable = '101%';
  }),
  'maxUnavailable "5" (a string)': edit((d) => {
    pool(d).maxUnavailable = '5';
  }),
  'maxUnavailable 1.5': edit((d) => {
    pool(d).maxUnavailable = 1.5;
  }),
  'maxUnavailable -1': edit((d) => {
    pool(d).maxUnavailable = -1;
  }),
  'maxUnavailable above int32': edit((d) => {
    pool(d).maxUnavailable = 2 ** 31;
  }),
  'maxUnavailable null': edit((d) => {
    pool(d).maxUnavailable = null;
  }),
  'rebootPolicy lower case': edit((d) => {
    pool(d).rebootPolicy = 'rebootonly';
  }),
  'drainTimeoutSeconds -1': edit((d) => {
    pool(d).drainTimeoutSeconds = -1;
  }),
  'drainTimeoutSeconds above int32': edit((d) => {
    pool(d).drainTimeoutSeconds = 2 ** 31;
  }),
  'soakSeconds as a string': edit((d) => {
    pool(d).soakSeconds = '60';
  }),
  'priority 1001': edit((d) => {
    pool(d).priority = 1001;
  }),
  'paused as a string': edit((d) => {
    pool(d).paused = 'no';
  }),
  'machineManagers over 5 entries': edit((d) => {
    d.spec.managedBootImages.machineManagers = Array.from({ length: 6 }, () => ({
      resource: 'machinesets',
      apiGroup: 'machine.openshift.io',
      selection: { mode: 'All' },
    }));
  }),
  'machine manager without apiGroup': edit((d) => {
    delete mm(d).apiGroup;
  }),
  'machine manager without selection': edit((d) => {
    delete mm(d).selection;
  }),
  'unknown resource': edit((d) => {
    mm(d).resource = 'machines';
  }),
  'selection without mode': edit((d) => {
    delete mm(d).selection.mode;
  }),
  'mode Partial without partial': edit((d) => {
    delete mm(d).selection.partial;
  }),
  'partial with mode All': edit((d) => {
    mm(d).selection.mode = 'All';
  }),
  'partial without a selector': edit((d) => {
    mm(d).selection.partial = {};
  }),
  'ControlPlaneMachineSet with Partial': edit((d) => {
    mm(d).resource = 'controlplanemachinesets';
  }),
  'operator In without values': edit((d) => {
    mm(d).selection.partial.machineResourceSelector.matchExpressions[0].values = [];
  }),
  'operator Exists with values': edit((d) => {
    mm(d).selection.partial.machineResourceSelector.matchExpressions[0].operator = 'Exists';
  }),
  'expression without key': edit((d) => {
    delete mm(d).selection.partial.machineResourceSelector.matchExpressions[0].key;
  }),
  'unknown operator': edit((d) => {
    mm(d).selection.partial.machineResourceSelector.matchExpressions[0].operator = 'in';
  }),
  'skew mode Automatic': edit((d) => {
    skew(d).mode = 'Automatic';
    delete skew(d).manual;
  }),
  'skew Manual without manual': edit((d) => {
    delete skew(d).manual;
  }),
  'skew None with manual': edit((d) => {
    skew(d).mode = 'None';
  }),
  'skew without mode': edit((d) => {
    delete skew(d).mode;
  }),
  'manual OCPVersion without ocpVersion': edit((d) => {
    delete skew(d).manual.ocpVersion;
  }),
  'manual OCPVersion with rhcosVersion too': edit((d) => {
    skew(d).manual.rhcosVersion = '9.6.20250523-1';
  }),
  'ocpVersion not x.y.z': edit((d) => {
    skew(d).manual.ocpVersion = '4.20';
  }),
  'ocpVersion too long': edit((d) => {
    skew(d).manual.ocpVersion = '4.20.1234567';
  }),
  'rhcosVersion malformed': edit((d) => {
    skew(d).manual = { mode: 'RHCOSVersion', rhcosVersion: '9.6.2025-1' };
  }),
  'CPMS strategy unknown': edit((d) => {
    d.spec.controlPlaneMachineSet.strategy = 'Recreate';
  }),
  'window without duration': edit((d) => {
    delete win(d).duration;
  }),
  'window duration in words': edit((d) => {
    win(d).duration = '4 hours';
  }),
  'window schedule of 4 fields': edit((d) => {
    win(d).schedule = '0 22 * *';
  }),
  'window timezone a number': edit((d) => {
    win(d).timezone = 1;
  }),
};

/** Specs bootcplan rejects and the schema accepts: the rules no JSON Schema can state. */
const VALIDATOR_ONLY_CASES: Record<string, [() => unknown, string]> = {
  'a pool listed twice': [
    edit((d) => {
      d.spec.pools.push({ ...pool(d) });
    }),
    'duplicate-pool',
  ],
  'a machine manager listed twice': [
    edit((d) => {
      d.spec.managedBootImages.machineManagers.push(mm(d));
    }),
    'duplicate-machine-manager',
  ],
  'cron minute 61': [
    edit((d) => {
      win(d).schedule = '61 22 * * 1-5';
    }),
    'cron-invalid',
  ],
  'an unknown time zone': [
    edit((d) => {
      win(d).timezone = 'Mars/Olympus_Mons';
    }),
    'timezone-invalid',
  ],
  'a zero duration': [
    edit((d) => {
      win(d).duration = '0h';
    }),
    'duration-invalid',
  ],
  'a window of 8 days': [
    edit((d) => {
      win(d).duration = '192h';
    }),
    'duration-invalid',
  ],
};

s('the corpus base spec is valid for both', () => {
  assert.equal(validatorErrors(text(base())), []);
  assert.ok(schemaValid(base()), JSON.stringify(schemaValid.errors));
});

s('every spec of the bad-spec corpus is rejected by bootcplan and by the schema', () => {
  const disagree: string[] = [];
  for (const [name, make] of Object.entries(BAD)) {
    const doc = make();
    const v = validatorErrors(text(doc));
    const j = schemaValid(doc);
    if (v.length === 0 || j) disagree.push(`${name}: bootcplan ${v.length ? v.join(',') : 'accepts'}, schema ${j ? 'accepts' : 'rejects'}`);
  }
  assert.equal(disagree, []);
});

s('the schema is looser than bootcplan only on the rules it cannot state, each named', () => {
  for (const [name, [make, code]] of Object.entries(VALIDATOR_ONLY_CASES)) {
    const doc = make();
    assert.equal(validatorErrors(text(doc)), [code], name);
    assert.ok(schemaValid(doc), `${name}: the schema accepts it (${JSON.stringify(schemaValid.errors)})`);
    assert.ok(VALIDATOR_ONLY.has(code));
  }
});

// ---- random edits: the two never disagree outside the named rules ----

const VALUES = [
  null,
  0,
  1,
  -1,
  1.5,
  2 ** 31,
  '',
  'x',
  '25%',
  '0%',
  '101%',
  '5',
  'Manual',
  'None',
  'All',
  'Partial',
  'In',
  'Exists',
  'controlplanemachinesets',
  'RebootOnly',
  'OCPVersion',
  '4.20.0',
  '9.6.20250523-1',
  true,
  false,
  [],
  [{}],
  {},
  { mode: 'All' },
  'quay.io/a/b:1',
  D,
  '4h',
  '0 1 * * *',
];

/** Every (path, container) pair of a document, to pick an edit target from. */
function places(doc: any, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (doc !== null && typeof doc === 'object') {
    for (const k of Object.keys(doc)) {
      const p = [...path, Array.isArray(doc) ? Number(k) : k];
      out.push(p);
      places(doc[k], p, out);
    }
  }
  return out;
}

function applyEdit(doc: any, path: (string | number)[], kind: 'set' | 'delete' | 'add', value: unknown, key: string): void {
  let parent = doc;
  for (const k of path.slice(0, -1)) parent = parent[k];
  const last = path[path.length - 1];
  if (kind === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (kind === 'set') parent[last] = value;
  else if (parent[last] !== null && typeof parent[last] === 'object' && !Array.isArray(parent[last])) parent[last][key] = value;
}

s('random edits of the corpus base: the schema rejects what bootcplan rejects, and only that (fast-check)', () => {
  const all = places(base());
  const keys = ['mode', 'partial', 'manual', 'values', 'allowTags', 'image', 'name', 'ocpVersion', 'rhcosVersion', 'selection', 'timezone', 'extra'];
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          at: fc.nat(all.length - 1),
          kind: fc.constantFrom('set' as const, 'delete' as const, 'add' as const),
          value: fc.constantFrom(...VALUES),
          key: fc.constantFrom(...keys),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      (edits) => {
        const doc = base();
        for (const e of edits) {
          const path = all[e.at];
          try {
            applyEdit(doc, path, e.kind, structuredClone(e.value), e.key);
          } catch {
            // the path went away with an earlier edit
          }
        }
        const v = validatorErrors(text(doc));
        const j = schemaValid(doc);
        if (!j) return v.length > 0;
        return v.every((code) => VALIDATOR_ONLY.has(code));
      },
    ),
    seeded(16, 1500),
  );
});

s.run();
