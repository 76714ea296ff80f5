/**
 * `npm run schema:update`: writes schema/rollout.schema.json and schema/fleet.schema.json, and the
 * generated field references in docs/spec.md and docs/fleets.md, from the validators' schemas
 * (test/rollout-spec/schema.test.ts and test/fleet/schema.test.ts fail when any of them drifts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderJsonSchema, withSpecReference, SCHEMA_FILE } from '../src/rollout-spec/reference.ts';
import { renderFleetJsonSchema, withFleetReference, FLEET_SCHEMA_FILE } from '../src/fleet/spec-reference.ts';

writeFileSync(SCHEMA_FILE, renderJsonSchema());
writeFileSync(FLEET_SCHEMA_FILE, renderFleetJsonSchema());
for (const [file, withReference] of [
  ['docs/spec.md', withSpecReference],
  ['docs/fleets.md', withFleetReference],
] as const) {
  const updated = withReference(readFileSync(file, 'utf8'));
  if (updated === null) {
    console.error(`${file} has no reference markers`);
    process.exit(1);
  }
  writeFileSync(file, updated);
}
console.log(`wrote ${SCHEMA_FILE}, ${FLEET_SCHEMA_FILE} and the references in docs/spec.md and docs/fleets.md`);
