/**
 * `npm run schema:update`: writes schema/rollout.schema.json and the spec reference block of
 * README.md from src/spec/rollout-schema.ts (test/schema.test.ts fails when either drifts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderJsonSchema, withSpecReference, SCHEMA_FILE } from '../src/spec/reference.ts';
import { renderFleetJsonSchema, withFleetReference, FLEET_SCHEMA_FILE } from '../src/spec/fleet-reference.ts';

writeFileSync(SCHEMA_FILE, renderJsonSchema());
writeFileSync(FLEET_SCHEMA_FILE, renderFleetJsonSchema());
const readme = readFileSync('README.md', 'utf8');
const updated = withFleetReference(withSpecReference(readme) ?? '');
if (updated === null || !updated) {
  console.error('README.md has no spec-reference markers');
  process.exit(1);
}
writeFileSync('README.md', updated);
console.log(`wrote ${SCHEMA_FILE}, ${FLEET_SCHEMA_FILE} and the spec references in README.md`);
