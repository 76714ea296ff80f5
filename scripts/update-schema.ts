/**
 * `npm run schema:update`: writes schema/rollout.schema.json and the spec reference block of
 * README.md from src/spec/rollout-schema.ts (test/schema.test.ts fails when either drifts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderJsonSchema, withSpecReference, SCHEMA_FILE } from '../src/spec/reference.ts';

writeFileSync(SCHEMA_FILE, renderJsonSchema());
const readme = readFileSync('README.md', 'utf8');
const updated = withSpecReference(readme);
if (updated === null) {
  console.error('README.md has no spec-reference markers');
  process.exit(1);
}
writeFileSync('README.md', updated);
console.log(`wrote ${SCHEMA_FILE} and the spec reference in README.md`);
