/**
 * Writes a synthetic cluster snapshot for benchmarks and scale tests.
 *   npx tsx scripts/gen-cluster.ts --workers 10000 [--format json|yaml] [--mco] -o /tmp/c10k.json
 */
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { generateCluster } from '../src/sim/generate.ts';

const args = process.argv.slice(2);
const get = (k: string, d?: string) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : d;
};
const workers = Number(get('--workers', '1000'));
const format = get('--format', 'json');
const out = get('-o', `/tmp/cluster-${workers}.${format}`)!;
const objects = generateCluster({
  workers,
  stagedFraction: 0.3,
  softRebootCapableFraction: 0.5,
  cordoned: Math.ceil(workers / 2000),
  bootc: !args.includes('--mco'),
});
const list = { apiVersion: 'v1', kind: 'List', items: objects };
writeFileSync(out, format === 'yaml' ? stringify(list, { lineWidth: 0 }) : JSON.stringify(list));
console.log(`wrote ${out} (${objects.length} objects)`);
