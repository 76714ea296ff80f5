/**
 * The Fleet's JSON Schema (schema/fleet.schema.json) and its reference in docs/fleets.md are generated from
 * the validator's schema and up to date; ajv accepts the example and rejects what bootcplan
 * rejects by type; the example plans cleanly over its snapshot files.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { Ajv } from 'ajv';
import { renderFleetJsonSchema, withFleetReference, FLEET_SCHEMA_FILE } from '../../src/fleet/spec-reference.ts';
import { parseFleetSpec } from '../../src/fleet/spec-load.ts';
import { cli } from '../support/cli.ts';

const s = suite('Fleet JSON Schema and example');
const EXAMPLE = 'examples/fleet/fleet.yaml';
const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
const valid = ajv.compile(JSON.parse(readFileSync(FLEET_SCHEMA_FILE, 'utf8')));

s("schema/fleet.schema.json and docs/fleets.md's Fleet reference are what the schema generates (npm run schema:update)", () => {
  assert.is(readFileSync(FLEET_SCHEMA_FILE, 'utf8'), renderFleetJsonSchema(), 'run `npm run schema:update` and commit the result');
  const readme = readFileSync('docs/fleets.md', 'utf8');
  assert.is(withFleetReference(readme), readme, 'run `npm run schema:update` and commit the result');
  assert.ok(readme.includes('| `spec.strategy.maxConcurrency` | an integer >= 1, or a percentage "N%" with 1 <= N <= 100 of the non-canary clusters | `1` |'));
});

s('the example has the modeline, is valid for bootcplan and for ajv', () => {
  const text = readFileSync(EXAMPLE, 'utf8');
  assert.ok(text.startsWith('# yaml-language-server: $schema=../../schema/fleet.schema.json\n'));
  assert.equal(parseFleetSpec(text, EXAMPLE).diagnostics, []);
  assert.ok(valid(parse(text)), JSON.stringify(valid.errors));
});

s('ajv rejects what bootcplan rejects by type or format', () => {
  const base = parse(readFileSync(EXAMPLE, 'utf8'));
  const bad: [string, (d: any) => void][] = [
    [
      'unknown field',
      (d) => {
        d.spec.clusters[0].snapshots = 'x';
      },
    ],
    [
      'maxConcurrency 0',
      (d) => {
        d.spec.strategy.maxConcurrency = 0;
      },
    ],
    [
      'maxConcurrency "3"',
      (d) => {
        d.spec.strategy.maxConcurrency = '3';
      },
    ],
    [
      'batchTimeoutAction',
      (d) => {
        d.spec.strategy.batchTimeoutAction = 'Abort';
      },
    ],
    [
      'a cluster name',
      (d) => {
        d.spec.clusters[0].name = 'Store NYC';
      },
    ],
    [
      'a pool override without name',
      (d) => {
        delete d.spec.clusters[2].overrides.pools[0].name;
      },
    ],
    [
      'no clusters',
      (d) => {
        d.spec.clusters = [];
      },
    ],
    [
      'kind',
      (d) => {
        d.kind = 'Rollout';
      },
    ],
  ];
  for (const [what, edit] of bad) {
    const d = structuredClone(base);
    edit(d);
    assert.not.ok(valid(d), what);
  }
});

s('the example plans: the canary first, then Berlin and Singapore; exit 0', async () => {
  const { code, out } = await cli(['fleet', 'plan', '-f', EXAMPLE], { io: { env: {} } });
  assert.is(code, 0);
  assert.match(out, / {2}1 {2}canary .*store-nyc\n {2}2 {2}batch .*store-singapore, store-berlin\n/);
  assert.match(out, /Fleet: 3 of 3 clusters planned, 3 with changes/);
});

s.run();
